/**
 * The one way relay starts a subprocess: an argv array, an explicit cwd, stdin
 * from /dev/null unless given, and an optional wall-clock timeout that kills
 * the child's whole process group.
 */
import { CommandError } from "../errors.ts";
import { sessionStart } from "./session.ts";
import { later, sleep } from "./timer.ts";

export interface RunOptions {
  cwd: string;
  /** Extra environment; merged over the inherited one. */
  env?: Record<string, string>;
  /** Names removed from the inherited environment. */
  unsetEnv?: readonly string[];
  /** false: the child gets `env` only, nothing of relay's environment (bar commands). */
  inheritEnv?: boolean;
  /** Kill the process group after this many milliseconds. */
  timeoutMs?: number;
  /** Text fed on stdin; otherwise stdin is /dev/null. */
  stdin?: string;
  /** Return non-zero exits instead of throwing. */
  allowFail?: boolean;
  /** Kill whatever is left in the command's process group once it exits (bar commands). */
  endGroup?: boolean;
  /** Also return stdout's bytes, undecoded (`git cat-file --batch` counts sizes in bytes). */
  stdoutBytes?: boolean;
  /**
   * Hands stdout to this as it arrives, instead of keeping it (the result's stdout is then
   * empty): relay reads a long `git log` while git is still writing it. What it throws is
   * thrown once the child has ended (the rest of the output is read and dropped meanwhile, so
   * the child never blocks on a full pipe) — unless the child failed too: its CommandError
   * comes first.
   */
  onStdout?: (chunk: Uint8Array) => void;
}

