import { join } from "node:path";
import { type Context, parseCommand, requireRepo } from "./args.ts";
import { statePaths } from "../state/paths.ts";

/**
 * `relay resume`: clears the HOLD. A held run whose branch was not pushed yet
 * is abandoned (recorded as a failed attempt; its work stays on the branch and
 * under the anchors) so the next tick starts a new attempt; a run that already
 * pushed its branch is kept, and the next tick finishes it.
 */
export async function resume(args: string[], ctx: Context): Promise<number> {
  parseCommand("resume", args, {}, { min: 0, max: 0 });
  const repo = requireRepo(ctx);
  const state = statePaths(repo.commonDir);
  const { clearHold, formatHold, readHold, resumeKeepsRun } = await import("../state/hold.ts");
  const { archiveJournal, readJournal } = await import("../state/journal.ts");
  const { tryLock } = await import("../state/lock.ts");
  await using lock = await tryLock(state.pollLock, "resume");
  if (!lock) {
    console.log("busy: a tick is running; try again when it ends");
    return 0;
  }
  const hold = await readHold(state.hold);
  if (!hold) {
    console.log("no HOLD to clear");
    return 0;
  }
  const journal = await readJournal(state.journal);
  const held = journal !== null && hold.runId !== undefined && journal.runId === hold.runId;
  let outcome: string | null = null;
  if (journal && held && resumeKeepsRun(journal)) {
    outcome =
      `kept run ${journal.runId}: its branch ${journal.branch} is already pushed; the next poll finishes it (from step "${journal.step}")`;
  } else if (journal && held) {
    await recordAbandoned(state.runs, state.tasks, journal.runId, journal.task, hold.reason);
    await archiveJournal(state.journal, state.runs, journal);
    outcome =
      `abandoned run ${journal.runId}; its work stays on ${journal.branch} and under refs/relay/anchors/task-${journal.task}/; the next poll starts a new attempt`;
  } else if (journal) {
    outcome = `run ${journal.runId} was not the held run; the next poll carries on with it`;
  }
  await clearHold(state.hold);
  console.log(`cleared: ${formatHold(hold).split("\n")[0]}`);
  if (outcome) console.log(outcome);
  return 0;
}

/** Counts the abandoned run as a failed attempt at its brief, so the next one is numbered after it. */
async function recordAbandoned(
  runsDir: string,
  tasksDir: string,
  runId: string,
  task: number,
  reason: string,
): Promise<void> {
  const { parseBrief, writeBrief } = await import("../protocol/brief.ts");
  const { sha256 } = await import("../loop/hash.ts");
  const { recordAttempt } = await import("../state/tasks.ts");
  let text: string;
  try {
    text = await Deno.readTextFile(join(runsDir, runId, "brief.md"));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return;
    throw err;
  }
  const brief = parseBrief(text, join(runsDir, runId, "brief.md"));
  await recordAttempt(tasksDir, task, {
    runId,
    brief: await sha256(writeBrief({ ...brief, status: "OPEN" })),
    started: runId,
    result: "failed",
    reason: `abandoned by relay resume after a HOLD: ${reason}`,
  });
}
