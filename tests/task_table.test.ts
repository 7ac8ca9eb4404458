/**
 * The task state machine's tables, row by row: every (state, fact) pair is
 * either a row here, with the state it leads to, or refused. The rows are
 * written out again below rather than read from lib/task/table.ts, so a
 * change to the table is a change to this file too. Pure functions: the
 * whole file runs in milliseconds.
 */
import assert from "node:assert/strict";
import type { Journal, Step } from "../lib/state/journal.ts";
import { STEPS } from "../lib/state/journal.ts";
import type { PostStage, ReviewRecord, StageRun, VerdictRecord } from "../lib/state/reviews.ts";
import { allowed, type Effect, sideOf } from "../lib/task/effects.ts";
import {
  type ExecutorEvent,
  type ExecutorState,
  initialExecutor,
  nextExecutor,
  reduceExecutor,
} from "../lib/task/executor.ts";
import {
  classify,
  type GateDecision,
  initialPlanner,
  type Intent,
  type PlannerEvent,
  type PlannerState,
  reducePlanner,
  type Seen,
} from "../lib/task/planner.ts";
import { nextPlanner } from "../lib/task/planner_next.ts";
import { NoTransition, PLANNER_PHASES, type PlannerPhase } from "../lib/task/table.ts";
import { drive } from "../lib/loop/drive.ts";

// ---------------------------------------------------------------------------
// The executor: (step, fact) → step.

const run = (step: Step, outcome?: Journal["outcome"]): Journal => ({
  version: 1,
  task: 4,
  runId: "task4-a2-x",
  attempt: 2,
  step,
  branch: "task-4",
  worktree: "/w/task-4",
  originMain: "m0",
  before: "b0",
  mainBefore: "m0",
  primaryDiff: "",
  reportBefore: "",
  updated: "",
  head: "h1",
  ...(outcome ? { outcome } : {}),
});

const EXECUTOR_FACTS: ExecutorEvent[] = [
  { kind: "turn-started", pid: 42, started: "t0" },
  {
    kind: "turn-ended",
    agent: { exitCode: 0, signal: null, timedOut: false, durationMs: 5 },
  },
  { kind: "committed", outcome: "SHIPPED", head: "h2" },
  { kind: "bar-ran", head: "h1", passed: true, results: [] },
  { kind: "branch-pushed", ok: true },
  { kind: "pr-opened", pr: "#7" },
  { kind: "paperwork-committed", sha: "p1" },
  { kind: "paperwork-pushed" },
];

/** [step, fact, outcome of the run (when the row depends on it), step after]. */
const EXECUTOR_ROWS: [Step, ExecutorEvent["kind"], Journal["outcome"], Step][] = [
  ["prepared", "turn-started", undefined, "agent-started"],
  ["prepared", "turn-ended", undefined, "agent-finished"],
  ["agent-started", "turn-ended", undefined, "agent-finished"],
  ["agent-finished", "committed", undefined, "committed"],
  ["committed", "bar-ran", undefined, "evidence"],
  ["committed", "branch-pushed", "SHIPPED", "pushed"],
  ["committed", "branch-pushed", "BLOCKED", "pr-opened"],
  ["evidence", "branch-pushed", undefined, "pushed"],
  ["pushed", "pr-opened", undefined, "pr-opened"],
  ["pr-opened", "paperwork-committed", undefined, "paperwork-committed"],
  ["paperwork-committed", "paperwork-pushed", undefined, "paperwork-pushed"],
];

const withRun = (r: Journal): ExecutorState => ({
  ...initialExecutor({ hold: false, briefOpen: true, run: r }),
  ready: true,
  cap: 2,
  brief: { task: 4, title: "T", branch: "task-4", kind: "feature" },
});

for (const step of STEPS) {
  Deno.test(`executor step "${step}": each fact moves it by its row, or is refused`, () => {
    for (const fact of EXECUTOR_FACTS) {
      for (const outcome of ["SHIPPED", "BLOCKED"] as const) {
        const row = EXECUTOR_ROWS.find(([from, kind, o]) =>
          from === step && kind === fact.kind && (o === undefined || o === outcome)
        );
        const s = withRun(run(step, outcome));
        if (row) {
          assert.equal(reduceExecutor(s, fact).run!.step, row[3], `${step} + ${fact.kind}`);
        } else {
          assert.throws(() => reduceExecutor(s, fact), NoTransition, `${step} + ${fact.kind}`);
        }
      }
    }
  });
}

