/**
 * The executor's side of a task, as pure functions: `reduce` folds a fact
 * into the state, `next` names the one effect to perform. The state is the
 * journaled attempt (`.git/relay/journal.json`, the checkpoint a killed tick
 * is finished from) plus what this tick has learned. No I/O here: the driver
 * (lib/loop/drive.ts) performs effects through handlers that report facts.
 *
 * The steps of an attempt, and which fact moves each on, are the table in
 * lib/task/table.ts.
 */
import type { AgentOutcome, Journal, Step } from "../state/journal.ts";
import type { BriefKind } from "../protocol/types.ts";
import type { ExecutorEffect } from "./effects.ts";
import { stepAfter } from "./table.ts";

/** The brief an attempt works on (the open brief, or a resumed run's copy of it). */
export interface BriefView {
  task: number;
  title: string;
  branch: string;
  kind: BriefKind;
  fixes?: number;
}

export interface ExecutorState {
  /** A HOLD is on record: nothing runs until a person clears it. */
  hold: boolean;
  /** NEXT-STEPS.md holds an OPEN brief. */
  briefOpen: boolean;
  /** The config and profile are loaded and the primary tree checked (the `ready` fact). */
  ready: boolean;
  brief: BriefView | null;
  /** Attempts per brief (config `attempts`) and the failed ones at this version of the brief. */
  cap: number;
  failed: number;
  /** The attempt in progress, as journaled. */
  run: Journal | null;
  /** Open PRs of other branches, once looked for. */
  inFlight: string[] | null;
  /** This tick checked that the branch still holds the run's commit. */
  adopted: boolean;
  /** The attempt this tick just recorded as failed. */
  last: { run: Journal; reason: string; log: string } | null;
  /** What stopped the tick without an effect of its own (a lock, an orphan turn, a retired fix). */
  stopped:
    | { why: "review-lock"; holder: string; waitedS: number }
    | {
      why: "orphan-running";
      pid: number;
      unverified?: string;
    }
    | { why: "orphan-stuck"; pid: number }
    | { why: "fix-settled"; text: string }
    | {
      why: "fix-retired";
      text: string;
      promoted: string;
    }
    | null;
  /** The attempt's end, once its paperwork is on main. */
  finished: { outcome: "SHIPPED" | "BLOCKED"; warnings: number; run: Journal } | null;
  /** A guard found the turn reached past its worktree (or the worktree vanished). */
  held: { reason: string; next: string; runId: string } | null;
}

export type ExecutorEvent =
  | { kind: "ready"; cap: number; failed: number; brief: BriefView }
  | { kind: "prs-in-flight"; prs: string[] }
  | { kind: "review-lock-busy"; holder: string; waitedS: number }
  | { kind: "fix-settled"; why: string }
  | { kind: "fix-retired"; promoted: string }
  | { kind: "attempt-prepared"; journal: Journal }
  | { kind: "turn-started"; pid?: number; started?: string; deadline?: string; stamp?: string }
  | { kind: "orphan-running"; pid: number; unverified?: string }
  | { kind: "orphan-stuck"; pid: number }
  | { kind: "turn-ended"; agent: AgentOutcome }
  | { kind: "committed"; outcome: "SHIPPED" | "BLOCKED" | "FAILED"; failure?: string; head: string }
  | { kind: "attempt-failed"; failed: number; reason: string; log: string }
  | { kind: "blocked-run-opened"; runId: string }
  | { kind: "branch-adopted"; head: string }
  | {
    kind: "bar-ran";
    head: string;
    passed: boolean;
    results: { command: string; exit: number; durationMs: number }[];
  }
  | { kind: "branch-pushed"; ok: boolean }
  | { kind: "pr-opened"; pr: string }
  | { kind: "paperwork-committed"; sha: string }
  | { kind: "paperwork-pushed" }
  | { kind: "attempt-finished"; outcome: "SHIPPED" | "BLOCKED"; warnings: number }
  | { kind: "held"; reason: string; next: string; runId: string };

export function initialExecutor(
  init: Pick<ExecutorState, "hold" | "briefOpen" | "run">,
): ExecutorState {
  return {
    ...init,
    ready: false,
    brief: null,
    cap: 0,
    failed: 0,
    inFlight: null,
    adopted: false,
    last: null,
    stopped: null,
    finished: null,
    held: null,
  };
}

