/** `relay merge [<task>]`: gate, then merge through the forge, then promote the next brief. */
import { UsageError } from "../errors.ts";
import { type Context, parseCommand, printJson, requireRepo } from "./args.ts";

export async function merge(args: string[], ctx: Context): Promise<number> {
  const { values, positionals } = parseCommand("merge", args, { json: { type: "boolean" } }, {
    min: 0,
    max: 1,
  });
  let task: number | undefined;
  if (positionals[0] !== undefined) {
    task = Number(positionals[0]);
    if (!Number.isInteger(task) || task <= 0) {
      throw new UsageError(`"${positionals[0]}" is not a task number`, "merge");
    }
  }
  const repo = requireRepo(ctx);
  const { runMerge } = await import("../loop/review.ts");
  const { stderrLog } = await import("../proc/log.ts");
  const result = await runMerge({
    repo,
    progress: "plain",
    log: stderrLog,
    ...(task !== undefined ? { task } : {}),
  });
  if (values.json) {
    // Always a decision: the gate's, or NONE (with the reason) when no gate ran.
    const { decision, ...rest } = result;
    printJson({
      result: result.kind,
      ...rest,
      ...(decision ?? { decision: "NONE", reason: result.message, checks: [] }),
    });
  } else console.log(result.message);
  if (result.kind === "merged" || result.kind === "idle" || result.kind === "busy") return 0;
  const d = result.decision?.decision;
  return d === "REFUSE" ? 10 : d === "HUMAN" ? 11 : d === "WAIT" ? 12 : 1;
}
