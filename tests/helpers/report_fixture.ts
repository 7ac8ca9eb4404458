/**
 * Hand-built event logs for `relay report --html`'s page (lib/cli/history_html.ts): task 1 goes
 * FAIL → fix round → PASS → HOLD → resume → merge; task 2 is on HOLD now, and its agent wrote
 * markup into its title, a finding and a reason. Times are fixed, so the numbers are known.
 */
import type { LogEntry, Role } from "../../lib/task/log.ts";
import { type Timeline, timeline } from "../../lib/task/timeline.ts";
import type { Hold } from "../../lib/state/hold.ts";
import type { HistoryInput } from "../../lib/cli/history_html.ts";

/** Markup an agent might write, to be shown as text. */
export const HOSTILE = `<script>document.title="pwned"</script><img src=x onerror="alert(1)">`;

const T0 = Date.parse("2025-03-04T09:00:00Z");

function at(minutes: number): string {
  return new Date(T0 + minutes * 60_000).toISOString();
}

function ev(
  minutes: number,
  role: Role,
  event: string,
  details: Record<string, unknown>,
  round = 1,
  brief = 1,
  run: string | null = null,
): LogEntry {
  return { v: 1, at: at(minutes), run, role, event, brief, round, details };
}

const bar = { passed: true, results: [{ command: "deno task test", exit: 0, durationMs: 42_000 }] };

/** Task 1: two rounds, two executor turns (10m + 4m), a 30-minute HOLD, merged. */
export const TASK_1: LogEntry[] = [
  ev(0, "executor", "brief-opened", { title: "Greet the user", branch: "task-1", kind: "task" }),
  ev(
    0,
    "executor",
    "attempt-prepared",
    { attempt: 1, of: 2, worktree: "/w/t1", base: "a".repeat(40) },
    1,
    1,
    "r1",
  ),
  ev(0, "executor", "turn-started", { role: "executor", pid: 100 }, 1, 1, "r1"),
  ev(
    10,
    "executor",
    "turn-ended",
    { role: "executor", exit: 0, signal: null, timedOut: false, durationMs: 600_000 },
    1,
    1,
    "r1",
  ),
  ev(10, "executor", "committed", { outcome: "SHIPPED", head: "b".repeat(40) }, 1, 1, "r1"),
  ev(11, "relay", "bar-ran", { head: "b".repeat(40), ...bar }, 1, 1, "r1"),
  ev(
    11,
    "relay",
    "attempt-finished",
    { outcome: "SHIPPED", head: "b".repeat(40), pr: "#1" },
    1,
    1,
    "r1",
  ),
  ev(
    12,
    "reviewer",
    "verdict",
    {
      head: "b".repeat(40),
      verdict: "FAIL",
      findings: [{ severity: "blocker", text: "the greeting ignores the user's name" }],
    },
    1,
    1,
    "v1",
  ),
  ev(12, "planner", "sent-back", {
    fix: 2,
    round: 2,
    why: "the reviewer's verdict is FAIL",
    findings: [{ severity: "blocker", text: "the greeting ignores the user's name" }],
  }),
  ev(
    13,
    "executor",
    "brief-opened",
    { title: "Fix: Greet the user", branch: "task-1", kind: "fix", fixes: 1 },
    2,
    2,
  ),
  ev(
    13,
    "executor",
    "attempt-prepared",
    { attempt: 1, of: 2, worktree: "/w/t1", base: "a".repeat(40) },
    2,
    2,
    "r2",
  ),
  ev(
    17,
    "executor",
    "turn-ended",
    { role: "executor", exit: 0, signal: null, timedOut: false, durationMs: 240_000 },
    2,
    2,
    "r2",
  ),
  ev(
    18,
    "relay",
    "attempt-finished",
    { outcome: "SHIPPED", head: "c".repeat(40), pr: "#1" },
    2,
    2,
    "r2",
  ),
  ev(
    19,
    "reviewer",
    "verdict",
    {
      head: "c".repeat(40),
      verdict: "PASS",
      findings: [{ severity: "minor", text: "name the constant" }],
    },
    2,
    2,
    "v2",
  ),
  ev(
    19,
    "planner",
    "gate-decided",
    {
      decision: "MERGE",
      checks: [{ name: "scope", result: "PASS", reason: "product files only" }],
    },
    2,
    2,
  ),
  ev(
    20,
    "relay",
    "held",
    {
      reason: "Cannot merge task-1: pushing the merge to origin/main failed: the remote refused it",
      next: 'Check what "origin" enforces on main. Then run "relay resume".',
    },
    2,
    2,
  ),
  ev(50, "person", "resumed", { reason: "Cannot merge task-1: the remote refused it" }, 2, 2),
  ev(51, "planner", "merged", { sha: "d".repeat(40), by: "relay" }, 2, 2),
];

/** Task 2: one executor turn (5m), a hostile agent, on HOLD since minute 70. */
export const TASK_2: LogEntry[] = [
  ev(
    60,
    "executor",
    "brief-opened",
    { title: `Hostile ${HOSTILE}`, branch: "task-3", kind: "task" },
    1,
    3,
  ),
  ev(
    60,
    "executor",
    "attempt-prepared",
    { attempt: 1, of: 2, worktree: "/w/t3", base: "d".repeat(40) },
    1,
    3,
    "r3",
  ),
  ev(
    65,
    "executor",
    "turn-ended",
    { role: "executor", exit: 0, signal: null, timedOut: false, durationMs: 300_000 },
    1,
    3,
    "r3",
  ),
  ev(
    66,
    "reviewer",
    "verdict",
    {
      head: "e".repeat(40),
      verdict: "FAIL",
      findings: [{ severity: "major", text: `the page shows ${HOSTILE} to visitors` }],
    },
    1,
    3,
    "v3",
  ),
  ev(
    67,
    "planner",
    "gate-decided",
    {
      decision: "WAIT",
      checks: [{ name: "verdict", result: "WAIT", reason: `no PASS yet ${HOSTILE}` }],
    },
    1,
    3,
  ),
  ev(
    70,
    "relay",
    "held",
    { reason: `The agent wrote ${HOSTILE}`, next: "Look, then relay resume." },
    1,
    3,
  ),
];

export const HOLD_ON_TASK_3: Hold = {
  task: 3,
  reason: `The agent wrote ${HOSTILE}`,
  next: "Look, then relay resume.",
  at: at(70),
};

/** The page's input: `now` is minute 100, so task 3 has been held 30 minutes. */
export function fixtureInput(): HistoryInput & { tasks: Timeline[] } {
  return {
    tasks: [timeline(1, TASK_1), timeline(3, TASK_2)],
    hold: HOLD_ON_TASK_3,
    pause: { version: 1, at: at(90), by: "ops@host", reason: `maintenance ${HOSTILE}` },
    now: new Date(T0 + 100 * 60_000),
    name: "product",
    version: "0.1.0",
  };
}

/** A page's text as a reader sees it: style and tags dropped, entities decoded, spaces collapsed. */
export function textOf(html: string): string {
  return html
    .replace(/<style>[\s\S]*?<\/style>/g, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)))
    .replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&nbsp;/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ");
}
