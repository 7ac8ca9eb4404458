/**
 * The gate's answer as `relay gate` and the review tick show it: one line per
 * check and the decision, and the exit status each decision means. Kept apart
 * from the checks so the text and the codes live in one small place.
 */
import type { GateDecision, GateDecisionKind } from "./gate.ts";

const EXIT_CODES: Record<GateDecisionKind, number> = { MERGE: 0, REFUSE: 10, HUMAN: 11, WAIT: 12 };

/**
 * `relay gate`'s exit status when there is no PR to judge (decision NONE: nothing
 * reported on main, the PR merged or closed, the task BLOCKED). Not 0: 0 means MERGE.
 */
export const NOTHING_TO_GATE_EXIT = 13;

/** `relay gate`'s exit status: 0 MERGE, 10 REFUSE, 11 HUMAN, 12 WAIT (13 NONE, see above). */
export function gateExitCode(decision: GateDecision): number {
  return EXIT_CODES[decision.decision];
}

/** One line per check (`PASS    scope      …`), then `decision: <DECISION>`. */
export function formatGate(decision: GateDecision): string {
  const width = Math.max(...decision.checks.map((c) => c.name.length));
  const lines = decision.checks.map((c) =>
    `${c.result.padEnd(6)}  ${c.name.padEnd(width)}  ${c.reason}`
  );
  lines.push(`decision: ${decision.decision}`);
  return lines.join("\n");
}
