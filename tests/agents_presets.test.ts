import assert from "node:assert/strict";
import { buildInvocation } from "../lib/agents/presets.ts";
import { executorPrompt, REPORT_SECTIONS } from "../lib/agents/prompt.ts";
import type { RoleSpec } from "../lib/config/profile.ts";
import { parseReport } from "../lib/protocol/report.ts";

const P = "You are the EXECUTOR for relay task 3";
const claude: RoleSpec = { vendor: "claude", model: "claude-opus-5-5", timeoutMs: 1, env: {} };
const codex: RoleSpec = { vendor: "codex", model: "gpt-6.1-sol", timeoutMs: 1, env: {} };
const user = { isRoot: false };
const root = { isRoot: true };

Deno.test("buildInvocation() runs a claude executor with --dangerously-skip-permissions when not root", () => {
  assert.deepEqual(buildInvocation("executor", claude, P, user), {
    kind: "process",
    argv: [
      "claude",
      "-p",
      P,
      "--dangerously-skip-permissions",
      "--model",
      "claude-opus-5-5",
      "--output-format",
      "json",
    ],
    env: {},
  });
});

Deno.test("buildInvocation() runs a root claude executor in acceptEdits with pre-approved tools", () => {
  assert.deepEqual(buildInvocation("executor", claude, P, root), {
    kind: "process",
    argv: [
      "claude",
      "-p",
      P,
      "--permission-mode",
      "acceptEdits",
      "--allowedTools",
      "Bash Write Edit Read",
      "--model",
      "claude-opus-5-5",
      "--output-format",
      "json",
    ],
    env: {},
  });
});

Deno.test("buildInvocation() keeps --dangerously-skip-permissions for root when the profile sets IS_SANDBOX=1", () => {
  const spec = { ...claude, env: { IS_SANDBOX: "1" } };
  const inv = buildInvocation("executor", spec, P, root);
  assert.equal(inv.kind, "process");
  if (inv.kind !== "process") return;
  assert.deepEqual(inv.argv.slice(0, 4), ["claude", "-p", P, "--dangerously-skip-permissions"]);
  assert.deepEqual(inv.env, { IS_SANDBOX: "1" });
});

Deno.test("buildInvocation() gives a claude reviewer no edit tools, root or not", () => {
  const expected = [
    "claude",
    "-p",
    P,
    "--permission-mode",
    "dontAsk",
    "--tools",
    "Read,Grep,Glob,Bash",
    "--allowedTools",
    "Read Grep Glob Bash(git diff *) Bash(git log *) Bash(git show *) Bash(git status *)",
    "--disallowedTools",
    "Bash(*--output*)",
    "--setting-sources",
    "user",
    "--model",
    "claude-opus-5-5",
    "--output-format",
    "json",
  ];
  for (const ctx of [user, root]) {
    assert.deepEqual(buildInvocation("reviewer", claude, P, ctx), {
      kind: "process",
      argv: expected,
      env: {},
    });
  }
});

Deno.test("buildInvocation() lets a claude reviewer run the exact bar commands, and nothing with parentheses", () => {
  const inv = buildInvocation("reviewer", claude, P, {
    ...user,
    allowCommands: ["deno task test", "  npm run lint ", `python3 -c "print(1)"`],
  });
  assert.equal(inv.kind, "process");
  const argv = inv.kind === "process" ? inv.argv : [];
  assert.equal(
    argv[argv.indexOf("--allowedTools") + 1],
    "Read Grep Glob Bash(git diff *) Bash(git log *) Bash(git show *) Bash(git status *)" +
      " Bash(deno task test) Bash(npm run lint)",
  );
});

Deno.test("buildInvocation() puts the claude prompt straight after -p, before any list flag", () => {
  for (const role of ["executor", "reviewer"] as const) {
    for (const ctx of [user, root]) {
      const inv = buildInvocation(role, claude, P, ctx);
      assert.ok(inv.kind === "process");
      assert.equal(inv.argv[1], "-p");
      assert.equal(inv.argv[2], P);
    }
  }
});

Deno.test("buildInvocation() runs a codex executor in workspace-write with -- before the prompt", () => {
  for (const ctx of [user, root]) {
    assert.deepEqual(buildInvocation("executor", codex, "review this", ctx), {
      kind: "process",
      argv: [
        "codex",
        "exec",
        "--sandbox",
        "workspace-write",
        "-m",
        "gpt-6.1-sol",
        "--",
        "review this",
      ],
      env: {},
    });
  }
});

