/**
 * `relay report --html`'s page: every task's event log (lib/task/log.ts, grouped
 * by lib/task/timeline.ts) as one self-contained HTML file — a summary table, a
 * timeline chart, then one section per task with each round's events as
 * `relay show` words them. Pure: timelines, the HOLD and pause on record and
 * the time in, a string out; lib/cli/history.ts reads and writes.
 *
 * Everything in a log may come from an agent (titles, findings, reasons), so
 * every text goes through esc(); the page has no script, loads nothing, and
 * says so in its Content-Security-Policy, which would also stop a script that
 * slipped through.
 */
import type { LogEntry } from "../task/log.ts";
import type { Round, Timeline } from "../task/timeline.ts";
import type { Hold } from "../state/hold.ts";
import type { Pause } from "../state/pause.ts";
import { formatDuration } from "../config/duration.ts";
import { describe } from "./show.ts";

export interface HistoryInput {
  /** The tasks to show, lowest first. */
  tasks: Timeline[];
  /** The HOLD on record, if any: its task's held time runs until `now`. */
  hold: Hold | null;
  pause: Pause | null;
  /** When the report is made. */
  now: Date;
  /** What the page is about (the repository's folder name). */
  name: string;
  /** relay's version, for the generator meta. */
  version: string;
}

/** A time span on the chart, in epoch milliseconds. */
export interface Span {
  from: number;
  to: number;
}

export interface TaskSummary {
  task: number;
  title: string | null;
  outcome: "merged" | "closed" | "held" | "open";
  rounds: number;
  attempts: number;
  /** Agent turns relay timed (turn-ended), and their total duration. */
  turns: number;
  turnMs: number;
  /** Reviewer verdicts (their turns' durations are not in the log). */
  reviews: number;
  holds: number;
  /** From each HOLD to its resume (or to `now` for the HOLD on record). */
  heldMs: number;
  heldNow: boolean;
  /** Every gate decision, in order. */
  gates: string[];
  /** First and last event (epoch ms), null for an empty log. */
  first: number | null;
  last: number | null;
  turnSpans: Span[];
  heldSpans: Span[];
}

/** What a task's log adds up to. */
export function summarize(tl: Timeline, hold: Hold | null, now: Date): TaskSummary {
  const events = tl.events;
  const times = events.map((e) => Date.parse(e.at)).filter(Number.isFinite);
  const turnSpans: Span[] = [];
  const heldSpans: Span[] = [];
  let outcome: TaskSummary["outcome"] = "open";
  let heldSince: number | null = null;
  const s: TaskSummary = {
    task: tl.task,
    title: tl.title,
    outcome,
    rounds: tl.rounds.length,
    attempts: 0,
    turns: 0,
    turnMs: 0,
    reviews: 0,
    holds: 0,
    heldMs: 0,
    heldNow: false,
    gates: [],
    first: times.length ? Math.min(...times) : null,
    last: times.length ? Math.max(...times) : null,
    turnSpans,
    heldSpans,
  };
  const endHold = (at: number) => {
    if (heldSince === null) return;
    heldSpans.push({ from: heldSince, to: Math.max(at, heldSince) });
    s.heldMs += Math.max(0, at - heldSince);
    heldSince = null;
  };
  for (const e of events) {
    const at = Date.parse(e.at);
    const d = e.details;
    switch (e.event) {
      case "attempt-prepared":
        s.attempts++;
        break;
      case "turn-ended": {
        const ms = num(d.durationMs);
        s.turns++;
        s.turnMs += ms;
        turnSpans.push({ from: at - ms, to: at });
        break;
      }
      case "verdict":
        s.reviews++;
        break;
      case "gate-decided":
        s.gates.push(str(d.decision));
        break;
      case "merged":
        outcome = "merged";
        break;
      case "closed":
        outcome = "closed";
        break;
      case "held":
        s.holds++;
        // A HOLD is recorded once; a second without a resume between changes nothing.
        heldSince ??= at;
        continue;
      case "resumed":
        endHold(at);
        continue;
    }
    // The loop went on without a resume on this task's log (a HOLD another command cleared).
    if (heldSince !== null && hold?.task !== tl.task) endHold(at);
  }
  if (heldSince !== null) {
    if (hold?.task === tl.task) {
      s.heldNow = true;
      endHold(Math.max(now.getTime(), heldSince));
    } else endHold(s.last ?? heldSince);
  }
  if (s.heldNow && outcome === "open") outcome = "held";
  s.outcome = outcome;
  return s;
}

