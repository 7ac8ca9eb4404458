/**
 * The executor turn's guard: what must hold before anything the agent did is
 * committed or leaves this machine. It reads what steers git and relay, this
 * clone's pushes, main (local and on the remote), the worktree's branch and
 * the primary tree, against what the journal recorded before the turn — and
 * anchors every commit of the turn first, so no advice it gives can lose one.
 */
import { join, resolve } from "../path.ts";
import { Git, GITLINK_MODE } from "../git/git.ts";
import { currentBranch } from "../git/discover.ts";
import { largeFileHash, sha256, type SyncHash, syncHash } from "../proc/hash.ts";
import { anchorRef, INBOX_DIR, RELAY_PAPERWORK_PATHS, turnAnchorPrefix } from "../state/paths.ts";
import type { Journal } from "../state/journal.ts";
import {
  changedControls,
  changedPrimaryFiles,
  controlFiles,
  describeControls,
  executorScope,
  pushesSince,
  worktreeGitDir,
} from "./guard.ts";
import {
  anchorWithGit,
  anchorWithoutGit,
  journalMark,
  markTurn,
  turnCommits,
} from "./turn_anchors.ts";
import { REPAIR_UNFINISHED, unfinishedGit } from "./worktree.ts";
import type { ExecContext } from "./effects/context.ts";
import { ready } from "./effects/context.ts";

/** A HOLD the guard found: the reason, the advice, the run. */
export interface GuardHold {
  reason: string;
  next: string;
  runId: string;
}

/**
 * The primary tree's own changes (tracked and untracked, outside the inbox) as
 * path → content hash. Taken before and after the agent: any difference means
 * the agent reached out of its worktree.
 */
export async function primaryFiles(primary: Git): Promise<Record<string, string>> {
  // One scan for both: what differs from HEAD (staged or not) and what is untracked.
  const changed = (await primary.out([
    "--no-optional-locks", // a look, never an index write beside another tick's git
    "status",
    "--porcelain=v1",
    "-z",
    "--no-renames",
    "--untracked-files=all",
    // Never into a submodule: to see whether one changed, git runs a status inside it, under
    // that submodule's own config (.git/modules/<name>/config, or wherever its .git file
    // points), which the agent can write — a clean filter there would run as relay, before
    // this guard has compared anything. Submodules are read below instead. (Only the command
    // line has this last word: .gitmodules' `ignore` overrides diff.ignoreSubmodules.)
    "--ignore-submodules=all",
    "--",
    ".",
  ])).split("\0").filter((e) => e !== "").map((e) => e.slice(3));
  // One index listing for three things, none of which runs git inside a submodule:
  // every queued brief, changed or not (one the agent rewrites must show as changed, not as
  // new: a person may add or drop briefs during the turn; see changedPrimaryFiles); every
  // submodule, each read whole by fingerprint() whether or not it changed; and every file
  // git is told not to look at (assume-unchanged, a lower-case tag; skip-worktree, "S"), whose
  // edits status never shows: read whole, its tag with it, so setting one is a change too.
  const hidden = new Map<string, string>();
  const indexed = (await primary.out(["ls-files", "-v", "--stage", "-z"])).split("\0")
    .filter((e) => e !== "")
    .map((e) => ({
      tag: e.slice(0, 1),
      mode: e.slice(2, e.indexOf(" ", 2)),
      path: e.slice(e.indexOf("\t") + 1),
    }))
    .filter(({ tag, mode, path }) => {
      const flagged = tag === "S" || (tag !== tag.toUpperCase());
      if (flagged) hidden.set(path, tag);
      return flagged || mode === GITLINK_MODE || path.startsWith(`${INBOX_DIR}/`);
    })
    .map(({ path }) => path);
  const files: Record<string, string> = {};
  // The hidden ones in one entry: a sparse checkout flags every file outside its cone (tens of
  // thousands).
  const hiddenLines: string[] = [];
  for (
    const path of [...new Set([...changed, ...indexed])].filter((p) => p !== "").sort()
  ) {
    const tag = hidden.get(path);
    const full = join(primary.cwd, path);
    if (tag === undefined) files[path] = await fingerprint(full);
    else {
      // Nearly all absent (a sparse checkout's): told by a look without a wait.
      const print = lstatOrNull(full) === null ? "(deleted)" : await fingerprint(full);
      hiddenLines.push(`${tag} ${path} ${print}`);
    }
  }
  if (hiddenLines.length) files[HIDDEN_FILES] = await sha256(hiddenLines.join("\n"));
  return files;
}

/** primaryFiles()' one entry for the files git is told not to look at. */
export const HIDDEN_FILES = "(files git is told not to look at: assume-unchanged, skip-worktree)";