Deno.test("buildInvocation() runs a codex reviewer read-only", () => {
  for (const ctx of [user, root]) {
    assert.deepEqual(buildInvocation("reviewer", codex, P, ctx), {
      kind: "process",
      argv: ["codex", "exec", "--sandbox", "read-only", "-m", "gpt-6.1-sol", "--", P],
      env: {},
    });
  }
});

Deno.test("buildInvocation() names extra writable dirs for a codex executor only", () => {
  const ctx = { isRoot: false, writableDirs: ["/srv/relay/reports", "/tmp/x"] };
  const exec = buildInvocation("executor", codex, P, ctx);
  assert.ok(exec.kind === "process");
  assert.deepEqual(exec.argv, [
    "codex",
    "exec",
    "--sandbox",
    "workspace-write",
    "-m",
    "gpt-6.1-sol",
    "--add-dir",
    "/srv/relay/reports",
    "--add-dir",
    "/tmp/x",
    "--",
    P,
  ]);
  const rev = buildInvocation("reviewer", codex, P, ctx);
  assert.ok(rev.kind === "process");
  assert.ok(!rev.argv.includes("--add-dir"));
  const cl = buildInvocation("executor", claude, P, ctx);
  assert.ok(cl.kind === "process");
  assert.ok(!cl.argv.includes("--add-dir"));
});

Deno.test("buildInvocation() falls back to the default model when a spec has none", () => {
  const inv = buildInvocation("executor", { vendor: "codex", timeoutMs: 1, env: {} }, P, user);
  assert.ok(inv.kind === "process");
  assert.deepEqual(inv.argv.slice(4, 6), ["-m", "gpt-6.1-sol"]);
});

Deno.test("buildInvocation() replaces every {prompt}, whole element or inside one", () => {
  const spec: RoleSpec = {
    vendor: "command",
    argv: ["/opt/agent", "{prompt}", "--msg={prompt}", "x{prompt}y{prompt}", "--plain"],
    timeoutMs: 1,
    env: { TOKEN: "t" },
  };
  assert.deepEqual(buildInvocation("executor", spec, "do it", root), {
    kind: "process",
    argv: ["/opt/agent", "do it", "--msg=do it", "xdo itydo it", "--plain"],
    env: { TOKEN: "t" },
  });
});

Deno.test("buildInvocation() inserts a command prompt literally, even with $& and $1 in it", () => {
  const spec: RoleSpec = { vendor: "command", argv: ["a", "<{prompt}>"], timeoutMs: 1, env: {} };
  const inv = buildInvocation("reviewer", spec, "cost $& and $1 and $$", user);
  assert.ok(inv.kind === "process");
  assert.deepEqual(inv.argv, ["a", "<cost $& and $1 and $$>"]);
});

Deno.test("buildInvocation() refuses a command role whose program is empty", () => {
  const empty: RoleSpec = { vendor: "command", argv: ["", "{prompt}"], timeoutMs: 1, env: {} };
  assert.throws(() => buildInvocation("executor", empty, P, user), /program is ""/);
  const none: RoleSpec = { vendor: "command", timeoutMs: 1, env: {} };
  assert.throws(() => buildInvocation("executor", none, P, user), /argv is empty/);
});

Deno.test("buildInvocation() refuses an empty prompt or one that starts with a dash for claude and codex", () => {
  assert.throws(() => buildInvocation("executor", claude, "  ", user), /prompt is empty/);
  assert.throws(() => buildInvocation("reviewer", codex, "--help", user), /starts with "-"/);
});

Deno.test("buildInvocation() returns demo for the demo vendor", () => {
  const spec: RoleSpec = { vendor: "demo", timeoutMs: 1, env: { A: "b" } };
  assert.deepEqual(buildInvocation("executor", spec, P, root), { kind: "demo" });
});

Deno.test("buildInvocation() copies the profile env instead of sharing it", () => {
  const spec = { ...codex, env: { A: "1" } };
  const inv = buildInvocation("executor", spec, P, user);
  assert.ok(inv.kind === "process");
  inv.env["B"] = "2";
  assert.deepEqual(spec.env, { A: "1" });
});

