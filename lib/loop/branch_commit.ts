/**
 * After the agent's turn: commit what it left uncommitted on the task branch
 * (product files only), and make sure the branch's net diff never touches the
 * paperwork, whatever the agent committed.
 */
import { join } from "../path.ts";
import { type Git, NO_SUBMODULE_STATUS } from "../git/git.ts";
import { PAPERWORK_PATHS } from "../state/paths.ts";
import { copyRedacted, redact } from "../proc/redact.ts";
import { type BuildOutputMatcher, buildOutputMatcher } from "../git/build_output.ts";
import { describePaths } from "./build_output.ts";
import type { Log } from "../proc/log.ts";
import { HoldError } from "../errors.ts";
import { REPAIR_UNFINISHED } from "./worktree.ts";

/** Paths relay names to git are file names, never patterns (a brief named "[1].md"). */
const LITERAL = { env: { GIT_LITERAL_PATHSPECS: "1" } };

/**
 * Copies every paperwork file that differs from HEAD in the worktree (the
 * agent's report above all) into `saveDir`, so nothing an agent wrote is lost
 * when the worktree is cleaned. Returns the relative paths saved. Secrets of
 * relay's environment are redacted from the copies (see redact.ts).
 */
export async function savePaperwork(wt: Git, saveDir: string): Promise<string[]> {
  const out = await wt.out([
    "status",
    "--porcelain=v1",
    "-z",
    "--untracked-files=all",
    NO_SUBMODULE_STATUS,
    "--",
    ...PAPERWORK_PATHS,
  ]);
  const saved: string[] = [];
  for (const entry of out.split("\0")) {
    if (entry.length < 4) continue;
    const path = entry.slice(3);
    try {
      const dest = join(saveDir, "worktree-paperwork", path);
      await Deno.mkdir(join(dest, ".."), { recursive: true });
      await copyRedacted(join(wt.cwd, path), dest);
      saved.push(path);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound) && !(err instanceof Deno.errors.IsADirectory)) {
        throw err;
      }
    }
  }
  return saved;
}

export interface LeftoverOptions {
  /** Where relay says what it committed for the agent and what it left out. */
  log?: Log;
  /** The repo's `never_commit` globs, added to the built-in build output list. */
  neverCommit?: readonly string[];
}

/**
 * Restores every paperwork path to its version at `base` (index and working
 * tree), stages all other changes except build output (see build_output.ts),
 * and commits them in one commit when there is anything to commit. Returns
 * the new head, or null when nothing changed. Untracked paperwork files are
 * deleted: `savePaperwork` has kept a copy. Build output stays in the
 * worktree, uncommitted; removing a tracked build file is committed.
 */
export async function commitLeftovers(
  wt: Git,
  base: string,
  message: string,
  opts: LeftoverOptions = {},
): Promise<string | null> {
  // Paperwork the branch changed, committed or not (a repository the agent put there, too:
  // listed as it is, never looked into; see NO_SUBMODULE_STATUS).
  const changed = (await wt.out([
    "diff",
    "--name-only",
    "--no-renames",
    "-z",
    NO_SUBMODULE_STATUS,
    base,
    "--",
    ...PAPERWORK_PATHS,
  ])).split("\0").filter((p) => p !== "");
  for (const path of changed) {
    // Mostly a file main has (the report of the task before): put back as it was at once.
    // A checkout of a path the commit lacks fails and changes nothing: it is asked then.
    const back = ["checkout", "--quiet", base, "--", path];
    if ((await wt.run(back, { ...LITERAL, allowFail: true })).code === 0) continue;
    if (await wt.ok(["cat-file", "-e", `${base}:${path}`])) {
      await wt.run(back, LITERAL);
    } else {
      // Out of the index only (the file is deleted next; savePaperwork kept a copy). -f: git's
      // check that the staged content is kept elsewhere would run a status inside a
      // repository the agent staged here, under that repository's own config.
      await wt.run(["rm", "--quiet", "--cached", "-f", "--ignore-unmatch", "--", path], LITERAL);
      await Deno.remove(join(wt.cwd, path)).catch(() => {});
    }
  }
  // One look at the rest: what differs from HEAD (staged or not) and what is untracked.
  // A submodule only when its commit moved: one changed inside would be staged by `git add`,
  // which runs a status in it under its own config (see NO_SUBMODULE_STATUS). A moved one is
  // committed as it is, and the merge gate sends the PR to a person.
  const entries = statusEntries(
    await wt.out([
      "status",
      "--porcelain=v1",
      "-z",
      "--no-renames",
      "--untracked-files=all",
      NO_SUBMODULE_STATUS,
    ]),
  );
  // A conflict nobody resolved (a `git stash pop` or `checkout -m` leaves one with no merge to
  // name): committed, it would put the conflict markers on the branch.
  const conflicted = entries.filter((e) => e.staged === "U").map((e) => e.path);
  if (conflicted.length) {
    throw new HoldError(
      `The agent left conflicted files in ${wt.cwd}, which relay never commits: ${
        listPaths(conflicted)
      }`,
      `Resolve them there (${REPAIR_UNFINISHED}). relay pushed nothing; the turn's commits are kept under refs/relay/anchors/.`,
    );
  }
  const product: StatusEntry[] = [];
  for (const entry of entries) {
    if (!isPaperwork(entry.path)) product.push(entry);
    // Untracked paperwork goes: savePaperwork has kept a copy.
    else if (entry.untracked) await Deno.remove(join(wt.cwd, entry.path)).catch(() => {});
  }

  const buildOutput = buildOutputMatcher(opts.neverCommit);
  const { leftOut, nested } = await stageLeftovers(wt, product, buildOutput);
  const staged = (await wt.out(["diff", "--cached", "--name-only", "--no-renames", "-z", "HEAD"]))
    .split("\0").filter((p) => p !== "");
  if (staged.length) {
    opts.log?.step(
      `committing what the agent left uncommitted (${staged.length} file(s)): ${listPaths(staged)}`,
    );
  }
  if (leftOut.length) {
    opts.log?.step(
      `left out build output (relay never commits it for the agent): ${
        describePaths(leftOut, buildOutput)
      }`,
    );
  }
  if (nested.length) {
    opts.log?.step(
      `left out ${
        nested.length === 1 ? "a git repository" : "git repositories"
      } the agent made inside the worktree (relay never commits one repository into another; to commit the files, remove the inner .git folder): ${
        listPaths(nested)
      }`,
    );
  }
  if (staged.length === 0) return null;
  await wt.run(["commit", "--quiet", "--no-verify", "-m", redact(message)]);
  return await wt.head();
}

