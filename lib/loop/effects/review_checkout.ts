/**
 * The reviewer's disposable checkout: the reviewer and the worktrees an
 * interrupted tick left behind, the snapshot of what a reviewer must not
 * change, and how a turn that changed it anyway is thrown away without
 * destroying anything (its work kept under refs/relay/void/). The turn itself
 * is review_turn.ts.
 */
import { dirname, join, resolve } from "../../path.ts";
import { Git, NO_SUBMODULE_STATUS } from "../../git/git.ts";
import { FULL_ID } from "../../git/discover.ts";
import { orphanTurn, overdueText } from "../../agents/turn.ts";
import type { BuildOutputMatcher } from "../../git/build_output.ts";
import {
  anchorWithGit,
  anchorWithoutGit,
  turnCommits,
  type TurnMark,
  unreachable,
} from "../turn_anchors.ts";
import { withoutUntrackedBuildOutput } from "../build_output.ts";
import {
  hiddenState,
  moveWorktreeWithSubmodules,
  parseWorktreeList,
  type WorktreeEntry,
} from "../worktree.ts";
import { worktreeGitDir } from "../guard.ts";
import type { PlannerEvent } from "../../task/planner.ts";
import { forgeOf, type PlanContext, type PlanSubject, ready } from "./context.ts";

function now(): string {
  return new Date().toISOString();
}

/** The old review tick's view of the context, which the reviewer's turn and its checkout read. */
export interface Tick {
  repo: PlanContext["repo"];
  state: PlanContext["state"];
  log: PlanContext["log"];
  progress: PlanContext["progress"];
  primary: Git;
  config: ReturnType<typeof ready>["config"];
  profile: ReturnType<typeof ready>["profile"];
  /** Absent for a plan review: there is no PR yet to record a verdict on. */
  forge?: ReturnType<typeof forgeOf>;
}

/**
 * A tick killed during the reviewer's turn leaves the reviewer running in its own process
 * group: wait for it within its turn limit, stop it past that, never start a second one.
 * Returns the fact that it still runs; a turn of this task that ended unwatched is void
 * (emitted here).
 */
export async function settleOrphanReviewer(
  tick: Tick,
  s: Pick<PlanSubject, "task">,
  emit: (e: PlannerEvent) => Promise<void>,
): Promise<PlannerEvent | undefined> {
  const rj = await import("../review_journal.ts");
  const orphan = await rj.readReviewJournal(tick.state.reviewJournal);
  if (orphan) {
    const run = `pid ${orphan.pid}, run ${orphan.runId}`;
    const state = await orphanTurn(orphan, {
      stopping: (ranMs) =>
        tick.log.step(
          `the reviewer of an interrupted tick (${run}) passed its turn limit (${
            overdueText(orphan, ranMs)
          }); stopping its process group`,
        ),
    });
    if (state.kind === "running") {
      return {
        kind: "reviewer-still-running",
        message: `busy: the reviewer from an interrupted tick is still running (${run}${
          orphan.deadline ? `, turn limit at ${orphan.deadline}` : ""
        })${state.unverified ? `; ${state.unverified}, so relay will not stop it` : ""}`,
      };
    }
    if (state.kind === "stuck") {
      return {
        kind: "reviewer-still-running",
        message:
          `busy: the reviewer of an interrupted tick (${run}) is past its turn limit and did not stop on SIGTERM and SIGKILL; the next tick tries again`,
      };
    }
    let why = "interrupted";
    // Its outcome made it onto the record before the tick died: nothing is uncertain.
    if (await rj.outcomeRecorded(tick.state, orphan)) {
      await rj.clearReviewJournal(tick.state.reviewJournal);
      return undefined;
    }
    if (state.kind !== "stopped" && orphan.task === s.task) {
      // It ended on its own while no tick watched it: what it did and what it would have
      // said are unknown. Not replayed by itself (a paid turn, and it may act twice).
      const uncertain = orphan.uncertain ??
        { at: now(), why: "ended while no tick watched it" };
      await rj.writeReviewJournal(tick.state.reviewJournal, { ...orphan, uncertain });
      if (state.reused) tick.log.step(`not our reviewer: ${state.reused}`);
      return {
        kind: "review-held",
        reason: `task ${s.task}: uncertain ${
          orphan.role && orphan.role !== "reviewer" ? `${orphan.role} stage` : "reviewer"
        } turn: run ${orphan.runId} (pid ${orphan.pid}) ended while no tick watched it, so nobody checked what it did or what it concluded`,
        next:
          `relay does not run it again by itself (a replay is another paid turn, and may act twice). Look at .git/relay/runs/${orphan.runId}/, then either run it again with "relay resume --retry-uncertain", or ${
            orphan.role === "plan"
              ? `drop the queued brief with relay inbox drop ${s.task}`
              : `give up on the task with relay close ${s.task} --reason "…"`
          }.`,
        runId: orphan.runId,
      };
    }
    if (state.kind === "stopped") {
      why = "interrupted; stopped past its turn limit";
    } else {
      if (state.reused) tick.log.step(`not our reviewer: ${state.reused}`);
      tick.log.step(
        `the reviewer of run ${orphan.runId} ended while no tick watched it; its turn is void`,
      );
    }
    if (orphan.task === s.task) {
      await emit({ kind: "review-void", runId: orphan.runId, at: now(), why });
    }
    await rj.clearReviewJournal(tick.state.reviewJournal);
  }
  return undefined;
}

