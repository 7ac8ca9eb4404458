import assert from "node:assert/strict";
import { fixBrief, taskTitle } from "../lib/loop/fix_brief.ts";
import type { Brief } from "../lib/protocol/types.ts";

const original: Brief = {
  status: "DONE",
  task: 4,
  title: "Add the thing",
  branch: "task-4",
  kind: "feature",
  goal: "Do it.",
  doneWhen: "- it is done",
  bar: ["deno task test"],
  outOfScope: "- the other thing",
  extra: [],
};

Deno.test("fixBrief() works on the same branch with the findings, the original bar and out-of-scope, and does not stack on a fix of a fix", () => {
  const first = fixBrief({
    task: 5,
    original,
    originalTask: 4,
    head: "a".repeat(40),
    findings: [{ severity: "blocker", text: "no test" }],
    why: "The reviewer failed this PR.",
  });
  assert.equal(first.branch, "task-4");
  assert.equal(first.kind, "fix");
  assert.equal(first.fixes, 4);
  assert.deepEqual(first.bar, ["deno task test"]);
  assert.equal(first.outOfScope, "- the other thing");
  assert.match(first.goal, /- \[blocker\] no test/);
  const second = fixBrief({
    task: 6,
    original: first,
    originalTask: 4,
    head: "b".repeat(40),
    findings: [{ severity: "major", text: "still no test" }],
    why: "The reviewer failed this PR.",
  });
  assert.equal(second.title, "Fix task 4: Add the thing");
  assert.equal(second.doneWhen.match(/Every blocker and major finding/g)?.length, 1);
  assert.match(second.doneWhen, /- it is done/);
  assert.doesNotMatch(second.goal, /\[blocker\] no test/);
});

Deno.test("taskTitle() is the task's own title, also for a fix brief and a fix of a fix", () => {
  const fix = fixBrief({
    task: 5,
    original,
    originalTask: 4,
    head: "a".repeat(40),
    findings: [],
    why: "The gate refused this PR.",
  });
  assert.equal(fix.title, "Fix task 4: Add the thing");
  assert.equal(taskTitle(fix), "Add the thing");
  const again = fixBrief({
    ...{ task: 6, originalTask: 4, head: "b".repeat(40) },
    original: fix,
    findings: [],
    why: "Again.",
  });
  assert.equal(taskTitle(again), "Add the thing");
  assert.equal(taskTitle(original), "Add the thing");
  // Only a fix brief loses the prefix: a feature may be called "Fix task 2: …" by a person.
  assert.equal(taskTitle({ ...original, title: "Fix task 2: typo" }), "Fix task 2: typo");
});
