import assert from "node:assert/strict";
import { InputError } from "../lib/errors.ts";
import { parseBrief } from "../lib/protocol/brief.ts";
import { briefSlug, withStatus, writeBrief } from "../lib/protocol/brief_write.ts";
import type { Brief } from "../lib/protocol/types.ts";

const FILE = "NEXT-STEPS.md";

const feature: Brief = {
  status: "OPEN",
  task: 12,
  title: "Add the relay status command",
  branch: "task-12",
  kind: "feature",
  goal: "Print one line per task.\n\nKeep it short.",
  doneWhen: "- `relay status` prints the open task\n- exit code 0",
  bar: ["deno task test", "deno check main.ts"],
  extra: [],
};

const briefs: Brief[] = [
  feature,
  {
    status: "DONE",
    task: 13,
    title: "Fix: status crashes on an empty inbox",
    branch: "task-12",
    kind: "fix",
    fixes: 12,
    goal: "Handle the empty inbox.\n\n```ts\n## not a section\nconst x = 1;\n```",
    doneWhen: "The crash is gone.",
    bar: ["deno test tests/status_test.ts", "grep -q 'a```b' README.md"],
    outOfScope: "Anything about the forge.",
    extra: [
      { heading: "Notes", body: "~~~\nliteral ~~~ fence\n~~~" },
      { heading: "Empty", body: "" },
    ],
  },
  {
    status: "QUEUED",
    task: 0,
    title: "Later work",
    branch: "",
    kind: "feature",
    goal: "  indented first line\nsecond",
    doneWhen: "x",
    bar: [`echo "quoted | pipe"`],
    outOfScope: "",
    extra: [{ heading: "Context: why", body: "Because." }],
  },
  { ...feature, task: 14, branch: "task-14", acceptance: "human" },
];

Deno.test("parseBrief() reads back what writeBrief() wrote, for varied briefs", () => {
  for (const brief of briefs) {
    const text = writeBrief(brief);
    const parsed = parseBrief(text, FILE, { allowMissingTask: true, allowMissingBranch: true });
    assert.deepEqual(parsed, brief);
    assert.equal(writeBrief(parsed), text);
  }
});

Deno.test("writeBrief() writes the canonical form", () => {
  assert.equal(
    writeBrief(briefs[1] as Brief),
    [
      "Status: DONE",
      "Task: 13",
      "Title: Fix: status crashes on an empty inbox",
      "Branch: task-12",
      "Kind: fix",
      "Fixes: 12",
      "",
      "## Goal",
      "",
      "Handle the empty inbox.",
      "",
      "```ts",
      "## not a section",
      "const x = 1;",
      "```",
      "",
      "## Done when",
      "",
      "The crash is gone.",
      "",
      "## Verification bar",
      "",
      "````",
      "deno test tests/status_test.ts",
      "grep -q 'a```b' README.md",
      "````",
      "",
      "## Out of scope",
      "",
      "Anything about the forge.",
      "",
      "## Notes",
      "",
      "~~~",
      "literal ~~~ fence",
      "~~~",
      "",
      "## Empty",
      "",
    ].join("\n"),
  );
});

const messy = [
  "\uFEFFstatus: open  ",
  "kind: Feature",
  "TITLE:   Add the relay status command   ",
  "branch: task-12",
  "task: 12",
  "",
  "",
  "## goal  ",
  "",
  "Print one line per task.   ",
  "",
  "Keep it short.",
  "",
  "",
  "## Done When ##",
  "- `relay status` prints the open task",
  "- exit code 0",
  "##  verification   bar",
  "~~~sh",
  "  deno task test  ",
  "",
  "deno check main.ts",
  "~~~",
  "",
].join("\r\n");

Deno.test("parseBrief() tolerates BOM, CRLF, trailing spaces, case and key order", () => {
  assert.deepEqual(parseBrief(messy, FILE), feature);
});

