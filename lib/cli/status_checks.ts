/**
 * What stands in a tick's way, for `relay status`: the checks a poll makes
 * before it starts anything (run here the same way, with no git process and
 * no network), what is on the primary tree but not yet on main, and the
 * waiting line's words for a blocker, a failed last tick or a HOLD it stopped
 * at. The screen itself is status.ts.
 */
import { CONFIG_FILE } from "../state/paths.ts";
import { currentBranch, operationInProgress, type RepoPaths } from "../git/discover.ts";
import type { LastTick } from "../state/last_tick.ts";
import type { Step } from "../state/journal.ts";

/** Something that stops every tick before it does its work. */
export interface Blocker {
  /** Short, for the waiting line: `.relay/config.yaml is invalid`. */
  what: string;
  /** The full problem line, with the fix. */
  problem: string;
  /** A HOLD-like state (exit 3) rather than bad input (exit 2). */
  hold: boolean;
  /** Only `relay poll` checks it; the review tick is not stopped by it. */
  pollOnly: boolean;
}

function isDir(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/**
 * The cheap checks a poll makes before it starts anything, run the same way:
 * the repo config and the operator profile load, the primary tree is on main
 * with no merge or rebase in progress, and an interrupted run's worktree is
 * still there. No git process and no network.
 */
export async function preflight(
  repo: RepoPaths,
  profileFlag: string | undefined,
  journal: { runId: string; worktree: string; branch: string; step: Step; task: number } | null,
  /** Something will start an agent: without it, a missing profile blocks nothing yet. */
  agentsNeeded: boolean,
): Promise<Blocker[]> {
  const { loadRepoConfig } = await import("../config/repo_load.ts");
  const { loadProfile, profilePath } = await import("../config/profile_load.ts");
  const { stepIndex } = await import("../state/journal.ts");
  const blockers: Blocker[] = [];
  const message = (err: unknown) => (err as Error)?.message ?? String(err);
  let main: string | null = null;
  try {
    main = (await loadRepoConfig(repo.root)).main;
  } catch (err) {
    blockers.push({
      what: `${CONFIG_FILE} is invalid`,
      problem: message(err),
      hold: false,
      pollOnly: false,
    });
  }
  try {
    if (agentsNeeded) await loadProfile(profilePath(profileFlag));
  } catch (err) {
    blockers.push({
      what: "the operator profile cannot be loaded",
      problem: message(err),
      hold: false,
      pollOnly: false,
    });
  }
  const branch = currentBranch(repo.gitDir);
  if (main !== null && branch !== main) {
    const on = branch === null ? "a detached HEAD" : `"${branch}"`;
    blockers.push({
      what: `the primary tree is on ${on}, not "${main}"`,
      problem:
        `The primary tree is on ${on}, not "${main}": every poll stops with a HOLD.\n  fix: run "git switch ${main}" in ${repo.root}; relay works in its own worktrees and keeps the primary tree on ${main}.`,
      hold: true,
      pollOnly: true,
    });
  }
  const op = operationInProgress(repo.gitDir);
  if (op) {
    blockers.push({
      what: `the primary tree is in the middle of ${op}`,
      problem:
        `The primary tree is in the middle of ${op}: every poll stops with a HOLD.\n  fix: finish or abort it in ${repo.root}.`,
      hold: true,
      pollOnly: true,
    });
  }
  if (journal && !isDir(journal.worktree)) {
    // Before its turn is committed, a commit of the run may be on no branch: only the
    // worktree's reflog (gone with a prune) knows it until the poll anchors it.
    const committed = stepIndex(journal.step) >= stepIndex("committed");
    blockers.push({
      what: `the worktree of run ${journal.runId} is gone`,
      problem: committed
        ? `Cannot finish run ${journal.runId}: its worktree "${journal.worktree}" does not exist.\n  fix: in ${repo.root}, run "git worktree prune" and "git worktree add ${journal.worktree} ${journal.branch}" (the branch keeps what was committed), then the next poll carries on.`
        : `Cannot finish run ${journal.runId}: its worktree "${journal.worktree}" does not exist.\n  fix: run "relay poll" before anything else (no "git worktree prune" yet): it keeps every commit of the turn under refs/relay/anchors/task-${journal.task}/ and says what to do next.`,
      hold: true,
      pollOnly: true,
    });
  }
  return blockers;
}

/**
 * When the tick's last run failed, what the waiting line adds; only for a
 * record that is current (see isCurrentTick): a failure of another task, or
 * from before a person cleared a HOLD, is history. A HOLD is left out: see
 * tickHold.
 */
export function lastFailed(tick: LastTick | null, current: boolean): string | null {
  if (!tick || !current) return null;
  if (tick.exit === 0 || tick.result === "human" || tick.result === "hold") return null;
  return `the last ${tick.command} failed (exit ${tick.exit} at ${tick.at}; see "last ${tick.command}" above)`;
}

/** The HOLDs checkPrimary() in lib/loop/poll.ts raises, which preflight() re-checks. */
const PREFLIGHT_HOLD = /^HOLD: The primary tree is (on |in the middle of )/;

/**
 * A HOLD the last tick stopped at that hold.json does not carry (one found
 * before any work starts, e.g. origin/main missing: it clears by itself once
 * the cause is fixed). While its record is current, it is what the loop waits
 * on: the waiting line says what the HOLD says, never "the next poll starts".
 */
export function tickHold(tick: LastTick | null, current: boolean): string | null {
  if (!tick || !current || tick.result !== "hold") return null;
  // The primary tree's branch and a merge or rebase in progress are checked live by
  // preflight: while they stand, the blocked line says so; once fixed, the HOLD is over.
  if (PREFLIGHT_HOLD.test(tick.message)) return null;
  return `${tick.message}\n  (the last ${tick.command} stopped here at ${tick.at}; the next ${tick.command} checks again)`;
}

/**
 * REVIEWER.md or the repo config in the primary tree but not on origin/main
 * (as of the last fetch: status itself never fetches). Never fails status.
 */
export async function unpublished(repo: RepoPaths): Promise<string[]> {
  const { loadRepoConfig } = await import("../config/repo_load.ts");
  const { Git } = await import("../git/git.ts");
  const { unpublishedWarning } = await import("../loop/unpublished.ts");
  const { personCwd } = await import("../proc/shell.ts");
  try {
    const { remote, main } = await loadRepoConfig(repo.root).catch(() => ({
      remote: "origin",
      main: "main",
    }));
    const line = await unpublishedWarning(new Git(repo.root), { remote, main, cwd: personCwd() });
    return line ? [line] : [];
  } catch {
    return [];
  }
}

/** The waiting line when checks stop the tick that would act next. */
export function blockedLine(subject: string, tick: "poll" | "review", blockers: Blocker[]): string {
  return `blocked: ${subject}, but every ${tick} stops: ${blockers.map((b) => b.what).join("; ")}`;
}
