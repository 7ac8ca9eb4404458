/**
 * Timers that cost a short command nothing to start. Deno's global
 * `setTimeout` is a lazy getter that loads its node:timers polyfill (with
 * node's async_hooks and errors modules) on first use: 3–10 ms of a `relay
 * gate` that git answers in ~40. `AbortSignal.timeout` loads nothing, and Deno
 * keeps the process alive for it only while it has a listener: removing the
 * listener is clearing the timer.
 */

/** The longest delay one AbortSignal.timeout holds: past it, it fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Calls `fn` once after `ms` (Infinity: never; a negative or NaN delay: 0, as setTimeout
 * takes them; a longer one than MAX_TIMER_MS waits in steps); returns what cancels it.
 */
export function later(ms: number, fn: () => void): () => void {
  if (ms === Infinity) return () => {};
  let cancel = () => {};
  const arm = (left: number) => {
    const signal = AbortSignal.timeout(Math.min(left, MAX_TIMER_MS));
    const listener = () => left > MAX_TIMER_MS ? arm(left - MAX_TIMER_MS) : fn();
    signal.addEventListener("abort", listener, { once: true });
    cancel = () => signal.removeEventListener("abort", listener);
  };
  arm(ms > 0 ? ms : 0);
  return () => cancel();
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => later(ms, resolve));
}

/** Calls `fn` every `ms` until cancelled (each call timed from the start of the one before). */
export function every(ms: number, fn: () => void): () => void {
  let cancel = () => {};
  const next = () => {
    cancel = later(ms, () => {
      next();
      fn();
    });
  };
  next();
  return () => cancel();
}
