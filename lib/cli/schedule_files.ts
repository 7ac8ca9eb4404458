/**
 * Where `relay schedule` writes a repository's two ticks and how it marks
 * what it wrote, so that a reinstall replaces exactly that and an uninstall
 * removes exactly that: a marked block in the crontab, or marked systemd user
 * units / launchd agents named after the repository. Also reads an installed
 * schedule back (installedSchedulePath), for `relay doctor`. Light: no config,
 * no zod, no yaml.
 */
import { basename, join } from "../path.ts";
import { InputError } from "../errors.ts";
import { sha256 } from "../proc/hash.ts";
import { run } from "../proc/run.ts";
import { shellWord } from "../proc/shell.ts";
import { findProgram } from "../agents/which.ts";

export type ScheduleKind = "cron" | "systemd" | "launchd";
export type Tick = "poll" | "review";
export const TICKS: readonly Tick[] = ["poll", "review"];

/** The first line of a repository's crontab block. */
export function cronBegin(root: string): string {
  return `# BEGIN relay ${root} (relay schedule install; relay schedule uninstall removes it)`;
}

/** The last line of a repository's crontab block. */
export function cronEnd(root: string): string {
  return `# END relay ${root}`;
}

/** The marker comment in each unit file and plist relay writes. */
export function unitMarker(root: string): string {
  return `Written by relay schedule install for ${root}; relay schedule uninstall removes it.`;
}

/** The marker line of a unit file or plist: a comment in that file's syntax. */
export function markerLine(kind: "systemd" | "launchd", root: string): string {
  // An XML comment must not contain "--".
  return kind === "systemd"
    ? `# ${unitMarker(root)}`
    : `<!-- ${unitMarker(root).replaceAll("--", "- -")} -->`;
}

/** Whether a file's text is one relay wrote for the repository at `root`. */
export function hasMarker(kind: "systemd" | "launchd", root: string, text: string): boolean {
  return text.split("\n").includes(markerLine(kind, root));
}

/**
 * A name for the repository's units: its folder name (letters, digits and
 * dashes only) and 8 hex digits of its path's sha256, so two clones named
 * `app` get two names and the same clone always gets the same one.
 */
export async function scheduleSlug(root: string): Promise<string> {
  const name = basename(root).toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "")
    .slice(0, 40) || "repo";
  return `${name}-${(await sha256(root)).slice(0, 8)}`;
}

/** The file names relay writes for one repository, in the order it writes them. */
export function unitFiles(kind: "systemd" | "launchd", slug: string): string[] {
  if (kind === "launchd") return TICKS.map((t) => `dev.relay.${slug}.${t}.plist`);
  return TICKS.flatMap((t) => [`relay-${slug}-${t}.service`, `relay-${slug}-${t}.timer`]);
}

/** Where the units go unless --unit-dir says otherwise. */
export function defaultUnitDir(kind: "systemd" | "launchd"): string {
  const home = Deno.env.get("HOME") ?? "";
  if (kind === "launchd") return join(home, "Library", "LaunchAgents");
  return join(Deno.env.get("XDG_CONFIG_HOME") || join(home, ".config"), "systemd", "user");
}

/** The lines of a text, each with its own line ending (the last may have none). */
export function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/**
 * Where the repository's block sits in a crontab: the line numbers (from 0) of
 * its BEGIN and END lines, or null when there is none. A BEGIN without its END,
 * or a second block, is a crontab a person edited: refused, so nothing of
 * theirs is replaced by guesswork.
 */
export function findCronBlock(
  lines: string[],
  root: string,
  where: string,
): { start: number; end: number } | null {
  const begin = cronBegin(root);
  const end = cronEnd(root);
  const bare = (l: string) => l.replace(/\r?\n$/, "");
  let found: { start: number; end: number } | null = null;
  for (let i = 0; i < lines.length; i++) {
    if (bare(lines[i]!) !== begin) continue;
    const stop = lines.findIndex((l, j) => j > i && bare(l) === end);
    if (stop < 0) {
      throw new InputError(
        { file: where, line: i + 1 },
        `relay's block for ${root} has no "${end}" line`,
        "put the END line back after the block's last entry (or delete the block by hand), then run relay schedule again",
      );
    }
    if (found) {
      throw new InputError(
        { file: where, line: i + 1 },
        `a second relay block for ${root}`,
        "delete one of the two blocks by hand, then run relay schedule again",
      );
    }
    found = { start: i, end: stop };
    i = stop;
  }
  return found;
}

/**
 * Lines outside relay's block that run a tick for the repository at `root`:
 * `relay init`'s lines a person pasted by hand (crontab -e). With the block too,
 * every tick would start twice a minute. Each as its line number (from 1) and
 * its text; relay never edits them.
 */
