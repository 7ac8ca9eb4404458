/**
 * An orphaned turn: its tick died (SIGKILL, reboot, OOM) while the agent ran
 * on in its own process group. The tick journaled the turn's pid, start time
 * and deadline (on Linux also its stamp: boot id and start ticks), so a later
 * tick can tell whether that pid is still our agent, wait for it while it is
 * within its turn limit, and stop it once it is past it. With a stamp, both
 * questions are answered on the kernel's boot clock, which a step of the wall
 * clock (NTP, a laptop waking) does not move; without one, by ps's start time
 * and the journaled deadline. The executor's and the reviewer's turns (and any later role's) are
 * decided here alike; what each tick then says and records is its own.
 */
import { formatDuration } from "../config/duration.ts";
import { forgetFetches } from "../git/git.ts";
import { isAlive } from "../proc/alive.ts";
import { stopGroup } from "../proc/run.ts";
import { processStartTime, type ProcStart, procStart } from "../proc/started.ts";
import type { TurnOutcome } from "./turn.ts";

/**
 * Without a stamp: how far the start time ps reports may be from the journaled one for the pid
 * to be ours.
 */
export const START_TOLERANCE_MS = 5_000;
/** Between SIGTERM and SIGKILL when stopping an orphan. */
export const ORPHAN_GRACE_MS = 5_000;

/** A turn as a tick journaled it when its program started. */
export interface JournaledTurn {
  /** The leader of the turn's process group; absent when the turn had no process (a demo agent). */
  pid?: number | undefined;
  /** When it started (ISO); absent in journals written before start times were recorded. */
  started?: string | undefined;
  /** started + the turn limit (ISO); absent when there is no limit. */
  deadline?: string | undefined;
  /**
   * Linux: the process's boot id and start ticks at launch (`procStart`). With it the pid is
   * told from a reused one, and the turn limit measured, by a clock that no step of the wall
   * clock moves. Absent elsewhere and in journals written before it was kept.
   */
  stamp?: string | undefined;
}

export type OrphanState =
  /** Our agent, within its turn limit (or with no limit on record). */
  | { kind: "running"; unverified?: string }
  /** Our agent, past its deadline. */
  | { kind: "overdue"; startedMs: number }
  /** No agent runs: it ended, or its pid now belongs to another process. */
  | { kind: "gone"; reused?: string };

/**
 * Whether the journaled turn still runs, is past its turn limit, or is gone. `now` (the wall
 * clock) weighs the journaled deadline; a turn whose stamp its pid still has is weighed by how
 * long it has run instead, and `now` only dates its start.
 */
export async function orphanState(turn: JournaledTurn, now = Date.now()): Promise<OrphanState> {
  const pid = turn.pid;
  if (pid === undefined) return { kind: "gone" };
  if (turn.stamp !== undefined) {
    const seen = await procStart(pid);
    // Unreadable: no such pid now (isAlive says so below), or not Linux any more.
    if (seen !== null) return stampedState(pid, turn, turn.stamp, seen, now);
  }
  if (!(await isAlive(pid))) return { kind: "gone" };
  // Journals written before start times were recorded: nothing to check against.
  if (turn.started === undefined) return { kind: "running" };
  const journaled = Date.parse(turn.started);
  const actual = await processStartTime(pid);
  if (actual === null) {
    return { kind: "running", unverified: `cannot read the start time of pid ${pid} with ps` };
  }
  if (Number.isNaN(journaled) || Math.abs(actual.getTime() - journaled) > START_TOLERANCE_MS) {
    return {
      kind: "gone",
      reused:
        `pid ${pid} now belongs to a process started ${actual.toISOString()}, not at ${turn.started}`,
    };
  }
  const deadline = turn.deadline === undefined ? NaN : Date.parse(turn.deadline);
  if (!Number.isNaN(deadline) && now > deadline) return { kind: "overdue", startedMs: journaled };
  return { kind: "running" };
}

/**
 * The turn limit as journaled (deadline - started, read together: no clock step between);
 * undefined with none, or with one no tick writes (not after its start).
 */