/** The page. */
export function renderHistoryHtml(input: HistoryInput): string {
  const sums = input.tasks.map((tl) => summarize(tl, input.hold, input.now));
  const merged = sums.filter((s) => s.outcome === "merged").length;
  const body = [
    `<header><h1>relay report — ${esc(input.name)}</h1>`,
    `<p class="muted">Made ${esc(stamp(input.now))} by relay ${esc(input.version)}. ${
      sums.length === 1 ? "1 task" : `${sums.length} tasks`
    }, ${merged} merged. Times are UTC.</p></header>`,
    banners(input),
    `<section id="summary"><h2>Summary</h2>${summaryTable(sums)}</section>`,
    sums.length ? `<section id="chart"><h2>Timeline</h2>${chart(sums, input.now)}</section>` : "",
    ...input.tasks.map((tl, i) => taskSection(tl, sums[i]!)),
  ].join("\n");
  return [
    "<!DOCTYPE html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<meta name="generator" content="relay ${esc(input.version)}">`,
    `<title>relay report — ${esc(input.name)}</title>`,
    `<style>${CSS}</style>`,
    "</head>",
    "<body>",
    body,
    "</body>",
    "</html>",
    "",
  ].join("\n");
}

/** The one-line summary `relay report` prints. */
export function summaryLine(sums: TaskSummary[]): string {
  const turns = sums.reduce((n, s) => n + s.turns, 0);
  const turnMs = sums.reduce((n, s) => n + s.turnMs, 0);
  const heldMs = sums.reduce((n, s) => n + s.heldMs, 0);
  const merged = sums.filter((s) => s.outcome === "merged").length;
  return `${sums.length === 1 ? "1 task" : `${sums.length} tasks`} (${merged} merged), ${
    turns === 1 ? "1 agent turn" : `${turns} agent turns`
  } (${formatDuration(turnMs)}), held ${formatDuration(heldMs)}`;
}

function banners(input: HistoryInput): string {
  const out: string[] = [];
  if (input.hold) {
    const h = input.hold;
    out.push(
      `<div class="banner hold"><strong>HOLD on task ${esc(h.task)}</strong> since ${
        esc(stamp(new Date(h.at)))
      }: ${esc(h.reason)}<div class="next">next: ${esc(h.next)}</div></div>`,
    );
  }
  if (input.pause) {
    const p = input.pause;
    out.push(
      `<div class="banner pause"><strong>Paused</strong> by ${esc(p.by)} since ${
        esc(stamp(new Date(p.at)))
      }${p.reason ? `: ${esc(p.reason)}` : ""}. No tick starts anything until relay unpause.</div>`,
    );
  }
  return out.join("\n");
}

function summaryTable(sums: TaskSummary[]): string {
  if (sums.length === 0) return `<p>No task has a timeline yet.</p>`;
  const head = [
    "Task",
    "Title",
    "Outcome",
    "Rounds",
    "Attempts",
    "Agent turns",
    "Turn time",
    "Reviews",
    "Held",
    "Gate decisions",
    "Span",
  ];
  const rows = sums.map((s) =>
    `<tr><td class="num"><a href="#task-${s.task}">${s.task}</a></td><td>${
      esc(s.title ?? "(no brief opened)")
    }</td><td>${
      badge(s.outcome)
    }</td><td class="num">${s.rounds}</td><td class="num">${s.attempts}</td><td class="num">${s.turns}</td><td class="num">${
      formatDuration(s.turnMs)
    }</td><td class="num">${s.reviews}</td><td class="num">${held(s)}</td><td>${
      esc(gates(s.gates))
    }</td><td class="num">${span(s)}</td></tr>`
  );
  const total = (f: (s: TaskSummary) => number) => sums.reduce((n, s) => n + f(s), 0);
  const merged = sums.filter((s) => s.outcome === "merged").length;
  const foot = `<tr><th></th><th>All ${sums.length}</th><th>${merged} merged</th><td class="num">${
    total((s) => s.rounds)
  }</td><td class="num">${total((s) => s.attempts)}</td><td class="num">${
    total((s) => s.turns)
  }</td><td class="num">${formatDuration(total((s) => s.turnMs))}</td><td class="num">${
    total((s) => s.reviews)
  }</td><td class="num">${formatDuration(total((s) => s.heldMs))}</td><td>${
    esc(gates(sums.flatMap((s) => s.gates)))
  }</td><td></td></tr>`;
  return `<div class="scroll"><table class="summary"><thead><tr>${
    head.map((h) => `<th>${h}</th>`).join("")
  }</tr></thead><tbody>${rows.join("")}</tbody><tfoot>${foot}</tfoot></table></div>` +
    `<p class="muted">Agent turns are the turns relay timed (the executor's, a stage's); reviews count the reviewer's verdicts. Held: from each HOLD to the resume that cleared it.</p>`;
}

