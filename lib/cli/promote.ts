import { type Context, parseCommand, printJson, requireRepo } from "./args.ts";

export async function promote(args: string[], ctx: Context): Promise<number> {
  const { values } = parseCommand("promote", args, { json: { type: "boolean" } }, {
    min: 0,
    max: 0,
  });
  const repo = requireRepo(ctx);
  const { promoteNext } = await import("../loop/promote.ts");
  const res = await promoteNext(repo.root);
  if (values.json) printJson(res);
  else if (res.result === "promoted") {
    console.log(
      `promoted task ${res.task}: ${res.title} (from ${res.from}) — NEXT-STEPS.md is OPEN`,
    );
  } else console.log(res.message);
  return 0;
}
