import assert from "node:assert/strict";
import { checkReport } from "../lib/protocol/honesty.ts";
import { parseReport } from "../lib/protocol/report.ts";
import type { Brief, Report } from "../lib/protocol/types.ts";

const brief: Brief = {
  status: "OPEN",
  task: 5,
  title: "Add status",
  branch: "task-5",
  kind: "feature",
  goal: "g",
  doneWhen: "d",
  bar: ["deno task test", "deno  check   main.ts"],
  extra: [],
};

function report(text: string): Report {
  return parseReport(text, "COWORK-STATUS.md");
}

const HONEST = `Task: 5
Outcome: SHIPPED
Branch: task-5

## What shipped

Added status. All tests pass.

## Verification

### \`deno task test\`

\`\`\`
ok | 3 passed | 0 failed
\`\`\`

Exit: 0

### deno check main.ts

\`\`\`
Check file:///main.ts
\`\`\`

## Beyond the brief

## Pushback
`;

Deno.test("checkReport() accepts an honest SHIPPED report, matching commands after collapsing spaces", () => {
  assert.deepEqual(checkReport(report(HONEST), brief), []);
});

Deno.test("checkReport() rejects 'verified' without any pasted output and names each command", () => {
  const text = `Task: 5
Outcome: SHIPPED

## What shipped

Added status; verified, works.

## Verification

Verified locally, all good.
`;
  const problems = checkReport(report(text), brief);
  assert.ok(
    problems.some((p) => p.startsWith("No pasted output for `deno task test`")),
    problems.join("\n"),
  );
  assert.ok(problems.some((p) => p.startsWith("No pasted output for `deno  check   main.ts`")));
  assert.ok(
    problems.some((p) =>
      p.includes('"## What shipped" claims "verified"') && p.includes("`deno task test`")
    ),
  );
  assert.ok(problems.some((p) => p.includes('"## Verification" claims "Verified"')));
});

Deno.test("checkReport() rejects a report missing one command's block and names that command only", () => {
  const text = HONEST.replace(
    /### deno check main\.ts\n\n```\nCheck file:\/\/\/main\.ts\n```\n/,
    "",
  );
  const problems = checkReport(report(text), brief);
  assert.equal(problems.length, 2, problems.join("\n"));
  assert.ok(problems[0]?.startsWith("No pasted output for `deno  check   main.ts`"));
  assert.match(
    problems[1] ?? "",
    /claims "All tests pass" without pasted output for `deno {2}check {3}main\.ts`;/,
  );
  assert.ok(!problems.some((p) => p.includes("`deno task test`")));
});

Deno.test("checkReport() rejects an empty or blank output block", () => {
  const text = HONEST.replace("Check file:///main.ts", "   ");
  const problems = checkReport(report(text), brief);
  assert.ok(problems.some((p) => p.startsWith("No pasted output for `deno  check   main.ts`")));
});

Deno.test("checkReport() accepts an empty block with its Exit line for a command that prints nothing", () => {
  const text = HONEST.replace("Check file:///main.ts\n```", "```\n\nExit: 0");
  assert.match(text, /### deno check main.ts\n\n```\n```\n\nExit: 0/);
  assert.deepEqual(checkReport(report(text), brief), []);
});

Deno.test("checkReport() rejects a SHIPPED report whose pasted run failed", () => {
  const problems = checkReport(report(HONEST.replace("Exit: 0", "Exit: 1")), brief);
  assert.deepEqual(problems, [
    "The report says SHIPPED but its pasted run of `deno task test` ends with Exit: 1.",
  ]);
});

Deno.test("checkReport() rejects a report for another task or branch", () => {
  const problems = checkReport(
    report(HONEST.replace("Task: 5", "Task: 6").replace("task-5", "task-6")),
    brief,
  );
  assert.deepEqual(problems, [
    "The report is for task 6 but the brief is task 5.",
    'The report names branch "task-6" but the brief\'s branch is "task-5".',
  ]);
});

Deno.test("checkReport() accepts a BLOCKED report that explains why without pasting every command", () => {
  const text = "Task: 5\nOutcome: BLOCKED\n\n## What shipped\n\nNothing yet.\n\n## Pushback\n\n" +
    "The bar needs network access.\n";
  assert.deepEqual(checkReport(report(text), brief), []);
});

Deno.test("checkReport() rejects a BLOCKED report that explains nothing", () => {
  const problems = checkReport(report("Task: 5\nOutcome: BLOCKED\n"), brief);
  assert.deepEqual(problems, [
    'The report says BLOCKED but explains nothing: say why under "## Pushback" or "## What shipped".',
  ]);
});

Deno.test("checkReport() rejects a BLOCKED report that claims tests pass without output", () => {
  const text =
    "Task: 5\nOutcome: BLOCKED\n\n## What shipped\n\nThe feature works; tests pass.\n\n" +
    "## Pushback\n\nBlocked on review.\n";
  const problems = checkReport(report(text), brief);
  assert.equal(problems.length, 1);
  assert.match(
    problems[0] ?? "",
    /claims "works" without pasted output for `deno task test`, `deno {2}check {3}main\.ts`/,
  );
});