/** Each task as a row on one time axis: its span, its agent turns, its HOLDs. */
function chart(sums: TaskSummary[], now: Date): string {
  const ends = sums.flatMap((s) => [
    s.first,
    s.last,
    ...s.heldSpans.map((h) => h.to),
  ]).filter((t): t is number => t !== null);
  const from = Math.min(...ends, now.getTime());
  const to = Math.max(...ends, from + 1);
  const pct = (t: number) => (((t - from) / (to - from)) * 100).toFixed(2);
  const width = (a: number, b: number) => (((Math.max(b, a) - a) / (to - from)) * 100).toFixed(2);
  const bar = (cls: string, a: number, b: number, label: string) =>
    `<span class="${cls}" style="left:${pct(a)}%;width:${width(a, b)}%" title="${
      esc(label)
    }"></span>`;
  const rows = sums.map((s) => {
    const marks: string[] = [];
    if (s.first !== null && s.last !== null) {
      const end = Math.max(s.last, ...s.heldSpans.map((h) => h.to));
      marks.push(bar("life", s.first, end, `task ${s.task}: ${span(s)}`));
    }
    for (const t of s.turnSpans) {
      marks.push(bar("turn", Math.max(t.from, from), t.to, `agent turn ${dur(t.to - t.from)}`));
    }
    for (const h of s.heldSpans) {
      marks.push(bar("held", h.from, h.to, `HOLD ${dur(h.to - h.from)}`));
    }
    return `<div class="row"><a class="label" href="#task-${s.task}">Task ${s.task}</a><div class="track">${
      marks.join("")
    }</div></div>`;
  });
  return `<div class="chart">${rows.join("")}<div class="axis"><span>${
    esc(stamp(new Date(from)))
  }</span><span>${esc(stamp(new Date(to)))}</span></div></div>` +
    `<p class="legend"><span class="key life"></span> task <span class="key turn"></span> agent turn <span class="key held"></span> HOLD</p>`;
}

function taskSection(tl: Timeline, s: TaskSummary): string {
  const facts = [
    ["Outcome", badge(s.outcome)],
    ["Rounds", String(s.rounds)],
    ["Attempts", String(s.attempts)],
    ["Agent turns", `${s.turns} (${formatDuration(s.turnMs)})`],
    ["Reviews", String(s.reviews)],
    ["Held", held(s)],
    ["Gate decisions", esc(gates(s.gates) || "none")],
    ["Span", span(s)],
  ].map(([k, v]) => `<div><dt>${k}</dt><dd>${v}</dd></div>`).join("");
  return `<section class="task" id="task-${tl.task}"><h2>Task ${tl.task}${
    tl.title === null ? "" : ` — ${esc(tl.title)}`
  } ${badge(s.outcome)}</h2>${
    tl.branch ? `<p class="muted">branch <code>${esc(tl.branch)}</code></p>` : ""
  }<dl class="facts">${facts}</dl>${
    tl.events.length === 0 ? "<p>No events recorded yet.</p>" : tl.rounds.map(roundSection).join("")
  }</section>`;
}

