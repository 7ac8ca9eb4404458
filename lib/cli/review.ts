/**
 * `relay review`: the reviewer tick. Each tick records how it ended in
 * `.git/relay/last-review.json` (for `relay status`), also when it throws.
 */
import {
  type Context,
  parseCommand,
  PROFILE_FLAG_OPTIONS,
  profileFlags,
  requireRepo,
} from "./args.ts";
import { beat } from "../state/paths.ts";

export async function review(args: string[], ctx: Context): Promise<number> {
  const { values } = parseCommand("review", args, {
    json: { type: "boolean" },
    quiet: { type: "boolean", short: "q" },
    ...PROFILE_FLAG_OPTIONS,
  }, { min: 0, max: 0 });
  const flags = profileFlags("review", values);
  const repo = requireRepo(ctx);
  beat(repo.commonDir, "review");
  const { runReviewTick } = await import("../loop/review.ts");
  const { runTick } = await import("./tick.ts");
  return await runTick({
    command: "review",
    repo,
    ctx,
    json: values.json === true,
    quiet: values.quiet === true,
    ...(flags ? { flags } : {}),
    start: runReviewTick,
    exitCode: (r) => r.kind === "human" ? 3 : 0,
    quietKinds: ["idle", "busy"],
  });
}
