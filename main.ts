/**
 * relay's entry point: parse the global options, dispatch to a command
 * (imported lazily, so the idle tick loads almost nothing), and map error
 * classes to exit codes in one place.
 */
import { idlePoll } from "./lib/cli/idle.ts";

type Context = import("./lib/cli/args.ts").Context;

// The idle poll (cron's every minute, nothing OPEN) is answered before anything else loads.
const idle = import.meta.main ? idlePoll(Deno.args, Deno.cwd()) : null;
if (idle !== null) Deno.exit(idle);

const { resolve } = await import("node:path");
const { Exit, UsageError } = await import("./lib/errors.ts");

type Command = (args: string[], ctx: Context) => Promise<number>;

const COMMANDS: Record<string, () => Promise<Command>> = {
  init: async () => (await import("./lib/cli/init.ts")).init,
  inbox: async () => (await import("./lib/cli/inbox.ts")).inbox,
  promote: async () => (await import("./lib/cli/promote.ts")).promote,
  poll: async () => (await import("./lib/cli/poll.ts")).poll,
  review: async () => (await import("./lib/cli/review.ts")).review,
  gate: async () => (await import("./lib/cli/gate.ts")).gate,
  merge: async () => (await import("./lib/cli/merge.ts")).merge,
  accept: async () => (await import("./lib/cli/accept.ts")).accept,
  reject: async () => (await import("./lib/cli/accept.ts")).reject,
  close: async () => (await import("./lib/cli/close.ts")).close,
  abort: async () => (await import("./lib/cli/close.ts")).close,
  status: async () => (await import("./lib/cli/status.ts")).status,
  doctor: async () => (await import("./lib/cli/doctor.ts")).doctor,
  show: async () => (await import("./lib/cli/show.ts")).show,
  report: async () => (await import("./lib/cli/history.ts")).report,
  "attach-verification": async () =>
    (await import("./lib/cli/attach_verification.ts")).attachVerification,
  note: async () => (await import("./lib/cli/note.ts")).note,
  probe: async () => (await import("./lib/cli/probe.ts")).probe,
  plan: async () => (await import("./lib/cli/plan.ts")).plan,
  pause: async () => (await import("./lib/cli/pause.ts")).pause,
  unpause: async () => (await import("./lib/cli/pause.ts")).unpause,
  audit: async () => (await import("./lib/cli/audit.ts")).auditCommand,
  guard: async () => (await import("./lib/cli/guard.ts")).guard,
  resume: async () => (await import("./lib/cli/resume.ts")).resume,
  schedule: async () => (await import("./lib/cli/schedule.ts")).schedule,
  demo: async () => (await import("./lib/cli/demo.ts")).demo,
  version: async () => (await import("./lib/cli/version.ts")).version,
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
    const { HELP } = await import("./lib/cli/help.ts");
    const topic = command === "help" ? args[0] : undefined;
    console.log(HELP[topic ?? "relay"] ?? HELP.relay);
    return help || command === "help" ? Exit.ok : Exit.badInput;
  }
  const load = COMMANDS[command];
  if (!load) throw new UsageError(`unknown command "${command}"`);
  if (help || args.includes("--help") || args.includes("-h")) {
    const { HELP } = await import("./lib/cli/help.ts");
    console.log(HELP[command]);
    return Exit.ok;
  }
  return await (await load())(args, ctx);
}

if (import.meta.main) {
  let code: number;
  try {
    code = await main(Deno.args);
  } catch (err) {
    const { reportError } = await import("./lib/cli/report.ts");
    code = reportError(err);
  }
  Deno.exit(code);
}
