/**
 * The command in the crontab lines `relay init` prints, made safe to paste
 * (cron's PATH is cron_path.ts):
 *
 * - The command is stable: the relay binary, or from source an absolute deno
 *   outside npm's cache with `--cached-only --frozen`, a pinned DENO_DIR whose
 *   dependencies init caches up front, `-P=relay`, relay's deno.json and
 *   main.ts. A tick never downloads anything.
 * - NO_COLOR=1: nothing writes colour codes into cron.log.
 */
import { delimiter, dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import { findProgram } from "../agents/which.ts";
import { shellLine, shellWord } from "../proc/shell.ts";
import { realOrSelf, type SafetyContext, unsafeDir } from "./cron_path.ts";

export interface RelayCommand {
  /** The environment the command sets for itself (NO_COLOR, DENO_DIR). */
  env: Record<string, string>;
  /** The program and its arguments up to relay's own options. */
  argv: string[];
  /** The folder relay's program is in (for PATH). */
  dir: string;
  /** What init must say about it (a program in a cache, dependencies not cached). */
  notes: string[];
}

/** The command line for one tick: `NO_COLOR=1 … relay -C … poll --quiet >> log 2>&1`. */
export function cronCommand(relay: RelayCommand, args: string[], log: string): string {
  const env = Object.entries(relay.env).map(([k, v]) => `${k}=${shellWord(v)}`);
  // cron turns an unescaped % into a newline.
  return `${[...env, shellLine([...relay.argv, ...args])].join(" ")} >> ${shellWord(log)} 2>&1`
    .replaceAll("%", "\\%");
}

interface RunOut {
  code: number;
  stdout: string;
  stderr: string;
}

async function runQuiet(argv: string[], env: Record<string, string>): Promise<RunOut> {
  try {
    const out = await new Deno.Command(argv[0]!, {
      args: argv.slice(1),
      env: { ...env, NO_COLOR: "1" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = (b: Uint8Array) => new TextDecoder().decode(b).trim();
    return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
  } catch (err) {
    return { code: -1, stdout: "", stderr: (err as Error)?.message ?? String(err) };
  }
}

/** Whether relay runs from source (deno main.ts) rather than as a compiled binary. */
export function fromSource(execPath = Deno.execPath()): boolean {
  return /^deno(\.exe)?$/.test(execPath.split(/[\\/]/).pop() ?? "");
}

/**
 * A deno for cron: the running one unless it sits in a cache or temp folder
 * (npx), else a deno on PATH or in ~/.deno/bin that does not; a PATH entry
 * that is the running deno reads better than its real path.
 */
async function stableDeno(ctx: SafetyContext, pathEnv: string): Promise<{
  deno: string;
  notes: string[];
}> {
  const exe = Deno.execPath();
  const safe = (p: string) => unsafeDir(dirname(p), ctx) === null;
  const candidates: string[] = [];
  for (const dir of pathEnv.split(delimiter)) {
    if (dir && isAbsolute(dir)) candidates.push(join(dir, "deno"));
  }
  const home = Deno.env.get("HOME");
  if (home) candidates.push(join(home, ".deno", "bin", "deno"));
  const found: string[] = [];
  for (const c of candidates) {
    if (!found.includes(c) && (await findProgram(c, "")) !== null && safe(c)) found.push(c);
  }
  const real = realOrSelf(exe);
  if (safe(real)) {
    return { deno: found.find((c) => realOrSelf(c) === real) ?? exe, notes: [] };
  }
  const why = unsafeDir(dirname(real), ctx);
  const other = found.find((c) => safe(realOrSelf(c)));
  if (other) {
    return {
      deno: other,
      notes: [
        `note: the deno running relay init (${exe}) is ${why}; the crontab lines use ${other} instead`,
      ],
    };
  }
  return {
    deno: exe,
    notes: [
      `warning: the only deno found is ${exe}, ${why}: the crontab lines stop working when it goes. Install a stable one (npm install -g deno@${Deno.version.deno}) and run relay init again`,
    ],
  };
}

/**
 * How cron should start this same relay: the binary itself, or deno with the
 * same permission set, its dependencies cached now (init may download; a tick
 * never does).
 */
export async function relayCommand(ctx: SafetyContext, pathEnv: string): Promise<RelayCommand> {
  const exe = Deno.execPath();
  if (!fromSource(exe)) {
    const why = unsafeDir(dirname(realOrSelf(exe)), ctx);
    return {
      env: { NO_COLOR: "1" },
      argv: [exe],
      dir: dirname(exe),
      notes: why
        ? [
          `warning: relay runs from ${exe}, ${why}: move it to /usr/local/bin (or ~/.local/bin) and run relay init again`,
        ]
        : [],
    };
  }
  const { deno, notes } = await stableDeno(ctx, pathEnv);
  const main = fileURLToPath(new URL("../../main.ts", import.meta.url));
  const config = fileURLToPath(new URL("../../deno.json", import.meta.url));
  const info = await runQuiet([deno, "info", "--json"], {});
  let denoDir = ctx.denoDir ?? "";
  try {
    denoDir = JSON.parse(info.stdout).denoDir ?? denoDir;
  } catch {
    // deno info said nothing useful: keep the default location.
  }
  const env: Record<string, string> = { NO_COLOR: "1" };
  if (denoDir) env.DENO_DIR = denoDir;
  // --quiet: without it deno warns about config-file permissions on every tick, into cron.log.
  const argv = [
    deno,
    "run",
    "--quiet",
    "--cached-only",
    "--frozen",
    "--config",
    config,
    "-P=relay",
    main,
  ];
  notes.push(...await cacheDependencies(deno, env, config, main));
  return { env, argv, dir: dirname(deno), notes };
}

/**
 * Caches relay's dependencies into the pinned DENO_DIR now, then proves that a
 * `--cached-only` run finds every npm package relay imports (they load lazily,
 * so a plain `deno run --cached-only main.ts version` would not).
 */
async function cacheDependencies(
  deno: string,
  env: Record<string, string>,
  config: string,
  main: string,
): Promise<string[]> {
  const by = `${Object.entries(env).map(([k, v]) => `${k}=${shellWord(v)}`).join(" ")} ${
    shellLine([deno, "cache", "--frozen", "--config", config, main])
  }`;
  const cached = await runQuiet(
    [deno, "cache", "--quiet", "--frozen", "--config", config, main],
    env,
  );
  let imports: string[] = [];
  try {
    imports = Object.keys(JSON.parse(await Deno.readTextFile(config)).imports ?? {});
  } catch {
    // No import map: nothing to prove beyond the cache run.
  }
  const probe = imports.map((name) => `import ${JSON.stringify(name)};`).join(" ");
  const proved = cached.code === 0 && imports.length
    ? await runQuiet(
      [deno, "eval", "--quiet", "--cached-only", "--frozen", "--config", config, probe],
      env,
    )
    : cached;
  if (proved.code === 0) return [];
  const why = (proved.stderr || cached.stderr).split("\n")[0] ?? "";
  return [
    `warning: relay's dependencies are not cached in ${
      env.DENO_DIR ?? "Deno's cache"
    } (${why}), and the ticks never download: run ${by} before installing the lines`,
  ];
}
