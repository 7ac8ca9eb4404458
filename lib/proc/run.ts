/**
 * The one way relay starts a subprocess: an argv array, an explicit cwd, stdin
 * from /dev/null unless given, and an optional wall-clock timeout that kills
 * the child's whole process group.
 */
import { CommandError } from "../errors.ts";

export interface RunOptions {
  cwd: string;
  /** Extra environment; merged over the inherited one. */
  env?: Record<string, string>;
  /** Names removed from the inherited environment. */
  unsetEnv?: readonly string[];
  /** Kill the process group after this many milliseconds. */
  timeoutMs?: number;
  /** Text fed on stdin; otherwise stdin is /dev/null. */
  stdin?: string;
  /** Return non-zero exits instead of throwing. */
  allowFail?: boolean;
}

export interface RunResult {
  code: number;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

const decoder = new TextDecoder();

/** Builds the child environment: inherited, minus `unset`, plus `extra`. */
export function childEnv(
  extra: Record<string, string> = {},
  unset: readonly string[] = [],
): Record<string, string> {
  const env = Deno.env.toObject();
  for (const name of unset) delete env[name];
  return { ...env, ...extra };
}

/** Kills a process group started with `detached: true`, ignoring a group that is already gone. */
export function killGroup(pid: number, signal: Deno.Signal = "SIGKILL"): void {
  try {
    Deno.kill(Deno.build.os === "windows" ? pid : -pid, signal);
  } catch {
    // Already exited.
  }
}

export async function run(argv: readonly string[], opts: RunOptions): Promise<RunResult> {
  const [program, ...args] = argv;
  if (program === undefined) throw new Error("run: empty argv");
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(program, {
      args,
      cwd: opts.cwd,
      env: childEnv(opts.env, opts.unsetEnv),
      clearEnv: true,
      stdin: opts.stdin === undefined ? "null" : "piped",
      stdout: "piped",
      stderr: "piped",
      detached: Deno.build.os !== "windows",
    }).spawn();
  } catch (err) {
    const why = err instanceof Deno.errors.NotFound
      ? `cannot start "${program}": not found on PATH`
      : `cannot start "${program}": ${(err as Error).message}`;
    throw new CommandError(argv, opts.cwd, null, "", why);
  }
  if (opts.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(opts.stdin));
    await writer.close();
  }
  let timedOut = false;
  const timer = opts.timeoutMs === undefined ? undefined : setTimeout(() => {
    timedOut = true;
    killGroup(child.pid);
  }, opts.timeoutMs);
  try {
    const out = await child.output();
    const result: RunResult = {
      code: out.code,
      signal: out.signal,
      stdout: decoder.decode(out.stdout),
      stderr: decoder.decode(out.stderr),
      timedOut,
    };
    if (timedOut) {
      throw new CommandError(
        argv,
        opts.cwd,
        null,
        result.stderr,
        `timed out after ${Math.round(opts.timeoutMs! / 1000)}s`,
      );
    }
    if (out.code !== 0 && !opts.allowFail) {
      const detail = out.signal ? `killed by ${out.signal}` : `exited ${out.code}`;
      throw new CommandError(argv, opts.cwd, out.code, result.stderr || result.stdout, detail);
    }
    return result;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
