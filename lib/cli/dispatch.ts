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

/**
 * Each command: its module in lib/cli/ and the function that module exports. A module is
 * loaded only for its command, by a computed specifier like dispatch.ts itself: a literal
 * `import()` here would have deno read every command's module graph (zod, yaml and all) at
 * each start, ~30 ms. `deno compile` gets them through --include (scripts/compile.ts).
 */
export const COMMANDS: Record<string, readonly [file: string, name: string]> = {
  init: ["init.ts", "init"],
  inbox: ["inbox.ts", "inbox"],
  promote: ["promote.ts", "promote"],
  poll: ["poll.ts", "poll"],
  review: ["review.ts", "review"],
  gate: ["gate.ts", "gate"],
  merge: ["merge.ts", "merge"],
  accept: ["accept.ts", "accept"],
  reject: ["accept.ts", "reject"],
  close: ["close.ts", "close"],
  abort: ["close.ts", "close"],
  status: ["status.ts", "status"],
  doctor: ["doctor.ts", "doctor"],
  show: ["show.ts", "show"],
  report: ["history.ts", "report"],
  "attach-verification": ["attach_verification.ts", "attachVerification"],
  note: ["note.ts", "note"],
  probe: ["probe.ts", "probe"],
  plan: ["plan.ts", "plan"],
  pause: ["pause.ts", "pause"],
  unpause: ["pause.ts", "unpause"],
  audit: ["audit.ts", "auditCommand"],
  guard: ["guard.ts", "guard"],
  resume: ["resume.ts", "resume"],
  lease: ["lease.ts", "lease"],
  schedule: ["schedule.ts", "schedule"],
  demo: ["demo.ts", "demo"],
  version: ["version.ts", "version"],
};

/** A module of lib/cli/, by a computed specifier (see COMMANDS). */
function loadModule(file: string): Promise<Record<string, unknown>> {
  return import(new URL(`./${file}`, import.meta.url).href);
}

/** Modules dispatch itself loads when it needs them: the help texts and the error report. */
export const OWN_MODULES = ["help.ts", "report.ts"] as const;

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
    const { HELP } = await loadModule("help.ts") as { HELP: Record<string, string> };
    const topic = command === "help" ? args[0] : undefined;
    console.log(HELP[topic ?? "relay"] ?? HELP.relay);
    return help || command === "help" ? Exit.ok : Exit.badInput;
  }
  const entry = COMMANDS[command];
  if (!entry) throw new UsageError(`unknown command "${command}"`);
  if (help || args.includes("--help") || args.includes("-h")) {
    const { HELP } = await loadModule("help.ts") as { HELP: Record<string, string> };
    console.log(HELP[command]);
    return Exit.ok;
  }
  const [file, name] = entry;
  const handler = (await loadModule(file))[name] as Command;
  return await handler(args, ctx);
}

/** Runs relay with `argv`; returns the exit code (errors mapped, never thrown). */
export async function run(argv: string[]): Promise<number> {
  try {
    return await main(argv);
  } catch (err) {
    const { reportError } = await loadModule("report.ts") as {
      reportError: (err: unknown) => number;
    };
    return reportError(err);
  }
}