/** A path `git status --porcelain=v1` lists: how it differs from HEAD, staged and not. */
interface StatusEntry {
  path: string;
  /** As `git diff --cached HEAD --name-status` says it ("D", "M", "U" …), "" when not staged. */
  staged: string;
  /** As `git diff --name-status` says it, "" when the working tree matches the index. */
  unstaged: string;
  untracked: boolean;
}

/** Unmerged paths, which `git diff` names "U" in the index and in the working tree alike. */
const UNMERGED = new Set(["DD", "AU", "UD", "UA", "DU", "AA", "UU"]);

/** `git status --porcelain=v1 -z --no-renames` output, entry by entry. */
function statusEntries(out: string): StatusEntry[] {
  return out.split("\0").filter((e) => e.length > 3).map((e) => {
    const xy = e.slice(0, 2);
    const path = e.slice(3);
    if (xy === "??") return { path, staged: "", unstaged: "", untracked: true };
    if (UNMERGED.has(xy)) return { path, staged: "U", unstaged: "U", untracked: false };
    const letter = (c: string) => c === " " ? "" : c;
    return { path, staged: letter(xy[0]!), unstaged: letter(xy[1]!), untracked: false };
  });
}

/**
 * One entry a path, as the diffs relay read before named each path once: a tracked file
 * staged as deleted and made again is listed twice (`D ` and `??`), its removal staged.
 */
function byPath(entries: readonly StatusEntry[]): StatusEntry[] {
  const merged = new Map<string, StatusEntry>();
  for (const e of entries) {
    const seen = merged.get(e.path);
    merged.set(
      e.path,
      seen === undefined ? e : {
        path: e.path,
        staged: seen.staged || e.staged,
        unstaged: seen.unstaged || e.unstaged,
        untracked: seen.untracked || e.untracked,
      },
    );
  }
  return [...merged.values()];
}

function isPaperwork(path: string): boolean {
  return PAPERWORK_PATHS.some((p) => path === p || path.startsWith(`${p}/`));
}

/**
 * Stages what `git add --all` would, outside the paperwork, except build
 * output: a new or changed build file is left in the worktree (and taken
 * out of the index if the agent staged it); deleting a tracked one is
 * staged. Nor a git repository the agent made inside the worktree (`git
 * init`, `git clone`, a scaffolding tool): `git add` fails on one without a
 * commit and records one with commits as a bare gitlink, a submodule nobody
 * can check out. Returns the build output and the repositories left out.
 */
async function stageLeftovers(
  wt: Git,
  entries: readonly StatusEntry[],
  matcher: BuildOutputMatcher,
): Promise<{ leftOut: string[]; nested: string[] }> {
  const add: string[] = [];
  const unstage: string[] = [];
  const leftOut: string[] = [];
  const nested: string[] = [];
  for (const { path, staged, unstaged, untracked } of byPath(entries)) {
    // With --untracked-files=all git lists untracked files one by one: a folder it lists
    // whole ("web/") is a repository of its own (build output first: one under node_modules/
    // is left out as that, with no advice to commit its files).
    const build = matcher.match(path) !== undefined;
    if (!build && untracked && staged === "" && path.endsWith("/")) {
      nested.push(path);
    } else if (!build) {
      // A change staged in full is committed as it is: `git add` of a path the agent removed
      // with `git rm` (in neither the index nor the tree) would fail on a pathspec that
      // matches nothing.
      if (unstaged !== "" || untracked) add.push(path);
    } else if (staged === "D") {
      // The agent took a tracked build file out of the index: that removal is committed.
    } else if (unstaged === "D") {
      add.push(path);
    } else {
      leftOut.push(path);
      if (staged !== "") unstage.push(path);
    }
  }
  // Paths go on stdin (a node_modules can hold more than a command line does), taken literally.
  if (add.length) {
    await wt.run(["add", "--all", "--pathspec-from-file=-", "--pathspec-file-nul"], {
      ...LITERAL,
      stdin: add.join("\0"),
    });
  }
  if (unstage.length) {
    await wt.run(["restore", "--staged", "--pathspec-from-file=-", "--pathspec-file-nul"], {
      ...LITERAL,
      stdin: unstage.join("\0"),
    });
  }
  return { leftOut: leftOut.sort(), nested: nested.sort() };
}

/** Up to 20 paths, then how many more. */
function listPaths(paths: readonly string[]): string {
  const shown = paths.slice(0, 20).join(", ");
  return paths.length > 20 ? `${shown} and ${paths.length - 20} more` : shown;
}
