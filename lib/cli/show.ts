/**
 * `relay show <task> [--json]`: a task's timeline from its event log — each
 * round (the brief, then every fix), the attempts and agent turns in it, the
 * bar, the PR, the verdicts, the gate, the merge, and any HOLD — so a person
 * can see what happened and why without reading relay's records one by one.
 *
 * A task with no log is a usage error (exit 2) naming the tasks that have one:
 * the number is what the person typed, and nothing on disk is wrong. A fix
 * brief's number shows the task it is a round of.
 */
import { UsageError } from "../errors.ts";
import { type Context, parseCommand, printJson, requireRepo } from "./args.ts";
import type { LogEntry } from "../task/log.ts";
import type { Round, Timeline } from "../task/timeline.ts";
import { formatDuration } from "../config/duration.ts";

/** Long texts (reasons, findings) are cut to this many characters in the human output. */
const TEXT_MAX = 110;

export async function show(args: string[], ctx: Context): Promise<number> {
  const { values, positionals } = parseCommand("show", args, { json: { type: "boolean" } }, {
    min: 1,
    max: 1,
    names: "<task>",
  });
  const asked = positionals[0]!;
  if (!/^\d+$/.test(asked) || Number(asked) < 1) {
    throw new UsageError(`<task> must be a task number (1, 2, …), not "${asked}"`, "show");
  }
  const repo = requireRepo(ctx);
  const { readEvents, taskOfBrief, tasksWithEvents } = await import("../task/log.ts");
  const { timeline } = await import("../task/timeline.ts");
  const task = await taskOfBrief(repo.commonDir, Number(asked));
  if (task === null) {
    const have = await tasksWithEvents(repo.commonDir);
    throw new UsageError(
      `no events recorded for task ${asked} (relay records a task's timeline from its first tick on); ${
        have.length ? `tasks with a timeline: ${have.join(", ")}` : "no task has a timeline yet"
      }`,
    );
  }
  const tl = timeline(task, await readEvents(repo.commonDir, task));
  if (values.json) {
    printJson({
      task: tl.task,
      title: tl.title,
      branch: tl.branch,
      rounds: tl.rounds.map((r) => ({
        round: r.round,
        brief: r.brief,
        ...(r.why === undefined ? {} : { why: r.why }),
        events: r.events,
      })),
      events: tl.events,
    });
    return 0;
  }
  const note = task === Number(asked) ? [] : [`(brief ${asked} is a fix round of task ${task})`];
  // A task waiting for a person ends with what the person needs to decide.
  const { acceptanceSummary } = await import("./acceptance_summary.ts");
  const { statePaths } = await import("../state/paths.ts");
  const summary = await acceptanceSummary(repo, statePaths(repo.commonDir), task);
  console.log([...note, ...renderTimeline(tl), ...(summary ? ["", ...summary] : [])].join("\n"));
  return 0;
}

/** The human form: a header, then each round's events, one line each (findings indented under). */
export function renderTimeline(tl: Timeline): string[] {
  const out = [
    tl.title === null
      ? `task ${tl.task}`
      : `task ${tl.task} — ${cut(tl.title)}${tl.branch ? ` [${tl.branch}]` : ""}`,
  ];
  if (tl.events.length === 0) out.push("no events recorded yet");
  let day = "";
  let shown = ""; // the findings of the last verdict
  for (const round of tl.rounds) {
    out.push(roundHeader(round));
    let depth = 0;
    round.events.forEach((e, i) => {
      if (e.event === "turn-started" && endedLater(round.events, i)) return;
      const when = new Date(e.at).toISOString();
      if (when.slice(0, 10) !== day) {
        day = when.slice(0, 10);
        out.push(`${day} (UTC)`);
      }
      if (e.event === "attempt-finished" || e.event === "attempt-failed") depth = 0;
      let [first, ...more] = describe(e);
      // A send-back carries the verdict's findings again: listed once, under the verdict.
      const found = JSON.stringify(e.details.findings ?? null);
      if (e.event === "verdict") shown = found;
      else if (e.event === "sent-back" && found === shown) more = [];
      const pad = "  ".repeat(depth);
      out.push(`${when.slice(11, 19)}  ${pad}${first}`);
      for (const line of more) out.push(`          ${pad}${line}`);
      if (e.event === "attempt-prepared") depth = 1;
    });
  }
  return out;
}

