/**
 * lib/loop/supersede.ts othersWork: when the remote shows that another machine worked a
 * journaled run's task (so the run is set aside, not resumed), as a table of what the remote
 * shows against the run's step.
 */
import assert from "node:assert/strict";
import { othersWork, type RemoteSeen } from "../lib/loop/supersede.ts";
import { STEPS } from "../lib/state/journal.ts";

const WHERE = { remote: "origin", main: "main" };
const OPEN: RemoteSeen["brief"] = { task: 1, status: "OPEN" };
const NOTHING: RemoteSeen = { brief: OPEN, branch: null, pr: null };
const run = (step: (typeof STEPS)[number]) => ({ task: 1, branch: "task-1", step });

Deno.test("othersWork() finds nothing when the remote still asks for the run's brief and holds only its own work", () => {
  assert.deepEqual(othersWork(run("prepared"), WHERE, NOTHING), []);
  const own = { sha: "a".repeat(40), ours: true };
  const seen: RemoteSeen = { brief: OPEN, branch: own, pr: { head: own.sha, ours: true } };
  assert.deepEqual(othersWork(run("committed"), WHERE, seen), []);
  // A main that could not be read decides nothing.
  assert.deepEqual(othersWork(run("prepared"), WHERE, { ...NOTHING, brief: "unread" }), []);
});

Deno.test("othersWork() names each sign of another machine's work before the run pushed", () => {
  const other = "b".repeat(40);
  const cases: [RemoteSeen, RegExp][] = [
    [
      { ...NOTHING, brief: { task: 1, status: "DONE" } },
      /no longer task 1 OPEN \(it is task 1 DONE\)/,
    ],
    [{ ...NOTHING, brief: { task: 2, status: "OPEN" } }, /\(it is task 2 OPEN\)/],
    [{ ...NOTHING, brief: null }, /origin\/main has no NEXT-STEPS\.md/],
    [{ ...NOTHING, branch: { sha: other, ours: false } }, /origin\/task-1 is at bbbbbbbbbbbb/],
    [{ ...NOTHING, pr: { head: other, ours: false } }, /PR record of task-1 .* head bbbbbbbbbbbb/],
  ];
  for (
    const step of ["prepared", "agent-started", "agent-finished", "committed", "evidence"] as const
  ) {
    for (const [seen, reason] of cases) {
      const found = othersWork(run(step), WHERE, seen);
      assert.equal(found.length, 1, `${step}: ${found.join("; ")}`);
      assert.match(found[0]!, reason);
    }
  }
});

Deno.test("othersWork() never sets aside a run at or past pushed, whatever the remote shows", () => {
  const seen: RemoteSeen = {
    brief: { task: 2, status: "OPEN" },
    branch: { sha: "b".repeat(40), ours: false },
    pr: { head: "b".repeat(40), ours: false },
  };
  for (const step of STEPS.slice(STEPS.indexOf("pushed"))) {
    assert.deepEqual(othersWork(run(step), WHERE, seen), [], step);
  }
  assert.equal(othersWork(run("evidence"), WHERE, seen).length, 3);
});
