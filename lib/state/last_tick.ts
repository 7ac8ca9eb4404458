/**
 * How each tick last ended: `.git/relay/last-poll.json` and `last-review.json`.
 * `relay status` shows them, so a loop whose every tick fails (a bad config
 * key, an unreachable origin) says so instead of looking merely idle.
 *
 * Loaded only after the idle check of `relay poll`, and kept light anyway:
 * node:path, relay's error classes, its JSON helpers and paths, nothing else.
 */
import { join } from "../path.ts";
import { HoldError, InputError, ProbeError, RetryError, UsageError } from "../errors.ts";
import { readJson, writeJson } from "./json_file.ts";

export type TickCommand = "poll" | "review";

export interface LastTick {
  /** When the tick ended (ISO, UTC). */
  at: string;
  command: TickCommand;
  /** The exit code the CLI returned (or main.ts mapped the error to). */
  exit: number;
  /** The result kind ("shipped", "busy", …), or "input", "hold", "retry", "error" for a thrown error. */
  result: string;
  /** What the tick printed as its result, cut to MESSAGE_MAX characters. */
  message: string;
  /**
   * The task the tick was about when it started (see tickSubject in lib/cli/tick.ts), so a failure
   * of task 3 is never shown as task 4's. Absent in records written before.
   */
  task?: number;
  /**
   * When this command last wrote its result to the log (ISO). Under --quiet a
   * result the same as the last one is said again only after REPEAT_MS, so a
   * state that lasts (a HOLD, a remote that is down) is one line, not 1,440 a day.
   */
  said?: string;
  /** The effects the tick performed, in order (lib/task/effects.ts): what `relay status` predicted. */
  effects?: string[];
}

/** How often a result that has not changed is said again into cron.log. */
export const REPEAT_MS = 60 * 60 * 1000;

/** How much of the message is kept. */
export const MESSAGE_MAX = 500;

export function lastTickPath(commonDir: string, command: TickCommand): string {
  return join(commonDir, "relay", `last-${command}.json`);
}

/** The exit code main.ts maps an error to: bad input or usage 2, HOLD 3, anything else 1. */
export function exitCodeFor(err: unknown): number {
  if (err instanceof InputError || err instanceof UsageError) return 2;
  if (err instanceof HoldError) return 3;
  if (err instanceof ProbeError) return 4;
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
  if (err instanceof ProbeError) {
    return lastTick(command, 4, "probe", `re-probe: ${message}\n  next: ${err.next}`, at);
  }
  if (err instanceof RetryError) {
    return lastTick(command, 1, "retry", `not yet: ${message}; the next tick tries again`, at);
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
  const tick: LastTick = { at: v.at, command, exit: v.exit, result: v.result, message: v.message };
  if (typeof v.task === "number") tick.task = v.task;
  if (typeof v.said === "string") tick.said = v.said;
  if (Array.isArray(v.effects) && v.effects.every((e) => typeof e === "string")) {
    tick.effects = v.effects;
  }
  return tick;
}

/**
 * When a person last cleared a HOLD (`relay resume`, or `relay close` clearing
 * one): `.git/relay/hold-cleared.json`. A tick record older than that is
 * history, not the loop's current state.
 */
export interface HoldCleared {
  at: string;
  by: "resume" | "close";
  /** The task and reason of the HOLD that was cleared. */
  task: number;
  reason: string;
}

function holdClearedPath(commonDir: string): string {
  return join(commonDir, "relay", "hold-cleared.json");
}

/** Records that a person cleared a HOLD. Never throws: clearing it matters more than the record. */
export async function recordHoldCleared(
  commonDir: string,
  by: HoldCleared["by"],
  hold: { task: number; reason: string },
  at: Date = new Date(),
): Promise<void> {
  const record: HoldCleared = { at: at.toISOString(), by, task: hold.task, reason: hold.reason };
  try {
    await writeJson(holdClearedPath(commonDir), record);
  } catch (err) {
    console.error(
      `relay: cannot record the cleared HOLD in "${holdClearedPath(commonDir)}": ${
        (err as Error)?.message ?? String(err)
      }`,
    );
  }
}

export async function readHoldCleared(commonDir: string): Promise<HoldCleared | null> {
  try {
    const v = await readJson<Record<string, unknown>>(holdClearedPath(commonDir));
    if (v === null || typeof v !== "object" || typeof v.at !== "string") return null;
    return {
      at: v.at,
      by: v.by === "close" ? "close" : "resume",
      task: typeof v.task === "number" ? v.task : 0,
      reason: typeof v.reason === "string" ? v.reason : "",
    };
  } catch {
    return null;
  }
}

/** Whether the tick ended before the HOLD was cleared: then it is history. */
export function beforeClear(tick: LastTick, cleared: HoldCleared | null): boolean {
  return cleared !== null && Date.parse(tick.at) < Date.parse(cleared.at);
}

/**
 * Whether the record still describes the loop: not older than a cleared HOLD,
 * and about the task the next tick of its kind works on (`task` null: unknown).
 */
export function isCurrentTick(
  tick: LastTick | null,
  task: number | null,
  cleared: HoldCleared | null,
): tick is LastTick {
  if (!tick || beforeClear(tick, cleared)) return false;
  return tick.task === undefined || task === null || tick.task === task;
}

/**
 * One line for `relay status`: `<time> exit N, task T — <message>`. A record
 * from before a cleared HOLD shows only its first line, marked as history.
 */
export function formatLastTick(tick: LastTick | null, cleared: HoldCleared | null = null): string {
  if (!tick) return "none recorded";
  const head = `${tick.at} exit ${tick.exit}${
    tick.task === undefined ? "" : `, task ${tick.task}`
  }`;
  if (!beforeClear(tick, cleared)) return `${head} — ${tick.message}`;
  return `${head} — ${tick.message.split("\n")[0]} [history: before relay ${
    cleared!.by
  } cleared the HOLD at ${cleared!.at}]`;
}
