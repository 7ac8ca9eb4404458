import { type Context, parseCommand, printJson, requireRepo } from "./args.ts";
import { statePaths } from "../state/paths.ts";

export const PROMOTE_BUSY = "busy: a tick is running; try again in a minute";

export async function promote(args: string[], ctx: Context): Promise<number> {
  const { values } = parseCommand("promote", args, { json: { type: "boolean" } }, {
    min: 0,
    max: 0,
  });
  const repo = requireRepo(ctx);
  // The executor's tick writes NEXT-STEPS.md and commits it: never change it under a running tick.
  const { tryLock } = await import("../state/lock.ts");
  await using lock = await tryLock(statePaths(repo.commonDir).pollLock, "promote");
  if (!lock) {
    if (values.json) printJson({ result: "busy", message: PROMOTE_BUSY });
    else console.log(PROMOTE_BUSY);
    return 0;
  }
  const { promoteNext } = await import("../loop/promote.ts");
  const { planGateFor } = await import("../loop/plan_gate.ts");
  const state = statePaths(repo.commonDir);
  const res = await promoteNext(repo.root, await planGateFor(repo.root, state));
  if (values.json) printJson(res);
  else if (res.result === "promoted") {
    console.log(
      `promoted task ${res.task}: ${res.title} (from ${res.from}) — NEXT-STEPS.md is OPEN`,
    );
  } else console.log(res.message);
  // Not promoted because the brief waits for a person's plan review: say so in the exit code.
  return res.result === "needs-plan" ? 1 : 0;
}