/** Snapshot of what a reviewer must not change (untracked build output aside: see build_output.ts). */
export async function snapshot(
  wt: Git,
  primary: Git,
  buildOutput: BuildOutputMatcher,
): Promise<{ head: string; status: string; refs: string }> {
  const refs = await refsOf(primary);
  return {
    head: await wt.head(),
    status: withoutUntrackedBuildOutput(
      await wt.out(["status", "--porcelain=v1", "--untracked-files=all", NO_SUBMODULE_STATUS]),
      buildOutput,
    ),
    refs,
  };
}

/** The repository's refs a reviewer must not move (relay's own and remote-tracking ones aside). */
export async function refsOf(primary: Git): Promise<string> {
  return (await primary.out(["for-each-ref", "--format=%(refname) %(objectname)"]))
    .split("\n").filter((l) =>
      !l.startsWith("refs/relay/") && !l.startsWith("refs/remotes/") &&
      // The tick's own lease renewals move the lease mirror during the turn (split machines).
      !l.startsWith("refs/relay-remote/leases/")
    )
    .join("\n");
}

/**
 * What a detached HEAD names, read from the worktree's own git dir as git reads it (the files
 * backend: `<gitdir>/HEAD` holds the commit id): null when HEAD is anything else (on a branch,
 * unreadable, another ref backend), and the caller asks git.
 */
export async function detachedHead(worktree: string): Promise<string | null> {
  const gitDir = worktreeGitDir(worktree);
  if (gitDir === null) return null;
  const text = await Deno.readTextFile(join(gitDir, "HEAD")).catch(() => "");
  const id = text.replace(/\n$/, "");
  return FULL_ID.test(id) ? id : null;
}

/**
 * Whether `path` is a worktree git has registered at that path, read from the files
 * `git worktree list` reads: the folder's `.git` names an admin folder under the repository's
 * `worktrees/`, whose `gitdir` names this folder's `.git`. False when they do not say so (then
 * the caller asks git for the list).
 */
async function registeredAt(commonDir: string, path: string): Promise<boolean> {
  const gitDir = worktreeGitDir(path);
  if (gitDir === null || resolve(dirname(gitDir)) !== resolve(commonDir, "worktrees")) {
    return false;
  }
  const back = (await Deno.readTextFile(join(gitDir, "gitdir")).catch(() => "")).trim();
  return back !== "" && resolve(dirname(back)) === resolve(path);
}

/** The ticks (each its own Git of the primary tree) that removed leftover per-run worktrees. */
const swept = new WeakSet<Git>();

/**
 * A review tick killed mid-turn (or a relay before the reusable checkout) leaves a per-run
 * worktree behind. Remove the clean ones (plain `git worktree remove` refuses anything dirty,
 * which then stays for a person to look at). Returns the worktrees still registered, or null
 * when this tick did so already (a tick leaves none while it runs: its turns' own checkouts go
 * after the turn, or are moved aside): then reviewCheckout reads the registration of its
 * checkout from git's files.
 */
export async function removeLeftoverReviewWorktrees(
  primary: Git,
): Promise<WorktreeEntry[] | null> {
  if (swept.has(primary)) return null;
  const list = parseWorktreeList(await primary.out(["worktree", "list", "--porcelain", "-z"]));
  const kept: WorktreeEntry[] = [];
  for (const w of list) {
    if (/[\\/]review-[^/\\]+-(review|polish|docs|security|plan)\d+-t\d$/.test(w.path)) {
      const res = await primary.run(["worktree", "remove", "--", w.path], { allowFail: true });
      if (res.code === 0) continue;
    }
    kept.push(w);
  }
  swept.add(primary);
  return kept;
}

/** The folder, under the worktree root, of the reviewer's checkout that turns share. */
export const REVIEW_CHECKOUT = "review";

