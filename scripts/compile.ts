/**
 * Builds single-file relay binaries with `deno compile`.
 *
 *   deno task compile                           # host target only
 *   deno task compile aarch64-apple-darwin ...  # the given targets
 *   deno task compile --all                     # every release target
 *
 * Each binary is written to dist/relay-<target>[.exe] and carries the "relay"
 * permission set from deno.json (-P=relay), the relay/ folder, and the command line and the
 * commands' modules that main.ts and lib/cli/dispatch.ts load lazily (--include).
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { COMMANDS, OWN_MODULES } from "../lib/cli/dispatch.ts";

/** The targets a release ships, in the spelling `deno compile --target` takes. */
export const RELEASE_TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
  "x86_64-pc-windows-msvc",
] as const;

/** `dist/relay-<target>`, with `.exe` for Windows targets. Relative to the repo root. */
export function outputPath(target: string): string {
  return `dist/relay-${target}${target.includes("windows") ? ".exe" : ""}`;
}

/**
 * The modules main.ts and lib/cli/dispatch.ts load by a computed specifier (so a command
 * loads only its own graph): named to `deno compile`, each goes into the binary with every
 * module it imports, literally or lazily.
 */
export function lazyModules(): string[] {
  const files = new Set([...Object.values(COMMANDS).map(([file]) => file), ...OWN_MODULES]);
  return ["lib/cli/dispatch.ts", ...[...files].sort().map((f) => `lib/cli/${f}`)];
}

/** The argv (after the deno executable) that compiles relay for `target`. */
export function compileArgs(target: string): string[] {
  return [
    "compile",
    "-P=relay",
    "--include",
    "relay/",
    // main.ts loads the command line by a computed specifier (so the idle poll loads nothing),
    // and the command line each command's module.
    ...lazyModules().flatMap((m) => ["--include", m]),
    "--target",
    target,
    "-o",
    outputPath(target),
    "main.ts",
  ];
}

/** Picks the targets from the command line; throws on an unknown one. */
export function chooseTargets(args: string[], host: string): string[] {
  const { values, positionals } = parseArgs({
    // `deno task compile -- x` forwards the `--` itself; drop it.
    args: args[0] === "--" ? args.slice(1) : args,
    options: { all: { type: "boolean", default: false }, help: { type: "boolean", short: "h" } },
    allowPositionals: true,
  });
  if (values.all) {
    if (positionals.length > 0) {
      throw new Error(`Cannot combine --all with targets: "${positionals.join('", "')}"`);
    }
    return [...RELEASE_TARGETS];
  }
  if (positionals.length === 0) return [host];
  const known: readonly string[] = RELEASE_TARGETS;
  for (const t of positionals) {
    if (!known.includes(t) && t !== host) {
      throw new Error(`Cannot compile for "${t}": unknown target; use one of ${known.join(", ")}`);
    }
  }
  return [...new Set(positionals)];
}

function quote(arg: string): string {
  return /^[\w./=:-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}

const USAGE = `usage: deno task compile [--all | <target>...]
targets: ${RELEASE_TARGETS.join(", ")} (default: the host, ${Deno.build.target})`;

async function main(args: string[]): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    console.log(USAGE);
    return 0;
  }
  let targets: string[];
  try {
    targets = chooseTargets(args, Deno.build.target);
  } catch (err) {
    console.error(`${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
    return 2;
  }
  const root = join(dirname(fileURLToPath(import.meta.url)), "..");
  const deno = Deno.execPath();
  for (const needed of ["main.ts", "relay"]) {
    try {
      await Deno.stat(join(root, needed));
    } catch {
      console.error(`Cannot compile: "${join(root, needed)}" is missing`);
      return 1;
    }
  }
  await Deno.mkdir(join(root, "dist"), { recursive: true });

  const failed: string[] = [];
  for (const target of targets) {
    const args = compileArgs(target);
    console.log(`$ ${[deno, ...args].map(quote).join(" ")}   (in ${root})`);
    const { code } = await new Deno.Command(deno, {
      args,
      cwd: root,
      stdin: "null",
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    if (code === 0) {
      console.log(`built ${outputPath(target)}`);
    } else {
      console.error(`Cannot compile for "${target}": deno compile exited ${code}`);
      failed.push(target);
    }
  }
  if (failed.length > 0) {
    console.error(`failed: ${failed.join(", ")}`);
    return 1;
  }
  return 0;
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
