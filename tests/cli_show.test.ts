/**
 * `relay show <task>` on a hand-written log: one task sent back once (FAIL → fix round → PASS →
 * merge), as text and as JSON; bad arguments and a malformed log exit 2 through the real CLI.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT } from "./helpers/scene.ts";
import { show } from "../lib/cli/show.ts";
import { describeError } from "../lib/cli/report.ts";
import { eventsPath } from "../lib/task/log.ts";

const HEAD1 = "b1".repeat(20);
const HEAD2 = "d2".repeat(20);
const HEAD3 = "e3".repeat(20);
const FINDINGS = [
  { severity: "blocker", text: 'the greeting is misspelled: "Helo"' },
  { severity: "nit", text: "the test name\nspans two lines" },
];

/** [time, run, role, event, brief, round, details] */
type Row = [string, string | null, string, string, number, number, Record<string, unknown>];

const STORY: Row[] = [
  ["2025-03-01T23:40:00Z", "r1", "relay", "brief-opened", 1, 1, {
    title: "Add a greeting",
    branch: "task-1",
    kind: "task",
  }],
  ["2025-03-01T23:40:01Z", "r1", "relay", "attempt-prepared", 1, 1, {
    attempt: 1,
    of: 3,
    worktree: "/w/task-1",
    base: "a0".repeat(20),
  }],
  ["2025-03-01T23:40:01Z", "r1", "executor", "turn-started", 1, 1, { role: "executor", pid: 42 }],
  ["2025-03-01T23:43:13Z", "r1", "executor", "turn-ended", 1, 1, {
    role: "executor",
    exit: 0,
    signal: null,
    timedOut: false,
    durationMs: 192_000,
  }],
  ["2025-03-01T23:43:14Z", "r1", "relay", "committed", 1, 1, { outcome: "SHIPPED", head: HEAD1 }],
  ["2025-03-01T23:43:30Z", "r1", "relay", "bar-ran", 1, 1, {
    head: HEAD1,
    passed: true,
    results: [
      { command: "deno test", exit: 0, durationMs: 9000 },
      { command: "deno lint", exit: 0, durationMs: 2000 },
    ],
  }],
  ["2025-03-01T23:43:31Z", "r1", "relay", "branch-pushed", 1, 1, { head: HEAD1, ok: true }],
  ["2025-03-01T23:43:32Z", "r1", "relay", "pr-opened", 1, 1, { pr: "#1" }],
  ["2025-03-01T23:43:33Z", "r1", "relay", "paperwork-committed", 1, 1, {
    sha: "c1".repeat(20),
    outcome: "SHIPPED",
  }],
  ["2025-03-01T23:43:34Z", "r1", "relay", "paperwork-pushed", 1, 1, {}],
  ["2025-03-01T23:43:34Z", "r1", "relay", "attempt-finished", 1, 1, {
    outcome: "SHIPPED",
    head: HEAD1,
    pr: "#1",
  }],
  ["2025-03-01T23:45:00Z", "r2", "relay", "scope-checked", 1, 1, {
    result: "PASS",
    reason: "only product files",
  }],
  ["2025-03-01T23:46:00Z", "r2", "reviewer", "turn-ended", 1, 1, {
    role: "reviewer",
    exit: 0,
    signal: null,
    timedOut: false,
    durationMs: 60_000,
  }],
  ["2025-03-01T23:46:01Z", "r2", "reviewer", "verdict", 1, 1, {
    head: HEAD1,
    verdict: "FAIL",
    findings: FINDINGS,
  }],
  ["2025-03-01T23:46:02Z", "r2", "relay", "gate-decided", 1, 1, {
    decision: "REFUSE",
    checks: [
      { name: "scope", result: "PASS", reason: "only product files" },
      { name: "verdict", result: "REFUSE", reason: "the reviewer said FAIL" },
    ],
  }],
  ["2025-03-01T23:46:03Z", "r2", "relay", "sent-back", 1, 1, {
    fix: 3,
    round: 2,
    why: "review FAIL at b1b1b1b1b1b1",
    findings: FINDINGS,
  }],
  ["2025-03-02T00:01:00Z", "r3", "relay", "brief-opened", 3, 2, {
    title: "Fix: Add a greeting",
    branch: "task-1",
    kind: "fix",
    fixes: 1,
  }],
  ["2025-03-02T00:01:01Z", "r3", "relay", "attempt-prepared", 3, 2, {
    attempt: 1,
    of: 3,
    worktree: "/w/task-1",
    base: "a1".repeat(20),
  }],
  ["2025-03-02T00:01:46Z", "r3", "executor", "turn-ended", 3, 2, {
    role: "executor",
    exit: 0,
    signal: null,
    timedOut: false,
    durationMs: 45_000,
  }],
  ["2025-03-02T00:01:47Z", "r3", "relay", "committed", 3, 2, { outcome: "SHIPPED", head: HEAD2 }],
  ["2025-03-02T00:02:00Z", "r3", "relay", "bar-ran", 3, 2, {
    head: HEAD2,
    passed: false,
    results: [
      { command: "deno test", exit: 1, durationMs: 13_000 },
      { command: "deno lint", exit: 0, durationMs: 2000 },
    ],
  }],
  ["2025-03-02T00:02:01Z", "r3", "relay", "attempt-failed", 3, 2, {
    attempt: 1,
    of: 3,
    reason: "the bar failed: deno test exited 1",
  }],
  ["2025-03-02T00:03:00Z", "r4", "relay", "attempt-prepared", 3, 2, {
    attempt: 2,
    of: 3,
    worktree: "/w/task-1",
    base: "a1".repeat(20),
  }],
  ["2025-03-02T00:04:00Z", "r4", "executor", "turn-ended", 3, 2, {
    role: "executor",
    exit: null,
    signal: "SIGTERM",
    timedOut: true,
    durationMs: 60_000,
  }],
  ["2025-03-02T00:04:01Z", "r4", "relay", "held", 3, 2, {
    reason: "the executor of run r4 timed out",
    next: 'Look at the worktree, then run "relay resume".',
  }],
  ["2025-03-02T00:09:00Z", null, "person", "resumed", 3, 2, {
    reason: "the executor of run r4 timed out",
    outcome: "run abandoned",
  }],
  ["2025-03-02T00:09:01Z", "r4", "relay", "attempt-failed", 3, 2, {
    attempt: 2,
    of: 3,
    reason: "abandoned",
  }],
  ["2025-03-02T00:10:00Z", "r5", "relay", "attempt-finished", 3, 2, {
    outcome: "SHIPPED",
    head: HEAD3,
    pr: "#1",
  }],
  ["2025-03-02T00:12:00Z", "r6", "reviewer", "verdict", 3, 2, {
    head: HEAD3,
    verdict: "PASS",
    findings: [],
  }],
  ["2025-03-02T00:12:01Z", "r6", "relay", "gate-decided", 3, 2, {
    decision: "MERGE",
    checks: [{ name: "verdict", result: "PASS", reason: "PASS at e3e3e3e3e3e3" }],
  }],
  ["2025-03-02T00:12:02Z", "r6", "relay", "merged", 3, 2, { sha: "f4".repeat(20), by: "relay" }],
  ["2025-03-02T00:12:03Z", "r6", "relay", "promoted", 3, 2, { task: 4, title: "Next thing" }],
  ["2025-03-02T00:12:04Z", "r6", "relay", "from-the-future", 3, 2, { x: 1 }],
];