/**
 * What a path of the primary tree's status holds, to compare before and after the turn: a
 * file's hash; a symbolic link's target (never followed: it may name a folder); for a folder,
 * which status lists only when it is a repository of its own (a clone inside the tree, a
 * submodule), every entry under it (folderPrint). Nothing else is read: a named pipe would
 * never end.
 */
async function fingerprint(full: string): Promise<string> {
  const info = await Deno.lstat(full).catch((err) => {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  });
  if (info === null) return "(deleted)";
  if (info.isSymlink) return `(symlink) ${linkTarget(full)}`;
  if (info.isDirectory) return `(repository) ${folderPrint(full, await syncHash())}`;
  if (!info.isFile) return "(not a file)";
  const hash = await largeFileHash(full, info.size).catch(unreadable);
  return hash || "(deleted)";
}

/** What stands for the hash of a file relay may not read (another owner's): never thrown. */
function unreadable(err: unknown): string {
  return `(unreadable: ${(err as Error).name})`;
}

/** A file's hash, or why it could not be read (gone since the look, or another owner's). */
function contentOf(hash: SyncHash, full: string, size: number): string {
  try {
    return hash.file(full, size);
  } catch (err) {
    return unreadable(err);
  }
}

/** What a path is (a link not followed), or null when it is gone. */
function lstatOrNull(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch {
    return null;
  }
}

/** A link's target; its error's name, "(NotFound)", when it went between the look and the read. */
function linkTarget(full: string): string {
  try {
    return Deno.readLinkSync(full);
  } catch (err) {
    return `(${(err as Error).name})`;
  }
}

/**
 * Every entry under a folder, its `.git` included: a file by its content (a commit there, an
 * edit, a new file each change it; no time stamp, which can be set back and which Deno gives
 * to the second), except git's objects, which are named by their content and never change.
 * A `.git` that is a file (a submodule's: "gitdir: <folder>") is followed to that folder, where
 * the submodule's commits go. Read, not asked of git, which would run what that repository's
 * own config says (a clean filter of its own, during a status). Read without a wait (syncHash):
 * a folder can hold tens of thousands of files, and each await costs more than the read.
 */
function folderPrint(dir: string, hash: SyncHash): string {
  const lines: string[] = [];
  // `objects`: where the walked folder keeps git's objects (".git/objects/" in a repository's
  // folder, "objects/" in a git folder itself).
  const walk = (root: string, rel: string, label: string, objects: string) => {
    let names: string[];
    try {
      names = [...Deno.readDirSync(join(root, rel))].map((entry) => entry.name).sort();
    } catch (err) {
      lines.push(`${label}${rel}/ ${unreadable(err)}`);
      return;
    }
    for (const name of names) {
      const path = rel === "" ? name : `${rel}/${name}`;
      const full = join(root, path);
      const shown = `${label}${path}`;
      const i = lstatOrNull(full);
      if (i === null) lines.push(`${shown} (gone)`);
      else if (i.isDirectory) {
        lines.push(`${shown}/ ${i.mode}`);
        walk(root, path, label, objects);
      } else if (i.isSymlink) lines.push(`${shown} -> ${linkTarget(full)}`);
      else if (!i.isFile) lines.push(`${shown} (not a file)`);
      else if (path.startsWith(objects)) lines.push(`${shown} ${i.size}`);
      else lines.push(`${shown} ${i.mode} ${contentOf(hash, full, i.size)}`);
    }
  };
  walk(dir, "", "", ".git/objects/");
  // Only a regular file is read (a named pipe would never end).
  const dotGit = join(dir, ".git");
  let gitFile = "";
  if (lstatOrNull(dotGit)?.isFile) {
    try {
      gitFile = Deno.readTextFileSync(dotGit);
    } catch { /* gone, or not relay's to read: its line above says so */ }
  }
  const gitDir = /^gitdir: (.+)$/m.exec(gitFile)?.[1]?.trim();
  if (gitDir) walk(resolve(dir, gitDir), "", "(gitdir) ", "objects/");
  return hash.text(lines.join("\n"));
}

/**
 * HOLD when the agent reached past its worktree: changed what steers git or
 * relay (config, hooks, info/, relay's records), pushed anything but its own
 * branch, moved main (local or on the remote), switched the worktree's branch,
 * or touched the primary tree.
 */
