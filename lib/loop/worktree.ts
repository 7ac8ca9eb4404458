/**
 * The task worktree: a linked git worktree on branch `task-<n>`, outside the
 * primary tree and outside `.git`, so the primary tree stays on main and
 * agents' sandboxes (which treat `.git` as read-only) can write to it.
 */
import { basename, dirname, isAbsolute, join, relative, resolve } from "../path.ts";
import { HoldError } from "../errors.ts";
import { Git, NO_SUBMODULE_STATUS } from "../git/git.ts";
import { operationInProgress } from "../git/discover.ts";
import { failpoint } from "../state/failpoint.ts";
import { worktreeGitDir } from "./guard.ts";

export interface WorktreeEntry {
  path: string;
  head: string | null;
  branch: string | null;
}

/** Parses `git worktree list --porcelain -z`. */
export function parseWorktreeList(out: string): WorktreeEntry[] {
  const entries: WorktreeEntry[] = [];
  let current: WorktreeEntry | null = null;
  for (const field of out.split("\0")) {
    if (field === "") {
      if (current) entries.push(current);
      current = null;
      continue;
    }
    const space = field.indexOf(" ");
    const key = space === -1 ? field : field.slice(0, space);
    const value = space === -1 ? "" : field.slice(space + 1);
    if (key === "worktree") current = { path: value, head: null, branch: null };
    else if (current && key === "HEAD") current.head = value;
    else if (current && key === "branch") current.branch = value.replace(/^refs\/heads\//, "");
  }
  if (current) entries.push(current);
  return entries;
}

/** Default home for task worktrees: a sibling folder of the repo, `<repo>.relay-worktrees/`. */
export function defaultWorktreeRoot(repoRoot: string): string {
  return join(dirname(repoRoot), `${basename(repoRoot)}.relay-worktrees`);
}

/**
 * Where task and review worktrees live: the profile's `worktree_root`, else the default, with
 * every symbolic link in it resolved (a folder not made yet resolved as far as it exists). git
 * names a worktree by its real path (`git worktree list`), and relay finds its own worktrees
 * by comparing paths: a root reached through a link (macOS's /tmp, a linked home) is the same
 * folder under another name.
 */
export function worktreeRootOf(configured: string | undefined, repoRoot: string): string {
  return realPathSoFar(configured ?? defaultWorktreeRoot(repoRoot));
}

/** `path` absolute, with every link in it resolved as far as the folders exist. */
export function realPathSoFar(path: string): string {
  const abs = resolve(path);
  const rest: string[] = [];
  for (let at = abs;;) {
    try {
      return join(Deno.realPathSync(at), ...rest);
    } catch {
      const up = dirname(at);
      if (up === at) return abs;
      rest.unshift(basename(at));
      at = up;
    }
  }
}

function isInside(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !rel.startsWith("/"));
}

