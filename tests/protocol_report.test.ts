import assert from "node:assert/strict";
import { InputError } from "../lib/errors.ts";
import { parseReport, writeReport } from "../lib/protocol/report.ts";
import type { Report } from "../lib/protocol/types.ts";

const FILE = "COWORK-STATUS.md";

const base: Report = {
  task: 12,
  outcome: "SHIPPED",
  branch: "task-12",
  head: "",
  pr: "",
  warnings: [],
  whatShipped: "Added `relay status`.",
  verification: [
    { command: "deno task test", output: "ok | 40 passed | 0 failed", exit: 0 },
    { command: "deno check main.ts", output: "Check file:///main.ts" },
  ],
  beyond: "",
  pushback: "",
  evidence: [],
  extra: [],
};

const tricky =
  "\n\nleading blank lines\n```\nfenced in output\n```\n````\n~~~ tildes ~~~\n## not a section\n### not a command\n\ttab\ntrailing spaces   \nprogress 10%\rprogress 100%\n\n";

const reports: Report[] = [
  base,
  {
    task: 13,
    outcome: "BLOCKED",
    branch: "task-12",
    head: "0123456789abcdef0123456789abcdef01234567",
    pr: "#7",
    warnings: ["pasted exit 0 for `deno task test` but relay saw 1", "head moved during the run"],
    whatShipped: "",
    verificationNote: "I ran the bar on commit abc.",
    verification: [
      { command: "deno task test", output: tricky, exit: 1 },
      { command: "grep -q 'a`b' README.md", output: "" },
      { command: "echo '```'", output: "```", exit: 0 },
    ],
    beyond: "Renamed a helper.\n\n```ts\nconst a = 1;\n```",
    pushback: "The brief asks for two incompatible things.",
    evidence: [
      {
        command: "deno task test",
        exit: 1,
        tree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        durationMs: 12345,
        output: tricky,
      },
      {
        command: "deno check main.ts",
        exit: 124,
        tree: "abc",
        durationMs: 600000,
        output: "",
        timedOut: true,
      },
      { command: "echo '`x`'", exit: 0, tree: "abc", durationMs: 0, output: "`x`\n" },
    ],
    extra: [{ heading: "Questions", body: "- why?" }],
  },
];

Deno.test("parseReport() reads back what writeReport() wrote, for varied reports", () => {
  for (const report of reports) {
    const text = writeReport(report);
    assert.deepEqual(parseReport(text, FILE), report);
    assert.equal(writeReport(parseReport(text, FILE)), text);
  }
});

Deno.test("writeReport() keeps command output byte for byte, backticks and blank lines included", () => {
  const text = writeReport(reports[1] as Report);
  const parsed = parseReport(text, FILE);
  assert.equal(parsed.verification[0]?.output, tricky);
  assert.equal(parsed.evidence[0]?.output, tricky);
  assert.ok(
    text.includes("\n`````\n\n\nleading blank lines\n"),
    "uses a fence longer than the output's ```",
  );
  assert.equal(parsed.verification[2]?.command, "echo '```'");
  assert.equal(parsed.evidence[2]?.command, "echo '`x`'");
});

Deno.test("writeReport() writes the canonical form", () => {
  const report: Report = {
    ...base,
    warnings: ["one warning"],
    evidence: [{
      command: "deno task test",
      exit: 0,
      tree: "abc123",
      durationMs: 1500,
      output: "ok\n",
    }],
  };
  assert.equal(
    writeReport(report),
    [
      "Task: 12",
      "Outcome: SHIPPED",
      "Branch: task-12",
      "Head:",
      "PR:",
      "",
      "> relay: one warning",
      "",
      "## What shipped",
      "",
      "Added `relay status`.",
      "",
      "## Verification",
      "",
      "### `deno task test`",
      "",
      "```",
      "ok | 40 passed | 0 failed",
      "```",
      "",
      "Exit: 0",
      "",
      "### `deno check main.ts`",
      "",
      "```",
      "Check file:///main.ts",
      "```",
      "",
      "## Beyond the brief",
      "",
      "## Pushback",
      "",
      "## Relay evidence",
      "",
      "### `deno task test`",
      "",
      "Exit: 0 · tree abc123 · 1.5s",
      "",
      "```",
      "ok",
      "",
      "```",
      "",
    ].join("\n"),
  );
});

Deno.test("parseReport() tolerates BOM, CRLF, case, bare command headings and loose spacing", () => {
  const messy = [
    "\uFEFFoutcome: shipped",
    "task: 12  ",
    "branch: task-12",
    "",
    "## what shipped",
    "Added `relay status`.   ",
    "## VERIFICATION",
    "### deno task test",
    "~~~",
    "ok | 40 passed | 0 failed",
    "~~~",
    "exit: 0",
    "###   `deno check main.ts`  ",
    "```text",
    "Check file:///main.ts",
    "```",
    "",
  ].join("\r\n");
  const parsed = parseReport(messy, FILE);
  assert.deepEqual(parsed, base);
  assert.equal(writeReport(parsed), writeReport(base));
});

