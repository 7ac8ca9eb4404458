/**
 * Every transition of a task, in one place. Three tables:
 *
 * - the executor's attempt moves through the journal's steps (a killed tick is
 *   finished from the step on record);
 * - the planner's tick moves through phases, from what it observed on
 *   origin/main and the forge to a merge, a send-back, a person, or a wait;
 * - a person's command (`relay resume`, `relay close`) moves through the
 *   steps of clearing a HOLD or giving up on a PR.
 *
 * A row is (from, fact) → to. A fact that has no row in the state it arrives
 * in is a bug, and throws: nothing moves on a guess. `next` (executor.ts,
 * planner_next.ts, person.ts) names the effect each state asks for.
 */
import type { Journal, Step } from "../state/journal.ts";
import type { PersonEvent } from "./person.ts";
import type { PlannerEvent, PlannerState } from "./planner.ts";
import { classify, staleWait } from "./planner.ts";
import { sendsBack } from "../state/reviews.ts";

// ---------------------------------------------------------------------------
// The executor: the steps of one attempt.

type ExecutorFact =
  | "turn-started"
  | "turn-ended"
  | "committed"
  | "bar-ran"
  | "branch-pushed"
  | "pr-opened"
  | "paperwork-committed"
  | "paperwork-pushed";

/** (step, fact) → step. A BLOCKED run's push skips the PR: its step goes straight to "pr-opened". */
export const EXECUTOR_TABLE: Readonly<
  Record<Step, Partial<Record<ExecutorFact, Step | { SHIPPED: Step; BLOCKED: Step }>>>
> = {
  "prepared": { "turn-started": "agent-started", "turn-ended": "agent-finished" },
  "agent-started": { "turn-ended": "agent-finished" },
  "agent-finished": { "committed": "committed" },
  "committed": {
    "bar-ran": "evidence",
    "branch-pushed": { SHIPPED: "pushed", BLOCKED: "pr-opened" },
  },
  "evidence": { "branch-pushed": "pushed" },
  "pushed": { "pr-opened": "pr-opened" },
  "pr-opened": { "paperwork-committed": "paperwork-committed" },
  "paperwork-committed": { "paperwork-pushed": "paperwork-pushed" },
  "paperwork-pushed": {},
};

export class NoTransition extends Error {
  override name = "NoTransition";
}

/** The step a journaled run moves to on `fact`; throws when the table has no such row. */
export function stepAfter(run: Journal, fact: string): Step {
  const to = EXECUTOR_TABLE[run.step][fact as ExecutorFact];
  if (to === undefined) {
    throw new NoTransition(`no transition from step "${run.step}" on "${fact}" (run ${run.runId})`);
  }
  if (typeof to === "string") return to;
  return run.outcome === "BLOCKED" ? to.BLOCKED : to.SHIPPED;
}

// ---------------------------------------------------------------------------
// The planner: the phases of one review tick.

export const PLANNER_PHASES = [
  "start",
  // Where the task stands once observed (classify):
  "no-main",
  "no-report",
  "executor-mid-tick",
  "blocked",
  "blocked-handed",
  "no-pr",
  "merged-unnoticed",
  "merged",
  "closed-unnoticed",
  "closed",
  "executor-first",
  "moved-outside",
  "failed",
  "fix-lost",
  "to-review",
  "passed",
  "nothing-to-merge",
  "merge-blocked",
  "merge-no-pr",
  // Where the facts of this tick take it:
  "blocked-hold",
  "merged-moved",
  "merged-first",
  "closed-first",
  "scope-refused",
  "scope-human",
  "scope-passed",
  "preview-wait",
  "preview-missing",
  "reviewer-busy",
  "review-held",
  "review-failed",
  "stage-failed",
  "gate-stale",
  "stale-twice",
  "gate-wait",
  "gate-human",
  "gate-refused",
  "ready-for-person",
  // A person's acceptance (relay accept / relay reject):
  "acceptance-shown",
  "acceptance-stale",
  "accepted",
  "rejected",
  "merge-refused",
  "needs-acceptance",
  "mergeable",
  "merge-missed",
  "merged-now",
  "sent-back",
  "with-person",
  "promoted",
] as const;
export type PlannerPhase = typeof PLANNER_PHASES[number];

