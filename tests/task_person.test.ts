/**
 * A person's commands (`relay resume`, `relay close`) as table rows: every
 * (step, fact) pair moves by its row or is refused, and each state names its
 * one effect — never one of a tick's.
 */
import assert from "node:assert/strict";
import { allowed, type Effect } from "../lib/task/effects.ts";
import {
  initialPerson,
  nextPerson,
  type PersonEvent,
  type PersonSeen,
  type PersonState,
  reducePerson,
} from "../lib/task/person.ts";
import { NoTransition, PERSON_STEPS, type PersonStep } from "../lib/task/table.ts";

const HOLD = { task: 3, reason: "the push was refused", at: "2026-01-01T00:00:00.000Z" };
const RUN = {
  runId: "r1",
  branch: "task-3",
  task: 3,
  step: "prepared",
  keeps: false,
  agentPid: null,
};
const PR = { id: "#3", head: "a".repeat(40), state: "open" as const, branch: "task-3" };

const FACTS: PersonEvent[] = [
  { kind: "observed", seen: { hold: null, run: null } },
  { kind: "pr-closed", pr: "#3", head: PR.head },
  { kind: "agent-stopped", runId: "r1", pid: 42 },
  { kind: "run-kept", runId: "r1", step: "committed" },
  { kind: "run-abandoned", runId: "r1", branch: "task-3", task: 3 },
  { kind: "close-recorded", task: 3, head: PR.head },
  { kind: "brief-retired", task: 4 },
  { kind: "hold-cleared", ...HOLD },
  { kind: "promoted", task: 5, title: "Next", message: "" },
  { kind: "uncertain-released", runId: "review3-t1", role: "reviewer", task: 3 },
];

/** The rows, written out: (from, fact) → to. Any other pair is refused. */
const ROWS: [PersonStep, PersonEvent["kind"], PersonStep][] = [
  ["start", "observed", "surveyed"],
  ["surveyed", "pr-closed", "pr-closed"],
  ["pr-closed", "agent-stopped", "agent-stopped"],
  ["surveyed", "run-kept", "run-settled"],
  ["pr-closed", "run-kept", "run-settled"],
  ["agent-stopped", "run-kept", "run-settled"],
  ["surveyed", "run-abandoned", "run-settled"],
  ["surveyed", "uncertain-released", "run-settled"],
  ["pr-closed", "run-abandoned", "run-settled"],
  ["agent-stopped", "run-abandoned", "run-settled"],
  ["pr-closed", "close-recorded", "close-recorded"],
  ["agent-stopped", "close-recorded", "close-recorded"],
  ["run-settled", "close-recorded", "close-recorded"],
  ["close-recorded", "brief-retired", "brief-retired"],
  ["surveyed", "hold-cleared", "hold-cleared"],
  ["run-settled", "hold-cleared", "hold-cleared"],
  ["close-recorded", "hold-cleared", "hold-cleared"],
  ["brief-retired", "hold-cleared", "hold-cleared"],
  ["close-recorded", "promoted", "promoted"],
  ["brief-retired", "promoted", "promoted"],
  ["hold-cleared", "promoted", "promoted"],
];

const CLOSE = { kind: "close" as const, task: 3, reason: "not worth it" };
const at = (step: PersonStep, seen: PersonSeen | null, close = true): PersonState => ({
  ...initialPerson(close ? CLOSE : { kind: "resume" }),
  step,
  seen,
});

for (const step of PERSON_STEPS) {
  Deno.test(`person step "${step}": each fact moves it by its row, or is refused`, () => {
    for (const fact of FACTS) {
      const row = ROWS.find(([from, kind]) => from === step && kind === fact.kind);
      const state = at(step, { hold: HOLD, run: RUN, pr: PR });
      if (row) assert.equal(reducePerson(state, fact).step, row[2], `${step} + ${fact.kind}`);
      else assert.throws(() => reducePerson(state, fact), NoTransition, `${step} + ${fact.kind}`);
    }
  });
}

const seen = (patch: Partial<PersonSeen> = {}): PersonSeen => ({
  hold: null,
  run: null,
  pr: PR,
  openBrief: null,
  taskBriefs: [3, 4],
  ...patch,
});

const UNCERTAIN = { runId: "review3-t1", role: "reviewer" as const, task: 3 };
const retrying = (step: PersonStep, seen: PersonSeen): PersonState => ({
  ...initialPerson({ kind: "resume", retryUncertain: true }),
  step,
  seen,
});