export function turnLimitMs(turn: JournaledTurn): number | undefined {
  if (turn.deadline === undefined || turn.started === undefined) return undefined;
  const limit = Date.parse(turn.deadline) - Date.parse(turn.started);
  return limit > 0 ? limit : undefined;
}

/** The state of a turn whose stamp was journaled, by the process's own clock. */
function stampedState(
  pid: number,
  turn: JournaledTurn,
  stamp: string,
  seen: ProcStart,
  now: number,
): OrphanState {
  if (seen.zombie) return { kind: "gone" };
  if (seen.stamp !== stamp) {
    return {
      kind: "gone",
      reused: `pid ${pid} now belongs to another process (${seen.stamp}, not ${stamp})`,
    };
  }
  const limit = turnLimitMs(turn);
  if (limit !== undefined && seen.elapsedMs > limit) {
    return { kind: "overdue", startedMs: now - seen.elapsedMs };
  }
  return { kind: "running" };
}

/**
 * "ran 31m5s of 30m": how an overdue turn is told in the tick's log (`stopping`), by the time it
 * ran, not by its journaled deadline, which a step of the wall clock may have put ahead.
 */
export function overdueText(turn: JournaledTurn, ranMs: number): string {
  const limit = turnLimitMs(turn);
  return `ran ${formatDuration(ranMs)}${limit === undefined ? "" : ` of ${formatDuration(limit)}`}`;
}

/** SIGTERM to the orphan's process group, SIGKILL after the grace period. True when it is gone. */
export async function stopOrphan(pid: number, graceMs = ORPHAN_GRACE_MS): Promise<boolean> {
  return await stopGroup(pid, () => isAlive(pid), graceMs);
}

/** What a later tick does about a turn its tick left behind. */
export type OrphanDecision =
  /** Still our agent, within its limit: wait for it (the tick is busy); never start a second one. */
  | { kind: "running"; unverified?: string }
  /** It was past its turn limit and its process group is now stopped: the turn timed out. */
  | { kind: "stopped"; outcome: TurnOutcome }
  /** It ended while no tick watched it (or its pid is another process's now): its exit is unknown. */
  | { kind: "gone"; outcome: TurnOutcome; reused?: string }
  /** Past its turn limit and still there after SIGTERM and SIGKILL: the next tick tries again. */
  | { kind: "stuck" };

export interface OrphanOptions {
  /**
   * Called just before an overdue turn's process group is stopped, with how long it has run,
   * so the tick's log says so before the grace period runs.
   */
  stopping?: (ranMs: number) => void;
  /** The wall clock's time, as orphanState takes it. */
  now?: number;
  /** Between SIGTERM and SIGKILL; ORPHAN_GRACE_MS by default. */
  graceMs?: number;
}

/**
 * The one decision both ticks make about a journaled turn: wait while it runs
 * within its limit, stop its group past it, or take it as lost. An overdue
 * turn that stops counts as timed out (it ran from its start until now); a
 * gone one as interrupted with no duration.
 */
export async function orphanTurn(
  turn: JournaledTurn,
  opts: OrphanOptions = {},
): Promise<OrphanDecision> {
  // A turn no tick watched may have pushed: no fetch from before this look stands for one after.
  forgetFetches();
  const state = await orphanState(turn, opts.now);
  if (state.kind === "running") return state;
  if (state.kind === "overdue") {
    opts.stopping?.(Date.now() - state.startedMs);
    if (!(await stopOrphan(turn.pid!, opts.graceMs))) return { kind: "stuck" };
    return {
      kind: "stopped",
      outcome: {
        exitCode: null,
        signal: null,
        timedOut: true,
        durationMs: Date.now() - state.startedMs,
        interrupted: true,
      },
    };
  }
  return {
    kind: "gone",
    outcome: { exitCode: null, signal: null, timedOut: false, durationMs: 0, interrupted: true },
    ...(state.reused ? { reused: state.reused } : {}),
  };
}