type Rule =
  | PlannerPhase
  | ((before: PlannerState, e: PlannerEvent, after: PlannerState) => PlannerPhase);

const SENDS_BACK = [
  "rejected",
  "failed",
  "fix-lost",
  "scope-refused",
  "review-failed",
  "stage-failed",
  "stale-twice",
  "gate-refused",
] as const;
const PROMOTES = ["merged", "merged-first", "closed", "closed-first", "merged-now"] as const;

/** (phase, fact) → phase. "observed" is the one fact read from any start. */
export const PLANNER_TABLE: ReadonlyArray<
  readonly [from: PlannerPhase | readonly PlannerPhase[], fact: PlannerEvent["kind"], to: Rule]
> = [
  ["start", "observed", (_b, _e, a) => classify(a.mode, a.seen!, a.record)],
  ["blocked", "blocked-handed-over", "blocked-hold"],
  ["merged-unnoticed", "merge-noted", (_b, _e, a) => {
    const { seen } = a;
    return seen!.mergedHead !== seen!.pr!.head && !seen!.prHeadInMain
      ? "merged-moved"
      : "merged-first";
  }],
  ["closed-unnoticed", "close-noted", "closed-first"],
  ["to-review", "scope-checked", (_b, e) => {
    const result = (e as Extract<PlannerEvent, { kind: "scope-checked" }>).result;
    return result === "REFUSE"
      ? "scope-refused"
      : result === "HUMAN"
      ? "scope-human"
      : "scope-passed";
  }],
  // A deploy preview is configured: it must answer for the head before the review turn.
  ["scope-passed", "preview-checked", (_b, _e, a) => {
    const p = a.preview!;
    if (p.ready) return "scope-passed";
    const waited = Date.parse(p.at) - Date.parse(p.since);
    return waited >= (a.seen!.preview?.timeoutMs ?? 0) ? "preview-missing" : "preview-wait";
  }],
  ["scope-passed", "review-void", "scope-passed"],
  [
    "scope-passed",
    "verdict",
    (_b, e) =>
      (e as Extract<PlannerEvent, { kind: "verdict" }>).verdict.verdict === "PASS"
        ? "passed"
        : "review-failed",
  ],
  ["scope-passed", "review-held", "review-held"],
  ["scope-passed", "reviewer-still-running", "reviewer-busy"],
  // The stages after review run from "passed", one per effect: a run that sends back
  // moves to a send-back; any other run leaves the task passed, for the next stage or the gate.
  [
    "passed",
    "stage-ran",
    (_b, e) =>
      sendsBack((e as Extract<PlannerEvent, { kind: "stage-ran" }>).run)
        ? "stage-failed"
        : "passed",
  ],
  ["passed", "review-void", "passed"],
  ["passed", "review-held", "review-held"],
  ["passed", "reviewer-still-running", "reviewer-busy"],
  ["passed", "revalidated", "passed"],
  ["accepted", "revalidated", "accepted"],
  ["passed", "acceptance-weighed", (_b, e, a) => {
    const w = e as Extract<PlannerEvent, { kind: "acceptance-weighed" }>;
    const ask = a.mode.kind === "merge" ? a.mode.accept : undefined;
    if (!ask || ask.expect === null) return "acceptance-shown";
    if (ask.expect !== w.digest) return "acceptance-stale";
    return ask.action === "accept" ? "accepted" : "rejected";
  }],
  // A person who accepted by digest merges the human path too, but only files the intent
  // named; and only onto the main the digest covered.
  ["accepted", "gate-decided", (_b, e, a) => {
    const d = (e as Extract<PlannerEvent, { kind: "gate-decided" }>).decision;
    const intent = a.intent!.intent;
    if (d.base !== intent.main) return "acceptance-stale";
    if (d.decision === "MERGE") return "mergeable";
    if (d.decision !== "HUMAN") return "merge-refused";
    const human = d.checks.flatMap((c) => c.result === "HUMAN" ? c.files ?? [] : []);
    return human.length > 0 && human.every((f) => intent.infra.includes(f))
      ? "mergeable"
      : "merge-refused";
  }],
  ["passed", "gate-decided", (_b, e, a) => {
    const d = (e as Extract<PlannerEvent, { kind: "gate-decided" }>).decision;
    if (a.mode.kind === "merge") {
      // relay merge does not stand in for a person's acceptance by digest.
      if (d.decision === "MERGE" && a.seen!.merge === "human") return "needs-acceptance";
      return d.decision === "MERGE" ? "mergeable" : "merge-refused";
    }
    switch (d.decision) {
      case "MERGE":
        return a.seen!.merge === "auto" ? "mergeable" : "ready-for-person";
      case "WAIT":
        return staleWait(d) ? "gate-stale" : "gate-wait";
      case "HUMAN":
        return "gate-human";
      case "REFUSE":
        return "gate-refused";
    }
  }],
  // Reviewed again and still failing on the merge: only the executor can fix that.
  ["gate-stale", "verdict-marked-stale", (_b, e, a) => {
    const head = (e as Extract<PlannerEvent, { kind: "verdict-marked-stale" }>).head;
    return a.record!.verdicts.filter((v) => v.head === head && v.stale).length >= 2
      ? "stale-twice"
      : "gate-wait";
  }],
  ["mergeable", "merge-landed", "merged-now"],
  ["mergeable", "merge-missed", "merge-missed"],
  [SENDS_BACK, "sent-back", "sent-back"],
  [["scope-human", "gate-human"], "routed-to-person", "with-person"],
  [PROMOTES, "promoted", "promoted"],
];