function withStep(run: Journal, event: ExecutorEvent["kind"]): Journal {
  const step: Step = stepAfter(run, event);
  return { ...run, step };
}

export function reduceExecutor(s: ExecutorState, e: ExecutorEvent): ExecutorState {
  switch (e.kind) {
    case "ready":
      return { ...s, ready: true, cap: e.cap, failed: e.failed, brief: e.brief };
    case "prs-in-flight":
      return { ...s, inFlight: e.prs };
    case "review-lock-busy":
      return { ...s, stopped: { why: "review-lock", holder: e.holder, waitedS: e.waitedS } };
    case "fix-settled":
      return { ...s, stopped: { why: "fix-settled", text: e.why } };
    case "fix-retired":
      return {
        ...s,
        stopped: {
          why: "fix-retired",
          text: s.stopped?.why === "fix-settled" ? s.stopped.text : "",
          promoted: e.promoted,
        },
      };
    case "attempt-prepared":
      return { ...s, run: e.journal };
    case "orphan-running":
      return {
        ...s,
        stopped: {
          why: "orphan-running",
          pid: e.pid,
          ...(e.unverified ? { unverified: e.unverified } : {}),
        },
      };
    case "orphan-stuck":
      return { ...s, stopped: { why: "orphan-stuck", pid: e.pid } };
    case "attempt-failed":
      return {
        ...s,
        run: null,
        failed: e.failed,
        last: { run: s.run!, reason: e.reason, log: e.log },
      };
    case "blocked-run-opened": {
      const last = s.last!;
      return {
        ...s,
        last: null,
        // relay writes the BLOCKED report itself, from where the failed attempt left off.
        run: {
          ...last.run,
          runId: e.runId,
          step: "committed",
          outcome: "BLOCKED",
          failure: `${s.failed} attempt(s) failed; last: ${last.reason}`,
        },
      };
    }
    case "attempt-finished":
      return {
        ...s,
        run: null,
        finished: { outcome: e.outcome, warnings: e.warnings, run: s.run! },
      };
    case "held":
      return { ...s, held: { reason: e.reason, next: e.next, runId: e.runId } };
  }
  // The rest move the journaled run on by the table.
  const run = s.run!;
  switch (e.kind) {
    case "turn-started":
      return {
        ...s,
        run: {
          ...withStep(run, e.kind),
          ...(e.pid !== undefined ? { agentPid: e.pid } : {}),
          ...(e.started !== undefined ? { agentStarted: e.started } : {}),
          ...(e.deadline !== undefined ? { agentDeadline: e.deadline } : {}),
          ...(e.stamp !== undefined ? { agentStamp: e.stamp } : {}),
        },
      };
    case "turn-ended":
      return { ...s, run: { ...withStep(run, e.kind), agent: e.agent } };
    case "committed":
      return {
        ...s,
        run: {
          ...withStep(run, e.kind),
          outcome: e.outcome,
          ...(e.failure !== undefined ? { failure: e.failure } : {}),
          head: e.head,
        },
      };
    case "branch-adopted":
      return { ...s, adopted: true, run: { ...run, head: e.head } };
    case "bar-ran":
    case "branch-pushed":
    case "paperwork-pushed":
      return { ...s, run: withStep(run, e.kind) };
    case "pr-opened":
      return { ...s, run: { ...withStep(run, e.kind), pr: e.pr } };
    case "paperwork-committed":
      return { ...s, run: { ...withStep(run, e.kind), paperworkCommit: e.sha } };
  }
}

function busy(message: string, waitFor: "pr-in-flight" | "review-lock" | "orphan-turn") {
  return { kind: "wait" as const, for: waitFor, result: { kind: "busy", message } };
}

/** Whether the run has passed `step`. */
export function past(run: Journal, step: Step): boolean {
  return STEP_ORDER.indexOf(run.step) >= STEP_ORDER.indexOf(step);
}
const STEP_ORDER: readonly Step[] = [
  "prepared",
  "agent-started",
  "agent-finished",
  "committed",
  "evidence",
  "pushed",
  "pr-opened",
  "paperwork-committed",
  "paperwork-pushed",
];