Deno.test("parseReport() reads relay warnings and treats a heading without a block as empty output", () => {
  const text =
    "Task: 3\nOutcome: BLOCKED\n\n> relay: first\n> Relay:  second  \n\n## Verification\n\n" +
    "Could not run it.\n\n### `deno test`\n\n## Pushback\n\nNo network.\n";
  const parsed = parseReport(text, FILE);
  assert.deepEqual(parsed.warnings, ["first", "second"]);
  assert.equal(parsed.verificationNote, "Could not run it.");
  assert.deepEqual(parsed.verification, [{ command: "deno test", output: "" }]);
  assert.equal(parsed.branch, "");
  assert.equal(parsed.pushback, "No network.");
});

const malformed: { name: string; text: string; line: number; problem: RegExp; fix: RegExp }[] = [
  {
    name: "a missing Task line",
    text: "Outcome: SHIPPED\n\n## What shipped\nx\n",
    line: 1,
    problem: /no "Task:" line/,
    fix: /Task: <number/,
  },
  {
    name: "a missing Outcome line",
    text: "Task: 4\n\n## What shipped\nx\n",
    line: 1,
    problem: /no "Outcome:" line/,
    fix: /Outcome: SHIPPED/,
  },
  {
    name: "an unknown outcome",
    text: "Task: 4\nOutcome: done\n",
    line: 2,
    problem: /unknown outcome "done"/,
    fix: /"Outcome: SHIPPED" or "Outcome: BLOCKED"/,
  },
  {
    name: "a non-numeric Task",
    text: "Task: four\nOutcome: SHIPPED\n",
    line: 1,
    problem: /Task is "four"/,
    fix: /Task: 12/,
  },
  {
    name: "a bad Exit line",
    text:
      "Task: 4\nOutcome: SHIPPED\n\n## Verification\n### `deno test`\n```\nok\n```\nExit: zero\n",
    line: 9,
    problem: /Exit line says "zero", not a number/,
    fix: /Exit: 0/,
  },
  {
    name: "an unterminated fence",
    text: "Task: 4\nOutcome: SHIPPED\n\n## Verification\n### `deno test`\n```\nok\n",
    line: 6,
    problem: /never closed/,
    fix: /longer fence/,
  },
  {
    name: "an output fence closed early by ``` in the output",
    text: "Task: 4\nOutcome: SHIPPED\n\n## Verification\n### `x`\n```\na\n```\nb\n```\n",
    line: 10,
    problem: /never closed/,
    fix: /longer fence such as "````"/,
  },
  {
    name: "prose under a command heading",
    text: "Task: 4\nOutcome: SHIPPED\n\n## Verification\n### `deno test`\nAll tests pass.\n",
    line: 6,
    problem: /unexpected text "All tests pass\." under "### `deno test`"/,
    fix: /fenced block/,
  },
  {
    name: "two blocks under one command",
    text: "Task: 4\nOutcome: SHIPPED\n\n## Verification\n### `x`\n```\na\n```\n```\nb\n```\n",
    line: 9,
    problem: /second fenced block under "### `x`"/,
    fix: /one fenced block/,
  },
  {
    name: "a bad evidence line",
    text: "Task: 4\nOutcome: SHIPPED\n\n## Relay evidence\n### `x`\nExit: 0\n```\na\n```\n",
    line: 6,
    problem: /no "Exit: <n> · tree <sha> · <seconds>s" line/,
    fix: /leave this section to relay/,
  },
  {
    name: "an unknown header key",
    text: "Task: 4\nOutcome: SHIPPED\nAgent: claude\n",
    line: 3,
    problem: /unknown header key "Agent"/,
    fix: /"Task", "Outcome"/,
  },
  {
    name: "duplicate sections",
    text: "Task: 4\nOutcome: SHIPPED\n\n## Pushback\na\n## pushback\nb\n",
    line: 6,
    problem: /second "## pushback" section \(the first is on line 4\)/,
    fix: /merge/,
  },
];

for (const bad of malformed) {
  Deno.test(`parseReport() rejects ${bad.name} with the file, line and fix`, () => {
    assert.throws(
      () => parseReport(bad.text, FILE),
      (err: unknown) => {
        assert.ok(err instanceof InputError, String(err));
        assert.equal(err.location.line, bad.line, err.message);
        assert.ok(
          err.message.startsWith(`${FILE}:${bad.line}: Cannot read the report: `),
          err.message,
        );
        assert.match(err.message, bad.problem);
        assert.ok(err.fix);
        assert.match(err.fix, bad.fix);
        return true;
      },
    );
  });
}

Deno.test("writeReport() round-trips generated outputs made of fence, heading and blank lines", () => {
  const pieces = [
    "```",
    "````",
    "~~~",
    "~~~~ x",
    "## Goal",
    "### `x`",
    "Exit: 1",
    "> relay: hi",
    "",
    "  ",
    "text",
    "\t",
    "`",
    "``x``",
    "Task: 9",
  ];
  let seed = 42;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  for (let round = 0; round < 300; round++) {
    const lines = Array.from({ length: next(8) }, () => pieces[next(pieces.length)] ?? "");
    const output = lines.join(next(2) === 0 ? "\n" : "\n\n");
    const report: Report = {
      ...base,
      verification: [{ command: "deno task test", output, exit: 0 }],
      evidence: [{
        command: "deno task test",
        exit: 0,
        tree: "abc",
        durationMs: next(100000),
        output,
      }],
    };
    assert.deepEqual(parseReport(writeReport(report), FILE), report, JSON.stringify(output));
  }
});
