/**
 * The crontab lines `relay init` prints, made safe to paste:
 *
 * - PATH holds only folders that exist, are not world-writable (a sticky
 *   /tmp-like folder still lets anyone add a `git`), and are no cache or temp
 *   folder (npm's npx cache, `node_modules/.bin`, Deno's module cache, /tmp):
 *   cron runs `git` and the agents from it, as you.
 * - The command is stable: the relay binary, or from source an absolute deno
 *   outside npm's cache with `--cached-only --frozen`, a pinned DENO_DIR whose
 *   dependencies init caches up front, `-P=relay`, relay's deno.json and
 *   main.ts. A tick never downloads anything.
 * - NO_COLOR=1: nothing writes colour codes into cron.log.
 */
import { delimiter, dirname, isAbsolute, join } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { findProgram } from "../agents/which.ts";
import type { Profile } from "../config/profile.ts";
import { shellLine, shellWord } from "../proc/shell.ts";

/** Folders cron's PATH gets even when the current PATH lacks them (when they exist). */
export const STANDARD_DIRS = ["/usr/local/bin", "/usr/bin", "/bin"];

/** What decides that a folder is a cache or temp folder. */
export interface SafetyContext {
  home?: string;
  /** Deno's module cache (DENO_DIR). */
  denoDir?: string;
  /** Temp folders: nothing under them belongs on cron's PATH. */
  tmpDirs: string[];
}

function within(path: string, root: string): boolean {
  const r = root.replace(/\/+$/, "");
  return r !== "" && (path === r || path.startsWith(`${r}/`));
}

function realOrSelf(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}

/** Why a folder must not be on cron's PATH, or null when it may be. */
export function unsafeDir(dir: string, ctx: SafetyContext): string | null {
  if (dir === "") return "an empty entry (the current folder)";
  if (!isAbsolute(dir)) return "a relative folder";
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(dir);
  } catch {
    return "does not exist";
  }
  if (!info.isDirectory) return "not a folder";
  if (info.mode !== null && (info.mode & 0o002) !== 0) {
    return (info.mode & 0o1000) !== 0
      ? "world-writable (sticky, as /tmp is: anyone can still add a program)"
      : "world-writable";
  }
  for (const path of new Set([dir, realOrSelf(dir)])) {
    const parts = path.split("/");
    if (parts.includes("_npx")) return "inside npm's npx cache (npm may delete it)";
    if (/\/node_modules\/\.bin(\/|$)/.test(path)) {
      return "a node_modules/.bin folder (a package's tools)";
    }
    if (ctx.denoDir && within(path, ctx.denoDir)) return "inside Deno's module cache";
    if (ctx.home && within(path, join(ctx.home, ".npm"))) return "inside npm's cache";
    for (const tmp of ctx.tmpDirs) {
      if (within(path, tmp)) return `under ${tmp} (a temp folder)`;
    }
  }
  return null;
}

/** The default safety context of this machine. */
export function safetyContext(denoDir?: string): SafetyContext {
  const tmp = new Set<string>();
  for (const t of ["/tmp", "/var/tmp", "/dev/shm", Deno.env.get("TMPDIR") ?? "", tmpdir()]) {
    if (t && isAbsolute(t)) {
      tmp.add(t.replace(/\/+$/, ""));
      tmp.add(realOrSelf(t).replace(/\/+$/, ""));
    }
  }
  const home = Deno.env.get("HOME");
  const ctx: SafetyContext = { tmpDirs: [...tmp].filter((t) => t !== "") };
  if (home) ctx.home = home;
  const dd = denoDir ?? defaultDenoDir();
  if (dd) ctx.denoDir = dd;
  return ctx;
}

/** Deno's cache folder as deno itself picks it (DENO_DIR, else the OS cache folder). */
function defaultDenoDir(): string | undefined {
  const set = Deno.env.get("DENO_DIR");
  if (set) return set;
  const home = Deno.env.get("HOME");
  if (!home) return undefined;
  if (Deno.build.os === "darwin") return join(home, "Library", "Caches", "deno");
  return join(Deno.env.get("XDG_CACHE_HOME") || join(home, ".cache"), "deno");
}

