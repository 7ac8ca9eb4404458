/**
 * How an agent turn reads to a person: the progress display on stderr while
 * it runs ("tty": one status line redrawn each second; "plain": a line at the
 * start, a heartbeat, a line at the end; "quiet": nothing) and the durations
 * and "timed out" wording the logs and reports use.
 */
import { stamped } from "../proc/log.ts";
import { every } from "../proc/timer.ts";
import type { Progress as ProgressStyle } from "../proc/log.ts";
// As limits are written in the profile ("4s", "1m30s").
import { formatDuration as configDuration } from "../config/duration.ts";

export type { ProgressStyle };

/** How often "plain" progress says the turn is still running. */
export const HEARTBEAT_MS = 5 * 60_000;

const encoder = new TextEncoder();

/**
 * "timed out: limit 4s, ran 14s": the limit is what a person sets and looks for; the run time also
 * counts the SIGTERM grace, cleanup, or (for an orphan) the minutes until a later tick stopped it.
 */
export function timedOutText(limitMs: number | undefined, ranMs: number): string {
  const ran = configDuration(Math.max(0, ranMs));
  if (limitMs === undefined || !Number.isFinite(limitMs)) return `timed out after ${ran}`;
  return `timed out: limit ${configDuration(limitMs)}, ran ${ran}`;
}

/** "1m02s" */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000));
  return `${Math.floor(total / 60)}m${String(total % 60).padStart(2, "0")}s`;
}

/** "1:02" */
export function formatElapsed(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  return `${Math.floor(total / 60)}:${String(total % 60).padStart(2, "0")}`;
}

/** One status line for "tty" progress, at most `width - 1` characters so it never wraps. */
export function statusLine(
  label: string,
  elapsedMs: number,
  lastLine: string,
  width: number,
): string {
  const head = `relay: ${label} ${formatElapsed(elapsedMs)}`;
  const last = printable(lastLine);
  const line = last === "" ? head : `${head} | ${last}`;
  const max = Math.max(1, width - 1);
  return line.length <= max ? line : line.slice(0, Math.max(0, max - 1)) + "…";
}

/** Removes terminal escapes and control characters; keeps what follows the last carriage return. */
export function printable(line: string): string {
  const text = line
    // deno-lint-ignore no-control-regex
    .replace(/\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b./g, "");
  const segments = text.split("\r").filter((s) => s.trim() !== "");
  // deno-lint-ignore no-control-regex
  return (segments.at(-1) ?? "").replace(/[\x00-\x1f\x7f]/g, " ").trim();
}

export interface ProgressDisplay {
  started(pid: number): void;
  finished(summary: string): void;
  startFailed(why: string): void;
  /** Stops timers and clears the status line; safe to call more than once. */
  stop(): void;
}

/** A "plain" progress line: with the UTC time in front when stderr is a file (cron.log). */
function plainLine(line: string): void {
  writeErr(`${stamped(line, Deno.stderr.isTerminal())}\n`);
}

export function makeProgress(
  mode: ProgressStyle,
  label: string,
  last: () => string,
): ProgressDisplay {
  if (mode === "quiet") {
    return { started() {}, finished() {}, startFailed() {}, stop() {} };
  }
  let startedAt = Date.now();
  let stopTimer = () => {};
  if (mode === "plain") {
    return {
      started(pid) {
        startedAt = Date.now();
        plainLine(`relay: ${label} started (pid ${pid})`);
        stopTimer = every(HEARTBEAT_MS, () => {
          plainLine(
            `relay: ${label} still running after ${
              formatDuration(Date.now() - startedAt)
            } (pid ${pid})`,
          );
        });
      },
      finished(summary) {
        stopTimer();
        plainLine(`relay: ${label} finished: ${summary}`);
      },
      startFailed(why) {
        plainLine(`relay: ${label} ${why}`);
      },
      stop() {
        stopTimer();
      },
    };
  }
  let shown = false;
  const draw = () => {
    shown = true;
    writeErr(`\r\x1b[2K${statusLine(label, Date.now() - startedAt, last(), terminalWidth())}`);
  };
  const clear = () => {
    stopTimer();
    stopTimer = () => {};
    if (shown) writeErr("\r\x1b[2K");
    shown = false;
  };
  return {
    started() {
      startedAt = Date.now();
      draw();
      stopTimer = every(1000, draw);
    },
    finished: clear,
    startFailed() {},
    stop: clear,
  };
}

function terminalWidth(): number {
  try {
    return Deno.consoleSize().columns || 80;
  } catch {
    return 80;
  }
}

function writeErr(text: string): void {
  const data = encoder.encode(text);
  let offset = 0;
  try {
    while (offset < data.length) offset += Deno.stderr.writeSync(data.subarray(offset));
  } catch {
    // stderr closed: progress is best effort.
  }
}
