/**
 * relay's command line behind main.ts: parse the global options, dispatch to
 * a command (each imported lazily), and map error classes to exit codes in one
 * place. main.ts answers the idle poll first and loads this for everything
 * else, by a computed specifier: a literal `import()` in the entry point makes
 * deno load this whole graph (zod, yaml and all) at every start.
 */
import { resolve } from "../path.ts";
import { Exit, UsageError } from "../errors.ts";
import type { Context } from "./args.ts";

type Command = (args: string[], ctx: Context) => Promise<number>;

export const COMMANDS: Record<string, () => Promise<Command>> = {
  init: async () => (await import("./init.ts")).init,
  inbox: async () => (await import("./inbox.ts")).inbox,
  promote: async () => (await import("./promote.ts")).promote,
  poll: async () => (await import("./poll.ts")).poll,
  review: async () => (await import("./review.ts")).review,
  gate: async () => (await import("./gate.ts")).gate,
  merge: async () => (await import("./merge.ts")).merge,
  accept: async () => (await import("./accept.ts")).accept,
  reject: async () => (await import("./accept.ts")).reject,
  close: async () => (await import("./close.ts")).close,
  abort: async () => (await import("./close.ts")).close,
  status: async () => (await import("./status.ts")).status,
  doctor: async () => (await import("./doctor.ts")).doctor,
  show: async () => (await import("./show.ts")).show,
  report: async () => (await import("./history.ts")).report,
  "attach-verification": async () => (await import("./attach_verification.ts")).attachVerification,
  note: async () => (await import("./note.ts")).note,
  probe: async () => (await import("./probe.ts")).probe,
  plan: async () => (await import("./plan.ts")).plan,
  pause: async () => (await import("./pause.ts")).pause,
  unpause: async () => (await import("./pause.ts")).unpause,
  audit: async () => (await import("./audit.ts")).auditCommand,
  guard: async () => (await import("./guard.ts")).guard,
  resume: async () => (await import("./resume.ts")).resume,
  schedule: async () => (await import("./schedule.ts")).schedule,
  demo: async () => (await import("./demo.ts")).demo,
  version: async () => (await import("./version.ts")).version,
};

/** Splits `[-C path] [--profile file] <command> args…`. */
function parseGlobal(
  argv: string[],
): { ctx: Context; command?: string; args: string[]; help: boolean } {
  let cwd = Deno.cwd();
  let explicitDir = false;
  let profile: string | undefined;
  let help = false;
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "-C" || arg === "--profile") {
      const value = argv[++i];
      if (value === undefined) throw new UsageError(`${arg} needs a value`);
      if (arg === "-C") {
        cwd = resolve(cwd, value);
        explicitDir = true;
      } else profile = resolve(Deno.cwd(), value);
    } else if (arg.startsWith("--profile=")) {
      profile = resolve(Deno.cwd(), arg.slice("--profile=".length));
    } else if (arg === "-h" || arg === "--help") {
      help = true;
    } else if (arg === "--version") {
      return { ctx: { cwd }, command: "version", args: [], help: false };
    } else if (arg.startsWith("-")) {
      throw new UsageError(`unknown option "${arg}"`);
    } else {
      break;
    }
  }
  const ctx: Context = { cwd, explicitDir, ...(profile === undefined ? {} : { profile }) };
  const command = argv[i];
  return command === undefined
    ? { ctx, args: [], help }
    : { ctx, command, args: argv.slice(i + 1), help };
}

async function main(argv: string[]): Promise<number> {
  const { ctx, command, args, help } = parseGlobal(argv);
  if (command === undefined || command === "help") {
    const { HELP } = await import("./help.ts");
    const topic = command === "help" ? args[0] : undefined;
    console.log(HELP[topic ?? "relay"] ?? HELP.relay);
    return help || command === "help" ? Exit.ok : Exit.badInput;
  }
  const load = COMMANDS[command];
  if (!load) throw new UsageError(`unknown command "${command}"`);
  if (help || args.includes("--help") || args.includes("-h")) {
    const { HELP } = await import("./help.ts");
    console.log(HELP[command]);
    return Exit.ok;
  }
  return await (await load())(args, ctx);
}

/** Runs relay with `argv`; returns the exit code (errors mapped, never thrown). */
export async function run(argv: string[]): Promise<number> {
  try {
    return await main(argv);
  } catch (err) {
    const { reportError } = await import("./report.ts");
    return reportError(err);
  }
}
