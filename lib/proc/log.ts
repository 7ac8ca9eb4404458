import { redact } from "./redact.ts";

/**
 * What a tick says as it goes: one plain line per step, to stderr, so stdout stays for data.
 * Into a file (cron.log) each line carries the time, in UTC; on a terminal it does not.
 * Secrets of relay's environment are redacted (lines quote git, agents and commands).
 */
export interface Log {
  step(message: string): void;
}

/** `2026-11-29T20:31:02Z`: ISO 8601, UTC, to the second. */
export function utcStamp(at: Date = new Date()): string {
  return at.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** The line with the time in front, unless it goes to a terminal. */
export function stamped(line: string, terminal: boolean, at: Date = new Date()): string {
  return terminal ? line : `${utcStamp(at)} ${line}`;
}

export const stderrLog: Log = {
  step(message) {
    console.error(stamped(`relay: ${redact(message)}`, Deno.stderr.isTerminal()));
  },
};

export const silentLog: Log = { step() {} };

/** How an agent turn shows its progress: a redrawn line, plain lines (cron), or nothing. */
export type Progress = "tty" | "plain" | "quiet";