/** The phase the planner moves to on `e`; throws when the table has no such row. */
export function phaseAfter(
  before: PlannerState,
  e: PlannerEvent,
  after: PlannerState,
): PlannerPhase {
  for (const [from, fact, to] of PLANNER_TABLE) {
    const froms: readonly PlannerPhase[] = typeof from === "string" ? [from] : from;
    if (fact !== e.kind || !froms.includes(before.phase)) continue;
    return typeof to === "string" ? to : to(before, e, after);
  }
  throw new NoTransition(`no transition from phase "${before.phase}" on "${e.kind}"`);
}

// ---------------------------------------------------------------------------
// A person's command: resume (survey, settle the held run, clear the HOLD) or
// close (survey, close the PR, stop a left-over agent, settle the run on the
// branch, record the close, retire the open fix brief, clear the HOLD, promote).

export const PERSON_STEPS = [
  "start",
  "surveyed",
  "pr-closed",
  "agent-stopped",
  "run-settled",
  "close-recorded",
  "brief-retired",
  "hold-cleared",
  "promoted",
] as const;
export type PersonStep = typeof PERSON_STEPS[number];

/** (step, fact) → step. The steps a command skips (no run to settle, no HOLD) have no fact. */
export const PERSON_TABLE: ReadonlyArray<
  readonly [from: readonly PersonStep[], fact: PersonEvent["kind"], to: PersonStep]
> = [
  [["start"], "observed", "surveyed"],
  [["surveyed"], "pr-closed", "pr-closed"],
  [["pr-closed"], "agent-stopped", "agent-stopped"],
  [["surveyed", "pr-closed", "agent-stopped"], "run-kept", "run-settled"],
  [["surveyed", "pr-closed", "agent-stopped"], "run-abandoned", "run-settled"],
  [["surveyed"], "uncertain-released", "run-settled"],
  [["pr-closed", "agent-stopped", "run-settled"], "close-recorded", "close-recorded"],
  [["close-recorded"], "brief-retired", "brief-retired"],
  [["surveyed", "run-settled", "close-recorded", "brief-retired"], "hold-cleared", "hold-cleared"],
  [["close-recorded", "brief-retired", "hold-cleared"], "promoted", "promoted"],
];

/** The step a person's command moves to on `e`; throws when the table has no such row. */
export function personStepAfter(step: PersonStep, e: PersonEvent): PersonStep {
  for (const [from, fact, to] of PERSON_TABLE) {
    if (fact === e.kind && from.includes(step)) return to;
  }
  throw new NoTransition(`no transition from step "${step}" on "${e.kind}"`);
}