Deno.test("writeBrief() of a messy brief is canonical and stable", () => {
  const canonical = writeBrief(parseBrief(messy, FILE));
  assert.equal(canonical, writeBrief(feature));
  assert.ok(canonical.startsWith("Status: OPEN\nTask: 12\n"));
  assert.ok(!canonical.includes("\r"));
  assert.ok(canonical.endsWith("```\n") && !canonical.endsWith("\n\n"));
  assert.equal(writeBrief(parseBrief(canonical, FILE)), canonical);
});

Deno.test("parseBrief() gives task 0 and no branch to an unnumbered inbox entry when allowed", () => {
  const text = "Status: QUEUED\nTitle: Later\nKind: feature\n\n## Goal\ng\n## Done when\nd\n" +
    "## Verification bar\n```\ndeno test\n```\n";
  const brief = parseBrief(text, ".relay/inbox/0001-later.md", {
    allowMissingTask: true,
    allowMissingBranch: true,
  });
  assert.equal(brief.task, 0);
  assert.equal(brief.branch, "");
  assert.equal(brief.status, "QUEUED");
});

Deno.test("parseBrief() defaults the branch to task-<n>, or to the fixed task's branch for a fix", () => {
  const body = "\n## Goal\ng\n## Done when\nd\n## Verification bar\n```\ndeno test\n```\n";
  const opts = { allowMissingBranch: true };
  assert.equal(
    parseBrief(`Status: OPEN\nTask: 7\nTitle: t\nKind: feature\n${body}`, FILE, opts).branch,
    "task-7",
  );
  assert.equal(
    parseBrief(`Status: OPEN\nTask: 8\nTitle: t\nKind: fix\nFixes: 7\n${body}`, FILE, opts).branch,
    "task-7",
  );
});

function briefText(header: string[], sections?: string[]): string {
  const body = sections ??
    [
      "## Goal",
      "Do it.",
      "",
      "## Done when",
      "It is done.",
      "",
      "## Verification bar",
      "```",
      "deno test",
      "```",
    ];
  return [...header, "", ...body, ""].join("\n");
}

const HEADER = ["Status: OPEN", "Task: 3", "Title: Thing", "Branch: task-3", "Kind: feature"];

