/**
 * Writing a task's timeline: the facts the driver folds into the state, as
 * lines of `.git/relay/tasks/<n>.events.jsonl` (lib/task/log.ts). A fix
 * brief's facts go into its task's file, in the round the send-back opened
 * (a fix a person queued opens the next round). Facts that are only about
 * this tick (it waited for a lock, it looked for PRs) are not the task's
 * history and are not written.
 */
import { HoldError } from "../errors.ts";
import { appendEvent, eventsPath, type NewEvent, readEvents } from "../task/log.ts";
import type { ExecutorEvent, ExecutorState } from "../task/executor.ts";
import type { PlannerEvent, PlannerState } from "../task/planner.ts";

type Entry = Omit<NewEvent, "round" | "brief" | "run"> & { run?: string | null };

/** One task's log as a tick appends to it. */
export class Timeline {
  #rounds = new Map<number, number>();
  constructor(
    readonly commonDir: string,
    /** The task the log is for (a fix brief's is the task it fixes). */
    readonly task: number,
    /** The brief's own Task number. */
    readonly brief: number,
  ) {}

  /** The round of this brief: 1 for the task's own, the send-back's for a fix. */
  async round(): Promise<number> {
    const known = this.#rounds.get(this.brief);
    if (known !== undefined) return known;
    let round = 1;
    if (this.brief !== this.task) {
      const events = await readEvents(this.commonDir, this.task).catch(() => []);
      const mine = events.find((e) => e.brief === this.brief);
      const sent = events.find((e) => e.event === "sent-back" && e.details.fix === this.brief);
      round = mine?.round ??
        (typeof sent?.details.round === "number" ? sent.details.round : undefined) ??
        Math.max(1, ...events.map((e) => e.round)) + 1;
    }
    this.#rounds.set(this.brief, round);
    return round;
  }

  async add(entry: Entry): Promise<void> {
    // A review tick that waits (for a person's acceptance, for the gate) decides the same
    // every minute: the history keeps the decision once, not once a minute.
    if (entry.event === "gate-decided" && await this.#repeats(entry)) return;
    await appendEvent(this.commonDir, this.task, {
      ...entry,
      run: entry.run ?? null,
      brief: this.brief,
      round: await this.round(),
    } as NewEvent);
  }

  /** Whether the log's last line is this same event with the same details. */
  async #repeats(entry: Entry): Promise<boolean> {
    const text = await Deno.readTextFile(eventsPath(this.commonDir, this.task)).catch(() => "");
    const last = text.trimEnd().split("\n").at(-1);
    if (!last) return false;
    try {
      const line = JSON.parse(last) as { event?: unknown; details?: unknown; brief?: unknown };
      return line.event === entry.event && line.brief === this.brief &&
        JSON.stringify(line.details) === JSON.stringify(entry.details);
    } catch {
      return false;
    }
  }

  /** Whether the log has anything of this brief yet (its first attempt opens it). */
  async hasBrief(): Promise<boolean> {
    const events = await readEvents(this.commonDir, this.task).catch(() => []);
    return events.some((e) => e.brief === this.brief);
  }
}

/** A HOLD as the timeline records it (recorded ones and re-checked preconditions are not new). */
export function heldEntry(err: unknown): Entry | null {
  if (!(err instanceof HoldError) || err.recheck || err.recorded) return null;
  return { event: "held", role: "relay", details: { reason: err.message, next: err.next } };
}