export async function checkAgentStayedInBounds(
  tick: ExecContext,
  journal: Journal,
): Promise<GuardHold | null> {
  const { primary, config, profile } = ready(tick);
  const problems: string[] = [];
  const repair: string[] = [];
  const vanished = !(await Deno.stat(journal.worktree).then(() => true, () => false));
  // Pure file reads first: a planted core.fsmonitor, hook, filter or ssh command runs on
  // relay's next git call, so when one of these changed relay runs no git at all.
  const controlNow = journal.control
    ? await controlFiles(
      executorScope({
        commonDir: tick.repo.commonDir,
        gitDir: tick.repo.gitDir,
        worktree: journal.worktree,
        runDir: join(tick.state.runs, journal.runId),
        profilePath: profile.path,
      }),
    )
    : {};
  const changedControl = journal.control ? changedControls(journal.control, controlNow) : [];
  // Before any HOLD: every commit of the turn on an anchor, or the advice below could lose it.
  const kept = keptText(
    journal,
    await anchorTurn(tick, journal, !vanished && changedControl.length === 0),
  );
  // A worktree folder that vanished is not the agent reaching out: say what happened.
  if (vanished) {
    return {
      reason: `the task worktree ${journal.worktree} was deleted during run ${journal.runId}`,
      next:
        `relay pushed nothing. ${kept} Run "git worktree prune" in ${tick.repo.root}, then "relay resume": the next tick starts a new attempt in a fresh worktree.`,
      runId: journal.runId,
    };
  }
  if (changedControl.length) {
    problems.push(
      `it changed files that steer git or relay: ${
        describeControls(journal.control!, controlNow, changedControl).join(", ")
      }`,
    );
    repair.push(
      "relay ran no git command after the turn. Before you run git in this repository, look at those files: a program planted in git config or hooks runs on any git command. Put back what you did not expect; what you did expect (a hooks manager's core.hooksPath, once you have read the hooks in the folder it names) may stay.",
    );
  } else {
    const remote = config.remote;
    // Its own branch is the agent's to push (relay pushes it next anyway); any other push
    // through the remote's name left a trace in this clone's reflogs.
    const pushed = journal.remoteLogs
      ? (pushesSince(tick.repo.commonDir, remote, journal.remoteLogs))
        .filter((p) => p.branch !== journal.branch)
      : [];
    if (pushed.length) {
      problems.push(
        `it pushed to ${[...new Set(pushed.map((p) => `${remote}/${p.branch}`))].join(", ")}`,
      );
    }
    const main = (await primary.resolve(`refs/heads/${config.main}`)) ?? "";
    if (main !== journal.mainBefore) {
      problems.push(
        `${config.main} moved from ${journal.mainBefore.slice(0, 12)} to ${main.slice(0, 12)}`,
      );
      // What main holds now may be on no anchor of the turn (a commit made in the primary
      // tree, not the worktree): kept before the advice asks for main back where it was.
      const keep = anchorRef(journal.task, journal.runId, "main");
      if (main) await primary.updateRef(keep, main, `relay: ${config.main} moved during the turn`);
      // A commit of the primary tree may have taken relay's uncommitted paperwork along (a
      // promoted brief, the inbox): the switch back would leave it only under the anchor.
      const carried = main
        ? (await primary.out([
          "diff",
          "--name-only",
          "-z",
          "--no-renames",
          "--diff-filter=d",
          journal.mainBefore,
          main,
          "--",
          ...RELAY_PAPERWORK_PATHS,
        ])).split("\0").filter((p) => p !== "")
        : [];
      repair.push(
        `${config.main} as the turn left it is kept under ${keep}. Put ${config.main} back where it was before the turn: in ${tick.repo.root}, "git switch --detach && git branch -f ${config.main} ${journal.mainBefore} && git switch ${config.main}".${
          carried.length
            ? ` That commit also holds relay's paperwork (${
              carried.join(", ")
            }: a promoted brief left uncommitted, perhaps): read it there, then put it back with "git checkout ${keep} -- ${
              carried.join(" ")
            }".`
            : ""
        }`,
      );
    }
    const wt = new Git(journal.worktree);
    const branch = await wt.branch().catch(() => null);
    if (branch !== journal.branch) {
      problems.push(
        `the worktree is on "${branch ?? "a detached HEAD"}" instead of "${journal.branch}"`,
      );
    }
    // A merge left half done (conflicts and all): committing the leftovers would make it a
    // merge commit with the conflict markers in it. Git's index lock, left by a git command of
    // the turn stopped mid-write: every git command that writes the index fails, each tick.
    const wtGitDir = worktreeGitDir(journal.worktree);
    const unfinished = wtGitDir === null ? null : await unfinishedGit(wtGitDir);
    if (unfinished !== null) {
      problems.push(`in the worktree, ${unfinished}`);
      repair.push(`Finish or undo it in ${journal.worktree} (${REPAIR_UNFINISHED}).`);
    }
    if (currentBranch(tick.repo.gitDir) !== config.main) {
      problems.push(`the primary tree is no longer on ${config.main}`);
      repair.push(
        `Put the primary tree back with "git switch ${config.main}" in ${tick.repo.root}.`,
      );
    }
    // The agent may hold credentials and push to main itself; relay would then build its
    // paperwork on top and the review tick would call it "merged outside relay". HOLD when
    // the remote's main now has work of this turn: a commit made in the worktree during the
    // turn (reachable from its HEAD, not from the branch before the turn nor from main when
    // the turn began), or the worktree's HEAD itself. Other new commits on main are not
    // judged: a person may push anything to main from another clone during a turn, and
    // nothing tells those apart from an agent's push of a branch it then deleted (the
    // reflog check above catches that one when it pushed through the remote's name).
    let fetched = true;
    try {
      await primary.fetch(remote);
    } catch (err) {
      if (problems.length === 0) throw err;
      fetched = false;
    }
    const originMain = fetched
      ? await primary.resolve(`refs/remotes/${remote}/${config.main}`)
      : journal.originMain;
    if (!originMain) {
      problems.push(`${remote}/${config.main} no longer exists`);
    } else if (originMain !== journal.originMain) {
      const revs = async (args: string[]) =>
        (await primary.out(["rev-list", ...args, "--"])).split("\n").filter((l) => l !== "");
      const landed = new Set(await revs([originMain, `^${journal.originMain}`]));
      const head = await wt.resolve("HEAD");
      const made = head ? await revs([head, `^${journal.before}`, `^${journal.originMain}`]) : [];
      const ours = made.filter((c) => landed.has(c));
      if (head && landed.has(head) && !ours.includes(head)) ours.unshift(head);
      if (ours.length) {
        problems.push(
          `${remote}/${config.main} now contains ${
            ours.length === 1 ? "a commit" : `${ours.length} commits`
          } of this turn: ${ours.slice(0, 5).map((c) => c.slice(0, 12)).join(", ")}${
            ours.length > 5 ? ", …" : ""
          }`,
        );
        repair.push(
          `${remote}/${config.main} is at ${
            originMain.slice(0, 12)
          }: keep or revert the agent's commits there by hand.`,
        );
      }
    }
    const files = await primaryFiles(primary);
    if ((await sha256(JSON.stringify(files))) !== journal.primaryDiff) {
      const changed = changedPrimaryFiles(journal.primaryFiles ?? {}, files, INBOX_DIR);
      if (changed.length) problems.push(`files of the primary tree changed: ${changed.join(", ")}`);
    }
  }
  if (problems.length === 0) return null;
  return {
    // Usually the agent; sometimes a person working in the loop's clone during the turn.
    reason:
      `during run ${journal.runId}, the agent (or someone in this clone) did what relay will not build on: ${
        problems.join("; ")
      }`,
    next: [
      "relay pushed nothing.",
      ...repair,
      kept,
      `Inspect and repair by hand, then run "relay resume" to start a new attempt.`,
    ].join(" "),
    runId: journal.runId,
  };
}