/** [what the state is, the state, the effect next names]. */
const EXECUTOR_NEXT: [string, ExecutorState, Effect["kind"] | string][] = [
  ["no open brief, no run", initialExecutor({ hold: false, briefOpen: false, run: null }), "done"],
  ["a HOLD on record", initialExecutor({ hold: true, briefOpen: true, run: null }), "stop-on-hold"],
  [
    "an open brief, not ready",
    initialExecutor({ hold: false, briefOpen: true, run: null }),
    "get-ready",
  ],
  [
    "ready, PRs not looked for",
    { ...withRun(run("prepared")), run: null },
    "look-for-prs-in-flight",
  ],
  ["a PR in flight", { ...withRun(run("prepared")), run: null, inFlight: ["#3"] }, "wait"],
  [
    "nothing in flight",
    { ...withRun(run("prepared")), run: null, inFlight: [] },
    "prepare-attempt",
  ],
  ["prepared", withRun(run("prepared")), "run-turn"],
  ["an orphan turn on record", withRun(run("agent-started")), "check-orphan-turn"],
  ["the turn ended", withRun(run("agent-finished")), "guard-and-commit"],
  ["committed FAILED", withRun(run("committed", "FAILED")), "record-failure"],
  ["committed SHIPPED", withRun(run("committed", "SHIPPED")), "adopt-branch"],
  ["adopted SHIPPED", { ...withRun(run("committed", "SHIPPED")), adopted: true }, "run-bar"],
  ["evidence", { ...withRun(run("evidence", "SHIPPED")), adopted: true }, "push-branch"],
  ["pushed", withRun(run("pushed", "SHIPPED")), "open-pr"],
  ["adopted BLOCKED", { ...withRun(run("committed", "BLOCKED")), adopted: true }, "push-branch"],
  ["pr opened", withRun(run("pr-opened", "SHIPPED")), "commit-paperwork"],
  ["paperwork committed", withRun(run("paperwork-committed", "SHIPPED")), "push-paperwork"],
  ["paperwork pushed", withRun(run("paperwork-pushed", "SHIPPED")), "finish-attempt"],
  ["a failure under the cap", {
    ...withRun(run("committed")),
    run: null,
    failed: 1,
    last: { run: run("committed", "FAILED"), reason: "exit 1", log: "/l" },
  }, "done"],
  ["the last allowed failure", {
    ...withRun(run("committed")),
    run: null,
    failed: 2,
    last: { run: run("committed", "FAILED"), reason: "exit 1", log: "/l" },
  }, "open-blocked-run"],
  ["the guard found a HOLD", {
    ...withRun(run("agent-finished")),
    held: { reason: "r", next: "n", runId: "x" },
  }, "record-hold"],
  ["the review lock was busy", {
    ...withRun(run("prepared")),
    run: null,
    stopped: { why: "review-lock", holder: "review", waitedS: 45 },
  }, "wait"],
  ["the fix's PR is settled", {
    ...withRun(run("prepared")),
    run: null,
    stopped: { why: "fix-settled", text: "merged" },
  }, "retire-fix"],
  ["the fix was retired", {
    ...withRun(run("prepared")),
    run: null,
    stopped: { why: "fix-retired", text: "merged", promoted: "nothing queued" },
  }, "done"],
  ["the orphan turn still runs", {
    ...withRun(run("agent-started")),
    stopped: { why: "orphan-running", pid: 9 },
  }, "wait"],
  ["the attempt finished", {
    ...withRun(run("prepared")),
    run: null,
    finished: { outcome: "SHIPPED", warnings: 0, run: run("paperwork-pushed", "SHIPPED") },
  }, "done"],
];

Deno.test("executor next: each state names its one effect", () => {
  for (const [what, state, effect] of EXECUTOR_NEXT) {
    assert.equal(nextExecutor(state).kind, effect, what);
  }
});

Deno.test("executor next: the attempt's result lines say what happened", () => {
  const failed = nextExecutor(EXECUTOR_NEXT.find(([w]) => w === "a failure under the cap")![1]);
  assert.equal(failed.kind, "done");
  assert.match(
    (failed as { result: { message: string } }).result.message,
    /^task 4: attempt 1\/2 failed: exit 1\. Work kept on task-4 \(h1\); log: \/l\./,
  );
  const shipped = nextExecutor(EXECUTOR_NEXT.find(([w]) => w === "the attempt finished")![1]);
  assert.deepEqual((shipped as { result: unknown }).result, {
    kind: "shipped",
    task: 4,
    pr: "",
    head: "h1",
    message: "task 4 shipped: task-4 at h1, PR ",
  });
});

/** Every executor state a tick can be in, for the authority walk. */
function* executorStates(): Generator<ExecutorState> {
  const outcomes = [undefined, "SHIPPED", "BLOCKED", "FAILED"] as const;
  const runs = [null, ...STEPS.flatMap((step) => outcomes.map((o) => run(step, o)))];
  for (const r of runs) {
    for (const hold of [false, true]) {
      for (const briefOpen of [false, true]) {
        for (const ready of [false, true]) {
          for (const inFlight of [null, [], ["#1"]]) {
            for (const adopted of [false, true]) {
              const base: ExecutorState = {
                ...initialExecutor({ hold, briefOpen, run: r }),
                ready,
                inFlight,
                adopted,
                cap: 2,
                brief: { task: 4, title: "T", branch: "task-4", kind: "feature" },
              };
              yield base;
              yield { ...base, last: { run: run("committed", "FAILED"), reason: "x", log: "l" } };
              yield { ...base, failed: 2, last: { run: run("committed"), reason: "x", log: "l" } };
              yield { ...base, held: { reason: "r", next: "n", runId: "x" } };
              for (
                const stopped of [
                  { why: "review-lock" as const, holder: "review", waitedS: 45 },
                  { why: "orphan-running" as const, pid: 1 },
                  { why: "orphan-stuck" as const, pid: 1 },
                  { why: "fix-settled" as const, text: "t" },
                  { why: "fix-retired" as const, text: "t", promoted: "p" },
                ]
              ) yield { ...base, stopped };
              yield {
                ...base,
                finished: { outcome: "BLOCKED", warnings: 0, run: run("pr-opened") },
              };
            }
          }
        }
      }
    }
  }
}