const EXPECTED = `task 1 — Add a greeting [task-1]
round 1 (brief 1)
2025-03-01 (UTC)
23:40:00  brief 1 opened: Add a greeting [task-1]
23:40:01  attempt 1 of 3: on a0a0a0a0a0a0, in /w/task-1
23:43:13    executor turn 3m12s, exit 0
23:43:14    committed: SHIPPED at b1b1b1b1b1b1
23:43:30    bar: 2/2 passed at b1b1b1b1b1b1
23:43:31    pushed b1b1b1b1b1b1
23:43:32    PR #1 opened
23:43:33    paperwork committed: c1c1c1c1c1c1 (SHIPPED)
23:43:34    paperwork pushed
23:43:34  attempt finished: SHIPPED at b1b1b1b1b1b1, PR #1
23:45:00  scope: PASS — only product files
23:46:00  reviewer turn 1m, exit 0
23:46:01  verdict: FAIL at b1b1b1b1b1b1
          - [blocker] the greeting is misspelled: "Helo"
          - [nit] the test name spans two lines
23:46:02  gate: REFUSE
          verdict: REFUSE — the reviewer said FAIL
23:46:03  sent back as fix brief 3 (round 2): review FAIL at b1b1b1b1b1b1
round 2 (fix brief 3: review FAIL at b1b1b1b1b1b1)
2025-03-02 (UTC)
00:01:00  fix brief 3 opened (fixes task 1): Fix: Add a greeting [task-1]
00:01:01  attempt 1 of 3: on a1a1a1a1a1a1, in /w/task-1
00:01:46    executor turn 45s, exit 0
00:01:47    committed: SHIPPED at d2d2d2d2d2d2
00:02:00    bar: 1/2 passed at d2d2d2d2d2d2; failed: deno test (exit 1, 13s)
00:02:01  attempt 1 of 3 failed: the bar failed: deno test exited 1
00:03:00  attempt 2 of 3: on a1a1a1a1a1a1, in /w/task-1
00:04:00    executor turn 1m, timed out, signal SIGTERM
00:04:01    HOLD: the executor of run r4 timed out
            next: Look at the worktree, then run "relay resume".
00:09:00    resumed by a person: the executor of run r4 timed out (run abandoned)
00:09:01  attempt 2 of 3 failed: abandoned
00:10:00  attempt finished: SHIPPED at e3e3e3e3e3e3, PR #1
00:12:00  verdict: PASS at e3e3e3e3e3e3
00:12:01  gate: MERGE
00:12:02  merged f4f4f4f4f4f4 by relay
00:12:03  promoted task 4: Next thing
00:12:04  from-the-future (relay) {"x":1}
`;

