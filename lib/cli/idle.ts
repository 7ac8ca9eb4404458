/**
 * The idle poll's fast path, answered before main.ts loads anything else:
 * cron runs `relay [-C dir] [--profile f] poll --quiet` 1,440 times a day, and
 * on most of those minutes nothing is OPEN. This answers exactly that case —
 * a plain repository relay is set up in, no tick left unfinished, and a brief
 * that is not OPEN (or none) — with a few file reads and the heartbeat, and
 * returns null for everything else, which the full `relay poll` then handles
 * (with the same outcome where the cases overlap: tests/idle_path.test.ts).
 *
 * Its only import has no imports of its own; paths are joined with "/",
 * which every platform relay runs on accepts.
 */
import { beat } from "../state/heartbeat.ts";
import { readStatus } from "../protocol/status_line.ts";

const BRIEF = "NEXT-STEPS.md";

function isDir(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/** The exit code of an idle poll, or null when this is not one (the full path decides). */
export function idlePoll(argv: readonly string[], cwd: string): number | null {
  if (Deno.build.os === "windows") return null; // drive letters and backslashes: the full path.
  let dir = cwd;
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "-C") {
      const value = argv[++i];
      if (value === undefined) return null;
      dir = value.startsWith("/") ? value : `${dir}/${value}`;
    } else if (arg === "--profile") {
      if (argv[++i] === undefined) return null;
    } else if (!arg.startsWith("--profile=")) {
      break;
    }
  }
  if (argv[i] !== "poll" || !isDir(dir)) return null;
  let quiet = false;
  for (const arg of argv.slice(i + 1)) {
    if (arg === "--quiet" || arg === "-q") quiet = true;
    else return null; // --json, the profile flags, --help, a typo: the full path.
  }
  // The primary checkout: a `.git` folder (a linked worktree's `.git` file is the full
  // path's to refuse). A repository relay is not set up in is the full path's to explain.
  let root = dir;
  while (!isDir(`${root}/.git`)) {
    if (isFile(`${root}/.git`)) return null;
    const up = root.replace(/\/+[^/]*\/*$/, "");
    if (up === root || up === "") return null;
    root = up;
  }
  const common = `${root}/.git`;
  // With machines: split new work arrives on the remote, not in this tree: the full path
  // fetches (README: what an idle tick costs then).
  let config: string;
  try {
    config = Deno.readTextFileSync(`${root}/.relay/config.yaml`);
  } catch {
    return null;
  }
  // lib/state/machines.ts mayBeSplit's test, inlined: the fast path stays four modules.
  if (/machines["']?\s*:\s*["']?split/.test(config)) return null;
  if (isFile(`${common}/relay/journal.json`)) return null;
  let brief: string | null = null;
  try {
    brief = Deno.readTextFileSync(`${root}/${BRIEF}`);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) return null;
  }
  const status = brief === null ? null : readStatus(brief);
  if (status === "OPEN") return null;
  // A brief whose first line is no Status relay knows (a typo for OPEN, a line deleted by
  // hand) is bad input, not an idle loop: the full path says so.
  if (brief !== null && status === null && brief.trim() !== "") return null;
  beat(common, "poll");
  if (!quiet && Deno.stdout.isTerminal()) {
    console.log(`idle: ${brief === null ? `no ${BRIEF}` : `${BRIEF} is not OPEN`}`);
  }
  return 0;
}