Deno.test("the executor tick is never handed a merge, nor any effect of the planner's side", () => {
  let states = 0;
  const seen = new Set<string>();
  for (const state of executorStates()) {
    const effect = nextExecutor(state);
    states++;
    seen.add(effect.kind);
    assert.notEqual(effect.kind, "merge");
    assert.ok(allowed("executor", effect), `${effect.kind} is not the executor's`);
    assert.notEqual(sideOf(effect), "planner", effect.kind);
  }
  assert.ok(states > 3000, `walked only ${states} states`);
  // The walk reaches every effect the executor has, so it is not blind.
  for (
    const kind of [
      "get-ready",
      "prepare-attempt",
      "run-turn",
      "guard-and-commit",
      "push-branch",
      "open-pr",
      "commit-paperwork",
      "finish-attempt",
      "record-hold",
    ]
  ) assert.ok(seen.has(kind), kind);
});

Deno.test("the driver refuses an effect of the other side", async () => {
  await assert.rejects(
    () =>
      drive({
        side: "executor",
        reduce: (s: number) => s,
        next: (): Effect => ({ kind: "merge" }),
        handle: () => {
          throw new Error("a handler ran");
        },
        save: () => Promise.resolve(),
      }, 0),
    /the executor side may not perform "merge"/,
  );
});

// ---------------------------------------------------------------------------
// The planner: where a tick finds the task, then (phase, fact) → phase.

const SEEN: Seen = {
  remote: "origin",
  main: "main",
  originMain: "m1",
  subject: {
    task: 1,
    report: { task: 1, outcome: "SHIPPED", head: "h1" },
    brief: { task: 1, title: "Greet", branch: "task-1" },
  },
  journal: false,
  openBranch: null,
  pr: { id: "task-1", branch: "task-1", head: "h1", state: "open" },
  mergedHead: null,
  prHeadInMain: false,
  fixRounds: 3,
  merge: "auto",
  handsfree: false,
  stages: [],
};
const RECORD: ReviewRecord = { task: 1, branch: "task-1", verdicts: [], voids: [], fixes: [] };
const stageRun = (
  stage: PostStage,
  result: StageRun["result"],
  more: Partial<StageRun> = {},
): StageRun => ({
  stage,
  runId: `${stage}-1`,
  at: "2026-01-01T00:00:05Z",
  head: "h1",
  tree: "t1",
  result,
  findings: result === "FAIL" ? [{ severity: "blocker", text: "secret in a log" }] : [],
  ...more,
});
const verdict = (v: "PASS" | "FAIL", more: Partial<VerdictRecord> = {}): VerdictRecord => ({
  runId: "r1",
  at: "2026-01-01T00:00:02Z",
  reportTask: 1,
  head: "h1",
  tree: "t1",
  main: "m1",
  verdict: v,
  findings: [{ severity: "blocker", text: "no test" }],
  ...more,
});

/** [what the task looks like, seen, record, mode, phase]. */
const CLASSIFY: [string, Partial<Seen>, Partial<ReviewRecord>, "tick" | "merge", PlannerPhase][] = [
  ["origin/main is missing", { originMain: null }, {}, "tick", "no-main"],
  ["no report on main", { subject: null }, {}, "tick", "no-report"],
  ["an executor attempt is journaled", { journal: true }, {}, "tick", "executor-mid-tick"],
  [
    "a BLOCKED report",
    {
      subject: { ...SEEN.subject!, report: { task: 1, outcome: "BLOCKED", head: "h1" } },
    },
    {},
    "tick",
    "blocked",
  ],
  [
    "a BLOCKED report handed over",
    {
      subject: { ...SEEN.subject!, report: { task: 1, outcome: "BLOCKED", head: "h1" } },
    },
    { voids: [{ runId: "blocked-h1-1", at: "", why: "" }] },
    "tick",
    "blocked-handed",
  ],
  ["no PR", { pr: null }, {}, "tick", "no-pr"],
  ["merged, not yet noted", { mergedHead: "h1" }, {}, "tick", "merged-unnoticed"],
  [
    "merged and noted",
    { mergedHead: "h1" },
    { merged: { sha: "m", at: "", by: "relay" } },
    "tick",
    "merged",
  ],
  [
    "closed, not yet noted",
    { pr: { ...SEEN.pr!, state: "closed" } },
    {},
    "tick",
    "closed-unnoticed",
  ],
  [
    "closed and noted",
    { pr: { ...SEEN.pr!, state: "closed" } },
    {
      closed: { head: "h1", at: "", reason: "" },
    },
    "tick",
    "closed",
  ],
  ["a fix brief open on the PR's branch", { openBranch: "task-1" }, {}, "tick", "executor-first"],
  [
    "the PR moved past the report",
    { pr: { ...SEEN.pr!, head: "h9" } },
    {},
    "tick",
    "moved-outside",
  ],
  ["not reviewed", {}, {}, "tick", "to-review"],
  ["a stale PASS", {}, { verdicts: [verdict("PASS", { stale: true })] }, "tick", "to-review"],
  ["a PASS", {}, { verdicts: [verdict("PASS")] }, "tick", "passed"],
  ["a FAIL not sent back", {}, { verdicts: [verdict("FAIL")] }, "tick", "failed"],
  [
    "a FAIL whose fix brief is neither answered nor open",
    {},
    {
      verdicts: [verdict("FAIL")],
      fixes: [{ task: 2, at: "2026-01-01T00:00:03Z", head: "h1" }],
    },
    "tick",
    "fix-lost",
  ],
  [
    "a FAIL answered without a commit",
    {
      subject: { ...SEEN.subject!, report: { task: 2, outcome: "SHIPPED", head: "h1" } },
    },
    {
      verdicts: [verdict("FAIL")],
      fixes: [{ task: 2, at: "2026-01-01T00:00:03Z", head: "h1" }],
    },
    "tick",
    "to-review",
  ],
  [
    "that answer failed again",
    {
      subject: { ...SEEN.subject!, report: { task: 2, outcome: "SHIPPED", head: "h1" } },
    },
    {
      verdicts: [verdict("FAIL", { at: "2026-01-01T00:00:09Z" })],
      fixes: [{ task: 2, at: "2026-01-01T00:00:03Z", head: "h1" }],
    },
    "tick",
    "failed",
  ],
  [
    "a PASS a stage sent back",
    {},
    { verdicts: [verdict("PASS")], stages: [stageRun("security", "FAIL")] },
    "tick",
    "stage-failed",
  ],
  [
    "a PASS whose stage run predates a new review",
    {},
    {
      verdicts: [verdict("PASS", { at: "2026-01-01T00:00:09Z" })],
      stages: [stageRun("security", "FAIL")],
    },
    "tick",
    "passed",
  ],
  [
    "a stage's fix neither answered nor open",
    {},
    {
      verdicts: [verdict("PASS")],
      stages: [stageRun("security", "FAIL")],
      fixes: [{ task: 2, at: "2026-01-01T00:00:06Z", head: "h1" }],
    },
    "tick",
    "fix-lost",
  ],
  [
    "a stage's fix answered without a commit: reviewed again",
    {
      subject: { ...SEEN.subject!, report: { task: 2, outcome: "SHIPPED", head: "h1" } },
    },
    {
      verdicts: [verdict("PASS")],
      stages: [stageRun("security", "FAIL")],
      fixes: [{ task: 2, at: "2026-01-01T00:00:06Z", head: "h1" }],
    },
    "tick",
    "to-review",
  ],
  ["relay merge with nothing reported", { subject: null }, {}, "merge", "nothing-to-merge"],
  [
    "relay merge on a BLOCKED task",
    {
      subject: { ...SEEN.subject!, report: { task: 1, outcome: "BLOCKED", head: "h1" } },
    },
    {},
    "merge",
    "merge-blocked",
  ],
  [
    "relay merge on a merged PR",
    { pr: { ...SEEN.pr!, state: "merged" } },
    {},
    "merge",
    "merge-no-pr",
  ],
  ["relay merge on an open PR", {}, {}, "merge", "passed"],
];