function roundSection(r: Round): string {
  const times = r.events.map((e) => Date.parse(e.at));
  const title = r.round === 1
    ? `Round 1 (brief ${r.brief})`
    : `Round ${r.round} (fix brief ${r.brief})`;
  const why = r.why ? `<p class="why">Sent back: ${esc(r.why)}</p>` : "";
  let day = "";
  let shown = ""; // the findings of the last verdict: a send-back repeats them
  const rows: string[] = [];
  r.events.forEach((e, i) => {
    if (e.event === "turn-started" && endedLater(r.events, i)) return;
    const when = new Date(e.at).toISOString();
    if (when.slice(0, 10) !== day) {
      day = when.slice(0, 10);
      rows.push(`<tr class="day"><td colspan="4">${day}</td></tr>`);
    }
    const found = JSON.stringify(e.details.findings ?? null);
    if (e.event === "verdict") shown = found;
    const repeat = e.event === "sent-back" && found === shown;
    rows.push(
      `<tr class="${rowClass(e)}"><td class="time"><time datetime="${when}">${
        when.slice(11, 19)
      }</time></td><td class="role">${esc(e.role)}</td><td>${what(e, repeat)}</td><td class="num">${
        esc(durationOf(r.events, i))
      }</td></tr>`,
    );
  });
  return `<h3>${esc(title)} <span class="muted">${
    esc(dur(Math.max(...times) - Math.min(...times)))
  }, ${r.events.length} events</span></h3>${why}<div class="scroll"><table class="events"><thead><tr><th class="time">Time</th><th class="role">Role</th><th>What</th><th class="took num">Took</th></tr></thead><tbody>${
    rows.join("")
  }</tbody></table></div>`;
}

/** The event's line as `relay show` words it, and what goes under it in full. */
function what(e: LogEntry, repeat: boolean): string {
  const d = e.details;
  if (e.event === "held") {
    // The reason and next step whole: they are what a person reads the page for.
    return `<div class="line full"><strong>HOLD</strong>: ${esc(str(d.reason))}</div>` +
      `<div class="next">next: ${esc(str(d.next))}</div>`;
  }
  const head = describe(e)[0] ?? e.event;
  const parts = [`<div class="line">${esc(head)}</div>`];
  switch (e.event) {
    case "verdict":
    case "stage-ran":
      parts.push(findingList(d.findings));
      break;
    case "sent-back":
      if (!repeat) parts.push(findingList(d.findings));
      break;
    case "gate-decided": {
      const checks = Array.isArray(d.checks) ? d.checks as Record<string, unknown>[] : [];
      const failing = checks.filter((c) => c.result !== "PASS");
      if (failing.length) {
        parts.push(
          `<ul class="checks">${
            failing.map((c) =>
              `<li><strong>${esc(str(c.name))}</strong>: ${esc(str(c.result))} — ${
                esc(str(c.reason))
              }</li>`
            ).join("")
          }</ul>`,
        );
      }
      if (checks.length > failing.length) {
        parts.push(`<div class="muted">${checks.length - failing.length} checks passed</div>`);
      }
      break;
    }
    case "config-frozen":
      if (Array.isArray(d.warnings)) {
        parts.push(...d.warnings.map((w) => `<div class="muted">warning: ${esc(str(w))}</div>`));
      }
      break;
    default:
      // `relay show` cuts long texts to one line; the page has room for them whole.
      if (head.endsWith("…")) {
        for (const key of ["reason", "why", "failure", "detail", "text", "title", "outcome"]) {
          if (typeof d[key] === "string" && d[key]) {
            parts.push(`<div class="full">${esc(key)}: ${esc(d[key] as string)}</div>`);
          }
        }
      }
  }
  return parts.join("");
}

function findingList(v: unknown): string {
  const all = Array.isArray(v) ? v as Record<string, unknown>[] : [];
  if (all.length === 0) return "";
  return `<ul class="findings">${
    all.map((f) =>
      `<li><span class="sev sev-${sevClass(f.severity)}">${esc(str(f.severity))}</span> ${
        esc(str(f.text))
      }</li>`
    ).join("")
  }</ul>`;
}

function sevClass(v: unknown): string {
  const s = str(v).toLowerCase();
  return ["blocker", "major", "minor"].includes(s) ? s : "other";
}

