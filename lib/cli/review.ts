/**
 * `relay review`: the reviewer tick. Each tick records how it ended in
 * `.git/relay/last-review.json` (for `relay status`), also when it throws.
 */
import { type Context, parseCommand, printJson, requireRepo } from "./args.ts";

export async function review(args: string[], ctx: Context): Promise<number> {
  const { values } = parseCommand("review", args, {
    json: { type: "boolean" },
    quiet: { type: "boolean", short: "q" },
  }, { min: 0, max: 0 });
  const repo = requireRepo(ctx);
  const { runReviewTick } = await import("../loop/review.ts");
  const { stderrLog, silentLog, stamped } = await import("../loop/log.ts");
  const { failedTick, lastTick, saveLastTick } = await import("../state/last_tick.ts");
  let result;
  try {
    result = await runReviewTick({
      repo,
      ...(ctx.profile !== undefined ? { profileFlag: ctx.profile } : {}),
      progress: values.quiet ? "quiet" : Deno.stderr.isTerminal() ? "tty" : "plain",
      log: values.quiet ? silentLog : stderrLog,
    });
  } catch (err) {
    await saveLastTick(repo.commonDir, failedTick("review", err));
    throw err;
  }
  const code = result.kind === "human" ? 3 : 0;
  await saveLastTick(repo.commonDir, lastTick("review", code, result.kind, result.message));
  if (values.json) printJson({ result: result.kind, ...result });
  else if (!(values.quiet && (result.kind === "idle" || result.kind === "busy"))) {
    console.log(stamped(result.message, Deno.stdout.isTerminal()));
  }
  return code;
}
