/**
 * `relay report --html`'s page from hand-built logs (tests/helpers/report_fixture.ts): the summary
 * numbers, each round's events with their durations, HOLDs and resumes, and an agent's markup shown
 * as text — with nothing that could load or run.
 */
import assert from "node:assert/strict";
import { renderHistoryHtml, summarize, summaryLine } from "../lib/cli/history_html.ts";
import { fixtureInput, HOSTILE, textOf } from "./helpers/report_fixture.ts";

/** The cells of the summary table's row for `task`, as text. */
function summaryRow(html: string, task: number): string[] {
  const table = /<table class="summary">([\s\S]*?)<\/table>/.exec(html)?.[1] ?? "";
  const row = [...table.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => m[1]!)
    .find((r) => r.includes(`href="#task-${task}"`));
  assert.ok(row, `no summary row for task ${task}`);
  return [...row.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => textOf(m[1]!).trim());
}

Deno.test("summarize() adds up turns, their time, rounds, reviews, gate decisions and held time", () => {
  const input = fixtureInput();
  const [one, three] = input.tasks.map((tl) => summarize(tl, input.hold, input.now));
  assert.deepEqual(
    {
      outcome: one!.outcome,
      rounds: one!.rounds,
      attempts: one!.attempts,
      turns: one!.turns,
      turnMs: one!.turnMs,
      reviews: one!.reviews,
      holds: one!.holds,
      heldMs: one!.heldMs,
      heldNow: one!.heldNow,
      gates: one!.gates,
      span: one!.last! - one!.first!,
    },
    {
      outcome: "merged",
      rounds: 2,
      attempts: 2,
      turns: 2,
      turnMs: 14 * 60_000,
      reviews: 2,
      holds: 1,
      heldMs: 30 * 60_000,
      heldNow: false,
      gates: ["MERGE"],
      span: 51 * 60_000,
    },
  );
  // Task 3's HOLD is the one on record: held from its event until now (minute 70 to 100).
  assert.equal(three!.outcome, "held");
  assert.equal(three!.heldNow, true);
  assert.equal(three!.heldMs, 30 * 60_000);
  assert.deepEqual(three!.gates, ["WAIT"]);
  assert.equal(
    summaryLine([one!, three!]),
    "2 tasks (1 merged), 3 agent turns (19m), held 1h",
  );
  // Without the HOLD on record (cleared with no resume in this log), it ended with the log.
  assert.equal(summarize(input.tasks[1]!, null, input.now).heldMs, 0);
});

Deno.test("the page: summary table, HOLD and pause on top, each round's events with durations", () => {
  const html = renderHistoryHtml(fixtureInput());
  assert.ok(html.startsWith("<!DOCTYPE html>\n"));
  assert.match(
    html,
    /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">/,
  );
  assert.match(html, /<meta name="generator" content="relay 0\.1\.0">/);
  assert.deepEqual(summaryRow(html, 1), [
    "1",
    "Greet the user",
    "merged",
    "2",
    "2",
    "2",
    "14m",
    "2",
    "30m",
    "MERGE",
    "51m",
  ]);
  assert.deepEqual(summaryRow(html, 3).slice(2), [
    "on HOLD",
    "1",
    "1",
    "1",
    "5m",
    "1",
    "30m (still held)",
    "WAIT",
    "10m",
  ]);
  const text = textOf(html);
  assert.match(text, /All 2 1 merged 3 3 3 19m 3 1h MERGE, WAIT/);
  assert.match(text, /HOLD on task 3 since 2025-03-04 10:10:00: The agent wrote <script>/);
  assert.match(text, /Paused by ops@host since 2025-03-04 10:30:00: maintenance <script>/);

  // Task 1's rounds, as relay show words the events, with how long each step took.
  assert.match(text, /Round 1 \(brief 1\) 12m, 9 events/);
  assert.match(
    text,
    /Round 2 \(fix brief 2\) 38m, 9 events Sent back: the reviewer's verdict is FAIL/,
  );
  assert.match(text, /09:10:00 executor executor turn 10m, exit 0 10m/);
  assert.match(text, /09:11:00 relay bar: 1\/1 passed at bbbbbbbbbbbb 42s/);
  assert.match(text, /attempt finished: SHIPPED at bbbbbbbbbbbb, PR #1 11m/);
  assert.match(text, /verdict: FAIL at bbbbbbbbbbbb blocker the greeting ignores the user's name/);
  assert.match(text, /gate: MERGE 1 checks passed/);
  assert.match(
    text,
    /09:20:00 relay HOLD ?: Cannot merge task-1: pushing the merge to origin\/main failed: the remote refused it next: Check/,
  );
  assert.match(text, /09:50:00 person resumed by a person: .* held 30m/);
  assert.match(text, /merged dddddddddddd by relay/);
  // A send-back repeats the verdict's findings: listed once, under the verdict.
  assert.equal(text.split("the greeting ignores the user's name").length - 1, 1);
  // A turn-started whose end is recorded is not a row of its own.
  assert.doesNotMatch(text, /turn started/);
  // HOLD and resume rows are marked for the eye, with the HOLD's whole next step.
  assert.match(html, /<tr class="ev held">[\s\S]*?Then run &#34;relay resume&#34;\./);
  assert.match(html, /<tr class="ev resumed">/);
  // The chart: one row a task, its turns and its HOLD placed on one axis.
  assert.equal((html.match(/<div class="row">/g) ?? []).length, 2);
  assert.match(
    html,
    /<span class="turn" style="left:0\.00%;width:10\.00%" title="agent turn 10m">/,
  );
  assert.match(html, /<span class="held" style="left:20\.00%;width:30\.00%" title="HOLD 30m">/);
});

Deno.test("an agent's markup in a title, a finding, a reason or a check is text, and nothing loads", () => {
  const html = renderHistoryHtml(fixtureInput());
  // No element an agent wrote: the only tags are the page's own.
  assert.doesNotMatch(html, /<script|<img|<iframe|<link|<object|<embed|<base/i);
  // No attribute that loads or runs anything, in any tag; links go to the page's own sections.
  assert.doesNotMatch(html, /<[^>]*\s(src|on\w+|action|srcset)=/i);
  assert.doesNotMatch(html, /href="(?!#task-\d+")|url\(|@import/i);
  const escaped = HOSTILE.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  // Title (twice: heading, summary), the HOLD banner and its row, a finding, a gate check, the pause.
  assert.ok(html.split(escaped).length - 1 >= 7, html);
  const text = textOf(html);
  assert.match(text, /Task 3 — Hostile <script>document\.title="pwned"<\/script><img src=x/);
  assert.match(text, /major the page shows <script>/);
  assert.match(text, /verdict ?: WAIT — no PASS yet <script>/);
});

Deno.test("a page with no task says so", () => {
  const html = renderHistoryHtml({
    tasks: [],
    hold: null,
    pause: null,
    now: new Date("2025-01-01T00:00:00Z"),
    name: "empty",
    version: "0.1.0",
  });
  const text = textOf(html);
  assert.match(text, /relay report — empty/);
  assert.match(text, /0 tasks, 0 merged/);
  assert.match(text, /No task has a timeline yet\./);
  assert.doesNotMatch(html, /class="chart"/);
});