/** The executor's facts worth the task's history. */
export function executorEntry(
  before: ExecutorState,
  after: ExecutorState,
  e: ExecutorEvent,
): Entry | null {
  const run = after.run?.runId ?? before.run?.runId ?? null;
  const role = "executor" as const;
  switch (e.kind) {
    case "attempt-prepared":
      return {
        event: "attempt-prepared",
        role,
        run,
        details: {
          attempt: e.journal.attempt,
          of: after.cap,
          worktree: e.journal.worktree,
          base: e.journal.originMain,
        },
      };
    case "turn-started":
      return e.pid === undefined ? null : {
        event: "turn-started",
        role,
        run,
        details: { role, pid: e.pid, ...(e.deadline ? { deadline: e.deadline } : {}) },
      };
    case "turn-ended":
      return {
        event: "turn-ended",
        role,
        run,
        details: {
          role,
          exit: e.agent.exitCode,
          signal: e.agent.signal,
          timedOut: e.agent.timedOut,
          durationMs: e.agent.durationMs,
          ...(e.agent.interrupted ? { interrupted: true } : {}),
          ...(e.agent.startError ? { startError: e.agent.startError } : {}),
        },
      };
    case "committed":
      return {
        event: "committed",
        role,
        run,
        details: {
          outcome: e.outcome,
          head: e.head,
          ...(e.failure !== undefined ? { failure: e.failure } : {}),
        },
      };
    case "attempt-failed":
      return {
        event: "attempt-failed",
        role,
        run,
        details: { attempt: before.run?.attempt ?? e.failed, of: before.cap, reason: e.reason },
      };
    case "bar-ran":
      return {
        event: "bar-ran",
        role: "relay",
        run,
        details: { head: e.head, passed: e.passed, results: e.results },
      };
    case "branch-pushed":
      return {
        event: "branch-pushed",
        role: "relay",
        run,
        details: { head: after.run?.head ?? "", ok: e.ok },
      };
    case "pr-opened":
      return { event: "pr-opened", role: "relay", run, details: { pr: e.pr } };
    case "paperwork-committed":
      return {
        event: "paperwork-committed",
        role: "relay",
        run,
        details: { sha: e.sha, outcome: after.run?.outcome ?? "" },
      };
    case "paperwork-pushed":
      return { event: "paperwork-pushed", role: "relay", run, details: {} };
    case "attempt-finished": {
      const r = after.finished!.run;
      return {
        event: "attempt-finished",
        role: "relay",
        run,
        details: { outcome: e.outcome, head: r.head ?? "", pr: r.pr ?? "" },
      };
    }
    case "fix-retired":
      return {
        event: "fix-retired",
        role: "relay",
        run,
        details: { why: after.stopped?.why === "fix-retired" ? after.stopped.text : "" },
      };
    case "held":
      return { event: "held", role: "relay", run, details: { reason: e.reason, next: e.next } };
    default:
      return null;
  }
}

/** The planner's facts worth the task's history. */
export function plannerEntry(
  _before: PlannerState,
  after: PlannerState,
  e: PlannerEvent,
): Entry | null {
  switch (e.kind) {
    case "merge-noted":
      return { event: "merged", role: "person", details: { sha: e.sha, by: "out-of-band" } };
    case "close-noted":
      return { event: "closed", role: "person", details: { reason: e.reason, by: "forge" } };
    case "scope-checked":
      return {
        event: "scope-checked",
        role: "planner",
        details: {
          result: e.result,
          reason: e.reason,
          ...(e.files.length ? { files: e.files } : {}),
        },
      };
    case "review-void":
      return { event: "review-void", role: "reviewer", run: e.runId, details: { why: e.why } };
    case "verdict":
      return {
        event: "verdict",
        role: "reviewer",
        run: e.verdict.runId,
        details: { head: e.verdict.head, verdict: e.verdict.verdict, findings: e.verdict.findings },
      };
    case "stage-ran":
      return {
        event: "stage-ran",
        role: e.run.stage === "finish" ? "planner" : "reviewer",
        run: e.run.runId,
        details: {
          stage: e.run.stage,
          head: e.run.head,
          result: e.run.result,
          findings: e.run.findings,
          ...(e.run.detail ? { detail: e.run.detail } : {}),
        },
      };
    case "preview-checked":
      // Waiting for the preview, a tick a minute asks again: the history says the wait once.
      if (!e.ready && _before.record?.previewWait?.head === e.head) return null;
      return {
        event: "preview-checked",
        role: "planner",
        details: { head: e.head, url: e.url, ready: e.ready, seen: e.seen },
      };
    case "gate-decided":
      return {
        event: "gate-decided",
        role: "planner",
        details: {
          decision: e.decision.decision,
          checks: e.decision.checks.map((c) => ({
            name: c.name,
            result: c.result,
            reason: c.reason,
          })),
        },
      };
    case "sent-back":
      return {
        event: "sent-back",
        role: "planner",
        details: {
          fix: e.fix,
          round: (after.record?.fixes.length ?? 0) + 1,
          why: e.why,
          findings: e.findings,
        },
      };
    case "routed-to-person":
      return { event: "routed-to-person", role: "planner", details: { files: e.files } };
    case "merge-landed":
      return { event: "merged", role: "planner", details: { sha: e.sha, by: "relay" } };
    case "promoted":
      return e.task === undefined ? null : {
        event: "promoted",
        role: "planner",
        details: { task: e.task, title: e.title ?? "" },
      };
    default:
      return null;
  }
}