export interface CronPath {
  dirs: string[];
  /** Entries of the current PATH that were left out, and why. */
  dropped: { dir: string; why: string }[];
}

/**
 * cron's PATH: the safe entries of the current PATH in their order (so each
 * program resolves as it does now, unless only an unsafe folder had it), then
 * `extra` (where relay itself is) and the standard folders, when missing.
 */
export function cronPath(pathEnv: string, extra: string[], ctx: SafetyContext): CronPath {
  const dirs: string[] = [];
  const dropped: { dir: string; why: string }[] = [];
  const seen = new Set<string>();
  for (const dir of pathEnv.split(delimiter)) {
    const key = dir.replace(/(.)\/+$/, "$1");
    if (seen.has(key)) continue;
    seen.add(key);
    const why = unsafeDir(key, ctx);
    if (why) dropped.push({ dir: key === "" ? "(empty)" : key, why });
    else dirs.push(key);
  }
  for (const dir of [...extra, ...STANDARD_DIRS]) {
    if (!dirs.includes(dir) && unsafeDir(dir, ctx) === null) dirs.push(dir);
  }
  return { dirs, dropped };
}

/** The programs cron must find: git, and what the profile's roles start (by name). */
export function profilePrograms(profile: Profile | null): string[] {
  const names = ["git"];
  for (const role of profile ? [profile.roles.executor, profile.roles.reviewer] : []) {
    // A role with its own PATH resolves its program there, not on cron's PATH.
    if (role.env.PATH !== undefined) continue;
    if (role.vendor === "claude" || role.vendor === "codex") names.push(role.vendor);
    else if (role.vendor === "command" && role.argv?.[0]) names.push(role.argv[0]);
  }
  return [...new Set(names)];
}

/** `#!/usr/bin/env node` → "node": the interpreter a script needs on PATH too. */
async function envInterpreter(path: string): Promise<string | null> {
  let head: string;
  try {
    using file = await Deno.open(path);
    const buf = new Uint8Array(256);
    const n = (await file.read(buf)) ?? 0;
    head = new TextDecoder().decode(buf.subarray(0, n));
  } catch {
    return null;
  }
  const m = /^#![ \t]*\/usr\/bin\/env[ \t]+(?:-S[ \t]+)?([^\s/]+)/.exec(head);
  return m?.[1] ?? null;
}

/**
 * Where each program resolves now and under cron's PATH: a warning for one
 * cron will not find, a note for one that resolves elsewhere under cron. A
 * script's `#!/usr/bin/env <interpreter>` is checked the same way.
 */
export async function programNotes(
  programs: string[],
  pathEnv: string,
  cron: string[],
): Promise<string[]> {
  const notes: string[] = [];
  const queue = [...programs];
  const done = new Set<string>();
  const cronEnv = cron.join(delimiter);
  while (queue.length) {
    const program = queue.shift()!;
    if (done.has(program)) continue;
    done.add(program);
    if (program.includes("/") && !isAbsolute(program)) continue;
    const now = await findProgram(program, pathEnv);
    const there = await findProgram(program, cronEnv);
    if (there === null) {
      notes.push(
        isAbsolute(program)
          ? `warning: "${program}" is not an executable file: fix the operator profile`
          : now
          ? `warning: cron will not find "${program}": here it is ${now}, in a folder left out of PATH; install it in a safe folder (e.g. /usr/local/bin or ~/.local/bin)`
          : `warning: "${program}" is not on PATH: install it, or name it by absolute path in the operator profile`,
      );
    } else if (now !== null && realOrSelf(now) !== realOrSelf(there)) {
      notes.push(
        `note: "${program}" is ${now} here, but under cron ${there}: the folder of ${now} is left out of PATH`,
      );
    }
    const interpreter = await envInterpreter(there ?? now ?? "");
    if (interpreter) queue.push(interpreter);
  }
  return notes;
}

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
