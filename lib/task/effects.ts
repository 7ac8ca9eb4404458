/**
 * The effects the pure decisions can name: the one thing a tick does next.
 * Each effect belongs to one side. The executor side (`relay poll`) may run
 * the executor's turn, commit, push its branch, open a PR and write its
 * paperwork; the planner side (`relay review`, `relay merge`) may run the
 * reviewer, gate, merge, send back and promote. Nothing else decides who may
 * do what: the driver refuses an effect of the other side, and a test walks
 * every state of the executor's table to show it is never handed a merge.
 */
import type { Finding, PostStage } from "../state/reviews.ts";

/**
 * The executor's tick, the planner's tick, or a person's command (`relay
 * resume`, `relay close`): a person may close a PR and clear a HOLD, never
 * run an agent or merge.
 */
export type Side = "executor" | "planner" | "person";

/** What a tick is waiting for when it stops without finishing the task. */
export type WaitFor =
  | "pr-in-flight"
  | "review-lock"
  | "orphan-turn"
  | "executor"
  | "gate"
  | "merge"
  | "preview"
  | "promotion";

/** How a tick ends: the line it prints and, for the CLI, what kind of result it was. */
export interface TickEnd {
  kind: string;
  message: string;
  [detail: string]: unknown;
}

/** The two effects that end a tick: waiting for something, or nothing left to do now. */
export type Ending =
  | { kind: "wait"; for: WaitFor; result: TickEnd }
  | { kind: "done"; result: TickEnd };

export type ExecutorEffect =
  | Ending
  | { kind: "stop-on-hold" }
  | { kind: "get-ready" }
  | { kind: "look-for-prs-in-flight" }
  | { kind: "prepare-attempt" }
  | { kind: "retire-fix"; why: string }
  | { kind: "run-turn"; role: "executor" }
  | { kind: "check-orphan-turn"; role: "executor" }
  | { kind: "guard-and-commit" }
  | { kind: "record-failure" }
  | { kind: "open-blocked-run" }
  | { kind: "adopt-branch" }
  | { kind: "run-bar" }
  | { kind: "push-branch"; strict: boolean }
  | { kind: "open-pr" }
  | { kind: "commit-paperwork" }
  | { kind: "push-paperwork" }
  | { kind: "finish-attempt" }
  | RecordHold;

export type PlannerEffect =
  | Ending
  | { kind: "stop-on-hold" }
  | { kind: "observe" }
  | { kind: "hand-blocked-over" }
  | { kind: "note-merge" }
  | { kind: "note-close" }
  | { kind: "promote"; done: string; retire?: string }
  | { kind: "check-scope" }
  | { kind: "check-preview" }
  | { kind: "run-turn"; role: "reviewer" }
  /** A stage after review: relay's own checks (finish), or a reviewer-style turn. */
  | { kind: "run-stage"; stage: PostStage }
  | { kind: "gate" }
  | { kind: "mark-stale" }
  /** `again`: the fix brief of that number, written again (it went missing from the brief). */
  | { kind: "send-back"; findings: Finding[]; why: string; again?: number }
  | { kind: "route-to-person"; files: string[] }
  | { kind: "merge" }
  | { kind: "weigh-acceptance" }
  | RecordHold;

/** What a person's command does (lib/task/person.ts). */
export type PersonEffect =
  | { kind: "survey" }
  | { kind: "keep-run" }
  | { kind: "abandon-run"; why: string }
  | { kind: "stop-agent" }
  | { kind: "close-pr"; comment: string }
  | { kind: "record-close" }
  | { kind: "retire-open-brief" }
  | { kind: "clear-hold" }
  | { kind: "promote-next" }
  | { kind: "release-uncertain" };

/** Stops the loop for a person: recorded in hold.json, said on one screen. */
export interface RecordHold {
  kind: "record-hold";
  reason: string;
  next: string;
  runId?: string;
  task?: number;
}

export type Effect = ExecutorEffect | PlannerEffect | PersonEffect;