function rowClass(e: LogEntry): string {
  const d = e.details;
  switch (e.event) {
    case "held":
      return "ev held";
    case "resumed":
      return "ev resumed";
    case "merged":
      return "ev merged";
    case "closed":
    case "attempt-failed":
    case "review-void":
      return "ev bad";
    case "verdict":
      return d.verdict === "PASS" ? "ev pass" : "ev fail";
    case "stage-ran":
      return d.result === "FAIL" ? "ev fail" : "ev";
    case "bar-ran":
      return d.passed === false ? "ev fail" : "ev";
    case "gate-decided":
      return d.decision === "MERGE" ? "ev pass" : d.decision === "WAIT" ? "ev" : "ev fail";
    case "sent-back":
      return "ev fail";
    case "turn-ended":
    case "turn-started":
      return "ev turn";
    default:
      return "ev";
  }
}

/** How long the event's step took, where the log says: a turn, an attempt, a bar, a HOLD. */
function durationOf(events: LogEntry[], i: number): string {
  const e = events[i]!;
  const d = e.details;
  switch (e.event) {
    case "turn-ended":
      return d.startError ? "" : dur(num(d.durationMs));
    case "turn-started":
      return "no end";
    case "bar-ran": {
      const results = Array.isArray(d.results) ? d.results as Record<string, unknown>[] : [];
      return dur(results.reduce((n, r) => n + num(r.durationMs), 0));
    }
    case "attempt-finished":
    case "attempt-failed": {
      const start = events.slice(0, i).findLast((x) => x.event === "attempt-prepared");
      return start ? dur(Date.parse(e.at) - Date.parse(start.at)) : "";
    }
    case "resumed": {
      const held = events.slice(0, i).findLast((x) => x.event === "held");
      return held ? `held ${dur(Date.parse(e.at) - Date.parse(held.at))}` : "";
    }
    default:
      return "";
  }
}

/** A turn-started whose turn-ended follows says nothing the end does not (as in relay show). */
function endedLater(events: LogEntry[], i: number): boolean {
  const start = events[i]!;
  return events.slice(i + 1).some((e) =>
    e.event === "turn-ended" && e.run === start.run && e.details.role === start.details.role
  );
}

function badge(outcome: TaskSummary["outcome"]): string {
  const text = { merged: "merged", closed: "closed unmerged", held: "on HOLD", open: "open" }[
    outcome
  ];
  return `<span class="badge ${outcome}">${text}</span>`;
}

function held(s: TaskSummary): string {
  if (s.holds === 0) return "—";
  return `${dur(s.heldMs)}${s.heldNow ? " (still held)" : ""}`;
}

/** Decisions in order, a run of the same one counted: "WAIT ×3, MERGE". */
function gates(list: string[]): string {
  const out: [string, number][] = [];
  for (const g of list) {
    const last = out.at(-1);
    if (last && last[0] === g) last[1]++;
    else out.push([g, 1]);
  }
  return out.map(([g, n]) => (n > 1 ? `${g} ×${n}` : g)).join(", ");
}

function span(s: TaskSummary): string {
  if (s.first === null || s.last === null) return "";
  return esc(dur(s.last - s.first));
}

/** A duration; under a second shows as milliseconds, where formatDuration would say 0s. */
function dur(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "";
  return ms < 1000 ? `${Math.round(ms)}ms` : formatDuration(ms);
}

function stamp(d: Date): string {
  return Number.isNaN(d.getTime()) ? "?" : d.toISOString().replace("T", " ").slice(0, 19);
}

function str(v: unknown): string {
  return v === undefined || v === null ? "?" : String(v);
}

function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