function roundHeader(r: Round): string {
  if (r.round === 1) return `round 1 (brief ${r.brief})`;
  return `round ${r.round} (fix brief ${r.brief}${r.why ? `: ${cut(r.why, 80)}` : ""})`;
}

/** A turn-started whose turn-ended follows says nothing the end does not. */
function endedLater(events: LogEntry[], i: number): boolean {
  const start = events[i]!;
  return events.slice(i + 1).some((e) =>
    e.event === "turn-ended" && e.run === start.run && e.details.role === start.details.role
  );
}

/** One event as its line, then any lines that go under it. */
export function describe(e: LogEntry): string[] {
  const d = e.details;
  switch (e.event) {
    case "brief-opened":
      return [
        `${d.kind === "fix" ? `fix brief ${e.brief} opened` : `brief ${e.brief} opened`}${
          typeof d.fixes === "number" ? ` (fixes task ${d.fixes})` : ""
        }: ${cut(d.title)}${d.branch ? ` [${s(d.branch)}]` : ""}`,
      ];
    case "config-frozen":
      return [
        s(d.line),
        ...(Array.isArray(d.warnings) ? d.warnings.map((w) => `  warning: ${s(w)}`) : []),
      ];
    case "attempt-prepared":
      return [`attempt ${s(d.attempt)} of ${s(d.of)}: on ${sha(d.base)}, in ${s(d.worktree)}`];
    case "turn-started":
      return [
        `${s(d.role)} turn started (pid ${s(d.pid)}${
          d.deadline ? `, deadline ${s(d.deadline)}` : ""
        }), no end recorded`,
      ];
    case "turn-ended":
      return [turnEnded(d)];
    case "committed":
      return [
        `committed: ${s(d.outcome)} at ${sha(d.head)}${
          d.failure ? ` (${cut(d.failure, 80)})` : ""
        }`,
      ];
    case "attempt-failed":
      return [`attempt ${s(d.attempt)} of ${s(d.of)} failed: ${cut(d.reason)}`];
    case "bar-ran":
      return [barRan(d)];
    case "branch-pushed":
      return [
        d.ok === false
          ? `push of ${sha(d.head)} failed${d.detail ? `: ${cut(d.detail)}` : ""}`
          : `pushed ${sha(d.head)}`,
      ];
    case "pr-opened":
      return [`PR ${s(d.pr)} opened`];
    case "paperwork-committed":
      return [`paperwork committed: ${sha(d.sha)} (${s(d.outcome)})`];
    case "paperwork-pushed":
      return ["paperwork pushed"];
    case "attempt-finished":
      return [
        `attempt finished: ${s(d.outcome)} at ${sha(d.head)}${d.pr ? `, PR ${s(d.pr)}` : ""}`,
      ];
    case "fix-retired":
      return [`fix brief retired: ${cut(d.why)}`];
    case "scope-checked":
      return [
        `scope: ${s(d.result)}${d.reason ? ` — ${cut(d.reason, 90)}` : ""}${
          list(d.files).length ? ` (${cut(list(d.files).join(", "), 60)})` : ""
        }`,
      ];
    case "verdict":
      return [`verdict: ${s(d.verdict)} at ${sha(d.head)}`, ...findings(d.findings)];
    case "review-void":
      return [`review void: ${cut(d.why)}`];
    case "stage-ran":
      return [
        `${s(d.stage)} stage: ${s(d.result)} at ${sha(d.head)}${
          d.detail ? ` — ${cut(d.detail, 100)}` : ""
        }`,
        ...findings(d.findings),
      ];
    case "preview-checked":
      return [`preview ${cut(d.url, 80)}: ${d.ready ? "answers" : "not yet"} (${s(d.seen)})`];
    case "gate-decided":
      return gateDecided(d);
    case "sent-back":
      return [
        `sent back as fix brief ${s(d.fix)} (round ${s(d.round)}): ${cut(d.why, 80)}`,
        ...findings(d.findings),
      ];
    case "routed-to-person":
      return [`routed to a person: it changes ${cut(list(d.files).join(", "), 80)}`];
    case "merged":
      return [`merged ${sha(d.sha)} ${d.by === "out-of-band" ? "out of band" : `by ${s(d.by)}`}`];
    case "closed":
      return [`closed unmerged by ${s(d.by)}: ${cut(d.reason)}`];
    case "promoted":
      return [`promoted task ${s(d.task)}: ${cut(d.title)}`];
    case "held":
      return [`HOLD: ${cut(d.reason)}`, `next: ${cut(d.next)}`];
    case "resumed":
      return [
        `resumed by a person: ${cut(d.reason)}${d.outcome ? ` (${cut(d.outcome, 60)})` : ""}`,
      ];
    case "set-aside":
      return [
        `run set aside after step ${s(d.step)}, not resumed: ${cut(d.reason)}${
          d.branch ? ` (kept on ${s(d.branch)})` : ""
        }`,
      ];
    case "noted":
      return [`note from a person for the next turn: ${cut(d.text)}`];
    case "accepted":
    case "rejected":
      return [
        `${e.event} by a person at ${sha(d.head)} (digest ${s(d.digest)})${
          d.reason ? `: ${cut(d.reason)}` : ""
        }`,
      ];
    default:
      // An event from a newer relay: its name and details, as they are.
      return [`${e.event} (${e.role}) ${cut(JSON.stringify(d))}`];
  }
}