/**
 * The checkout a reviewer-side turn runs in, on `head` and clean. One folder serves every
 * turn: switched with `git checkout --detach` (git writes only the files that differ, so a
 * turn costs what the change costs, not what the repository weighs), then rid of what
 * earlier turns left that git ignores or relay never commits, then verified: HEAD is `head`
 * and `git status --ignored` lists nothing. A checkout holding anything else (a turn killed
 * before relay looked at it) is moved aside, never cleaned, and a fresh one made. When the
 * folder is taken by something that is not this repository's worktree, the turn gets a
 * checkout of its own (`kept: false`: removed after the turn, as before). `verified`: HEAD is
 * `head` and nothing at all is changed, untracked or ignored (a new checkout is not looked at).
 *
 * Every look is made again for every turn, whatever the turn before found (an agent ran since,
 * and the finish stage's test_command runs the head's code): what is spared is only asking git
 * what its files say (HEAD, the registration) or what it said a moment ago.
 */
export async function reviewCheckout(
  primary: Git,
  opts: {
    root: string;
    head: string;
    runId: string;
    /** The worktrees git lists; null: not listed (asked of git's files, then of git). */
    registered: readonly WorktreeEntry[] | null;
    /** The repository's git dir, where git registers its worktrees. */
    commonDir: string;
    buildOutput: BuildOutputMatcher;
    log: { step(message: string): void };
  },
): Promise<{ path: string; kept: boolean; verified: boolean }> {
  const path = join(opts.root, REVIEW_CHECKOUT);
  const listed = (list: readonly WorktreeEntry[]) =>
    list.some((w) => resolve(w.path) === resolve(path));
  const mine = opts.registered !== null
    ? listed(opts.registered)
    : await registeredAt(opts.commonDir, path) ||
      listed(parseWorktreeList(await primary.out(["worktree", "list", "--porcelain", "-z"])));
  if (mine && await exists(path)) {
    const why = await switchClean(new Git(path), opts.head, opts.buildOutput);
    if (why === null) return { path, kept: true, verified: true };
    const aside = `${path}.stale-${opts.runId}`;
    // Moved by git, so it stays a worktree a person can look into with git; one with
    // submodules, which git refuses to move, by relay as git would (left where it is, beside a
    // fresh checkout, when that fails: a prune would delete its submodules' git data); any
    // other a plain rename, then a prune.
    const moved = await primary.run(["worktree", "move", "--", path, aside], { allowFail: true });
    if (moved.code !== 0 && /submodules/.test(moved.stderr)) {
      const done = await moveWorktreeWithSubmodules(primary, path, aside);
      opts.log.step(
        done === null
          ? `the reviewer's checkout was not clean (${why}) and holds submodules, which could not be moved: left at ${path}`
          : `the reviewer's checkout was not clean (${why}): moved aside to ${aside}${done.said}`,
      );
    } else {
      if (moved.code !== 0) {
        await Deno.rename(path, aside);
        await primary.run(["worktree", "prune"]);
      }
      opts.log.step(`the reviewer's checkout was not clean (${why}): moved aside to ${aside}`);
    }
  } else if (mine) await primary.run(["worktree", "prune"]);
  if (await exists(path)) {
    const own = join(opts.root, `review-${opts.runId}`);
    await addDetached(primary, own, opts.head);
    return { path: own, kept: false, verified: false };
  }
  await addDetached(primary, path, opts.head);
  return { path, kept: true, verified: false };
}

async function addDetached(primary: Git, path: string, head: string): Promise<void> {
  await primary.run(["worktree", "add", "--quiet", "--detach", "--", path, head]);
}

/**
 * Switches a reused checkout to `head` and clears what earlier turns left; returns null
 * when it is then clean, or what is in the way (nothing is deleted then). Git runs three times
 * when the checkout is already at the head and holds nothing (hidden entries, status, clean),
 * once more to switch it, and once more to verify it when there was something to clean.
 */