Deno.test("planner: where an observed task stands", () => {
  for (const [what, seen, record, mode, phase] of CLASSIFY) {
    const s = { ...SEEN, ...seen };
    assert.equal(
      classify({ kind: mode }, s, s.subject ? { ...RECORD, ...record } : null),
      phase,
      what,
    );
  }
});

const decision = (d: GateDecision["decision"], reason = "ok"): GateDecision => ({
  decision: d,
  checks: [{ name: "verdict", result: d === "MERGE" ? "PASS" : d, reason }],
  head: "h1",
  base: "m2",
});

const at = (phase: PlannerPhase, patch: Partial<PlannerState> = {}): PlannerState => ({
  ...initialPlanner({ kind: "tick" }, false),
  seen: SEEN,
  record: RECORD,
  phase,
  ...patch,
});

const INTENT: Intent = {
  task: 1,
  action: "accept",
  pr: "task-1",
  head: "h1",
  tree: "t1",
  main: "m1",
  receipts: [],
  findings: [],
  infra: [],
  verifications: [],
  reason: null,
};
const accepting = (
  action: "accept" | "reject",
  expect: string | null,
): Partial<PlannerState> => ({
  mode: { kind: "merge", task: 1, accept: { action, expect, reason: "ok" } },
});

/** An accept by digest whose intent covered main at `main` (the gate samples merge onto m2). */
const ACCEPTED_ON = (main: string, infra: string[] = []): Partial<PlannerState> => ({
  ...accepting("accept", "d1"),
  intent: { intent: { ...INTENT, main, infra }, digest: "d1", changed: [] },
});

/** One sample of every fact the planner knows, with the variants its rows tell apart. */
const FACTS: [string, PlannerEvent][] = [
  ["blocked-handed-over", { kind: "blocked-handed-over", runId: "blocked-h1-1", at: "" }],
  ["merge-noted", { kind: "merge-noted", sha: "m1", at: "" }],
  ["close-noted", { kind: "close-noted", head: "h1", at: "", reason: "" }],
  ["scope PASS", { kind: "scope-checked", result: "PASS", finding: "", reason: "", files: [] }],
  ["scope REFUSE", {
    kind: "scope-checked",
    result: "REFUSE",
    finding: "scope: no",
    reason: "no",
    files: [],
  }],
  ["scope HUMAN", {
    kind: "scope-checked",
    result: "HUMAN",
    finding: "",
    reason: "",
    files: ["ci.yml"],
  }],
  ["review-void", { kind: "review-void", runId: "r", at: "", why: "moved" }],
  ["preview ready", {
    kind: "preview-checked",
    head: "h1",
    url: "https://p",
    ready: true,
    seen: "HTTP 200",
    at: "2026-01-01T00:10:00Z",
  }],
  ["preview not yet", {
    kind: "preview-checked",
    head: "h1",
    url: "https://p",
    ready: false,
    seen: "HTTP 503",
    at: "2026-01-01T00:10:00Z",
  }],
  ["stage PASS", { kind: "stage-ran", run: stageRun("polish", "PASS") }],
  ["stage FAIL", { kind: "stage-ran", run: stageRun("security", "FAIL") }],
  ["verdict PASS", { kind: "verdict", verdict: verdict("PASS") }],
  ["verdict FAIL", { kind: "verdict", verdict: verdict("FAIL") }],
  ["review-held", { kind: "review-held", reason: "r", next: "n", runId: "x" }],
  ["reviewer-still-running", { kind: "reviewer-still-running", message: "busy: …" }],
  ["revalidated", {
    kind: "revalidated",
    head: "h1",
    main: "m2",
    mergeTree: "t",
    passed: true,
    at: "",
  }],
  ["gate MERGE", { kind: "gate-decided", decision: decision("MERGE"), text: "" }],
  ["gate WAIT", { kind: "gate-decided", decision: decision("WAIT", "main moved"), text: "" }],
  ["gate WAIT stale", {
    kind: "gate-decided",
    decision: decision("WAIT", "the PASS is stale on main"),
    text: "",
  }],
  ["gate HUMAN", { kind: "gate-decided", decision: decision("HUMAN"), text: "" }],
  ["gate REFUSE", { kind: "gate-decided", decision: decision("REFUSE"), text: "" }],
  ["verdict-marked-stale", { kind: "verdict-marked-stale", head: "h1" }],
  ["merge-landed", { kind: "merge-landed", sha: "m9", at: "" }],
  ["merge-missed", { kind: "merge-missed", why: "not mergeable" }],
  ["sent-back", { kind: "sent-back", fix: 2, head: "h1", at: "", why: "w", findings: [] }],
  ["routed-to-person", { kind: "routed-to-person", head: "h1", files: ["ci.yml"], at: "" }],
  ["promoted", { kind: "promoted", message: "task 1 is merged; nothing queued" }],
  ["acceptance-weighed", {
    kind: "acceptance-weighed",
    intent: INTENT,
    digest: "d1",
    changed: [],
  }],
];

