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
  const { clearHold, readHold, resumeKeepsRun } = await import("../state/hold.ts");
  const { readJournal } = await import("../state/journal.ts");
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
      `kept run ${journal.runId}: the agent's turn is done; the next poll carries on from step "${journal.step}" without running it again`;
  } else if (journal && held) {
    const { abandonRun } = await import("../loop/abandon.ts");
    await abandonRun(state, journal, `abandoned by relay resume after a HOLD: ${hold.reason}`);
    outcome =
      `abandoned run ${journal.runId}; its work stays on ${journal.branch} and every commit of its turn under refs/relay/anchors/task-${journal.task}/${journal.runId}-*; the next poll starts a new attempt`;
  } else if (journal) {
    outcome = `run ${journal.runId} was not the held run; the next poll carries on with it`;
  }
  await clearHold(state.hold);
  // From now on, `relay status` shows tick records from before this as history.
  const { recordHoldCleared } = await import("../state/last_tick.ts");
  await recordHoldCleared(repo.commonDir, "resume", hold);
  // The whole reason, every line of it (a gate or git message often has several); the HOLD's
  // "next:" is left out: that is what the person has just done.
  console.log(`cleared: HOLD on task ${hold.task} (since ${hold.at}): ${hold.reason}`);
  if (outcome) console.log(outcome);
  return 0;
}
