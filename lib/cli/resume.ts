import { type Context, parseCommand, requireRepo } from "./args.ts";

/**
 * `relay resume`: clears the HOLD. A held run whose branch was not pushed yet
 * is abandoned (recorded as a failed attempt; its work stays on the branch and
 * under the anchors) so the next tick starts a new attempt; a run that already
 * pushed its branch is kept, and the next tick finishes it. The decisions are
 * lib/task/person.ts; the timeline of the held task records who resumed it.
 */
export async function resume(args: string[], ctx: Context): Promise<number> {
  const { values } = parseCommand("resume", args, { "retry-uncertain": { type: "boolean" } }, {
    min: 0,
    max: 0,
  });
  const repo = requireRepo(ctx);
  const { resumeHold } = await import("../loop/person.ts");
  const res = await resumeHold(repo, { retryUncertain: values["retry-uncertain"] === true });
  // The whole reason, every line of it (a gate or git message often has several); the HOLD's
  // "next:" is left out: that is what the person has just done.
  for (const line of res.lines.length ? res.lines : [res.message]) console.log(line);
  // An uncertain turn's HOLD is still on record; --retry-uncertain with nothing to replay
  // changed nothing.
  return res.kind === "uncertain" ? 3 : res.kind === "refused" ? 2 : 0;
}
