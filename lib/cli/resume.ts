import { type Context, parseCommand, requireRepo } from "./args.ts";
import { statePaths } from "../state/paths.ts";

export async function resume(args: string[], ctx: Context): Promise<number> {
  parseCommand("resume", args, {}, { min: 0, max: 0 });
  const repo = requireRepo(ctx);
  const state = statePaths(repo.commonDir);
  const { clearHold, formatHold, readHold } = await import("../state/hold.ts");
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
  if (journal && journal.runId === hold.runId) {
    await archiveJournal(state.journal, state.runs, journal);
  }
  await clearHold(state.hold);
  console.log(`cleared: ${formatHold(hold).split("\n")[0]}`);
  if (journal) {
    console.log(
      `abandoned run ${journal.runId}; its work stays on ${journal.branch} and under refs/relay/anchors/`,
    );
  }
  return 0;
}
