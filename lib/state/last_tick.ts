/**
 * How each tick last ended: `.git/relay/last-poll.json` and `last-review.json`.
 * `relay status` shows them, so a loop whose every tick fails (a bad config
 * key, an unreachable origin) says so instead of looking merely idle.
 *
 * Loaded only after the idle check of `relay poll`, and kept light anyway:
 * node:path, relay's error classes and its JSON helpers, nothing else.
 */
import { join } from "node:path";
import { HoldError, InputError, UsageError } from "../errors.ts";
import { readJson, writeJson } from "./json_file.ts";

export type TickCommand = "poll" | "review";

export interface LastTick {
  /** When the tick ended (ISO, UTC). */
  at: string;
  command: TickCommand;
  /** The exit code the CLI returned (or main.ts mapped the error to). */
  exit: number;
  /** The result kind ("shipped", "busy", …), or "input", "hold", "error" for a thrown error. */
  result: string;
  /** What the tick printed as its result, cut to MESSAGE_MAX characters. */
  message: string;
}

/** How much of the message is kept. */
export const MESSAGE_MAX = 500;

export function lastTickPath(commonDir: string, command: TickCommand): string {
  return join(commonDir, "relay", `last-${command}.json`);
}

/** The exit code main.ts maps an error to: bad input or usage 2, HOLD 3, anything else 1. */
export function exitCodeFor(err: unknown): number {
  if (err instanceof InputError || err instanceof UsageError) return 2;
  if (err instanceof HoldError) return 3;
  return 1;
}

/** A finished tick's record. */
export function lastTick(
  command: TickCommand,
  exit: number,
  result: string,
  message: string,
  at: Date = new Date(),
): LastTick {
  return { at: at.toISOString(), command, exit, result, message: message.slice(0, MESSAGE_MAX) };
}

/** The record of a tick that threw: its exit code and what main.ts prints for it. */
export function failedTick(command: TickCommand, err: unknown, at: Date = new Date()): LastTick {
  const message = (err as Error)?.message ?? String(err);
  if (err instanceof HoldError) {
    return lastTick(command, 3, "hold", `HOLD: ${message}\n  next: ${err.next}`, at);
  }
  const kind = err instanceof InputError || err instanceof UsageError ? "input" : "error";
  return lastTick(command, exitCodeFor(err), kind, `error: ${message}`, at);
}

/**
 * Writes the record. Never throws: a tick's own result matters more than its
 * record, so a failure to write is only said on stderr.
 */
export async function saveLastTick(commonDir: string, tick: LastTick): Promise<void> {
  const path = lastTickPath(commonDir, tick.command);
  try {
    await writeJson(path, tick);
  } catch (err) {
    console.error(
      `relay: cannot record the last ${tick.command} in "${path}": ${
        (err as Error)?.message ?? String(err)
      }`,
    );
  }
}

/** The record, or null when there is none or it is not one (an unreadable file counts as none). */
export async function readLastTick(
  commonDir: string,
  command: TickCommand,
): Promise<LastTick | null> {
  let value: unknown;
  try {
    value = await readJson<unknown>(lastTickPath(commonDir, command));
  } catch {
    return null;
  }
  if (value === null || typeof value !== "object") return null;
  const v = value as Record<string, unknown>;
  if (
    typeof v.at !== "string" || typeof v.exit !== "number" || typeof v.result !== "string" ||
    typeof v.message !== "string"
  ) {
    return null;
  }
  return { at: v.at, command, exit: v.exit, result: v.result, message: v.message };
}

/** One line for `relay status`: `<time> exit N — <message>`. */
export function formatLastTick(tick: LastTick | null): string {
  return tick ? `${tick.at} exit ${tick.exit} — ${tick.message}` : "none recorded";
}
