/**
 * Runs an agent program (Claude Code, Codex, any command) as one turn: stdin
 * from /dev/null, its own process group, both output streams appended to a
 * log file as they arrive, a wall-clock timeout (SIGTERM to the group, then
 * SIGKILL after a grace period), and a progress display on stderr.
 *
 * When the turn's leader process exits, whatever it left running in its
 * process group is killed: a turn is over when its program is.
 *
 * The agent's environment is relay's (it needs its API key), but what relay
 * writes of its output (log, stdout copy, progress) has relay's secrets redacted.
 * The progress display and the wording of durations are progress.ts.
 */
import { dirname } from "../path.ts";
import { childEnv, killGroup } from "../proc/run.ts";
import { locate, sessionStart } from "../proc/session.ts";
import { later } from "../proc/timer.ts";
import { redactor } from "../proc/redact.ts";
import { startProblem } from "../proc/which.ts";
import { formatDuration, makeProgress, type ProgressStyle } from "./progress.ts";

export interface AgentRunOptions {
  argv: string[];
  cwd: string;
  /** Merged over the inherited environment. */
  env: Record<string, string>;
  timeoutMs: number;
  /** stdout and stderr are appended here as they arrive; parent folders are created. */
  logPath: string;
  progress: ProgressStyle;
  /** Names the turn in progress lines, e.g. "executor task 3". */
  label: string;
  /** Called once the program has started; the caller journals the pid. */
  onStart?: (pid: number) => void | Promise<void>;
  /** On timeout: SIGTERM to the process group, wait this long, then SIGKILL. Default 10s. */
  graceMs?: number;
  /** stdout alone is also written here (the reviewer's verdict is read from it). */
  stdoutPath?: string;
}

export interface AgentRunResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  durationMs: number;
  /** Set when the program could not be started at all. */
  startError?: string;
  /** The last ~40 lines of output, both streams. */
  logTail: string;
}

export const DEFAULT_GRACE_MS = 10_000;
export const TAIL_LINES = 40;
/** How long to wait for the output pipes to close after the process group was killed. */
const DRAIN_MS = 2_000;
/** Longest line kept in the tail; longer lines are cut. */
const MAX_LINE = 2_000;

const encoder = new TextEncoder();
const isWindows = Deno.build.os === "windows";

