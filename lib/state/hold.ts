/**
 * A HOLD: the loop has stopped for a person. Recorded under `.git/relay/hold.json`
 * so every later tick (and `relay status`) shows the same reason on one screen
 * until a person clears it with `relay resume`.
 */
import { HoldError } from "../errors.ts";
import { readJson, removeFile, writeJson } from "./json_file.ts";
import { type Journal, readJournal, stepIndex } from "./journal.ts";

export interface Hold {
  task: number;
  reason: string;
  next: string;
  at: string;
  runId?: string;
  /** When cron.log was last told about this HOLD (its first report, then hourly reminders). */
  said?: string;
  /** About this machine alone (HoldError.local): its role's lease is not kept for it. */
  local?: true;
}

/** A tick that meets the HOLD on record: it stops there and launches nothing. */
export function holdOnRecord(hold: Hold): HoldError {
  return new HoldError(`${hold.reason} (task ${hold.task}, since ${hold.at})`, hold.next, {
    recorded: true,
  });
}

/**
 * Records a HOLD raised anywhere in either tick, once: a HOLD already on
 * record is kept (the first reason is the one a person needs). Preconditions
 * every tick checks again (`recheck`) are not recorded. When a run is
 * journaled (`journal`, the poll's), the HOLD names it and its `next` says
 * what `relay resume` will do with it (finish it, or abandon it for a new
 * attempt). Returns the HOLD this call wrote, or null.
 */
export async function persistHold(
  path: string,
  err: HoldError,
  task: number | null,
  journal?: string,
): Promise<Hold | null> {
  if (err.recheck || err.recorded) return null;
  if (await readHold(path)) return null;
  const run = journal === undefined ? null : await readJournal(journal);
  const at = new Date().toISOString();
  const hold: Hold = {
    task: run?.task ?? err.task ?? task ?? 0,
    reason: err.message,
    next: run
      ? `${err.next}${err.next.includes("\n") ? "\n" : " "}${resumeOutcome(run)}`
      : untilResume(err.next),
    at,
    ...(run ? { runId: run.runId } : {}),
    said: at,
    ...(err.local ? { local: true as const } : {}),
  };
  await writeHold(path, hold);
  return hold;
}

/**
 * A recorded HOLD stops both ticks until `relay resume`: advice that ends at
 * "fix the cause" (a push the remote refused: lift the protection) would leave
 * the loop stopped after a person followed it to the letter.
 */
export function untilResume(next: string): string {
  if (/relay resume/.test(next)) return next;
  return `${next}${next.includes("\n") ? "\n" : " "}Then run "relay resume".`;
}

export function readHold(path: string): Promise<Hold | null> {
  return readJson<Hold>(path);
}

export async function writeHold(path: string, hold: Hold): Promise<void> {
  await writeJson(path, hold);
}

export async function clearHold(path: string): Promise<void> {
  await removeFile(path);
}

export function formatHold(hold: Hold): string {
  return `HOLD on task ${hold.task} (since ${hold.at}): ${hold.reason}\n  next: ${hold.next}`;
}

/**
 * Whether `relay resume` keeps a held run for the next tick to finish rather
 * than abandon it: once its branch is pushed, the run's result is public (a
 * PR may be open, the paperwork commit may wait on main), and starting the
 * agent over would only repeat it.
 */
export function resumeKeepsRun(journal: Journal): boolean {
  // Once the agent's turn is committed, a HOLD is about pushing or paperwork: the next tick
  // retries that step. Rerunning a turn that may have cost an hour would only repeat the work.
  return stepIndex(journal.step) >= stepIndex("committed");
}

/** What `relay resume` will do with the held run, for the HOLD's `next`. */
export function resumeOutcome(journal: Journal): string {
  return resumeKeepsRun(journal)
    ? `Then run "relay resume": the next tick finishes run ${journal.runId} from where it stopped (the agent's turn is done; it is not run again).`
    : `Then run "relay resume": it abandons run ${journal.runId} (its work stays on ${journal.branch} and every commit of its turn under refs/relay/anchors/task-${journal.task}/${journal.runId}-*), and the next tick starts a new attempt.`;
}
