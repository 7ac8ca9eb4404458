/**
 * An orphaned agent: its tick died (SIGKILL, reboot, OOM) while the agent ran
 * on. The journal keeps its pid, start time and deadline, so a later tick can
 * tell whether that pid is still our agent, wait for it while it is within
 * its turn limit, and stop it once it is past it.
 */
import { isAlive } from "../proc/alive.ts";
import { stopGroup } from "../proc/run.ts";
import { processStartTime } from "../proc/started.ts";
import type { Journal } from "../state/journal.ts";

/** How far the start time ps reports may be from the journaled one for the pid to be ours. */
export const START_TOLERANCE_MS = 5_000;
/** Between SIGTERM and SIGKILL when stopping an orphan. */
export const ORPHAN_GRACE_MS = 5_000;

export type OrphanState =
  /** Our agent, within its turn limit (or with no limit on record). */
  | { kind: "running"; unverified?: string }
  /** Our agent, past its deadline. */
  | { kind: "overdue"; startedMs: number }
  /** No agent runs: it ended, or its pid now belongs to another process. */
  | { kind: "gone"; reused?: string };

export async function orphanState(journal: Journal, now = Date.now()): Promise<OrphanState> {
  const pid = journal.agentPid;
  if (pid === undefined || !(await isAlive(pid))) return { kind: "gone" };
  // Journals written before start times were recorded: nothing to check against.
  if (journal.agentStarted === undefined) return { kind: "running" };
  const journaled = Date.parse(journal.agentStarted);
  const actual = await processStartTime(pid);
  if (actual === null) {
    return { kind: "running", unverified: `cannot read the start time of pid ${pid} with ps` };
  }
  if (Number.isNaN(journaled) || Math.abs(actual.getTime() - journaled) > START_TOLERANCE_MS) {
    return {
      kind: "gone",
      reused:
        `pid ${pid} now belongs to a process started ${actual.toISOString()}, not at ${journal.agentStarted}`,
    };
  }
  const deadline = journal.agentDeadline === undefined ? NaN : Date.parse(journal.agentDeadline);
  if (!Number.isNaN(deadline) && now > deadline) return { kind: "overdue", startedMs: journaled };
  return { kind: "running" };
}

/** SIGTERM to the orphan's process group, SIGKILL after the grace period. True when it is gone. */
export async function stopOrphan(pid: number, graceMs = ORPHAN_GRACE_MS): Promise<boolean> {
  return await stopGroup(pid, () => isAlive(pid), graceMs);
}