export function nextExecutor(s: ExecutorState): ExecutorEffect {
  if (s.held) return { kind: "record-hold", ...s.held, task: s.run?.task ?? s.brief?.task ?? 0 };
  const stop = s.stopped;
  if (stop) return stopped(s, stop);
  if (s.finished) return finished(s);
  if (s.last) {
    const { run, reason, log } = s.last;
    if (s.failed < s.cap) {
      return {
        kind: "done",
        result: {
          kind: "failed",
          task: run.task,
          attempt: s.failed,
          message:
            `task ${run.task}: attempt ${s.failed}/${s.cap} failed: ${reason}. Work kept on ${run.branch} (${
              run.head?.slice(0, 12)
            }); log: ${log}. The next tick tries again.`,
        },
      };
    }
    return { kind: "open-blocked-run" };
  }
  if (!s.run && !s.briefOpen) {
    return { kind: "done", result: { kind: "idle", message: "idle: no open brief" } };
  }
  if (s.hold) return { kind: "stop-on-hold" };
  if (!s.ready) return { kind: "get-ready" };
  const run = s.run;
  if (!run) {
    if (s.inFlight === null) return { kind: "look-for-prs-in-flight" };
    if (s.inFlight.length) {
      return busy(
        `waiting: ${
          s.inFlight.join(", ")
        } is in flight; task ${s.brief?.task} starts once the reviewer merges it or sends it back`,
        "pr-in-flight",
      );
    }
    return { kind: "prepare-attempt" };
  }
  switch (run.step) {
    case "prepared":
      return { kind: "run-turn", role: "executor" };
    case "agent-started":
      return { kind: "check-orphan-turn", role: "executor" };
    case "agent-finished":
      return { kind: "guard-and-commit" };
  }
  if (run.outcome === "FAILED") return { kind: "record-failure" };
  if (!past(run, "pushed") && !s.adopted) return { kind: "adopt-branch" };
  if (run.outcome === "SHIPPED") {
    if (!past(run, "evidence")) return { kind: "run-bar" };
    if (!past(run, "pushed")) return { kind: "push-branch", strict: true };
    if (!past(run, "pr-opened")) return { kind: "open-pr" };
  } else if (!past(run, "pushed")) {
    // Keep a BLOCKED run's work visible off this machine; a refusal is not worth a HOLD.
    return { kind: "push-branch", strict: false };
  }
  if (!past(run, "paperwork-committed")) return { kind: "commit-paperwork" };
  if (!past(run, "paperwork-pushed")) return { kind: "push-paperwork" };
  return { kind: "finish-attempt" };
}

function stopped(s: ExecutorState, stop: NonNullable<ExecutorState["stopped"]>): ExecutorEffect {
  const task = s.brief?.task;
  const run = s.run;
  switch (stop.why) {
    case "review-lock":
      return busy(
        `waiting: relay ${stop.holder} is still running after ${stop.waitedS}s; task ${task} starts after it`,
        "review-lock",
      );
    case "orphan-running": {
      const until = run?.agentDeadline ? `, turn limit at ${run.agentDeadline}` : "";
      return busy(
        `busy: the agent from an interrupted tick is still running (pid ${stop.pid}, run ${run?.runId}${until})${
          stop.unverified ? `; ${stop.unverified}, so relay will not stop it` : ""
        }`,
        "orphan-turn",
      );
    }
    case "orphan-stuck":
      return busy(
        `busy: the agent of run ${run?.runId} (pid ${stop.pid}) is past its turn limit and did not stop on SIGTERM and SIGKILL; the next tick tries again`,
        "orphan-turn",
      );
    case "fix-settled":
      return { kind: "retire-fix", why: stop.text };
    case "fix-retired":
      return {
        kind: "done",
        result: {
          kind: "retired",
          task,
          message: `task ${task} retired: ${stop.text}; ${stop.promoted}`,
        },
      };
  }
}

function finished(s: ExecutorState): ExecutorEffect {
  const { outcome, warnings, run } = s.finished!;
  const task = s.brief?.task ?? run.task;
  if (outcome === "SHIPPED") {
    const pr = run.pr ?? "";
    return {
      kind: "done",
      result: {
        kind: "shipped",
        task,
        pr,
        head: run.head,
        message: `task ${task} shipped: ${run.branch} at ${run.head?.slice(0, 12)}, PR ${pr}${
          warnings ? ` — ${warnings} warning(s) in the report` : ""
        }`,
      },
    };
  }
  return {
    kind: "done",
    result: { kind: "blocked", task, message: `task ${task} BLOCKED: ${run.failure}` },
  };
}