/** A folder with a `.git` dir (all relay show needs) and task 1's log written from `rows`. */
async function repoWithLog(rows: Row[]): Promise<AsyncDisposable & { path: string }> {
  const path = await Deno.makeTempDir({ prefix: "relay-show-" });
  const git = join(path, ".git");
  await Deno.mkdir(join(git, "relay", "tasks"), { recursive: true });
  const lines = rows.map(([at, run, role, event, brief, round, details]) =>
    JSON.stringify({ v: 1, at, run, role, event, brief, round, details })
  );
  await Deno.writeTextFile(eventsPath(git, 1), lines.map((l) => `${l}\n`).join(""));
  return {
    path,
    [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }).catch(() => {}),
  };
}

/** Runs `show` in this process; returns its exit code (or the one main.ts maps its error to) and output. */
async function runShow(args: string[], cwd: string): Promise<{ code: number; stdout: string }> {
  const lines: string[] = [];
  const original = console.log;
  console.log = (...parts: unknown[]) => lines.push(parts.join(" "));
  try {
    const code = await show(args, { cwd });
    return { code, stdout: lines.map((l) => `${l}\n`).join("") };
  } catch (err) {
    return { code: describeError(err).code, stdout: describeError(err).text };
  } finally {
    console.log = original;
  }
}

/** The real CLI, as cron or a person runs it. */
async function relay(args: string[], cwd: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      `--config=${join(ROOT, "deno.json")}`,
      "-P=relay",
      join(ROOT, "main.ts"),
      ...args,
    ],
    cwd,
    env: { NO_COLOR: "1" },
    stdin: "null",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("relay show tells a task's story by round: FAIL, the fix round, PASS, the merge", async () => {
  await using repo = await repoWithLog(STORY);
  const res = await runShow(["1"], repo.path);
  assert.equal(res.code, 0, res.stdout);
  assert.equal(res.stdout, EXPECTED);
});