export function handTickLines(
  lines: string[],
  root: string,
  block: { start: number; end: number } | null,
): { line: number; text: string }[] {
  // As init prints it: the root as one shell word (quoted when it must be), each % as \%.
  const words = [...new Set([shellWord(root), `"${root}"`])].map((w) =>
    w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  );
  const names = new RegExp(`(^|\\s)-C\\s+(${words.join("|")})(\\s|$)`);
  const out: { line: number; text: string }[] = [];
  lines.forEach((raw, i) => {
    if (block && i >= block.start && i <= block.end) return;
    const text = raw.replace(/\r?\n$/, "");
    if (/^\s*#/.test(text)) return;
    const command = text.replaceAll("\\%", "%");
    if (names.test(command) && /\s(poll|review)(\s|$)/.test(command)) {
      out.push({ line: i + 1, text });
    }
  });
  return out;
}

export interface CrontabSource {
  /** --crontab-file: read and write this file instead of running crontab. */
  crontabFile?: string;
}

/**
 * The current crontab text ("" when there is none), or null when there is no
 * crontab program to ask (and no file was named).
 */
export async function readCrontab(opts: CrontabSource): Promise<string | null> {
  if (opts.crontabFile !== undefined) {
    try {
      return await Deno.readTextFile(opts.crontabFile);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return "";
      throw err;
    }
  }
  if (await findProgram("crontab", Deno.env.get("PATH") ?? "") === null) return null;
  const out = await run(["crontab", "-l"], {
    cwd: Deno.env.get("HOME") || "/",
    allowFail: true,
    timeoutMs: 30_000,
  });
  if (out.code === 0) return out.stdout;
  // "no crontab for <user>" is an empty crontab, not an error.
  if (/no crontab/i.test(out.stderr)) return "";
  throw new Error(`crontab -l failed (exit ${out.code}): ${out.stderr.trim()}`);
}

/** Undoes shellWord (lib/proc/shell.ts): a plain word, or one in single quotes. */
function unshell(word: string): string {
  return word.startsWith("'") ? word.slice(1, -1).replaceAll(`'\\''`, "'") : word;
}

/** The PATH a crontab line of relay's block sets, or null. */
export function cronLinePath(line: string): string | null {
  // cron turns an unescaped % into a newline, so relay wrote each % as \%.
  const m = /^(?:\S+\s+){5}PATH=('[^']*'(?:\\''[^']*')*|\S+)/.exec(line.replaceAll("\\%", "%"));
  return m ? unshell(m[1]!) : null;
}

/** The PATH a systemd service relay wrote sets, or null. */
export function unitPath(text: string): string | null {
  const m = /^Environment="PATH=((?:[^"\\]|\\.)*)"$/m.exec(text);
  return m ? m[1]!.replace(/\\(.)/g, "$1").replaceAll("%%", "%") : null;
}

/** The PATH a launchd plist relay wrote sets, or null. */
export function plistPath(text: string): string | null {
  const m = /<key>PATH<\/key>\s*<string>([^<]*)<\/string>/.exec(text);
  if (!m) return null;
  return m[1]!.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&quot;", '"')
    .replaceAll("&apos;", "'").replaceAll("&amp;", "&");
}

export interface InstalledOptions extends CrontabSource {
  /** Only this kind; otherwise cron, then systemd, then launchd. */
  kind?: ScheduleKind;
  /** The folder of the units (default: the usual one of each kind). */
  unitDir?: string;
}

export interface InstalledSchedule {
  kind: ScheduleKind;
  /** The crontab file, "crontab" (the person's crontab), or the poll unit's file. */
  where: string;
  /** The PATH the poll tick runs under. */
  path: string;
}

/**
 * The schedule `relay schedule install` wrote for the repository at `root`,
 * and the PATH its poll tick runs under; null when none is installed (of the
 * kind asked for). Only files carrying relay's marker for this repository
 * count.
 */
export async function installedSchedulePath(
  root: string,
  opts: InstalledOptions = {},
): Promise<InstalledSchedule | null> {
  const kinds: ScheduleKind[] = opts.kind ? [opts.kind] : ["cron", "systemd", "launchd"];
  for (const kind of kinds) {
    if (kind === "cron") {
      const text = await readCrontab(opts);
      if (!text) continue;
      const lines = splitLines(text);
      const block = findCronBlock(lines, root, opts.crontabFile ?? "crontab");
      if (!block) continue;
      for (const line of lines.slice(block.start + 1, block.end)) {
        const path = / poll --quiet /.test(line) ? cronLinePath(line) : null;
        if (path !== null) return { kind, where: opts.crontabFile ?? "crontab", path };
      }
      continue;
    }
    const slug = await scheduleSlug(root);
    const file = join(opts.unitDir ?? defaultUnitDir(kind), unitFiles(kind, slug)[0]!);
    let text: string;
    try {
      text = await Deno.readTextFile(file);
    } catch {
      continue;
    }
    if (!hasMarker(kind, root, text)) continue;
    const path = kind === "systemd" ? unitPath(text) : plistPath(text);
    if (path !== null) return { kind, where: file, path };
  }
  return null;
}