/** [phase, fact, phase after] — and the state a row needs, when it needs one. */
const PLANNER_ROWS: [PlannerPhase, string, PlannerPhase, Partial<PlannerState>?][] = [
  ["blocked", "blocked-handed-over", "blocked-hold"],
  ["merged-unnoticed", "merge-noted", "merged-first", { seen: { ...SEEN, mergedHead: "h1" } }],
  ["merged-unnoticed", "merge-noted", "merged-moved", { seen: { ...SEEN, mergedHead: "h0" } }],
  ["closed-unnoticed", "close-noted", "closed-first"],
  ["to-review", "scope PASS", "scope-passed"],
  ["to-review", "scope REFUSE", "scope-refused"],
  ["to-review", "scope HUMAN", "scope-human"],
  ["scope-passed", "review-void", "scope-passed"],
  ["scope-passed", "preview ready", "scope-passed", {
    seen: { ...SEEN, preview: { timeoutMs: 60_000 } },
  }],
  ["scope-passed", "preview not yet", "preview-wait", {
    seen: { ...SEEN, preview: { timeoutMs: 60_000 } },
  }],
  // The wait runs from the first tick that found this head's preview down, kept in the record.
  ["scope-passed", "preview not yet", "preview-wait", {
    seen: { ...SEEN, preview: { timeoutMs: 60_000 } },
    record: { ...RECORD, previewWait: { head: "h0", since: "2026-01-01T00:00:00Z" } },
  }],
  ["scope-passed", "preview not yet", "preview-missing", {
    seen: { ...SEEN, preview: { timeoutMs: 60_000 } },
    record: { ...RECORD, previewWait: { head: "h1", since: "2026-01-01T00:00:00Z" } },
  }],
  ["scope-passed", "verdict PASS", "passed"],
  ["scope-passed", "verdict FAIL", "review-failed"],
  ["scope-passed", "review-held", "review-held"],
  ["scope-passed", "reviewer-still-running", "reviewer-busy"],
  ["passed", "stage PASS", "passed"],
  ["passed", "stage FAIL", "stage-failed"],
  ["passed", "review-void", "passed"],
  ["passed", "review-held", "review-held"],
  ["passed", "reviewer-still-running", "reviewer-busy"],
  ["passed", "revalidated", "passed"],
  ["accepted", "revalidated", "accepted"],
  ["passed", "acceptance-weighed", "acceptance-shown", accepting("accept", null)],
  ["passed", "acceptance-weighed", "acceptance-stale", accepting("accept", "d0")],
  ["passed", "acceptance-weighed", "accepted", accepting("accept", "d1")],
  ["passed", "acceptance-weighed", "rejected", accepting("reject", "d1")],
  ["passed", "acceptance-weighed", "acceptance-stale", accepting("reject", "d0")],
  ["accepted", "gate MERGE", "mergeable", ACCEPTED_ON("m2")],
  ["accepted", "gate MERGE", "acceptance-stale", ACCEPTED_ON("m1")],
  ["accepted", "gate HUMAN", "merge-refused", ACCEPTED_ON("m2")],
  ["accepted", "gate WAIT", "merge-refused", ACCEPTED_ON("m2")],
  ["accepted", "gate WAIT stale", "merge-refused", ACCEPTED_ON("m2")],
  ["accepted", "gate REFUSE", "merge-refused", ACCEPTED_ON("m2")],
  ["passed", "gate MERGE", "mergeable"],
  ["passed", "gate MERGE", "ready-for-person", { seen: { ...SEEN, merge: "human" } }],
  ["passed", "gate MERGE", "mergeable", { mode: { kind: "merge" } }],
  ["passed", "gate MERGE", "needs-acceptance", {
    mode: { kind: "merge" },
    seen: { ...SEEN, merge: "human" },
  }],
  ["passed", "gate WAIT", "gate-wait"],
  ["passed", "gate WAIT", "merge-refused", { mode: { kind: "merge" } }],
  ["passed", "gate WAIT stale", "gate-stale"],
  ["passed", "gate HUMAN", "gate-human"],
  ["passed", "gate REFUSE", "gate-refused"],
  ["passed", "gate REFUSE", "merge-refused", { mode: { kind: "merge" } }],
  ["gate-stale", "verdict-marked-stale", "gate-wait", {
    record: { ...RECORD, verdicts: [verdict("PASS")] },
  }],
  ["gate-stale", "verdict-marked-stale", "stale-twice", {
    record: { ...RECORD, verdicts: [verdict("PASS", { stale: true }), verdict("PASS")] },
  }],
  ["mergeable", "merge-landed", "merged-now"],
  ["mergeable", "merge-missed", "merge-missed"],
  ...([
    "rejected",
    "failed",
    "fix-lost",
    "scope-refused",
    "review-failed",
    "stage-failed",
    "stale-twice",
    "gate-refused",
  ] as const).map((
    p,
  ): [PlannerPhase, string, PlannerPhase] => [p, "sent-back", "sent-back"]),
  ["scope-human", "routed-to-person", "with-person"],
  ["gate-human", "routed-to-person", "with-person"],
  ...(["merged", "merged-first", "closed", "closed-first", "merged-now"] as const).map((
    p,
  ): [PlannerPhase, string, PlannerPhase] => [p, "promoted", "promoted"]),
];

