/**
 * A task's timeline: `.git/relay/tasks/<n>.events.jsonl`, one JSON object a
 * line, appended and never rewritten. Every tick that touches the task (the
 * executor's attempts, the reviewer's verdicts, the gate, a person's resume)
 * adds what it did, so `relay show <n>` can tell the whole story after the
 * fact, where the other records under `.git/relay/` keep only the latest state.
 *
 * `n` is the task the work is for: a fix brief has its own Task number (the
 * `brief` field), but its rounds go into the original task's file.
 *
 * Appending is one `write` of the whole line to a file opened with O_APPEND,
 * so two processes appending at once (the poll and the review tick) never
 * interleave within a line. Appending loads no zod; reading validates each
 * line and loads it lazily.
 */
import { join } from "../path.ts";
import { InputError } from "../errors.ts";
import { redactor } from "../proc/redact.ts";
import { statePaths } from "../state/paths.ts";

/** Who did what an event records. */
export type Role = "executor" | "reviewer" | "planner" | "person" | "relay";

export const ROLES: readonly Role[] = ["executor", "reviewer", "planner", "person", "relay"];

/** A finding as the verdict and a sent-back fix carry it. */
export interface Finding {
  severity: string;
  text: string;
}

/** A gate check as `gate-decided` carries it. */
export interface GateCheck {
  name: string;
  result: string;
  reason: string;
}

/** The events relay writes, and the details each one carries. */
export interface EventDetails {
  "brief-opened": { title: string; branch: string; kind: "task" | "fix"; fixes?: number };
  /** The task's configuration was frozen: its start line, and settings found but not applied. */
  "config-frozen": { line: string; warnings: string[] };
  /** Attempt `attempt` of the `of` attempts allowed. */
  "attempt-prepared": { attempt: number; of: number; worktree: string; base: string };
  "turn-started": { role: Role; pid: number; deadline?: string };
  "turn-ended": {
    role: Role;
    exit: number | null;
    signal: string | null;
    timedOut: boolean;
    durationMs: number;
    interrupted?: boolean;
    startError?: string;
  };
  committed: { outcome: "SHIPPED" | "BLOCKED" | "FAILED"; failure?: string; head: string };
  "attempt-failed": { attempt: number; of: number; reason: string };
  "bar-ran": {
    head: string;
    passed: boolean;
    results: { command: string; exit: number | null; durationMs: number }[];
  };
  "branch-pushed": { head: string; ok: boolean; detail?: string };
  "pr-opened": { pr: string };
  "paperwork-committed": { sha: string; outcome: string };
  "paperwork-pushed": Record<string, never>;
  "attempt-finished": { outcome: string; head: string; pr: string };
  "fix-retired": { why: string };
  "scope-checked": { result: "PASS" | "REFUSE" | "HUMAN"; reason: string; files?: string[] };
  verdict: { head: string; verdict: "PASS" | "FAIL"; findings: Finding[] };
  "review-void": { why: string };
  /** A stage after review ran on `head` (finish, polish, docs, security). */
  "stage-ran": {
    stage: string;
    head: string;
    result: "PASS" | "FAIL" | "SKIPPED";
    findings: Finding[];
    detail?: string;
  };
  /** The deploy preview of `head` was asked before the review turn. */
  "preview-checked": { head: string; url: string; ready: boolean; seen: string };
  "gate-decided": { decision: "MERGE" | "REFUSE" | "HUMAN" | "WAIT"; checks: GateCheck[] };
  /** `fix` is the fix brief's own task number; `round` the round it starts. */
  "sent-back": { fix: number; round: number; why: string; findings: Finding[] };
  "routed-to-person": { files: string[] };
  merged: { sha: string; by: "relay" | "out-of-band" };
  closed: { reason: string; by: "relay close" | "forge" };
  promoted: { task: number; title: string };
  held: { reason: string; next: string };
  /** A person's note for the task's next agent turn (relay note). */
  noted: { text: string };
  /** A person's acceptance by digest (relay accept / relay reject) took effect. */
  accepted: { digest: string; head: string; reason: string | null };
  rejected: { digest: string; head: string; reason: string | null };
  /** `reason` is the reason of the HOLD that was cleared. */
  resumed: { reason: string; outcome?: string };
  /**
   * A run journaled on a machine stopped past its lease, set aside (not resumed) because the
   * remote shows another machine worked the task: where its branch and worktree went.
   */
  "set-aside": { reason: string; step: string; branch?: string; worktree?: string };
}

export type EventName = keyof EventDetails;