function turnEnded(d: Record<string, unknown>): string {
  // A turn that ended while no tick watched it ran for a time nobody saw end.
  const unseen = d.interrupted === true && d.timedOut !== true && !num(d.durationMs);
  const head = unseen
    ? `${s(d.role)} turn of unknown length (it ended while no tick watched it)`
    : `${s(d.role)} turn ${formatDuration(num(d.durationMs))}`;
  if (d.startError) return `${s(d.role)} turn could not start: ${cut(d.startError)}`;
  const how = [
    d.timedOut === true ? "timed out" : "",
    d.interrupted === true ? "interrupted" : "",
    d.signal ? `signal ${s(d.signal)}` : "",
    typeof d.exit === "number" ? `exit ${d.exit}` : "",
  ].filter(Boolean);
  return `${head}, ${how.length ? how.join(", ") : "no exit code"}`;
}

function barRan(d: Record<string, unknown>): string {
  const results = Array.isArray(d.results) ? d.results as Record<string, unknown>[] : [];
  const ok = results.filter((r) => r.exit === 0).length;
  const at = d.head ? ` at ${sha(d.head)}` : "";
  const failed = results.find((r) => r.exit !== 0);
  if (d.passed === true || !failed) return `bar: ${ok}/${results.length} passed${at}`;
  const exit = typeof failed.exit === "number" ? `exit ${failed.exit}` : "no exit code";
  return `bar: ${ok}/${results.length} passed${at}; failed: ${cut(failed.command, 60)} (${exit}, ${
    formatDuration(num(failed.durationMs))
  })`;
}

function gateDecided(d: Record<string, unknown>): string[] {
  const checks = Array.isArray(d.checks) ? d.checks as Record<string, unknown>[] : [];
  const failing = checks.filter((c) => c.result !== "PASS");
  return [
    `gate: ${s(d.decision)}`,
    ...failing.map((c) => `${s(c.name)}: ${s(c.result)} — ${cut(c.reason, 90)}`),
  ];
}

function findings(v: unknown): string[] {
  const all = Array.isArray(v) ? v as Record<string, unknown>[] : [];
  return all.map((f) => `- [${s(f.severity)}] ${cut(f.text, 100)}`);
}

/** A value as text ("?" when absent). */
function s(v: unknown): string {
  return v === undefined || v === null ? "?" : String(v);
}

function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

function list(v: unknown): string[] {
  return Array.isArray(v) ? v.map(s) : [];
}

/** A commit, cut to 12 characters as `relay status` shows them. */
function sha(v: unknown): string {
  return typeof v === "string" && v ? v.slice(0, 12) : "?";
}

/** One line of at most `max` characters. */
function cut(v: unknown, max = TEXT_MAX): string {
  const text = s(v).replace(/\s+/g, " ").trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