/** Every effect kind with the side allowed to perform it (`both` for the two that stop a tick). */
export const EFFECT_SIDE: Record<Effect["kind"], Side | "both"> = {
  wait: "both",
  done: "both",
  "stop-on-hold": "both",
  "record-hold": "both",
  "get-ready": "executor",
  "look-for-prs-in-flight": "executor",
  "prepare-attempt": "executor",
  "retire-fix": "executor",
  "run-turn": "both", // the role decides: see sideOf
  "check-orphan-turn": "executor",
  "guard-and-commit": "executor",
  "record-failure": "executor",
  "open-blocked-run": "executor",
  "adopt-branch": "executor",
  "run-bar": "executor",
  "push-branch": "executor",
  "open-pr": "executor",
  "commit-paperwork": "executor",
  "push-paperwork": "executor",
  "finish-attempt": "executor",
  observe: "planner",
  "hand-blocked-over": "planner",
  "note-merge": "planner",
  "note-close": "planner",
  promote: "planner",
  "check-scope": "planner",
  "check-preview": "planner",
  "run-stage": "planner",
  gate: "planner",
  "mark-stale": "planner",
  "send-back": "planner",
  "route-to-person": "planner",
  merge: "planner",
  "weigh-acceptance": "planner",
  survey: "person",
  "keep-run": "person",
  "abandon-run": "person",
  "stop-agent": "person",
  "close-pr": "person",
  "record-close": "person",
  "retire-open-brief": "person",
  "clear-hold": "person",
  "promote-next": "person",
  "release-uncertain": "person",
};

/** The side an effect belongs to: a turn is its role's (the executor's turn is the executor's). */
export function sideOf(effect: Effect): Side | "both" {
  if (effect.kind === "run-turn") return effect.role === "executor" ? "executor" : "planner";
  return EFFECT_SIDE[effect.kind];
}

/** Whether `side` may perform `effect`. The driver asks before every effect. */
export function allowed(side: Side, effect: Effect): boolean {
  const owner = sideOf(effect);
  return owner === "both" || owner === side;
}

/** One line for an effect, as `relay status` says what the next tick will do. */
export function describeEffect(effect: Effect): string {
  switch (effect.kind) {
    case "wait":
      return `waits (${effect.for}): ${effect.result.message}`;
    case "done":
      return effect.result.message;
    case "stop-on-hold":
      return "stops at the HOLD";
    case "record-hold":
      return `stops with a HOLD: ${effect.reason}`;
    case "get-ready":
      return "loads the config and checks the primary tree";
    case "look-for-prs-in-flight":
      return "checks for a PR in flight";
    case "prepare-attempt":
      return "prepares an attempt";
    case "retire-fix":
      return `retires the fix brief (${effect.why})`;
    case "run-turn":
      return `runs the ${effect.role}'s turn`;
    case "check-orphan-turn":
      return "checks on the agent an interrupted tick left running";
    case "guard-and-commit":
      return "checks the turn stayed in bounds and commits what the agent left";
    case "record-failure":
      return "records the failed attempt";
    case "open-blocked-run":
      return "writes the BLOCKED report";
    case "adopt-branch":
      return "checks the branch still holds the run's commit";
    case "run-bar":
      return "runs the verification bar";
    case "push-branch":
      return "pushes the task branch";
    case "open-pr":
      return "opens the PR";
    case "commit-paperwork":
      return "commits the paperwork to main";
    case "push-paperwork":
      return "pushes the paperwork";
    case "finish-attempt":
      return "records the attempt's receipt";
    case "observe":
      return "reads the report on main and the PR";
    case "hand-blocked-over":
      return "hands the BLOCKED task to a person";
    case "note-merge":
      return "records a merge made outside relay";
    case "note-close":
      return "records a PR closed outside relay";
    case "promote":
      return "promotes the next queued brief";
    case "check-scope":
      return "runs the gate's scope check";
    case "check-preview":
      return "asks the deploy preview of the head whether it answers";
    case "run-stage":
      return effect.stage === "finish"
        ? "runs the finish stage: relay's own checks (test_command, mergeability) on the head"
        : `runs the ${effect.stage} stage's turn on the head`;
    case "gate":
      return "runs the merge gate";
    case "mark-stale":
      return "marks the PASS stale";
    case "send-back":
      return "sends the PR back with a fix brief";
    case "route-to-person":
      return "routes the PR to a person";
    case "merge":
      return "merges the PR";
    case "weigh-acceptance":
      return "works out what an acceptance would act on, and its digest";
    case "survey":
      return "reads the HOLD, the run on record and the PR";
    case "keep-run":
      return "keeps the held run for the next poll to finish";
    case "abandon-run":
      return "abandons the run (its work stays on the branch and under the anchors)";
    case "stop-agent":
      return "stops the agent a killed tick left running";
    case "close-pr":
      return "closes the PR without merging";
    case "record-close":
      return "records the close in the task's record";
    case "retire-open-brief":
      return "sets the open fix brief to DONE";
    case "clear-hold":
      return "clears the HOLD";
    case "promote-next":
      return "promotes the next queued brief";
    case "release-uncertain":
      return "voids the uncertain turn so the next tick runs it again";
  }
}
