/**
 * The two effects that stop a tick for a person. `stop-on-hold`: a HOLD is
 * on record, and nothing runs until `relay resume`. `record-hold`: this tick
 * decided to stop; the HOLD is recorded (unless one already is: the first
 * reason is the one a person needs) and thrown to the tick runner, which says
 * it on one screen.
 */
import { HoldError } from "../../errors.ts";
import { holdOnRecord, readHold, writeHold } from "../../state/hold.ts";
import type { RecordHold } from "../../task/effects.ts";

export async function stopOnHold(path: string): Promise<never> {
  const hold = await readHold(path);
  if (hold) throw holdOnRecord(hold);
  // Cleared since the tick read it (a person ran relay resume): the next tick goes on.
  throw new HoldError(
    "the HOLD was cleared during this tick",
    "Nothing to do: the next tick goes on.",
    {
      recheck: true,
    },
  );
}

export async function recordHold(path: string, effect: RecordHold, task: number): Promise<never> {
  if (!(await readHold(path))) {
    await writeHold(path, {
      task: effect.task ?? task,
      reason: effect.reason,
      next: effect.next,
      at: new Date().toISOString(),
      ...(effect.runId !== undefined ? { runId: effect.runId } : {}),
    });
  }
  throw new HoldError(effect.reason, effect.next, { task: effect.task ?? task });
}