export async function runAgent(opts: AgentRunOptions): Promise<AgentRunResult> {
  const [program, ...args] = opts.argv;
  if (program === undefined) throw new Error("runAgent: empty argv");
  const graceMs = opts.graceMs ?? DEFAULT_GRACE_MS;

  await Deno.mkdir(dirname(opts.logPath), { recursive: true });
  const log = await LogFile.open(opts.logPath);
  const tail = new LineTail(TAIL_LINES);
  const progress = makeProgress(opts.progress, opts.label, () => tail.last);
  const startedAt = Date.now();
  let stdoutLog: LogFile | undefined;
  try {
    const startError = await checkCwd(program, opts.cwd);
    let child: Deno.ChildProcess | undefined;
    let spawnError = startError;
    if (spawnError === undefined) {
      try {
        const env = childEnv(opts.env);
        // A script whose `#!` line cannot run exits 127 from setsid(1), or from env: said
        // here as what it is, a program that cannot start, not as a turn that failed.
        const problem = isWindows
          ? null
          : startProblem(locate(program, env.PATH, opts.cwd), env.PATH ?? "");
        if (problem !== null) throw new CannotStart(problem);
        // A process group of its own: a turn that overruns is stopped with all it started.
        const start = isWindows
          ? { program, args, detached: false }
          : sessionStart(program, args, env, opts.cwd);
        child = new Deno.Command(start.program, {
          args: start.args,
          cwd: opts.cwd,
          env,
          clearEnv: true,
          stdin: "null",
          stdout: "piped",
          stderr: "piped",
          detached: start.detached,
        }).spawn();
      } catch (err) {
        spawnError = describeSpawnError(program, err);
      }
    }
    if (child === undefined) {
      const why = spawnError ?? `cannot start "${program}"`;
      await log.text(`--- relay: ${opts.label}: ${why} ---\n`);
      progress.startFailed(why);
      return {
        exitCode: null,
        signal: null,
        timedOut: false,
        durationMs: Date.now() - startedAt,
        startError: why,
        logTail: "",
      };
    }

    const pid = child.pid;
    await log.text(
      `--- relay: ${opts.label}: started ${new Date(startedAt).toISOString()}, pid ${pid}, ` +
        `in ${opts.cwd}: ${describeArgv(opts.argv)} ---\n`,
    );
    const readers = [child.stdout.getReader(), child.stderr.getReader()];
    stdoutLog = opts.stdoutPath === undefined ? undefined : await LogFile.open(opts.stdoutPath);
    const pumps = Promise.all(
      readers.map((reader, i) => pump(reader, i, log, tail, i === 0 ? stdoutLog : undefined)),
    );
    progress.started(pid);

    let timedOut = false;
    let cancelKill = () => {};
    // No limit (Infinity) is no timer.
    const cancelTimeout = later(opts.timeoutMs, () => {
      timedOut = true;
      killGroup(pid, "SIGTERM", true);
      cancelKill = later(graceMs, () => killGroup(pid, "SIGKILL", true));
    });

    let status: Deno.CommandStatus;
    try {
      if (opts.onStart) await opts.onStart(pid);
    } catch (err) {
      // The caller could not record the turn: do not leave it running unrecorded.
      killGroup(pid, "SIGKILL", true);
      await child.status;
      cancelTimeout();
      cancelKill();
      await drain(pumps, readers);
      throw err;
    }
    try {
      status = await child.status;
    } finally {
      cancelTimeout();
      cancelKill();
    }
    const durationMs = Date.now() - startedAt;
    // Whatever the leader left behind in its group goes with it.
    killGroup(pid, "SIGKILL");
    await drain(pumps, readers);
    tail.flush();

    const result: AgentRunResult = {
      exitCode: status.signal === null ? status.code : null,
      signal: status.signal,
      timedOut,
      durationMs,
      logTail: tail.text(),
    };
    const summary = describeEnd(result, opts.timeoutMs);
    await log.text(`\n--- relay: ${opts.label}: finished: ${summary} ---\n`);
    progress.finished(summary);
    return result;
  } finally {
    progress.stop();
    log.close();
    stdoutLog?.close();
  }
}

function describeEnd(result: AgentRunResult, timeoutMs: number): string {
  const after = `after ${formatDuration(result.durationMs)}`;
  if (result.timedOut) {
    const how = result.signal ? `, killed by ${result.signal}` : "";
    return `timed out ${after} (limit ${formatDuration(timeoutMs)}${how})`;
  }
  if (result.signal) return `killed by ${result.signal} ${after}`;
  return `exit ${result.exitCode} ${after}`;
}

async function checkCwd(program: string, cwd: string): Promise<string | undefined> {
  try {
    if ((await Deno.stat(cwd)).isDirectory) return undefined;
    return `cannot start "${program}": working directory "${cwd}" is not a directory`;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      return `cannot start "${program}": working directory "${cwd}" does not exist`;
    }
    return `cannot start "${program}": cannot read working directory "${cwd}": ${
      (err as Error).message
    }`;
  }
}

/** A program that is there but would not run (see startProblem). */
class CannotStart extends Error {}

function describeSpawnError(program: string, err: unknown): string {
  if (err instanceof CannotStart) return `cannot start "${program}": ${err.message}`;
  if (err instanceof Deno.errors.NotFound) {
    return program.includes("/")
      ? `cannot start "${program}": no such file`
      : `cannot start "${program}": not found on PATH`;
  }
  if (err instanceof Deno.errors.PermissionDenied) {
    return `cannot start "${program}": permission denied (not executable?)`;
  }
  return `cannot start "${program}": ${err instanceof Error ? err.message : String(err)}`;
}

/** The argv for the log header, with each argument cut to a readable length. */
function describeArgv(argv: readonly string[]): string {
  return argv.map((arg) => {
    const short = arg.length > 120 ? `${arg.slice(0, 117)}...` : arg;
    return /^[\w@%+=:,./-]+$/.test(short) ? short : JSON.stringify(short);
  }).join(" ");
}

