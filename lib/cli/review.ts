/** `relay review`: the reviewer tick. */
import { type Context, parseCommand, printJson, requireRepo } from "./args.ts";

export async function review(args: string[], ctx: Context): Promise<number> {
  const { values } = parseCommand("review", args, {
    json: { type: "boolean" },
    quiet: { type: "boolean", short: "q" },
  }, { min: 0, max: 0 });
  const repo = requireRepo(ctx);
  const { runReviewTick } = await import("../loop/review.ts");
  const { stderrLog, silentLog } = await import("../loop/log.ts");
  const result = await runReviewTick({
    repo,
    ...(ctx.profile !== undefined ? { profileFlag: ctx.profile } : {}),
    progress: values.quiet ? "quiet" : Deno.stderr.isTerminal() ? "tty" : "plain",
    log: values.quiet ? silentLog : stderrLog,
  });
  if (values.json) printJson({ result: result.kind, ...result });
  else if (!(values.quiet && (result.kind === "idle" || result.kind === "busy"))) {
    console.log(result.message);
  }
  return result.kind === "human" ? 3 : 0;
}