/** What a caller appends: one of the known events with its details. `at` defaults to now. */
export type NewEvent = {
  [K in EventName]: {
    event: K;
    details: EventDetails[K];
    /** The run (tick) that wrote it, or null outside one (a person's command). */
    run: string | null;
    role: Role;
    /** The brief's own Task number: a fix brief has its own. */
    brief: number;
    /** 1 for the first brief, 2 for the first fix, … */
    round: number;
    at?: string;
  };
}[EventName];

/**
 * A line as read back. `event` stays a string and `details` an open object:
 * a log written by a newer relay, with events this one does not know, still reads.
 */
export interface LogEntry {
  v: 1;
  at: string;
  run: string | null;
  role: Role;
  event: string;
  brief: number;
  round: number;
  details: Record<string, unknown>;
}

/** What to do about a malformed line. */
export const LOG_FIX = "the log is append-only: move the file aside; relay starts a new one";

/** `<common>/relay/tasks/<task>.events.jsonl` */
export function eventsPath(commonDir: string, task: number): string {
  return join(statePaths(commonDir).tasks, `${task}.events.jsonl`);
}

/** The line appendEvent writes for `entry` (redacted, ending in a newline). */
export function eventLine(entry: NewEvent, now: Date = new Date()): string {
  const line: LogEntry = {
    v: 1,
    at: entry.at ?? now.toISOString(),
    run: entry.run,
    role: entry.role,
    event: entry.event,
    brief: entry.brief,
    round: entry.round,
    details: entry.details as Record<string, unknown>,
  };
  return JSON.stringify(redactor().redactDeep(line)) + "\n";
}

/**
 * Appends one event to task `task`'s log, creating the file (and folder) when
 * needed. One write of the whole line with O_APPEND: concurrent appenders each
 * land whole lines, in some order.
 */
export async function appendEvent(
  commonDir: string,
  task: number,
  entry: NewEvent,
): Promise<void> {
  const path = eventsPath(commonDir, task);
  const bytes = new TextEncoder().encode(eventLine(entry));
  await Deno.mkdir(statePaths(commonDir).tasks, { recursive: true });
  using file = await Deno.open(path, { append: true, create: true });
  let done = await file.write(bytes);
  // A regular file takes the whole write; a short one (a full disk) is finished, not dropped.
  while (done < bytes.length) done += await file.write(bytes.subarray(done));
}

/** Every event of task `task`, in the order written; [] when it has no log. */
export async function readEvents(commonDir: string, task: number): Promise<LogEntry[]> {
  const path = eventsPath(commonDir, task);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
  return parseEvents(text, path);
}

/** Parses a log's text; `file` names it in errors. Blank lines are skipped. */
export async function parseEvents(text: string, file: string): Promise<LogEntry[]> {
  const { z } = await import("zod");
  const schema = z.object({
    v: z.literal(1),
    at: z.iso.datetime({ offset: true }),
    run: z.string().nullable(),
    role: z.enum(ROLES as [Role, ...Role[]]),
    event: z.string().min(1),
    brief: z.number().int().positive(),
    round: z.number().int().positive(),
    details: z.record(z.string(), z.unknown()),
  });
  const out: LogEntry[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new InputError(
        { file, line: i + 1 },
        "Cannot read the task's event log: the line is not JSON",
        LOG_FIX,
      );
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const key = issue.path.join(".");
      throw new InputError(
        { file, line: i + 1, ...(key ? { key } : {}) },
        `Cannot read the task's event log: ${issue.message}`,
        LOG_FIX,
      );
    }
    out.push(parsed.data as LogEntry);
  }
  return out;
}

/** The tasks that have a log, lowest first. */
export async function tasksWithEvents(commonDir: string): Promise<number[]> {
  const found: number[] = [];
  try {
    for await (const e of Deno.readDir(statePaths(commonDir).tasks)) {
      const m = /^(\d+)\.events\.jsonl$/.exec(e.name);
      if (m && e.isFile) found.push(Number(m[1]));
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return found.sort((a, b) => a - b);
}

/**
 * The task whose log holds brief `brief`: itself when it has a log, else the
 * task it is a fix round of (found by reading the other logs), else null.
 */
export async function taskOfBrief(commonDir: string, brief: number): Promise<number | null> {
  const tasks = await tasksWithEvents(commonDir);
  if (tasks.includes(brief)) return brief;
  for (const task of tasks) {
    // A log that cannot be read is another task's problem (`relay show` on it says what).
    const events = await readEvents(commonDir, task).catch(() => []);
    // A fix brief is known from its send-back before it has events of its own.
    if (
      events.some((e) => e.brief === brief || (e.event === "sent-back" && e.details.fix === brief))
    ) {
      return task;
    }
  }
  return null;
}