/**
 * Copies one stream into the log and the tail until it ends or is cancelled.
 * With secrets to redact, the stream goes through as text (a secret split
 * across two reads is still caught); without, byte for byte.
 */
async function pump(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  stream: number,
  log: LogFile,
  tail: LineTail,
  copy?: LogFile,
): Promise<void> {
  const decoder = new TextDecoder();
  const redacting = redactor().active;
  const redact = redactor().stream();
  const write = async (text: string) => {
    if (text === "") return;
    await log.text(text);
    if (copy) await copy.text(text);
  };
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      const text = redact.push(decoder.decode(value, { stream: true }));
      if (redacting) {
        await write(text);
      } else {
        await log.bytes(value);
        if (copy) await copy.bytes(value);
      }
      tail.push(stream, text);
    }
  } catch {
    // Cancelled after the drain deadline, or the pipe broke: the turn is over either way.
  } finally {
    const rest = redact.push(decoder.decode()) + redact.end();
    if (redacting) await write(rest).catch(() => {});
    tail.push(stream, rest);
  }
}

/**
 * Waits for the output pipes to close. A process that left the group (setsid)
 * may still hold them; after DRAIN_MS stop reading.
 */
async function drain(
  pumps: Promise<unknown>,
  readers: ReadableStreamDefaultReader<Uint8Array>[],
): Promise<void> {
  let cancel = () => {};
  const deadline = new Promise<"late">((resolve) => {
    cancel = later(DRAIN_MS, () => resolve("late"));
  });
  try {
    if (await Promise.race([pumps, deadline]) === "late") {
      await Promise.all(readers.map((r) => r.cancel().catch(() => {})));
      await pumps;
    }
  } finally {
    cancel();
  }
}

/** An append-only log file; writes from both streams are serialised so chunks never interleave. */
class LogFile {
  #file: Deno.FsFile;
  #queue: Promise<void> = Promise.resolve();

  private constructor(file: Deno.FsFile) {
    this.#file = file;
  }

  static async open(path: string): Promise<LogFile> {
    return new LogFile(await Deno.open(path, { append: true, create: true }));
  }

  bytes(data: Uint8Array): Promise<void> {
    const next = this.#queue.then(() => this.#writeAll(data));
    this.#queue = next.catch(() => {});
    return next;
  }

  /** Text is written with relay's secrets redacted (headers quote the argv). */
  text(text: string): Promise<void> {
    return this.bytes(encoder.encode(redactor().redact(text)));
  }

  close(): void {
    try {
      this.#file.close();
    } catch {
      // Already closed.
    }
  }

  async #writeAll(data: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < data.length) offset += await this.#file.write(data.subarray(offset));
  }
}

/** The last `max` complete lines of output, with each stream's unfinished line kept apart. */
class LineTail {
  #lines: string[] = [];
  #partial = new Map<number, string>();
  #max: number;
  /** The latest non-blank line, finished or not: what "tty" progress shows. */
  last = "";

  constructor(max: number) {
    this.#max = max;
  }

  push(stream: number, text: string): void {
    if (text === "") return;
    const parts = ((this.#partial.get(stream) ?? "") + text).split("\n");
    const rest = parts.pop() ?? "";
    for (const line of parts) this.#add(line);
    this.#partial.set(stream, rest.length > MAX_LINE * 2 ? rest.slice(0, MAX_LINE * 2) : rest);
    if (rest.trim() !== "") this.last = rest.slice(-MAX_LINE);
  }

  flush(): void {
    for (const rest of this.#partial.values()) if (rest !== "") this.#add(rest);
    this.#partial.clear();
  }

  text(): string {
    return this.#lines.join("\n");
  }

  #add(raw: string): void {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    this.#lines.push(line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)}…` : line);
    if (this.#lines.length > this.#max) this.#lines.shift();
    if (line.trim() !== "") this.last = line.slice(-MAX_LINE);
  }
}