let plannerPairs = 0;
for (const phase of PLANNER_PHASES) {
  Deno.test(`planner phase "${phase}": each fact moves it by its row, or is refused`, () => {
    for (const [name, fact] of FACTS) {
      const rows = PLANNER_ROWS.filter(([from, f]) => from === phase && f === name);
      plannerPairs++;
      if (rows.length === 0) {
        assert.throws(() => reducePlanner(at(phase), fact), NoTransition, `${phase} + ${name}`);
        continue;
      }
      for (const [, , to, patch] of rows) {
        assert.equal(reducePlanner(at(phase, patch), fact).phase, to, `${phase} + ${name}`);
      }
    }
  });
}

Deno.test("planner: an observed task starts from where it stands", () => {
  const s = reducePlanner(at("start"), { kind: "observed", seen: SEEN, record: RECORD });
  assert.equal(s.phase, "to-review");
  assert.throws(
    () => reducePlanner(at("passed"), { kind: "observed", seen: SEEN, record: RECORD }),
    NoTransition,
  );
});

/** The effect each phase asks for (the phase's state as its facts leave it). */
const PLANNER_NEXT: [PlannerPhase, Effect["kind"], Partial<PlannerState>?][] = [
  ["start", "observe", { seen: null }],
  ["no-main", "done"],
  ["no-report", "done"],
  ["executor-mid-tick", "wait"],
  ["blocked", "hand-blocked-over"],
  ["blocked-handed", "wait"],
  ["blocked-hold", "record-hold"],
  ["no-pr", "done"],
  ["merged-unnoticed", "note-merge"],
  ["merged-moved", "record-hold", { seen: { ...SEEN, mergedHead: "h0" } }],
  ["merged-first", "promote", { seen: { ...SEEN, mergedHead: "h1" } }],
  ["merged", "promote", { seen: { ...SEEN, mergedHead: "h1" } }],
  ["closed-unnoticed", "note-close"],
  ["closed-first", "promote"],
  ["closed", "promote"],
  ["executor-first", "wait"],
  ["moved-outside", "record-hold"],
  ["failed", "send-back", { record: { ...RECORD, verdicts: [verdict("FAIL")] } }],
  ["failed", "record-hold", {
    record: {
      ...RECORD,
      verdicts: [verdict("FAIL")],
      fixes: [1, 2, 3].map((t) => ({ task: t + 1, at: "", head: "h0" })),
    },
  }],
  ["fix-lost", "send-back", {
    record: { ...RECORD, fixes: [{ task: 2, at: "", head: "h1" }] },
  }],
  ["to-review", "check-scope"],
  ["scope-refused", "send-back", { scope: { finding: "scope: no", files: [] } }],
  ["scope-human", "route-to-person", { scope: { finding: "", files: ["ci.yml"] } }],
  ["scope-passed", "run-turn"],
  ["scope-passed", "check-preview", { seen: { ...SEEN, preview: { timeoutMs: 60_000 } } }],
  ["scope-passed", "run-turn", {
    seen: { ...SEEN, preview: { timeoutMs: 60_000 } },
    preview: { url: "https://p", ready: true, seen: "HTTP 200", since: "", at: "" },
  }],
  ["preview-wait", "wait", {
    preview: { url: "https://p", ready: false, seen: "HTTP 503", since: "t0", at: "t1" },
  }],
  ["preview-missing", "record-hold", {
    preview: { url: "https://p", ready: false, seen: "HTTP 503", since: "t0", at: "t1" },
  }],
  ["reviewer-busy", "wait", { said: "busy: …" }],
  ["review-held", "record-hold", { held: { reason: "r", next: "n", runId: "x" } }],
  ["review-failed", "send-back"],
  ["passed", "gate"],
  ["passed", "run-stage", {
    seen: { ...SEEN, stages: ["finish", "security"] },
    record: { ...RECORD, verdicts: [verdict("PASS")], stages: [stageRun("finish", "PASS")] },
  }],
  ["passed", "gate", {
    seen: { ...SEEN, stages: ["finish", "security"] },
    record: {
      ...RECORD,
      verdicts: [verdict("PASS")],
      stages: [stageRun("finish", "PASS"), stageRun("security", "PASS")],
    },
  }],
  ["passed", "done", {
    mode: { kind: "merge" },
    seen: { ...SEEN, stages: ["finish", "security"] },
    record: { ...RECORD, verdicts: [verdict("PASS")] },
  }],
  ["stage-failed", "send-back", {
    record: { ...RECORD, verdicts: [verdict("PASS")], stages: [stageRun("security", "FAIL")] },
  }],
  ["gate-stale", "mark-stale"],
  ["stale-twice", "send-back", { decision: decision("WAIT") }],
  ["gate-wait", "wait", { decision: decision("WAIT") }],
  ["gate-human", "route-to-person", { decision: decision("HUMAN") }],
  ["gate-refused", "send-back", { decision: decision("REFUSE") }],
  ["ready-for-person", "done", { seen: { ...SEEN, merge: "human" } }],
  ["ready-for-person", "record-hold", { seen: { ...SEEN, merge: "human", handsfree: true } }],
  ["passed", "weigh-acceptance", accepting("accept", null)],
  ["accepted", "gate", {
    ...accepting("accept", "d1"),
    intent: { intent: INTENT, digest: "d1", changed: [] },
  }],
  ["acceptance-shown", "done", {
    ...accepting("accept", null),
    intent: { intent: INTENT, digest: "d1", changed: [] },
  }],
  ["acceptance-stale", "done", {
    ...accepting("accept", "d0"),
    intent: { intent: INTENT, digest: "d1", changed: ["head: h0 → h1"] },
  }],
  ["rejected", "send-back", {
    ...accepting("reject", "d1"),
    intent: { intent: { ...INTENT, action: "reject" }, digest: "d1", changed: [] },
  }],
  ["merge-refused", "done", { decision: decision("REFUSE"), mode: { kind: "merge" } }],
  ["mergeable", "merge"],
  ["needs-acceptance", "done", { decision: decision("MERGE"), mode: { kind: "merge" } }],
  ["merge-missed", "wait", { said: "not mergeable" }],
  ["merged-now", "promote", { merged: { sha: "m9" } }],
  ["sent-back", "done", { sentBack: { fix: 2, why: "The merge gate refused this PR." } }],
  ["with-person", "done", { scope: { finding: "", files: ["ci.yml"] } }],
  ["promoted", "done", { said: "task 1 is merged; nothing queued" }],
  ["nothing-to-merge", "done", { mode: { kind: "merge" } }],
  ["merge-blocked", "done", { mode: { kind: "merge" } }],
  ["merge-no-pr", "done", { mode: { kind: "merge" } }],
];