const CTX = {
  task: 12,
  title: "Add the\nlogin page",
  briefPath: "/srv/wt/task-12/NEXT-STEPS.md",
  reportPath: "/srv/relay/reports/task-12.md",
  branch: "task-12",
  bar: ["deno test -A", "grep -c TODO src/login.ts"],
};

Deno.test("executorPrompt() names the role, task, branch and where the brief and report are", () => {
  const text = executorPrompt(CTX);
  assert.ok(text.startsWith("You are the EXECUTOR for relay task 12: Add the login page\n"));
  assert.match(text, /on branch task-12/);
  assert.match(text, /\$RELAY_BRIEF \(\/srv\/wt\/task-12\/NEXT-STEPS\.md\)/);
  assert.match(text, /\$RELAY_REPORT \(\/srv\/relay\/reports\/task-12\.md\)/);
});

Deno.test("executorPrompt() states the built-in guarantees", () => {
  const text = executorPrompt(CTX);
  for (
    const rule of [
      /Work only inside this worktree/,
      /You may commit on task-12/,
      /Never merge, never push, never switch or create branches/,
      /Never touch the primary checkout or the main branch/,
      /Do not edit NEXT-STEPS\.md, COWORK-STATUS\.md or anything under \.relay\//,
      /except for writing the report at \$RELAY_REPORT\. Never commit the report/,
      /"verified".*without the pasted output counts as a failed report/,
      /## Pushback/,
      /Outcome: BLOCKED/,
    ]
  ) assert.match(text, rule);
});

Deno.test("executorPrompt() in strict mode says relay commits, not the agent", () => {
  const text = executorPrompt({ ...CTX, relayCommits: true });
  assert.match(text, /Do not commit: relay commits your files on task-12 after your turn/);
  assert.doesNotMatch(text, /You may commit/);
  assert.match(text, /Never merge, never push, never switch or create branches/);
});

Deno.test("executorPrompt() shows the report skeleton with one block per bar command", () => {
  const text = executorPrompt(CTX);
  const skeleton = text.slice(text.indexOf("Task: 12\n"));
  assert.ok(
    skeleton.startsWith(
      "Task: 12\nOutcome: SHIPPED\nBranch: task-12\nHead:\nPR:\n\n## What shipped\n",
    ),
  );
  const headings = [...skeleton.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
  assert.deepEqual(headings, [...REPORT_SECTIONS]);
  assert.match(
    skeleton,
    /### `deno test -A`\n```\n<the real output, pasted as printed>\n```\nExit: <exit code>\n\n### `grep -c TODO src\/login\.ts`\n```\n/,
  );
  assert.equal([...skeleton.matchAll(/^Exit: /gm)].length, 2);
});

Deno.test("executorPrompt() skeleton, once filled in, is a report parseReport() accepts", () => {
  const text = executorPrompt({ ...CTX, bar: ["deno test", "grep -c '`' x.md"] });
  const filled = text.slice(text.indexOf("Task: 12\n"))
    .replace("<what changed and why, briefly; or why it is BLOCKED>", "Added the page.")
    .replaceAll("<the real output, pasted as printed>", "ok | 3 passed")
    .replaceAll("Exit: <exit code>", "Exit: 0")
    .replace('<anything you did that the brief did not ask for, or "Nothing.">', "Nothing.")
    .replace('<where the brief is wrong or unclear, or "None.">', "None.");
  const report = parseReport(filled, "COWORK-STATUS.md");
  assert.equal(report.task, 12);
  assert.equal(report.outcome, "SHIPPED");
  assert.equal(report.branch, "task-12");
  assert.deepEqual(report.verification.map((r) => [r.command, r.output, r.exit]), [
    ["deno test", "ok | 3 passed", 0],
    ["grep -c '`' x.md", "ok | 3 passed", 0],
  ]);
});

Deno.test("executorPrompt() tells a retry why the earlier attempts failed", async () => {
  const { executorPrompt } = await import("../lib/agents/prompt.ts");
  const base = {
    task: 3,
    title: "T",
    briefPath: "/b",
    reportPath: "/r",
    branch: "task-3",
    bar: ["x"],
  };
  assert.doesNotMatch(executorPrompt(base), /Earlier attempts/);
  const retry = executorPrompt({
    ...base,
    previousFailures: ["the agent timed out after 60s", "invalid report:\nno output"],
  });
  assert.match(
    retry,
    /Earlier attempts at this brief failed.*\n- attempt 1: the agent timed out after 60s\n- attempt 2: invalid report: no output\n/,
  );
});