const malformed: { name: string; text: string; line: number; problem: RegExp; fix: RegExp }[] = [
  {
    name: "two Status lines",
    text: briefText([...HEADER.slice(0, 3), "Status: DONE", ...HEADER.slice(3)]),
    line: 4,
    problem: /second "Status:" line \(the first is on line 1\)/,
    fix: /keep one "Status:" line, on line 1,/,
  },
  {
    name: "an unknown status",
    text: briefText(["Status: WIP", ...HEADER.slice(1)]),
    line: 1,
    problem: /unknown status "WIP"/,
    fix: /Status: OPEN/,
  },
  {
    name: "a missing Status line",
    text: briefText(HEADER.slice(1)),
    line: 1,
    problem: /first line is not a "Status:" line/,
    fix: /make line 1 "Status: OPEN"/,
  },
  {
    name: "a Status line that is not first",
    text: briefText([HEADER[1] as string, HEADER[0] as string, ...HEADER.slice(2)]),
    line: 2,
    problem: /"Status:" line is not the first line/,
    fix: /move it to line 1/,
  },
  {
    name: "a missing Task line",
    text: briefText(HEADER.filter((l) => !l.startsWith("Task"))),
    line: 1,
    problem: /no "Task:" line/,
    fix: /Task: <number>/,
  },
  {
    name: "a non-numeric Task",
    text: briefText(HEADER.map((l) => (l.startsWith("Task") ? "Task: three" : l))),
    line: 2,
    problem: /Task is "three", not a task number/,
    fix: /Task: 12/,
  },
  {
    name: "an unknown Kind",
    text: briefText(HEADER.map((l) => (l.startsWith("Kind") ? "Kind: chore" : l))),
    line: 5,
    problem: /unknown kind "chore"/,
    fix: /Kind: feature" or "Kind: fix/,
  },
  {
    name: "a fix without Fixes",
    text: briefText(HEADER.map((l) => (l.startsWith("Kind") ? "Kind: fix" : l))),
    line: 5,
    problem: /fix brief has no "Fixes:" line/,
    fix: /Fixes: <number/,
  },
  {
    name: "Fixes on a feature",
    text: briefText([...HEADER, "Fixes: 2"]),
    line: 6,
    problem: /"Fixes:" line on a brief whose kind is "feature"/,
    fix: /delete the "Fixes:" line/,
  },
  {
    name: "an Acceptance that waives a person",
    text: briefText([...HEADER, "Acceptance: auto"]),
    line: 6,
    problem: /unknown acceptance "auto"/,
    fix: /Acceptance: human" to have a person accept this task, or delete the line/,
  },
  {
    name: "an unknown header key",
    text: briefText([...HEADER, "Owner: me"]),
    line: 6,
    problem: /unknown header key "Owner"/,
    fix: /use only "Status", "Task"/,
  },
  {
    name: "a missing Goal section",
    text: briefText(HEADER, [
      "## Done when",
      "x",
      "## Verification bar",
      "```",
      "deno test",
      "```",
    ]),
    line: 12,
    problem: /no "## Goal" section/,
    fix: /add a "## Goal" section/,
  },
  {
    name: "a missing Done when section",
    text: briefText(HEADER, ["## Goal", "x", "## Verification bar", "```", "deno test", "```"]),
    line: 12,
    problem: /no "## Done when" section/,
    fix: /checkable terms/,
  },
  {
    name: "a missing Verification bar section",
    text: briefText(HEADER, ["## Goal", "x", "## Done when", "y"]),
    line: 10,
    problem: /no "## Verification bar" section/,
    fix: /one fenced block/,
  },
  {
    name: "a bar with no fenced block",
    text: briefText(HEADER, ["## Goal", "x", "## Done when", "y", "## Verification bar", ""]),
    line: 11,
    problem: /"## Verification bar" has no fenced block/,
    fix: /add a fenced block/,
  },
  {
    name: "a bar whose fenced block is empty",
    text: briefText(HEADER, [
      "## Goal",
      "x",
      "## Done when",
      "y",
      "## Verification bar",
      "```",
      "  ",
      "```",
    ]),
    line: 12,
    problem: /fenced block in "## Verification bar" is empty/,
    fix: /one per line/,
  },
  {
    name: "a bar command given as bare text",
    text: briefText(HEADER, [
      "## Goal",
      "x",
      "## Done when",
      "y",
      "## Verification bar",
      "deno test",
    ]),
    line: 12,
    problem: /text outside the fenced block/,
    fix: /only the fenced block/,
  },
  {
    name: "duplicate sections",
    text: briefText(HEADER, [
      "## Goal",
      "x",
      "## Done when",
      "y",
      "## goal",
      "z",
      "## Verification bar",
      "```",
      "deno test",
      "```",
    ]),
    line: 11,
    problem: /second "## goal" section \(the first is on line 7\)/,
    fix: /merge the two sections/,
  },
  {
    name: "a bar command that needs a shell",
    text: briefText(HEADER, [
      "## Goal",
      "x",
      "## Done when",
      "y",
      "## Verification bar",
      "```",
      "deno test",
      "",
      "deno test | tee log",
      "```",
    ]),
    line: 15,
    problem: /Cannot use verification command "deno test \| tee log": it contains "\|" \(a pipe\)/,
    fix: /scripts\/check\.sh/,
  },
  {
    name: "an unterminated fence",
    text: briefText(HEADER, [
      "## Goal",
      "x",
      "## Done when",
      "y",
      "## Verification bar",
      "```",
      "deno test",
    ]),
    line: 12,
    problem: /never closed/,
    fix: /end the block with a line "```"/,
  },
  {
    name: "prose before the first section",
    text: briefText([...HEADER, "", "Some intro text."]),
    line: 7,
    problem: /unexpected line "Some intro text\." in the header/,
    fix: /under a "## " section/,
  },
];

