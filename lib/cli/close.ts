/** `relay close <task> --reason <text>`: a person gives up on a PR without merging it. */
import { UsageError } from "../errors.ts";
import { type Context, parseCommand, requireRepo } from "./args.ts";

export async function close(args: string[], ctx: Context): Promise<number> {
  const { values, positionals } = parseCommand("close", args, { reason: { type: "string" } }, {
    min: 1,
    max: 1,
    names: "<task>",
  });
  const task = Number(positionals[0]);
  if (!Number.isInteger(task) || task <= 0) {
    throw new UsageError(`"${positionals[0]}" is not a task number`, "close");
  }
  if (!values.reason?.trim()) {
    throw new UsageError(
      "say why with --reason <text>: it goes on the PR and in relay's record",
      "close",
    );
  }
  const repo = requireRepo(ctx);
  const { closeTask } = await import("../loop/person.ts");
  const res = await closeTask(repo, task, values.reason.trim());
  if (res.kind === "refused") throw new UsageError(res.message, "close");
  for (const line of res.lines) console.log(line);
  return 0;
}
