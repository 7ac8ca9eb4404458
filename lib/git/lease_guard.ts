/**
 * The role's lease a split-mode tick holds, asked before each act no other machine may do at
 * the same time: an agent turn, a push, a merge. A tick that was stopped past its lease's time
 * (a suspended machine, a network that hung) may have lost the role to another machine; asked
 * here, it finds out before it acts, not after. Mode one holds no lease: nothing is asked.
 */
export interface LeaseGuard {
  /** Resolves when the lease is still this tick's; throws (a RetryError: the tick stops) when it is not. */
  confirm(): Promise<void>;
}

let current: LeaseGuard | null = null;

/** The tick's lease from now on (null: none any more). */
export function guardWith(guard: LeaseGuard | null): void {
  current = guard;
}

/** The guard in force, if any: for the one that ends it to check it is its own. */
export function currentGuard(): LeaseGuard | null {
  return current;
}

/** Before an act another machine must not do at the same time: the lease is still ours. */
export async function confirmLease(): Promise<void> {
  if (current !== null) await current.confirm();
}