Deno.test("relay show <fix brief> shows the task it is a round of", async () => {
  await using repo = await repoWithLog(STORY);
  const res = await runShow(["3"], repo.path);
  assert.equal(res.code, 0, res.stdout);
  assert.equal(res.stdout, `(brief 3 is a fix round of task 1)\n${EXPECTED}`);
});

Deno.test("relay show --json gives the rounds and the raw events", async () => {
  await using repo = await repoWithLog(STORY);
  const res = await runShow(["1", "--json"], repo.path);
  assert.equal(res.code, 0, res.stdout);
  const data = JSON.parse(res.stdout);
  assert.deepEqual(Object.keys(data), ["task", "title", "branch", "rounds", "events"]);
  assert.equal(data.task, 1);
  assert.equal(data.title, "Add a greeting");
  assert.equal(data.branch, "task-1");
  assert.deepEqual(
    data.rounds.map((r: Record<string, unknown>) => [r.round, r.brief, r.why]),
    [[1, 1, undefined], [2, 3, "review FAIL at b1b1b1b1b1b1"]],
  );
  assert.equal(data.rounds[0].events.length + data.rounds[1].events.length, STORY.length);
  assert.equal(data.events.length, STORY.length);
  assert.deepEqual(data.events[0], {
    v: 1,
    at: "2025-03-01T23:40:00Z",
    run: "r1",
    role: "relay",
    event: "brief-opened",
    brief: 1,
    round: 1,
    details: { title: "Add a greeting", branch: "task-1", kind: "task" },
  });
  assert.deepEqual(data.rounds[1].events.at(-1).event, "from-the-future");
});

Deno.test("relay show on a task without a timeline exits 2 and names the tasks that have one", async () => {
  await using repo = await repoWithLog(STORY.slice(0, 1));
  const res = await runShow(["7"], repo.path);
  assert.equal(res.code, 2);
  assert.match(
    res.stdout,
    /no events recorded for task 7 \(relay records a task's timeline from its first tick on\); tasks with a timeline: 1/,
  );
});

Deno.test("relay show through the CLI: a malformed line, an unknown flag, a word for a task all exit 2", async () => {
  await using repo = await repoWithLog(STORY.slice(0, 2));
  const log = eventsPath(join(repo.path, ".git"), 1);
  await Deno.writeTextFile(log, "not json\n", { append: true });

  const bad = await relay(["show", "1"], repo.path);
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, new RegExp(`${log}:3: Cannot read the task's event log`));
  assert.match(
    bad.stderr,
    /fix: the log is append-only: move the file aside; relay starts a new one/,
  );

  const flag = await relay(["show", "1", "--verbose"], repo.path);
  assert.equal(flag.code, 2);
  assert.match(flag.stderr, /--verbose/);
  assert.match(flag.stderr, /Run "relay show --help" for usage\./);

  const word = await relay(["show", "one"], repo.path);
  assert.equal(word.code, 2);
  assert.match(word.stderr, /<task> must be a task number/);

  const none = await relay(["show"], repo.path);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /missing argument: <task>/);
});

Deno.test("relay show says a turn that ended while no tick watched it ran for a time nobody saw, not 0s", async () => {
  await using repo = await repoWithLog([
    STORY[0]!,
    STORY[1]!,
    STORY[2]!,
    ["2025-03-01T23:52:00Z", "r1", "executor", "turn-ended", 1, 1, {
      role: "executor",
      exit: null,
      signal: null,
      timedOut: false,
      durationMs: 0,
      interrupted: true,
    }],
  ]);
  const res = await runShow(["1"], repo.path);
  assert.equal(res.code, 0, res.stdout);
  assert.match(
    res.stdout,
    /^23:52:00 +executor turn of unknown length \(it ended while no tick watched it\), interrupted$/m,
  );
  assert.doesNotMatch(res.stdout, /turn 0s/);
});