/** (what, state) → the effect named, or the ending's result kind. */
const NEXT: [string, PersonState, string][] = [
  ["resume: nothing read yet", at("start", null, false), "survey"],
  ["resume: no HOLD", at("surveyed", seen(), false), "done:idle"],
  [
    "resume: the held run's turn is committed",
    at("surveyed", seen({ hold: { ...HOLD, runId: "r1" }, run: { ...RUN, keeps: true } }), false),
    "keep-run",
  ],
  [
    "resume: the held run's turn is not committed",
    at("surveyed", seen({ hold: { ...HOLD, runId: "r1" }, run: RUN }), false),
    "abandon-run",
  ],
  [
    "resume: a run on record that is not the held one is left alone",
    at("surveyed", seen({ hold: { ...HOLD, runId: "r0" }, run: RUN }), false),
    "clear-hold",
  ],
  [
    "resume: the run settled",
    at("run-settled", seen({ hold: { ...HOLD, runId: "r1" }, run: RUN }), false),
    "clear-hold",
  ],
  ["resume: cleared", at("hold-cleared", seen({ hold: HOLD }), false), "done:cleared"],
  [
    "resume: the HOLD is an uncertain reviewer turn: left as it is",
    at("surveyed", seen({ hold: { ...HOLD, runId: "review3-t1" }, uncertain: UNCERTAIN }), false),
    "done:uncertain",
  ],
  [
    "resume --retry-uncertain: the uncertain turn is released",
    retrying("surveyed", seen({ hold: { ...HOLD, runId: "review3-t1" }, uncertain: UNCERTAIN })),
    "release-uncertain",
  ],
  [
    "resume --retry-uncertain: then the HOLD is cleared",
    retrying("run-settled", seen({ hold: { ...HOLD, runId: "review3-t1" }, uncertain: UNCERTAIN })),
    "clear-hold",
  ],
  [
    "resume --retry-uncertain: an uncertain turn the HOLD does not name is not replayed",
    retrying("surveyed", seen({ hold: { ...HOLD, runId: "r1" }, uncertain: UNCERTAIN })),
    "done:refused",
  ],
  ["resume --retry-uncertain: no HOLD", retrying("surveyed", seen()), "done:refused"],
  ["close: nothing read yet", at("start", null), "survey"],
  ["close: no PR", at("surveyed", seen({ pr: null })), "done:refused"],
  [
    "close: the PR is merged",
    at("surveyed", seen({ pr: { ...PR, state: "merged" } })),
    "done:refused",
  ],
  ["close: the PR is open", at("surveyed", seen()), "close-pr"],
  [
    "close: an agent a killed tick left running on the branch",
    at("pr-closed", seen({ run: { ...RUN, step: "agent-started", agentPid: 42 } })),
    "stop-agent",
  ],
  [
    "close: the agent stopped, its run is abandoned",
    at("agent-stopped", seen({ run: { ...RUN, step: "agent-started", agentPid: 42 } })),
    "abandon-run",
  ],
  ["close: a run on the branch", at("pr-closed", seen({ run: RUN })), "abandon-run"],
  [
    "close: a run on another branch is left alone",
    at("pr-closed", seen({ run: { ...RUN, branch: "task-9" } })),
    "record-close",
  ],
  ["close: no run", at("pr-closed", seen()), "record-close"],
  ["close: run settled", at("run-settled", seen({ run: RUN })), "record-close"],
  [
    "close: an open fix brief for it",
    at("close-recorded", seen({ openBrief: 4 })),
    "retire-open-brief",
  ],
  [
    "close: a HOLD about one of its fix briefs",
    at("brief-retired", seen({ hold: { ...HOLD, task: 4 } })),
    "clear-hold",
  ],
  [
    "close: a HOLD about another task stays",
    at("close-recorded", seen({ hold: { ...HOLD, task: 8 } })),
    "promote-next",
  ],
  ["close: the HOLD cleared", at("hold-cleared", seen({ hold: HOLD })), "promote-next"],
  ["close: promoted", at("promoted", seen()), "done:closed"],
];

Deno.test("person next: each state names its one effect, and only a person's", () => {
  for (const [what, state, want] of NEXT) {
    const effect = nextPerson(state);
    const got = effect.kind === "done" ? `done:${effect.result.kind}` : effect.kind;
    assert.equal(got, want, what);
    assert.ok(allowed("person", effect as Effect), what);
    assert.equal(allowed("executor", effect as Effect), effect.kind === "done", what);
    assert.equal(allowed("planner", effect as Effect), effect.kind === "done", what);
  }
});

Deno.test("person: a resume that abandons the held run says the HOLD first, then the run", () => {
  let s = at("surveyed", seen({ hold: { ...HOLD, runId: "r1" }, run: RUN }), false);
  s = reducePerson(s, { kind: "run-abandoned", runId: "r1", branch: "task-3", task: 3 });
  s = reducePerson(s, { kind: "hold-cleared", ...HOLD });
  const end = nextPerson(s);
  assert.equal(end.kind, "done");
  const lines = (end as { result: { lines?: unknown } }).result.lines as string[];
  assert.match(lines[0]!, /^cleared: HOLD on task 3 \(since 2026-01-01T00:00:00.000Z\): the push/);
  assert.match(lines[1]!, /^abandoned run r1; its work stays on task-3/);
});

Deno.test("person: a close walks from survey to promotion, one effect at a time", () => {
  const facts: Record<string, PersonEvent> = {
    "survey": {
      kind: "observed",
      seen: seen({ run: RUN, openBrief: 4, hold: { ...HOLD, task: 4 } }),
    },
    "close-pr": { kind: "pr-closed", pr: "#3", head: PR.head },
    "abandon-run": { kind: "run-abandoned", runId: "r1", branch: "task-3", task: 3 },
    "record-close": { kind: "close-recorded", task: 3, head: PR.head },
    "retire-open-brief": { kind: "brief-retired", task: 4 },
    "clear-hold": { kind: "hold-cleared", ...HOLD, task: 4 },
    "promote-next": { kind: "promoted", task: 5, title: "Next", message: "" },
  };
  let s = initialPerson(CLOSE);
  const performed: string[] = [];
  for (;;) {
    const effect = nextPerson(s);
    if (effect.kind === "done") break;
    performed.push(effect.kind);
    s = reducePerson(s, facts[effect.kind]!);
  }
  assert.deepEqual(performed, Object.keys(facts));
  assert.deepEqual(s.lines, [
    "closed #3 without merging; task-3 stays at aaaaaaaaaaaa",
    "abandoned run r1 on task-3 (its work stays on the branch and under refs/relay/anchors/task-3/r1-*)",
    "set the open fix brief (task 4) to DONE",
    "cleared the HOLD: the push was refused",
    "promoted task 5: Next",
  ]);
});
