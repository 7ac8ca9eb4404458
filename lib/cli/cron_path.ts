/**
 * cron's PATH for the lines `relay init` prints: only folders that exist, are
 * not world-writable (a sticky /tmp-like folder still lets anyone add a
 * `git`), and are no cache or temp folder (npm's npx cache,
 * `node_modules/.bin`, Deno's module cache, /tmp): cron runs `git` and the
 * agents from it, as you. Also where each program the lines need resolves
 * under that PATH, for init's warnings. The command itself is crontab.ts.
 */
import { delimiter, isAbsolute, join } from "node:path";
import { tmpdir } from "node:os";
import { findProgram } from "../agents/which.ts";
import type { Profile } from "../config/profile_load.ts";
import { isExecutable, readShebang } from "../proc/which.ts";

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

/** The real path of `path`, or `path` itself when it cannot be resolved. */
export function realOrSelf(path: string): string {
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
    // A script's `#!/usr/bin/env node`: node must be found under cron too; a `#!` path is
    // started as it is, so it must be there.
    const found = there ?? now;
    const shebang = found === null ? null : readShebang(found);
    if (shebang?.viaEnv) queue.push(shebang.viaEnv);
    else if (shebang && isAbsolute(shebang.interpreter) && !isExecutable(shebang.interpreter)) {
      notes.push(
        `warning: "${program}" (${found}) will not start: its first line (#!${shebang.line}) names ${shebang.interpreter}, which is not an executable file`,
      );
    }
  }
  return notes;
}
