/**
 * The reviewer turn in progress, journaled in `.git/relay/review-journal.json`
 * from the moment the reviewer starts until its turn ends. A review tick
 * killed mid-turn (SIGKILL, reboot) leaves it behind with the reviewer still
 * running in its own process group; the next tick reads it to wait for that
 * reviewer, stop it past its turn limit, or note the lost turn — never to
 * start a second reviewer beside it (orphanTurn in lib/agents/orphan.ts decides).
 */
import { readJson, removeFile, writeJson } from "../state/json_file.ts";
import type { StatePaths } from "../state/paths.ts";

export interface ReviewJournal {
  version: 1;
  runId: string;
  task: number;
  /** The reviewer's pid (the leader of its process group). */
  pid: number;
  /** When it started (ISO): tells our reviewer from a process that got the pid later. */
  started: string;
  /** started + the turn limit (ISO); absent when there is no limit. */
  deadline?: string;
  /** Linux: the reviewer's boot id and start ticks, which no wall-clock step moves (procStart). */
  stamp?: string;
  /** Its disposable worktree. */
  worktree: string;
  /** Which reviewer-side turn it is: "reviewer", or a stage (plan, polish, docs, security). */
  role?: string;
  /**
   * The PR head the turn judges, its branch and the brief whose report it reads (a fix brief
   * has its own number). Absent in journals written before they were kept. `machines: split`
   * compares them with the remote, to tell a turn whose round another machine settled.
   */
  head?: string;
  branch?: string;
  brief?: number;
  /**
   * `machines: split`: how long the reviewer lease the turn ran under lasts (timeouts.lease then);
   * a later tick judges another machine's verdict on the round by it, not by the config it reads
   * then. Absent in journals written before it was kept, and in mode one.
   */
  leaseMs?: number;
  /**
   * Set when a later tick found the reviewer gone with no tick watching it: an
   * uncertain turn, kept here (and named by the HOLD) until a person decides.
   */
  uncertain?: { at: string; why: string };
}

export async function readReviewJournal(path: string): Promise<ReviewJournal | null> {
  return await readJson<ReviewJournal>(path);
}

export async function writeReviewJournal(path: string, journal: ReviewJournal): Promise<void> {
  await writeJson(path, journal);
}

export async function clearReviewJournal(path: string): Promise<void> {
  await removeFile(path);
}

/**
 * Whether the turn `journal` names has its outcome on the task's record (a verdict, a void or
 * a stage's receipt of that run): the turn ended and was accounted for, and only the tick that
 * wrote it died before it cleared the journal. Such a journal is stale: nothing is uncertain.
 */
export async function outcomeRecorded(state: StatePaths, journal: ReviewJournal): Promise<boolean> {
  const { readReview } = await import("../state/tasks.ts");
  const record = await readReview(state, journal.task, `task-${journal.task}`);
  return record.verdicts.some((v) => v.runId === journal.runId) ||
    record.voids.some((v) => v.runId === journal.runId) ||
    (record.stages ?? []).some((r) => r.runId === journal.runId);
}

/**
 * Records the journaled turn as void on its task's review record, once (its run on record
 * already: nothing to add): what relay resume --retry-uncertain and a split machine's stale
 * turn (lib/loop/review_stale.ts) both leave behind.
 */
export async function recordVoid(
  state: StatePaths,
  journal: ReviewJournal,
  branch: string,
  why: string,
): Promise<void> {
  const { readReview, writeReview } = await import("../state/tasks.ts");
  const record = await readReview(state, journal.task, branch);
  if (record.voids.some((v) => v.runId === journal.runId)) return;
  record.voids.push({ runId: journal.runId, at: new Date().toISOString(), why });
  await writeReview(state, record);
}

/**
 * Clears the review journal when its turn's outcome is on record (`outcomeRecorded`), so a
 * stale journal does not keep the reviewer's lease (`machines: split`) on a machine whose
 * tick found no turn to run. A journal of a turn not accounted for is left to the next turn's
 * settleOrphanReviewer.
 */
export async function clearRecordedReviewJournal(state: StatePaths): Promise<void> {
  const journal = await readReviewJournal(state.reviewJournal);
  if (journal && await outcomeRecorded(state, journal)) {
    await clearReviewJournal(state.reviewJournal);
  }
}

/**
 * Thrown by the review when the reviewer of an interrupted tick still runs;
 * the tick turns it into a "busy" result.
 */
export class ReviewerStillRunning extends Error {
  override name = "ReviewerStillRunning";
}