/** Refuses a worktree root inside the primary tree or the git dir. */
export function checkWorktreeRoot(root: string, repoRoot: string, commonDir: string): void {
  // Real paths on all sides: the repository may be named through a link (relay -C <link>).
  const abs = realPathSoFar(root);
  if (isInside(abs, realPathSoFar(repoRoot)) || isInside(abs, realPathSoFar(commonDir))) {
    throw new HoldError(
      `Cannot use "${abs}" for task worktrees: it is inside the repository`,
      `Set worktree_root in the operator profile to a folder outside "${repoRoot}".`,
      { recheck: true },
    );
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes sure the worktree for `branch` exists at `path` and is on that branch.
 * Creates the branch from `start` when neither a local nor a remote branch exists.
 */
export async function ensureWorktree(
  primary: Git,
  opts: { path: string; branch: string; remote: string; start: string },
): Promise<"created" | "reused" | "recycled"> {
  const { path, branch, remote, start } = opts;
  const list = parseWorktreeList(
    await primary.out(["worktree", "list", "--porcelain", "-z"]),
  );
  const here = list.find((w) => resolve(w.path) === resolve(path));
  if (here) {
    // Missing first: a folder moved aside, as the advice below says, is not "on" any branch.
    if (!(await exists(path))) {
      throw new HoldError(
        `The task worktree "${path}" is registered but its folder is missing`,
        `Run "git worktree prune" in the repository, then rerun (relay keeps the commits of every agent turn under refs/relay/anchors/).`,
        { recheck: true },
      );
    }
    // What git left unfinished first: a rebase in progress also leaves HEAD detached, and
    // "switch back" is advice git refuses then. An agent started on any of it would commit the
    // conflict, or fail on the lock, attempt after attempt.
    const gitDir = worktreeGitDir(path);
    const unfinished = gitDir === null ? null : await unfinishedGit(gitDir);
    if (unfinished !== null) throw unfinishedHold(path, unfinished);
    if (here.branch !== branch) {
      throw new HoldError(
        `The task worktree "${path}" is on "${here.branch ?? "a detached HEAD"}", not "${branch}"`,
        `Check out "${branch}" there (git -C "${path}" switch ${branch}) or move the folder aside, then rerun (relay keeps the commits of every agent turn under refs/relay/anchors/).`,
        { recheck: true },
      );
    }
    const conflicted = await conflictedFiles(new Git(path));
    if (conflicted.length) {
      throw unfinishedHold(
        path,
        `conflicted files are in it, which relay never commits: ${conflicted.join(", ")}`,
      );
    }
    return "reused";
  }
  const elsewhere = list.find((w) => w.branch === branch);
  if (elsewhere) {
    throw new HoldError(
      `Branch "${branch}" is checked out in "${elsewhere.path}", not in the task worktree "${path}"`,
      `Switch that tree to another branch, or remove that worktree (keeping its work), then rerun.`,
      { recheck: true },
    );
  }
  if (await exists(path)) {
    throw new HoldError(
      `Cannot create the task worktree: "${path}" already exists and is not a worktree of this repository`,
      `Move "${path}" aside, then rerun.`,
      { recheck: true },
    );
  }
  const local = await primary.resolve(`refs/heads/${branch}`);
  const remoteBranch = await primary.resolve(`refs/remotes/${remote}/${branch}`);
  // A finished task's worktree, parked clean: switching it writes only the files that differ.
  const spare = join(dirname(path), SPARE_WORKTREE);
  if (list.some((w) => resolve(w.path) === resolve(spare) && w.branch === null)) {
    const args = local
      ? ["switch", "--quiet", "--no-guess", branch]
      : ["switch", "--quiet", "--no-track", "-c", branch, remoteBranch ?? start];
    if (await recycle(primary, spare, path, args)) return "recycled";
  }
  if (local) {
    await primary.run(["worktree", "add", "--quiet", "--", path, branch]);
  } else if (remoteBranch) {
    await primary.run([
      "worktree",
      "add",
      "--quiet",
      "--no-track",
      "-b",
      branch,
      "--",
      path,
      remoteBranch,
    ]);
  } else {
    await primary.run([
      "worktree",
      "add",
      "--quiet",
      "--no-track",
      "-b",
      branch,
      "--",
      path,
      start,
    ]);
  }
  return "created";
}

/** The folder, under the worktree root, where a finished task's worktree waits for the next task. */
export const SPARE_WORKTREE = "spare";

/**
 * What git left unfinished in a worktree's git folder that a commit there would seal or trip
 * on, read from the files (no process): an operation in progress (a merge with its conflicts, a
 * rebase …), or git's index lock, left by a git command stopped mid-write. Null when neither.
 */
export async function unfinishedGit(gitDir: string): Promise<string | null> {
  const op = operationInProgress(gitDir);
  if (op !== null) return `${op} is in progress, which relay never commits half done`;
  const lock = join(gitDir, "index.lock");
  return await exists(lock)
    ? `git's index lock is left in its git folder (${lock}): a git command was stopped mid-write`
    : null;
}

/** A reused task worktree holds `why`: rechecked every tick, no agent starts there meanwhile. */
function unfinishedHold(path: string, why: string): HoldError {
  return new HoldError(
    `In the task worktree "${path}", ${why}`,
    `Finish or undo it there (${REPAIR_UNFINISHED}); the next tick carries on by itself once it is done (relay keeps the commits of every agent turn under refs/relay/anchors/).`,
    { recheck: true },
  );
}

/** How a person finishes what unfinishedGit or conflictedFiles found. */
export const REPAIR_UNFINISHED =
  `"git status" there says how; a stale index.lock goes once no git runs there`;

/** Paths `git ls-files -u` lists: files with a conflict nobody resolved. */
export async function conflictedFiles(wt: Git): Promise<string[]> {
  const out = await wt.out(["ls-files", "-u", "-z"]);
  return [
    ...new Set(out.split("\0").filter((e) => e.includes("\t")).map((e) => e.split("\t")[1]!)),
  ];
}

/**
 * What a plain `git status` does not show but would carry over into the next use of a
 * reused checkout: an operation in progress (a merge, a rebase …) or index entries git is
 * told not to look at (`update-index --assume-unchanged` / `--skip-worktree`, under which
 * an edit stays invisible). Null when there is none.
 */
export async function hiddenState(wt: Git): Promise<string | null> {
  const gitDir = worktreeGitDir(wt.cwd);
  if (gitDir === null) return "no .git file naming its git folder";
  const op = operationInProgress(gitDir);
  if (op !== null) return `${op} is in progress`;
  const flagged = (await wt.out(["ls-files", "-v", "-z"])).split("\0")
    .filter((e) => e !== "" && !e.startsWith("H "));
  return flagged.length
    ? `${flagged.length} file(s) git is told not to look at, e.g. ${flagged[0]!.slice(2)}`
    : null;
}

/**
 * Parks a finished task's worktree as the spare the next task starts from, instead of
 * removing it: a fresh worktree writes every file of the repository, the spare only the
 * files that differ. Only a clean worktree of relay's own, at `root/<branch>`, is parked
 * (nothing tracked changed, nothing untracked that git does not ignore, nothing hidden from
 * status); it is moved first and then detached where it is (no file changes, the branch
 * free), and its ignored files go, as they would with the folder, so the next task starts
 * as in a fresh checkout. Returns false when it was not parked (another spare waits, it is
 * not clean, or a step failed — then it is put back as it was): the caller removes it as
 * before. `statusEmpty`: the caller's own `git status --porcelain=v1 --untracked-files=normal`
 * of the worktree listed nothing just now (clearUntrackedBuildOutput), so it is not run again.
 */
export async function parkWorktree(
  primary: Git,
  root: string,
  path: string,
  opts: { statusEmpty?: boolean } = {},
): Promise<boolean> {
  const spare = join(root, SPARE_WORKTREE);
  if (resolve(dirname(path)) !== resolve(root) || await exists(spare)) return false;
  const wt = new Git(path);
  if (!opts.statusEmpty) {
    const status = await wt.run([
      "status",
      "--porcelain=v1",
      "-z",
      "--untracked-files=normal",
      NO_SUBMODULE_STATUS,
    ], {
      allowFail: true,
    });
    if (status.code !== 0 || status.stdout !== "") return false;
  }
  if (await hiddenState(wt) !== null) return false;
  const moved = await primary.run(["worktree", "move", "--", path, spare], { allowFail: true });
  if (moved.code !== 0) return false;
  const parked = new Git(spare);
  const detached = await parked.run(["switch", "--quiet", "--detach"], { allowFail: true });
  if (detached.code !== 0) {
    await primary.run(["worktree", "move", "--", spare, path], { allowFail: true });
    return false;
  }
  await parked.run(["clean", "-d", "-X", "-f", "-q"], { allowFail: true });
  return true;
}

/**
 * Moves the spare worktree to `path` and switches it with `args`; false (the spare left
 * where it was) when it is not clean or the switch fails.
 */
async function recycle(
  primary: Git,
  spare: string,
  path: string,
  args: string[],
): Promise<boolean> {
  if (!(await exists(spare))) return false;
  const sw = new Git(spare);
  const left = await sw.run([
    "status",
    "--porcelain=v1",
    "-z",
    "--untracked-files=all",
    "--ignored",
    NO_SUBMODULE_STATUS,
  ], { allowFail: true });
  if (left.code !== 0 || left.stdout !== "" || await hiddenState(sw) !== null) return false;
  if ((await primary.run(["worktree", "move", "--", spare, path], { allowFail: true })).code) {
    return false;
  }
  if ((await new Git(path).run(args, { allowFail: true })).code === 0) return true;
  await primary.run(["worktree", "move", "--", path, spare], { allowFail: true });
  return false;
}

/** The reason relay gives git's lock of a worktree it moves (moveWorktreeWithSubmodules). */
const MOVING = "relay: moving it";

/**
 * Moves a worktree that holds submodules, which `git worktree move` refuses: the folder is
 * renamed and `git worktree repair` points the worktree's registration at its new place; then
 * each submodule's two links (its `.git` file, its git folder's `core.worktree`), which point
 * at the old place, are pointed at the new one. Nothing is deleted: a submodule's git data stays
 * in the worktree's git folder (`modules/`), as before. The registration is locked meanwhile
 * (unless a person locked it already): a `git worktree prune` between the rename and the repair
 * would otherwise delete it, submodules' git data and all. A move a killed tick left halfway
 * (the folder at `to` already) is finished. Null, with the folder where it was, when the rename
 * or the repair fails; else what the mover's line adds: the submodules' git folders it could
 * not point at the new place, if any.
 */
export async function moveWorktreeWithSubmodules(
  primary: Git,
  from: string,
  to: string,
): Promise<{ said: string } | null> {
  const renamed = !(await exists(from)) && await exists(to);
  const admin = worktreeGitDir(renamed ? to : from);
  if (admin === null) return null;
  // git writes a submodule's core.worktree from the real path: the old place as git saw it.
  const real = realPathSoFar(from);
  // A person's lock stays; relay's own, from a move a killed tick began, goes at the end.
  const lock = await Deno.readTextFile(join(admin, "locked")).catch(() => null);
  const ours = lock === null || lock.startsWith(MOVING);
  const worktree = async (verb: "lock" | "unlock", at: string) => {
    if (!ours) return;
    const reason = verb === "lock" ? ["--reason", `${MOVING} to ${to}`] : [];
    await primary.run(["worktree", verb, ...reason, "--", at], { allowFail: true });
  };
  await worktree("lock", from);
  if (!renamed) {
    try {
      await Deno.rename(from, to);
    } catch {
      await worktree("unlock", from);
      return null;
    }
    failpoint("worktree-renamed");
  }
  if ((await primary.run(["worktree", "repair", "--", to], { allowFail: true })).code !== 0) {
    await Deno.rename(to, from).catch(() => {});
    await worktree("unlock", from);
    return null;
  }
  const unlinked: string[] = [];
  for (const gitDir of await submoduleGitDirs(join(admin, "modules"))) {
    // Asked from the primary tree: git run in the submodule's git folder would go to its
    // core.worktree first, which is not there any more.
    const config = join(gitDir, "config");
    const got = await primary.run(["config", "-f", config, "--get", "core.worktree"], {
      allowFail: true,
    });
    if (got.code !== 0) continue; // no work tree of its own: nothing points at the old place
    const old = resolve(gitDir, got.stdout.trim());
    const inside = [real, from].map((base) => relative(base, old)).find((r) =>
      !r.startsWith("..") && !isAbsolute(r)
    );
    if (inside === undefined) {
      unlinked.push(gitDir);
      continue;
    }
    const moved = join(to, inside);
    const set = await primary.run(["config", "-f", config, "core.worktree", moved], {
      allowFail: true,
    });
    const link = join(moved, ".git");
    const wrote = (await Deno.lstat(link).catch(() => null))?.isFile
      ? await Deno.writeTextFile(link, `gitdir: ${gitDir}\n`).then(() => true, () => false)
      : true;
    if (set.code !== 0 || !wrote) unlinked.push(gitDir);
  }
  await worktree("unlock", to);
  return {
    said: unlinked.length ? `; the links of ${unlinked.join(", ")} still name the old place` : "",
  };
}

/** The git folders of submodules under `modules` (a name may hold slashes; nested ones too). */
async function submoduleGitDirs(modules: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(dir));
    } catch {
      return;
    }
    if (entries.some((e) => e.name === "HEAD" && e.isFile)) {
      found.push(dir);
      await walk(join(dir, "modules"));
      return;
    }
    for (const e of entries) if (e.isDirectory) await walk(join(dir, e.name));
  };
  await walk(modules);
  return found;
}