export interface RunResult {
  code: number;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** stdout's bytes, when `stdoutBytes` asked for them. */
  bytes?: Uint8Array;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** Builds the child environment: inherited, minus `unset`, plus `extra`. */
export function childEnv(
  extra: Record<string, string> = {},
  unset: readonly string[] = [],
): Record<string, string> {
  const env = Deno.env.toObject();
  for (const name of unset) delete env[name];
  return { ...env, ...extra };
}

/**
 * Kills a process group started in a session of its own, ignoring a group that is already gone.
 * `child`: the pid is a child of this process not yet waited for (its pid cannot have been
 * reused). Such a child, started through setsid(1) by posix_spawn (lib/proc/session.ts), leads
 * no group for its first moments: then there is no group `pid` yet, and the child alone is
 * signalled (still setsid(1), so the command never starts).
 */
export function killGroup(pid: number, signal: Deno.Signal = "SIGKILL", child = false): void {
  try {
    Deno.kill(Deno.build.os === "windows" ? pid : -pid, signal);
    return;
  } catch {
    // Already exited, or (a child) not leading its group yet.
  }
  if (!child || Deno.build.os === "windows") return;
  try {
    Deno.kill(pid, signal);
  } catch {
    // Already exited.
  }
}

/**
 * Stops a process group that no `Deno.ChildProcess` of ours watches (an agent
 * left behind by a tick that died): SIGTERM to the group, wait up to `graceMs`
 * for `alive()` to turn false, then SIGKILL to the group, so whatever ignored
 * the SIGTERM goes too. Resolves true when the leader is gone.
 */
export async function stopGroup(
  pid: number,
  alive: () => Promise<boolean>,
  graceMs = 5_000,
): Promise<boolean> {
  killGroup(pid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (await alive() && Date.now() < deadline) await sleep(100);
  killGroup(pid, "SIGKILL");
  for (let i = 0; i < 20 && await alive(); i++) await sleep(100);
  return !(await alive());
}

/**
 * How long the output pipes may stay open once the child has exited (or its
 * group was killed). A process that left the group (setsid) can hold them
 * forever; after this, relay stops reading and keeps what it has.
 */
export const DRAIN_MS = 2_000;

export async function run(argv: readonly string[], opts: RunOptions): Promise<RunResult> {
  const [program, ...args] = argv;
  if (program === undefined) throw new Error("run: empty argv");
  // Its own process group (and session, with no terminal) only for what may have to be stopped
  // as a group: a command with a timeout (git over the network may run ssh, which could
  // otherwise ask a question on the terminal) or one whose leftovers are ended with it. A
  // tick starts ~100 local git commands that need neither: they start in relay's group.
  const detached = Deno.build.os !== "windows" &&
    (opts.timeoutMs !== undefined || opts.endGroup === true);
  let child: Deno.ChildProcess;
  try {
    const env = opts.inheritEnv === false ? { ...opts.env } : childEnv(opts.env, opts.unsetEnv);
    const start = detached
      ? sessionStart(program, args, env, opts.cwd)
      : { program, args, detached: false };
    child = new Deno.Command(start.program, {
      args: start.args,
      cwd: opts.cwd,
      env,
      clearEnv: true,
      stdin: opts.stdin === undefined ? "null" : "piped",
      stdout: "piped",
      stderr: "piped",
      detached: start.detached,
    }).spawn();
  } catch (err) {
    const why = err instanceof Deno.errors.NotFound
      ? `cannot start "${program}": not found on PATH`
      : `cannot start "${program}": ${(err as Error).message}`;
    throw new CommandError(argv, opts.cwd, null, "", why);
  }
  // Both streams are read while the child runs: neither pipe can fill up and stall it.
  const readers = [child.stdout.getReader(), child.stderr.getReader()] as const;
  const chunks: [Uint8Array[], Uint8Array[]] = [[], []];
  const pumps = Promise.all(
    readers.map((reader, i) => collect(reader, chunks[i]!, i === 0 ? opts.onStdout : undefined)),
  );
  const feeding = opts.stdin === undefined ? null : feed(child.stdin, opts.stdin);

  let timedOut = false;
  const cancel = opts.timeoutMs === undefined ? undefined : later(opts.timeoutMs, () => {
    timedOut = true;
    killGroup(child.pid, "SIGKILL", true);
  });
  let status: Deno.CommandStatus;
  try {
    status = await child.status;
  } finally {
    cancel?.();
  }
  // What a verification command left running in its group (a `server &` in a test script)
  // ends with it. Not for git: its credential-cache daemon lives in its group on purpose.
  if (opts.endGroup && detached) killGroup(child.pid);
  await drain(pumps, readers, feeding);
  const [handedOn] = await pumps;

  const result: RunResult = {
    code: status.code,
    signal: status.signal,
    stdout: decode(chunks[0]),
    stderr: decode(chunks[1]),
    timedOut,
  };
  if (opts.stdoutBytes) result.bytes = concat(chunks[0]);
  if (timedOut) {
    // Both streams, so a bar command that hangs after printing "test 1 ok" keeps that line.
    const sep = result.stdout && result.stderr && !result.stdout.endsWith("\n") ? "\n" : "";
    throw new CommandError(
      argv,
      opts.cwd,
      null,
      result.stdout + sep + result.stderr,
      `timed out after ${Math.round(opts.timeoutMs! / 1000)}s`,
    );
  }
  if (status.code !== 0 && !opts.allowFail) {
    const detail = status.signal ? `killed by ${status.signal}` : `exited ${status.code}`;
    throw new CommandError(argv, opts.cwd, status.code, result.stderr || result.stdout, detail);
  }
  if (handedOn) throw handedOn.error;
  return result;
}

/**
 * Reads a stream to its end (or until cancelled), keeping every chunk or handing it on. What
 * the receiver throws is returned, and the rest is read and dropped: a child is never left
 * blocked on a full pipe.
 */
async function collect(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  into: Uint8Array[],
  handOn?: (chunk: Uint8Array) => void,
): Promise<{ error: unknown } | undefined> {
  let failed: { error: unknown } | undefined;
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      if (!handOn) into.push(value);
      else if (!failed) {
        try {
          handOn(value);
        } catch (error) {
          failed = { error };
        }
      }
    }
  } catch {
    // Cancelled after the drain deadline, or the pipe broke: keep what arrived.
  }
  return failed;
}

interface Feeding {
  done: Promise<void>;
  abort(): Promise<void>;
}

/** Writes `text` to the child's stdin and closes it; a child that stops reading is not an error. */
function feed(stdin: WritableStream<Uint8Array>, text: string): Feeding {
  const writer = stdin.getWriter();
  const done = (async () => {
    try {
      await writer.write(encoder.encode(text));
      await writer.close();
    } catch {
      // The child exited (or closed stdin) before reading everything.
    }
  })();
  return { done, abort: () => writer.abort().catch(() => {}) };
}

/**
 * Waits at most DRAIN_MS for the output pipes to close (and stdin to be
 * written), then stops: aborts the stdin writer and cancels the readers.
 */
async function drain(
  pumps: Promise<unknown>,
  readers: readonly ReadableStreamDefaultReader<Uint8Array>[],
  feeding: Feeding | null,
): Promise<void> {
  let cancel = () => {};
  const deadline = new Promise<"late">((resolve) => {
    cancel = later(DRAIN_MS, () => resolve("late"));
  });
  const all = Promise.all([pumps, feeding?.done]);
  try {
    if (await Promise.race([all, deadline]) === "late") {
      await feeding?.abort();
      await Promise.all(readers.map((r) => r.cancel().catch(() => {})));
      await pumps;
    }
  } finally {
    cancel();
  }
}

function concat(chunks: Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const size = chunks.reduce((n, c) => n + c.length, 0);
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}

function decode(chunks: Uint8Array[]): string {
  return decoder.decode(concat(chunks));
}