Deno.test("planner next: each phase names its one effect, and only the planner's", () => {
  const covered = new Set<PlannerPhase>();
  for (const [phase, kind, patch] of PLANNER_NEXT) {
    const effect = nextPlanner(at(phase, patch));
    assert.equal(effect.kind, kind, phase);
    assert.ok(allowed("planner", effect), `${phase}: ${effect.kind}`);
    covered.add(phase);
  }
  assert.deepEqual(PLANNER_PHASES.filter((p) => !covered.has(p)), []);
});

Deno.test("planner: a fix brief gone from NEXT-STEPS.md is written again under its own number, in the same round, with the findings on record", () => {
  const record: ReviewRecord = {
    ...RECORD,
    verdicts: [verdict("FAIL")],
    fixes: [{ task: 2, at: "2026-01-01T00:00:03Z", head: "h1" }],
  };
  const lost = at("fix-lost", { record });
  assert.deepEqual(nextPlanner(lost), {
    kind: "send-back",
    findings: [{ severity: "blocker", text: "no test" }],
    why: "The reviewer failed this PR.",
    again: 2,
  });
  const after = reducePlanner(lost, {
    kind: "sent-back",
    fix: 2,
    head: "h1",
    at: "2026-01-01T00:00:09Z",
    why: "The reviewer failed this PR.",
    findings: [],
  });
  assert.equal(after.phase, "sent-back");
  assert.deepEqual(after.record!.fixes, record.fixes);
  // Its number taken meanwhile: a fresh one, the same round.
  const renumbered = reducePlanner(lost, {
    kind: "sent-back",
    fix: 4,
    replaces: 2,
    head: "h1",
    at: "2026-01-01T00:00:09Z",
    why: "The reviewer failed this PR.",
    findings: [],
  });
  assert.deepEqual(renumbered.record!.fixes, [{ task: 4, at: "2026-01-01T00:00:03Z", head: "h1" }]);
  // What the lost brief said, when the record kept it (a person's rejection, say).
  const said = { why: "A person rejected this PR.", findings: [{ severity: "major", text: "n" }] };
  const kept = at("fix-lost", {
    record: {
      ...record,
      verdicts: [verdict("PASS")],
      fixes: [{ ...record.fixes[0]!, ...said } as ReviewRecord["fixes"][number]],
    },
  });
  assert.deepEqual(nextPlanner(kept), { kind: "send-back", ...said, again: 2 });
});

Deno.test("planner: a report of a later fix brief (another machine's round) is reviewed, not answered with this machine's fix again", () => {
  const record: ReviewRecord = {
    ...RECORD,
    verdicts: [verdict("FAIL")],
    fixes: [{ task: 2, at: "2026-01-01T00:00:03Z", head: "h1" }],
  };
  const seen = {
    ...SEEN,
    subject: { ...SEEN.subject!, report: { task: 3, outcome: "SHIPPED" as const, head: "h1" } },
  };
  assert.equal(classify({ kind: "tick" }, seen, record), "to-review");
  const failedAgain = { ...record, verdicts: [verdict("FAIL", { at: "2026-01-01T00:00:09Z" })] };
  assert.equal(classify({ kind: "tick" }, seen, failedAgain), "failed");
});

