/**
 * Error classes that the top-level handler in main.ts maps to exit codes.
 *
 * Library code throws; only main.ts exits. A class exists here only when a
 * caller (or the top-level handler) needs to tell it apart.
 */

/** Exit codes, documented in README. */
export const Exit = {
  ok: 0,
  failure: 1,
  badInput: 2,
  hold: 3,
  /** safety_mode strict: a role has no passing probe for the program it would run. */
  probe: 4,
} as const;

/** Wrong command-line usage: unknown flag, missing argument. Exit 2. */
export class UsageError extends Error {
  override name = "UsageError";
  /** Name of the command whose usage should be shown, if any. */
  command: string | undefined;
  constructor(message: string, command?: string) {
    super(message);
    this.command = command;
  }
}

/** Where in a file a problem sits. */
export interface Location {
  file: string;
  line?: number;
  key?: string;
}

/**
 * Bad input in a file the user (or an agent) wrote: a malformed brief, a
 * config key that is not allowed, an unsafe verification command. Exit 2.
 * The message names the file, the line or key, and the fix.
 */
export class InputError extends Error {
  override name = "InputError";
  readonly location: Location;
  readonly fix: string | undefined;
  constructor(location: Location, problem: string, fix?: string) {
    super(formatInputError(location, problem, fix));
    this.location = location;
    this.fix = fix;
  }
}

function formatInputError(loc: Location, problem: string, fix?: string): string {
  let where = loc.file;
  if (loc.line !== undefined) where += `:${loc.line}`;
  if (loc.key !== undefined) where += ` (key "${loc.key}")`;
  return fix ? `${where}: ${problem}\n  fix: ${fix}` : `${where}: ${problem}`;
}

/**
 * The loop stopped because a person is needed. Exit 3. `reason` is one line;
 * `next` says what to do about it.
 */
export class HoldError extends Error {
  override name = "HoldError";
  readonly next: string;
  /**
   * A precondition every tick checks again before it does anything (the primary
   * tree is off main, an agent program is missing, origin/main is gone): it
   * clears itself once fixed, so it is not recorded in hold.json.
   */
  readonly recheck: boolean;
  /** The HOLD already on record in hold.json, met again by a later tick. */
  readonly recorded: boolean;
  /** The task the HOLD is about, when the code that raised it knows better than the tick. */
  readonly task: number | undefined;
  /**
   * About this machine alone (its primary tree is in the way), not about the task: with split
   * machines the role's lease is let go, so another machine may go on.
   */
  readonly local: boolean;
  constructor(
    reason: string,
    next: string,
    opts: { recheck?: boolean; recorded?: boolean; task?: number; local?: boolean } = {},
  ) {
    super(reason);
    this.next = next;
    this.recheck = opts.recheck ?? false;
    this.recorded = opts.recorded ?? false;
    this.task = opts.task;
    this.local = opts.local ?? false;
  }
}

/**
 * Something did not happen this tick for a reason that passes by itself: a
 * remote that could not be reached, a push that lost a race with another. The
 * journal keeps the step, and the next tick does it again. Exit 1, never a HOLD.
 */
export class RetryError extends Error {
  override name = "RetryError";
}

/**
 * A split-mode role's lease another machine holds now (lib/loop/split.ts HeldRole): a
 * RetryError, since the next tick that holds the lease settles what this one left, but never
 * one to take for a remote that did not answer.
 */
export class LeaseLostError extends RetryError {
  override name = "LeaseLostError";
}

/** A subprocess could not start, was killed, or exited non-zero unexpectedly. Exit 1. */
export class CommandError extends Error {
  override name = "CommandError";
  constructor(
    readonly argv: readonly string[],
    readonly cwd: string,
    readonly code: number | null,
    readonly stderr: string,
    detail: string,
  ) {
    super(
      `${detail}: ${argv.join(" ")} (in ${cwd})${
        stderr.trim() ? `\n${indent(stderr.trim())}` : ""
      }`,
    );
  }
}

function indent(text: string): string {
  const lines = text.split("\n");
  const tail = lines.length > 20 ? lines.slice(-20) : lines;
  return tail.map((l) => `  ${l}`).join("\n");
}

/**
 * Strict mode refuses to run a role whose program has no passing probe, or
 * changed since it was probed. Exit 4. Not recorded: it clears itself once
 * `relay probe` passes for the program as it is.
 */
export class ProbeError extends Error {
  override name = "ProbeError";
  readonly next: string;
  constructor(reason: string, next: string) {
    super(reason);
    this.next = next;
  }
}
