/**
 * `relay accept <task>` and `relay reject <task>`: a person's acceptance, by
 * digest. `--intent-only` prints what would be done and its digest and changes
 * nothing relay decides from; `--expect <digest>` does it only while the state
 * still yields that digest. Ticks never accept or reject.
 */
import { UsageError } from "../errors.ts";
import { type Context, parseCommand, printJson, requireRepo } from "./args.ts";

/** The options `relay accept` and `relay reject` take. */
export const ACCEPT_OPTIONS = {
  "intent-only": { type: "boolean" },
  expect: { type: "string" },
  reason: { type: "string" },
  text: { type: "string" },
  "override-rejection": { type: "boolean" },
  json: { type: "boolean" },
} as const;

export function accept(args: string[], ctx: Context): Promise<number> {
  return decide("accept", args, ctx);
}

export function reject(args: string[], ctx: Context): Promise<number> {
  return decide("reject", args, ctx);
}

async function decide(
  action: "accept" | "reject",
  args: string[],
  ctx: Context,
): Promise<number> {
  const { values, positionals } = parseCommand(action, args, ACCEPT_OPTIONS, {
    min: 1,
    max: 1,
    names: "<task>",
  });
  const task = Number(positionals[0]);
  if (!Number.isInteger(task) || task <= 0) {
    throw new UsageError(`"${positionals[0]}" is not a task number`, action);
  }
  const intentOnly = values["intent-only"] === true;
  if (intentOnly === (values.expect !== undefined)) {
    throw new UsageError(
      `give exactly one of --intent-only (see what ${action}ing does, and its digest) or --expect <digest> (do it)`,
      action,
    );
  }
  if (values.expect !== undefined && !/^[0-9a-f]{8,64}$/.test(values.expect)) {
    throw new UsageError(
      `--expect "${values.expect}" is not a digest: use the one --intent-only printed`,
      action,
    );
  }
  let reason: string | null;
  if (action === "accept") {
    if (values.text !== undefined) throw new UsageError("--text is for relay reject", action);
    reason = values.reason?.trim() || null;
    if (values["override-rejection"] && reason === null) {
      throw new UsageError(
        '--override-rejection needs --reason "…": why this is accepted over its stage\'s rejection (it is recorded)',
        action,
      );
    }
  } else {
    if (values["override-rejection"]) {
      throw new UsageError("--override-rejection is for relay accept", action);
    }
    if (values.reason !== undefined) {
      throw new UsageError("relay reject takes its note as --text", action);
    }
    reason = values.text?.trim() || null;
    if (reason === null) {
      throw new UsageError(
        "--text NOTE is required: the note goes to the executor with the fix round",
        action,
      );
    }
  }
  const repo = requireRepo(ctx);
  const { runMerge } = await import("../loop/review.ts");
  const { stderrLog } = await import("../proc/log.ts");
  const result = await runMerge({
    repo,
    progress: "plain",
    log: stderrLog,
    task,
    accept: {
      action,
      expect: values.expect ?? null,
      reason,
      ...(values["override-rejection"] ? { override: true } : {}),
    },
  });
  if (values.json) printJson({ result: result.kind, ...result });
  else console.log(result.message);
  switch (result.kind) {
    case "intent":
    case "merged":
    case "fix":
      return 0;
    case "refused":
      return 1;
    default: {
      const d = result.decision?.decision;
      return d === "REFUSE" ? 10 : d === "WAIT" ? 12 : 1;
    }
  }
}