/** Where the worktree's reflogs stand before the turn (see anchorTurn). */
export async function markWorktree(
  tick: ExecContext,
  worktree: string,
  branch: string,
): Promise<Pick<Journal, "turn">> {
  const gitDir = worktreeGitDir(worktree);
  return gitDir ? { turn: await markTurn(tick.repo.commonDir, gitDir, branch) } : {};
}

/**
 * Anchors every commit the turn made (`<run>-after-<k>`): what the worktree's HEAD points
 * at, the branch tip, and what their reflogs recorded during the turn — a commit on a
 * detached HEAD, or dropped from the branch, is on no ref otherwise, and moving the worktree
 * aside and pruning it would lose it. When the turn changed what steers git, no git runs:
 * relay reads the worktree's files and writes the refs as loose files itself.
 * Returns the refs that hold the turn's commits.
 */
async function anchorTurn(
  tick: ExecContext,
  journal: Journal,
  gitAllowed: boolean,
): Promise<string[]> {
  const common = tick.repo.commonDir;
  const mark = journalMark(common, journal);
  const prefix = turnAnchorPrefix(journal.task, journal.runId);
  const commits = await turnCommits(common, mark, journal.branch, [journal.before]);
  return gitAllowed
    ? await anchorWithGit(
      ready(tick).primary,
      prefix,
      commits,
      [journal.before],
      "relay: agent turn",
    )
    : await anchorWithoutGit(common, prefix, commits);
}

/** For a HOLD's advice: where the turn's commits are kept. */
function keptText(journal: Journal, refs: readonly string[]): string {
  const before = anchorRef(journal.task, journal.runId, "before");
  return refs.length === 0
    ? `relay found no commit of the turn (the branch before it is ${before}).`
    : `Every commit of the turn is kept under ${
      refs.join(", ")
    }, whatever happens to the worktree or ${journal.branch} (the branch before the turn is ${before}).`;
}
