/**
 * The one loop every command that moves a task runs: ask the pure `next` for
 * the effect, refuse it if this side may not perform it, let its handler do
 * the I/O and report what happened as a fact, fold the fact in with the pure
 * `reduce`, save, and go again — until the decision is to wait or that there
 * is nothing more to do now. A HOLD is an effect too (recorded, then thrown to
 * the tick runner, which says it on one screen).
 *
 * Facts a handler learns before it returns (the agent started, with its pid)
 * go through `emit`, and are saved at once: a tick killed during a turn leaves
 * the pid on record for the next one.
 */
import { HoldError } from "../errors.ts";
import { allowed, type Effect, type Ending, type Side } from "../task/effects.ts";

export interface Machine<S, E extends { kind: string }, F extends Effect> {
  side: Side;
  reduce(state: S, event: E): S;
  next(state: S): F;
  /**
   * Performs one effect; returns the fact it produced (or nothing, when it
   * reported every fact through `emit` already).
   */
  handle(
    effect: Exclude<F, Ending>,
    state: S,
    emit: (event: E) => Promise<void>,
  ): Promise<E | void> | E;
  /** Persists what changed (the journal, the review record), and the event log. */
  save(before: S, after: S, event: E): Promise<void>;
  /** A HOLD raised by an effect, before it goes up to the tick runner (the timeline notes it). */
  onHold?(state: S, err: HoldError): Promise<void>;
}

/** More effects than any tick performs: a loop that does not end is a bug in the table. */
const MAX_EFFECTS = 64;

export class SideError extends Error {
  override name = "SideError";
}

export async function drive<S, E extends { kind: string }, F extends Effect>(
  machine: Machine<S, E, F>,
  initial: S,
  /** Filled with the kind of each effect performed, in order (also when an effect throws). */
  performed: string[] = [],
): Promise<{ state: S; end: Ending }> {
  let state = initial;
  const apply = async (event: E) => {
    const after = machine.reduce(state, event);
    await machine.save(state, after, event);
    state = after;
  };
  for (let i = 0; i < MAX_EFFECTS; i++) {
    const effect = machine.next(state);
    if (!allowed(machine.side, effect)) {
      throw new SideError(`the ${machine.side} side may not perform "${effect.kind}"`);
    }
    performed.push(effect.kind);
    if (effect.kind === "wait" || effect.kind === "done") return { state, end: effect };
    let event: E | void;
    try {
      event = await machine.handle(effect as Exclude<F, Ending>, state, apply);
    } catch (err) {
      if (err instanceof HoldError && !err.recorded && !err.recheck) {
        await machine.onHold?.(state, err).catch(() => {});
      }
      throw err;
    }
    if (event) await apply(event);
  }
  throw new Error(`relay performed ${MAX_EFFECTS} effects in one tick without an end`);
}
