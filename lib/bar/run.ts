/**
 * The verification bar, run by relay itself: each command in the worktree, as
 * an argv (never a shell), in a minimal environment, keeping the output, exit
 * code and the tree it ran on. The executor's evidence, the gate's re-run on
 * the would-be merge and the demo agents all run the bar through here.
 */
import type { Git } from "../git/git.ts";
import { run } from "../proc/run.ts";
import { redact } from "../proc/redact.ts";
import { CommandError } from "../errors.ts";
import { parseBarCommand } from "../protocol/bar.ts";
import type { Evidence } from "../protocol/types.ts";

/** Keeps the head and tail of a long output, saying what was cut. */
export function truncateOutput(text: string, maxBytes: number): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= maxBytes) return text;
  const half = Math.floor(maxBytes / 2);
  const dec = new TextDecoder();
  const head = dec.decode(bytes.slice(0, half));
  const tail = dec.decode(bytes.slice(bytes.length - half));
  return `${head}\n[... relay cut ${bytes.length - 2 * half} bytes ...]\n${tail}`;
}

/** One verification command's run: never throws for the command's own failure. */
export interface CommandRun {
  exit: number;
  output: string;
  timedOut: boolean;
  durationMs: number;
}

/**
 * What a bar command may see of relay's environment: its output goes onto
 * main unreviewed, so a command that prints the environment (or a test that
 * dumps it on failure) must find no API key there. The repo config adds names
 * with `bar_env`.
 */
const BAR_ENV = ["PATH", "HOME", "LANG", "LANGUAGE", "TMPDIR", "TMP", "TEMP", "USER", "LOGNAME"];

/** The environment of a bar command: BAR_ENV, every LC_* and the `pass` names, as relay has them. */
export function barEnv(
  pass: readonly string[] = [],
  from: Record<string, string> = Deno.env.toObject(),
): Record<string, string> {
  const keep = new Set([...BAR_ENV, ...pass]);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(from)) {
    if (keep.has(name) || name.startsWith("LC_")) env[name] = value;
  }
  return env;
}

/**
 * Runs one bar command as an argv in `cwd`, in the minimal environment of
 * barEnv (plus the `passEnv` names). A program that is missing (127), a
 * timeout (124) or a non-zero exit are results, not errors: relay records
 * them like any other output. Secrets in the output are redacted: a name the
 * repo passes through may still be one.
 */
export async function runCommand(
  command: string,
  cwd: string,
  timeoutMs: number,
  passEnv: readonly string[] = [],
): Promise<CommandRun> {
  const started = performance.now();
  let exit: number;
  let output: string;
  let timedOut = false;
  try {
    const res = await run(parseBarCommand(command), {
      cwd,
      timeoutMs,
      allowFail: true,
      endGroup: true,
      env: barEnv(passEnv),
      inheritEnv: false,
    });
    exit = res.code;
    const sep = res.stdout && res.stderr && !res.stdout.endsWith("\n") ? "\n" : "";
    // One trailing newline is the end of the last line, not an empty line of output.
    output = (res.stdout + sep + res.stderr).replace(/\n$/, "");
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
    timedOut = err.message.includes("timed out");
    exit = timedOut ? 124 : err.code ?? 127;
    output = err.message;
  }
  return {
    exit,
    output: redact(output),
    timedOut,
    durationMs: Math.round(performance.now() - started),
  };
}

export async function runBar(
  wt: Git,
  bar: readonly string[],
  opts: {
    timeoutMs: number;
    maxBytes: number;
    /** Names of relay's environment the commands also get (`bar_env`). */
    passEnv?: readonly string[];
  },
): Promise<Evidence[]> {
  const tree = await wt.treeOf("HEAD");
  const results: Evidence[] = [];
  for (const command of bar) {
    const r = await runCommand(command, wt.cwd, opts.timeoutMs, opts.passEnv);
    const evidence: Evidence = {
      command,
      exit: r.exit,
      tree,
      durationMs: r.durationMs,
      output: truncateOutput(r.output, opts.maxBytes),
    };
    if (r.timedOut) evidence.timedOut = true;
    results.push(evidence);
  }
  return results;
}