async function switchClean(
  wt: Git,
  head: string,
  buildOutput: BuildOutputMatcher,
): Promise<string | null> {
  // First what status does not show (an edit under --assume-unchanged, which a checkout
  // could overwrite unasked; a merge left in progress): then the checkout is not touched.
  const hidden = await hiddenState(wt);
  if (hidden !== null) return hidden;
  // Already detached at the head (the tick's previous turn was on it): a checkout of the commit
  // HEAD is on changes no file, and keeps whatever is changed, as the status below then shows.
  if (await detachedHead(wt.cwd) !== head) {
    const co = await wt.run(["checkout", "--quiet", "--detach", head], { allowFail: true });
    if (co.code !== 0) {
      return `git checkout ${head.slice(0, 12)}: ${co.stderr.trim().split("\n")[0]}`;
    }
  }
  // "normal" lists a wholly untracked folder once (node_modules/), not file by file; with
  // --ignored, what git ignores too (as "!! "), and the other entries as without it.
  const left = (await wt.out([
    "status",
    "--porcelain=v1",
    "-z",
    "--untracked-files=normal",
    "--ignored",
    NO_SUBMODULE_STATUS,
  ])).split("\0").filter((e) => e !== "");
  const foreign = left.filter((e) =>
    !e.startsWith("!! ") && (!e.startsWith("?? ") || !buildOutput.match(e.slice(3)))
  );
  if (foreign.length) return `${foreign.length} change(s), e.g. ${foreign[0]}`;
  // Ignored files and untracked build output are earlier turns' leftovers, as a fresh
  // checkout would not have them; one -f leaves nested repositories, which the check sees.
  // Run even when status listed nothing: it also removes what status never shows (an empty
  // folder, a folder whose only content is under a `.git` folder of its own).
  await wt.run(["clean", "-d", "-x", "-f", "-q"]);
  // Nothing listed, HEAD at the head: cleaning only deletes untracked files, so it cannot
  // leave anything for status to list.
  if (left.length === 0 && await detachedHead(wt.cwd) === head) return null;
  const check = (await wt.out([
    "status",
    "--porcelain=v2",
    "--branch",
    "-z",
    "--untracked-files=all",
    "--ignored",
    NO_SUBMODULE_STATUS,
  ])).split("\0").filter((e) => e !== "");
  const oid = check.find((e) => e.startsWith("# branch.oid "))?.slice("# branch.oid ".length);
  if (oid !== head) return `HEAD is ${oid?.slice(0, 12) ?? "unknown"} after the checkout`;
  const rest = check.filter((e) => !e.startsWith("# "));
  return rest.length ? `${rest.length} file(s) left after cleaning, e.g. ${rest[0]}` : null;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Commits the reviewer made and left on no ref (committed on its detached HEAD, then
 * checked the PR head out again): its worktree's HEAD reflog is their only trace, and
 * that goes when the worktree does. Kept under refs/relay/void/<run>/commit-<k>; without
 * git when the turn changed what steers git. Returns the refs.
 */
export async function keepReviewerCommits(
  tick: Tick,
  runId: string,
  turn: TurnMark,
  head: string,
  gitAllowed: boolean,
): Promise<string[]> {
  const prefix = `refs/relay/void/${runId}/commit-`;
  const made = await turnCommits(tick.repo.commonDir, turn, null, [head]);
  if (!gitAllowed) return await anchorWithoutGit(tick.repo.commonDir, prefix, made);
  // A checkout of main or another commit that a ref already keeps is not the reviewer's work.
  const lost = await unreachable(tick.primary, made);
  return await anchorWithGit(tick.primary, prefix, lost, [], "relay: void reviewer turn");
}

/**
 * Throws a void reviewer turn away without destroying anything: a moved HEAD
 * and new refs are kept under refs/relay/void/<run>/, and the dirty worktree
 * folder is moved aside, not deleted.
 */
export async function voidTurn(
  tick: Tick,
  worktree: string,
  runId: string,
  before: { head: string; refs: string },
  after: { head: string; refs: string },
): Promise<void> {
  const keep = `refs/relay/void/${runId}`;
  if (after.head !== before.head) {
    await tick.primary.updateRef(`${keep}/HEAD`, after.head, "relay: void reviewer turn");
  }
  // Refs go back to how they were; what the reviewer pointed them at is kept under refs/relay/void/.
  const parse = (text: string) =>
    new Map(text.split("\n").filter((l) => l).map((l) => l.split(" ") as [string, string]));
  const was = parse(before.refs);
  const now = parse(after.refs);
  const restore = "relay: restore after a void reviewer turn";
  for (const [ref, sha] of now) {
    if (was.get(ref) === sha) continue;
    await tick.primary.updateRef(`${keep}/${ref}`, sha, "relay: void reviewer turn");
    const old = was.get(ref);
    if (old) await tick.primary.updateRef(ref, old, restore, sha);
    else await tick.primary.deleteRef(ref, sha);
  }
  for (const [ref, sha] of was) {
    if (!now.has(ref)) await tick.primary.updateRef(ref, sha, restore, "");
  }
  const aside = voidFolder(worktree, runId);
  await Deno.rename(worktree, aside);
  await tick.primary.run(["worktree", "prune"]);
  tick.log.step(`kept the void turn's files at ${aside}`);
}

/**
 * Where a void reviewer turn's checkout is moved: named by the run, since the reusable
 * checkout's folder name is the same every turn.
 */
export function voidFolder(worktree: string, runId: string): string {
  return join(dirname(worktree), `review-${runId}.void`);
}
