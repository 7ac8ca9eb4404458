/**
 * The one map from error classes to exit codes and to what a person reads.
 * main.ts uses it for every command; the ticks (lib/cli/tick.ts) use it too,
 * so they can keep a repeated line out of cron.log. Light: the idle tick
 * loads it.
 */
import {
  CommandError,
  Exit,
  HoldError,
  InputError,
  ProbeError,
  RetryError,
  UsageError,
} from "../errors.ts";
import { redact } from "../proc/redact.ts";
import { stamped } from "../proc/log.ts";

/**
 * The exit code and the lines for an error (without the time stamp). `tick`: the error ended a
 * cron tick (poll, review), whose next run tries again by itself; a person's command is run
 * again by the person.
 */
export function describeError(err: unknown, tick = true): { code: number; text: string } {
  if (err instanceof UsageError) {
    return {
      code: Exit.badInput,
      text: `relay: error: ${err.message}\nRun "relay ${
        err.command ? `${err.command} ` : ""
      }--help" for usage.`,
    };
  }
  if (err instanceof InputError) {
    return { code: Exit.badInput, text: `relay: error: ${err.message}` };
  }
  if (err instanceof HoldError) {
    return { code: Exit.hold, text: `relay: HOLD: ${err.message}\n  next: ${err.next}` };
  }
  if (err instanceof ProbeError) {
    return { code: Exit.probe, text: `relay: re-probe: ${err.message}\n  next: ${err.next}` };
  }
  if (err instanceof RetryError) {
    return {
      code: Exit.failure,
      text: `relay: not yet: ${err.message}; ${
        tick ? "the next tick tries again" : "nothing needs undoing: run the command again later"
      }`,
    };
  }
  if (
    err instanceof CommandError || err instanceof Deno.errors.PermissionDenied ||
    err instanceof Deno.errors.NotCapable
  ) {
    return { code: Exit.failure, text: `relay: error: ${(err as Error).message}` };
  }
  const e = err as Error;
  const stack = Deno.env.get("RELAY_DEBUG") && e?.stack ? `\n${e.stack}` : "";
  return {
    code: Exit.failure,
    text: `relay: internal error: ${e?.message ?? String(err)}${stack}`,
  };
}

/**
 * Writes lines to stderr; into a file (cron.log) they carry the time, on a
 * terminal they do not. Secrets of relay's environment are redacted: errors
 * quote git and other programs.
 */
export function say(text: string): void {
  console.error(stamped(redact(text), Deno.stderr.isTerminal()));
}

/** Prints the error and returns its exit code. */
export function reportError(err: unknown): number {
  const { code, text } = describeError(err, false);
  say(text);
  return code;
}