Deno.test("planner: a HOLD on record stops the tick before it looks at anything", () => {
  assert.equal(nextPlanner({ ...at("start"), hold: true }).kind, "stop-on-hold");
});

Deno.test("the tables cover every pair they were walked with", () => {
  // Runs last in this file: the per-phase tests above counted their pairs.
  assert.equal(plannerPairs, PLANNER_PHASES.length * FACTS.length);
});

Deno.test("planner: an accept merges the human path only when the intent named every file the gate routes to a person", () => {
  const human = (files: string[]): PlannerEvent => ({
    kind: "gate-decided",
    decision: {
      decision: "HUMAN",
      checks: [{ name: "scope", result: "HUMAN", reason: "infra", files }],
      head: "h1",
      base: "m2",
    },
    text: "",
  });
  const named = at("accepted", ACCEPTED_ON("m2", ["ci.yml"]));
  assert.equal(reducePlanner(named, human(["ci.yml"])).phase, "mergeable");
  assert.equal(reducePlanner(named, human(["ci.yml", "deploy.yml"])).phase, "merge-refused");
  assert.equal(
    reducePlanner(at("accepted", ACCEPTED_ON("m2")), human(["ci.yml"])).phase,
    "merge-refused",
  );
});

Deno.test("planner: a person's accept waits for the executor, as the review tick does", () => {
  const mode = {
    kind: "merge" as const,
    task: 1,
    accept: { action: "accept" as const, expect: null, reason: null },
  };
  assert.equal(classify(mode, { ...SEEN, journal: true }, RECORD), "executor-mid-tick");
  assert.equal(classify(mode, { ...SEEN, openBranch: "task-1" }, RECORD), "executor-first");
  assert.equal(classify(mode, SEEN, RECORD), "passed");
  assert.equal(classify({ kind: "merge", task: 1 }, { ...SEEN, journal: true }, RECORD), "passed");
});

Deno.test("planner: a reject with no fix round left is refused, never a HOLD that loses the note", () => {
  const full = {
    ...accepting("reject", "d1"),
    intent: { intent: { ...INTENT, action: "reject" as const }, digest: "d1", changed: [] },
    record: { ...RECORD, fixes: [2, 3, 4].map((t) => ({ task: t, at: "", head: "h0" })) },
  };
  const effect = nextPlanner(at("rejected", full));
  assert.equal(effect.kind, "done");
  assert.match(
    (effect as { result: { message: string } }).result.message,
    /not rejected: task 1 has had its 3 fix round\(s\)/,
  );
});

Deno.test("planner: a head a stage sent back merges only over that rejection, by a person with a reason", () => {
  const rejected = {
    ...RECORD,
    verdicts: [verdict("PASS")],
    stages: [stageRun("security", "FAIL")],
    fixes: [{ task: 2, at: "2026-01-01T00:00:06Z", head: "h1" }],
  };
  const say = (e: Effect) => (e as { result: { message: string } }).result.message;
  // relay merge, and a plain accept, are refused with the way to override.
  const merge = nextPlanner(at("passed", { mode: { kind: "merge" }, record: rejected }));
  assert.equal(merge.kind, "done");
  assert.match(say(merge), /its security stage rejected h1 .*--override-rejection --reason/);
  assert.equal(
    nextPlanner(at("passed", { ...accepting("accept", null), record: rejected })).kind,
    "done",
  );
  // Overriding weighs the acceptance; with nothing rejected there is nothing to override.
  const override = {
    mode: {
      kind: "merge" as const,
      task: 1,
      accept: { action: "accept" as const, expect: null, reason: "known", override: true },
    },
  };
  assert.equal(
    nextPlanner(at("passed", { ...override, record: rejected })).kind,
    "weigh-acceptance",
  );
  const none = nextPlanner(
    at("passed", { ...override, record: { ...RECORD, verdicts: [verdict("PASS")] } }),
  );
  assert.match(say(none), /nothing to override/);
  // The fix brief relay wrote for this very head does not stop an accept.
  const open = { ...SEEN, openBranch: "task-1" };
  assert.equal(classify(override.mode, open, rejected), "passed");
  // A plain accept gets as far as the refusal that names the rejection; a reject waits.
  assert.equal(classify(accepting("accept", null).mode!, open, rejected), "passed");
  assert.equal(classify(accepting("reject", null).mode!, open, rejected), "executor-first");
});

Deno.test("planner: relay merge and accept wait for the stages still to run on the head; a reject need not", () => {
  const s = {
    seen: { ...SEEN, stages: ["finish", "security"] as PostStage[] },
    record: { ...RECORD, verdicts: [verdict("PASS")], stages: [stageRun("finish", "PASS")] },
  };
  const merge = nextPlanner(at("passed", { ...s, mode: { kind: "merge" } }));
  assert.equal(merge.kind, "done");
  assert.match(
    (merge as { result: { message: string } }).result.message,
    /not yet: task-1 at h1 passed review, but its stage\(s\) security have not run on it; the review tick runs them/,
  );
  assert.equal(nextPlanner(at("passed", { ...s, ...accepting("accept", null) })).kind, "done");
  assert.equal(
    nextPlanner(at("passed", { ...s, ...accepting("reject", null) })).kind,
    "weigh-acceptance",
  );
});
