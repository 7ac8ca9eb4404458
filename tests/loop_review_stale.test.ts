import assert from "node:assert/strict";
import { type RemoteFacts, settledElsewhere as settled, skewMs } from "../lib/loop/review_stale.ts";
import { DEFAULT_REPO_CONFIG } from "../lib/config/repo_load.ts";
import { leaseTimes } from "../lib/loop/split.ts";
import type { ReviewJournal } from "../lib/loop/review_journal.ts";

const H = "a".repeat(40);
const H2 = "b".repeat(40);
const STARTED = "2026-01-01T10:00:00.000Z";
const BEFORE = "2026-01-01T09:00:00.000Z";
const AFTER = "2026-01-01T10:20:00.000Z";

const journal: ReviewJournal = {
  version: 1,
  runId: "r-review1-t1",
  task: 1,
  pid: 4242,
  started: STARTED,
  worktree: "/tmp/wt/review",
  role: "reviewer",
  head: H,
  branch: "task-1",
  brief: 1,
};

const open: RemoteFacts = {
  record: { state: "open", reviews: [] },
  branchHead: H,
  notes: [],
};

/** With the default lease (10 minutes, renewed every 2): a verdict counts from 4 minutes on. */
const SKEW = skewMs(leaseTimes(DEFAULT_REPO_CONFIG));
const settledElsewhere = (j: Parameters<typeof settled>[0], facts: RemoteFacts, remote: string) =>
  settled(j, facts, remote, SKEW);

Deno.test("settledElsewhere() is null while the turn's head is still under review with no verdict on it since the turn started", () => {
  assert.equal(settledElsewhere(journal, open, "origin"), null);
  // A verdict on that head from before the turn (a PASS main moved under) is not this round's.
  const earlier: RemoteFacts = {
    ...open,
    record: { state: "open", reviews: [{ head: H, text: "Verdict: PASS", at: BEFORE }] },
    notes: [{ kind: "verdict", task: 1, head: H, result: "PASS", at: BEFORE }],
  };
  assert.equal(settledElsewhere(journal, earlier, "origin"), null);
  // Nor is a verdict after it on another head, or a note of another task or kind.
  const other: RemoteFacts = {
    ...open,
    record: { state: "open", reviews: [{ head: H2, text: "Verdict: FAIL", at: AFTER }] },
    notes: [
      { kind: "verdict", task: 2, head: H, result: "FAIL", at: AFTER },
      { kind: "gate", task: 1, head: H, at: AFTER },
    ],
  };
  assert.equal(settledElsewhere(journal, other, "origin"), null);
  // A branch the remote no longer has says nothing by itself.
  assert.equal(settledElsewhere(journal, { ...open, branchHead: null }, "origin"), null);
});

Deno.test("settledElsewhere() names a merged or closed PR, a head that moved on, and a verdict recorded after the turn started", () => {
  assert.equal(
    settledElsewhere(journal, { ...open, record: { state: "merged" } }, "origin"),
    "task-1 was merged on origin",
  );
  assert.equal(
    settledElsewhere(journal, { ...open, record: { state: "closed" } }, "origin"),
    "task-1 was closed on origin",
  );
  assert.equal(
    settledElsewhere(journal, { ...open, branchHead: H2 }, "origin"),
    `task-1 is at ${H2.slice(0, 12)} on origin, not at ${H.slice(0, 12)}, the head the turn judged`,
  );
  const reviewed: RemoteFacts = {
    ...open,
    record: {
      state: "open",
      reviews: [{ head: H, text: "Verdict: FAIL\n- [blocker] x", at: AFTER }],
    },
  };
  assert.equal(
    settledElsewhere(journal, reviewed, "origin"),
    `another machine recorded a FAIL on ${
      H.slice(0, 12)
    } at ${AFTER}, after the turn started (${STARTED})`,
  );
  // Another forge keeps no record on the remote: the verdict note on the head says it.
  const noted: RemoteFacts = {
    record: null,
    branchHead: H,
    notes: [{ kind: "verdict", task: 1, head: H, result: "PASS", at: AFTER }],
  };
  assert.match(settledElsewhere(journal, noted, "origin") ?? "", /recorded a PASS on /);
});

Deno.test("settledElsewhere() weighs a stage's turn by that stage's notes, leaves a plan review alone, and an old journal without a head to merged or closed", () => {
  const polish = { ...journal, role: "polish" };
  const verdictOnly: RemoteFacts = {
    ...open,
    record: { state: "open", reviews: [{ head: H, text: "Verdict: PASS", at: AFTER }] },
    notes: [{ kind: "stage", stage: "docs", task: 1, head: H, result: "PASS", at: AFTER }],
  };
  assert.equal(settledElsewhere(polish, verdictOnly, "origin"), null);
  const ran: RemoteFacts = {
    ...open,
    notes: [{ kind: "stage", stage: "polish", task: 1, head: H, result: "PASS", at: AFTER }],
  };
  assert.match(
    settledElsewhere(polish, ran, "origin") ?? "",
    /recorded the polish stage's PASS on /,
  );
  const plan = { ...journal, role: "plan", branch: "main" };
  assert.equal(settledElsewhere(plan, { ...open, branchHead: H2 }, "origin"), null);
  const { head: _head, branch: _branch, ...old } = journal;
  assert.equal(settledElsewhere(old, { ...open, branchHead: H2 }, "origin"), null);
  assert.equal(
    settledElsewhere(old, { ...open, record: { state: "merged" } }, "origin"),
    "task-1 was merged on origin",
  );
});

Deno.test("settledElsewhere() takes no verdict from within the skew (skewMs) of the turn's start for this round's: an earlier round's PASS, stamped by a clock 90 s ahead, is not", () => {
  // This machine started its re-review of H at 10:00:00 by its clock, a minute after another
  // machine's PASS on it (09:59:00 true time), whose clock runs 90 s ahead: it wrote 10:00:30.
  // This machine's lease kept every other reviewer off the round for 8 minutes at least.
  const earlier = {
    kind: "verdict",
    task: 1,
    head: H,
    result: "PASS",
    at: "2026-01-01T10:00:30.000Z",
  };
  assert.equal(settledElsewhere(journal, { ...open, notes: [earlier] }, "origin"), null);
  // This round's, 8 minutes on, even by a clock 3 minutes behind: counted.
  const late = { ...earlier, result: "FAIL", at: "2026-01-01T10:05:00.000Z" };
  assert.match(settledElsewhere(journal, { ...open, notes: [late] }, "origin") ?? "", /a FAIL on/);
  assert.equal(SKEW, 4 * 60_000);
  // A 1-minute lease (renewed every 12 s): 24 s.
  assert.equal(skewMs({ ttlMs: 60_000, renewEveryMs: 12_000 }), 24_000);
});