/** Text for HTML content and quoted attribute values. */
export function esc(v: unknown): string {
  return String(v).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const CSS = `
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#fff;--soft:#f6f8fa;--turn:#3b82f6;--held:#d1242f;--ok:#1a7f37;--warn:#9a6700;--life:#d0d7de}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1200px;padding:24px 20px 48px;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg)}
h1{font-size:1.6em;margin:0 0 4px}h2{font-size:1.25em;margin:32px 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line)}h3{font-size:1.05em;margin:20px 0 6px}
a{color:#0969da;text-decoration:none}a:hover{text-decoration:underline}
code{font:0.9em ui-monospace,"DejaVu Sans Mono",monospace;background:var(--soft);padding:1px 4px;border-radius:4px}
.muted{color:var(--muted);font-weight:normal}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;vertical-align:top;padding:5px 8px;border-bottom:1px solid var(--line)}
thead th{background:var(--soft);font-size:.78em;text-transform:uppercase;letter-spacing:.02em;color:var(--muted)}
table.summary th,table.summary td{padding:5px 6px}
table.events{table-layout:fixed}table.events th.time{width:88px}table.events th.role{width:84px}table.events th.took{width:96px}
tfoot th,tfoot td{font-weight:600;border-top:2px solid var(--line)}
.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
.badge{display:inline-block;white-space:nowrap;font-size:.75em;font-weight:600;padding:1px 8px;border-radius:10px;vertical-align:middle;border:1px solid currentColor}
.badge.merged{color:var(--ok)}.badge.closed{color:var(--muted)}.badge.held{color:var(--held)}.badge.open{color:var(--warn)}
.banner{padding:10px 14px;border-radius:6px;margin:12px 0;border-left:5px solid}
.banner.hold{background:#ffebe9;border-color:var(--held)}.banner.pause{background:#fff8c5;border-color:var(--warn)}
.next{color:var(--muted);white-space:pre-wrap}
.chart{border:1px solid var(--line);border-radius:6px;padding:10px}
.row{display:flex;align-items:center;gap:10px;margin:4px 0}
.label{flex:0 0 70px;font-size:.9em}
.track{position:relative;flex:1;height:18px;background:var(--soft);border-radius:3px}
.track span{position:absolute;top:0;height:100%;min-width:3px;border-radius:2px}
.track .life{background:var(--life);top:7px;height:4px}
.track .turn{background:var(--turn);opacity:.85}
.track .held{background:repeating-linear-gradient(45deg,var(--held) 0 4px,#ff8182 4px 8px)}
.axis{display:flex;justify-content:space-between;font-size:.8em;color:var(--muted);margin:6px 0 0 80px}
.legend{font-size:.85em;color:var(--muted)}
.key{display:inline-block;width:14px;height:10px;margin:0 4px 0 10px;border-radius:2px;vertical-align:middle}
.key.life{background:var(--life)}.key.turn{background:var(--turn)}.key.held{background:var(--held)}
dl.facts{display:flex;flex-wrap:wrap;gap:8px 28px;margin:8px 0}
dl.facts div{min-width:90px}dt{font-size:.8em;color:var(--muted)}dd{margin:0;font-weight:600}
.why{background:var(--soft);padding:6px 10px;border-radius:4px}
table.events td.time{font:0.9em ui-monospace,"DejaVu Sans Mono",monospace;white-space:nowrap;color:var(--muted)}
table.events td.role{white-space:nowrap;font-size:.85em;color:var(--muted)}
tr.day td{background:var(--soft);font-size:.8em;color:var(--muted);padding:2px 8px}
tr.held td{background:#ffebe9}tr.held td:nth-child(3){border-left:4px solid var(--held)}
tr.resumed td{background:#dafbe1}tr.resumed td:nth-child(3){border-left:4px solid var(--ok)}
tr.merged td:nth-child(3){border-left:4px solid var(--ok);font-weight:600}
tr.pass td:nth-child(3){border-left:4px solid var(--ok)}
tr.fail td:nth-child(3),tr.bad td:nth-child(3){border-left:4px solid #bf8700}
tr.turn td:nth-child(3){border-left:4px solid var(--turn)}
.line{overflow-wrap:anywhere}
.full{white-space:pre-wrap;overflow-wrap:anywhere;margin-top:2px}
ul.findings,ul.checks{margin:4px 0 2px;padding-left:18px}
ul.findings li,ul.checks li{overflow-wrap:anywhere;white-space:pre-wrap}
.sev{display:inline-block;font-size:.72em;font-weight:700;text-transform:uppercase;padding:0 6px;border-radius:3px;background:#eaeef2;color:var(--fg)}
.sev-blocker{background:#ffebe9;color:var(--held)}.sev-major{background:#fff1e5;color:#bc4c00}.sev-minor{background:#ddf4ff;color:#0969da}
@media (max-width:700px){body{padding:12px;font-size:14px}.label{flex-basis:52px}.axis{margin-left:62px}}
@media print{.chart{break-inside:avoid}}
`.trim();
