/**
 * What the next tick will do, in words, from the effect the pure decisions
 * name and the state they name it in: `relay status` says it ("next poll:
 * starts the executor for task 4, attempt 2 of 2"), and a test holds it to
 * what the tick then does.
 */
import { describeEffect, type ExecutorEffect, type PlannerEffect } from "./effects.ts";
import type { ExecutorState } from "./executor.ts";
import type { PlannerState } from "./planner.ts";

export function sayExecutor(effect: ExecutorEffect, s: ExecutorState): string {
  const task = s.run?.task ?? s.brief?.task;
  switch (effect.kind) {
    case "wait":
    case "done":
      return effect.result.message;
    case "stop-on-hold":
      return `stops at the HOLD on record ("relay resume" clears it)`;
    case "look-for-prs-in-flight":
      return `checks the forge for a PR in flight, then starts task ${task}`;
    case "prepare-attempt":
      return s.failed >= s.cap
        ? `writes the BLOCKED report for task ${task} (its ${s.cap} attempt(s) are used up)`
        : `starts the executor for task ${task}, attempt ${s.failed + 1} of ${s.cap}`;
    case "run-turn":
      return `starts the executor for task ${task}, attempt ${s.run?.attempt} of ${s.cap}`;
    case "check-orphan-turn":
      return `checks on the executor of run ${s.run?.runId} (pid ${s.run?.agentPid}) that an interrupted tick left running`;
    default:
      return s.run
        ? `finishes run ${s.run.runId} of task ${task} from step "${s.run.step}": ${
          describeEffect(effect)
        }`
        : describeEffect(effect);
  }
}

export function sayPlanner(effect: PlannerEffect, s: PlannerState): string {
  const sub = s.seen?.subject;
  const pr = s.seen?.pr;
  const task = sub?.task;
  switch (effect.kind) {
    case "wait":
    case "done":
      return effect.result.message;
    case "stop-on-hold":
      return `stops at the HOLD on record ("relay resume" clears it)`;
    case "observe":
      return "fetches and reads the report on main and the PR";
    case "check-scope":
    case "run-turn":
      return `reviews task ${task}'s PR ${pr?.id} at ${
        pr?.head.slice(0, 12)
      } (the gate's scope check, then the reviewer)`;
    case "gate":
      return s.seen?.merge === "human" && s.mode.kind === "tick"
        ? `runs the merge gate on ${pr?.id} (task ${task} passed review); on MERGE it stops at DONE awaiting acceptance (merge policy human: a person accepts it with relay accept)`
        : `runs the merge gate on ${pr?.id} (task ${task} passed review), and merges it if the gate says MERGE`;
    case "merge":
      return `merges ${pr?.id}`;
    case "send-back": {
      if (effect.again !== undefined) {
        return `writes the fix brief (task ${effect.again}) for ${pr?.id} again: it is not in NEXT-STEPS.md`;
      }
      const round = (s.record?.fixes.length ?? 0) + 1;
      return `sends ${pr?.id} back with a fix brief (round ${round} of ${s.seen?.fixRounds})`;
    }
    case "record-hold":
      return `stops with a HOLD: ${effect.reason}`;
    case "promote":
      return `${effect.done}: promotes the next queued brief, if any`;
    default:
      return describeEffect(effect);
  }
}