for (const bad of malformed) {
  Deno.test(`parseBrief() rejects ${bad.name} with the file, line and fix`, () => {
    assert.throws(
      () => parseBrief(bad.text, FILE),
      (err: unknown) => {
        assert.ok(err instanceof InputError, String(err));
        assert.equal(err.location.file, FILE);
        assert.equal(err.location.line, bad.line, err.message);
        assert.ok(err.message.startsWith(`${FILE}:${bad.line}: Cannot `), err.message);
        assert.match(err.message, bad.problem);
        assert.ok(err.fix, "has a fix");
        assert.match(err.fix, bad.fix);
        assert.match(err.message, /\n {2}fix: /);
        return true;
      },
    );
  });
}

Deno.test("parseBrief() reports a bad bar command on its own line in a CRLF file", () => {
  const text = briefText(HEADER, [
    "## Goal",
    "x",
    "## Done when",
    "y",
    "## Verification bar",
    "```",
    "echo $(id)",
    "```",
  ]).replaceAll("\n", "\r\n");
  assert.throws(
    () => parseBrief(text, FILE),
    (err: unknown) => {
      assert.ok(err instanceof InputError);
      assert.match(
        err.message,
        /^NEXT-STEPS\.md:13: Cannot use verification command .*"\$\(" \(command substitution\)/,
      );
      return true;
    },
  );
});

Deno.test("withStatus() changes only the status", () => {
  const done = withStatus(feature, "DONE");
  assert.equal(done.status, "DONE");
  assert.deepEqual({ ...done, status: "OPEN" }, feature);
  assert.equal(feature.status, "OPEN");
});

Deno.test("briefSlug() makes a short lower-case dashed slug that is never empty", () => {
  assert.equal(briefSlug("Add the relay status command"), "add-the-relay-status-command");
  assert.equal(briefSlug("  Fix: crash on `relay poll`!! "), "fix-crash-on-relay-poll");
  assert.equal(briefSlug("Café déjà vu"), "cafe-deja-vu");
  assert.equal(briefSlug("!!!"), "brief");
  assert.equal(briefSlug(""), "brief");
  const long = briefSlug("a very long title that keeps going past the forty character limit");
  assert.ok(long.length <= 40);
  assert.match(long, /^[a-z0-9]+(-[a-z0-9]+)*$/);
  assert.equal(long, "a-very-long-title-that-keeps-going-past");
});

Deno.test("parseBrief() wants a task branch that belongs to the task (or, on a fix, to the task it fixes)", () => {
  const base = "Status: OPEN\nTask: 3\nTitle: T\nKind: feature\n";
  const body = "\n## Goal\ng\n\n## Done when\nd\n\n## Verification bar\n```\ntrue\n```\n";
  assert.throws(
    () => parseBrief(`${base}Branch: feature/x\n${body}`, "NEXT-STEPS.md"),
    /NEXT-STEPS\.md:5: .*not a task branch/,
  );
  assert.throws(
    () => parseBrief(`${base}Branch: task-4\n${body}`, "NEXT-STEPS.md"),
    /does not belong to task 3/,
  );
  assert.equal(parseBrief(`${base}Branch: task-3\n${body}`, "NEXT-STEPS.md").branch, "task-3");
  const fix = "Status: OPEN\nTask: 5\nTitle: T\nKind: fix\nFixes: 3\n";
  assert.equal(parseBrief(`${fix}Branch: task-3\n${body}`, "NEXT-STEPS.md").branch, "task-3");
  assert.throws(
    () => parseBrief(`${fix}Branch: task-5\n${body}`, "NEXT-STEPS.md"),
    /the task this brief fixes/,
  );
});
