/**
 * One record per task, across its fix rounds: `.git/relay/tasks/<n>.json`.
 *
 * A fix brief keeps the protocol's own `Task:` number and points back with
 * `Fixes: <n>`; here it is a round of task n. Each round holds the attempts
 * at its brief and a receipt per stage it passed; the review part (verdicts,
 * voids, fix briefs sent, merge or close) is the planner's.
 *
 * The record is versioned and validated on every read (zod, loaded lazily:
 * the idle tick never reads one). Version 1 was two files — `tasks/<n>.json`
 * per brief (attempts, receipts) and `reviews/task-<n>.json` per PR — and is
 * migrated on read: the fix briefs' own files become rounds. The old files
 * are left where they were; the next write puts the whole task in one file.
 *
 * Writes are atomic (temp file, rename) and go through one short lock, so the
 * poll (attempts, receipts) and the review tick (the review part) never lose
 * each other's update.
 */
import { dirname, join } from "../path.ts";
import { HoldError, InputError } from "../errors.ts";
import { readJson, writeJson } from "./json_file.ts";
import { waitLock } from "./lock.ts";
import { isPlainTaskRecord, STAGES } from "./record_shape.ts";
import type { ReviewRecord } from "./reviews.ts";

export const TASK_RECORD_VERSION = 2;

export type Stage = typeof STAGES[number];

export interface Attempt {
  runId: string;
  /** sha256 of the brief the attempt worked on: an edited brief starts a fresh count. */
  brief: string;
  started: string;
  /**
   * "superseded": a run set aside because another machine did the task meanwhile (split
   * machines, lib/loop/supersede.ts). Not a failure: failedAttempts does not count it.
   */
  result: "shipped" | "failed" | "blocked" | "superseded";
  reason?: string;
}

export interface Receipt {
  stage: Stage;
  runId: string;
  at: string;
  result: string;
  head?: string;
  tree?: string;
  /** origin/main when the stage began: what the head was built on. */
  base?: string;
  detail?: string;
}

/** One brief's work on the task: the first brief is round 1, each fix brief the next. */
export interface Round {
  round: number;
  /** The brief's own Task number. */
  brief: number;
  attempts: Attempt[];
  receipts: Receipt[];
}

export interface TaskRecord {
  version: typeof TASK_RECORD_VERSION;
  task: number;
  rounds: Round[];
  /** The planner's part; null until the task's PR is first looked at. */
  review: ReviewRecord | null;
  /**
   * The configuration frozen when the task started (lib/config/task_config.ts's
   * TaskConfig; typed loosely here, the state layer does not know config's).
   */
  config?: FrozenConfig;
  /** A person's notes (relay note), each shown to the next agent turn of the task. */
  notes?: Note[];
  /** A person's verifications (relay attach-verification), each of one tree. */
  verifications?: Verification[];
  /** Plan reviews of the task's brief before it was promoted (relay plan, plan_review). */
  plans?: PlanRun[];
}

/** One plan review: the reviewer's verdict on a queued brief, before any code. */
export interface PlanRun {
  runId: string;
  at: string;
  /** planDigest of the brief it judged: an edited brief needs a new one. */
  brief: string;
  result: "PASS" | "FAIL";
  findings: { severity: "blocker" | "major" | "minor"; text: string }[];
  /** Who asked: a person's `relay plan`, or the review tick before promoting. */
  by: "person" | "tick";
}

/** Records a plan review, and its receipt in the brief's round. */
export function addPlanRun(dirs: RecordDirs, task: number, run: PlanRun): Promise<void> {
  return updateTask(dirs, task, (record) => {
    record.plans = [...record.plans ?? [], run];
    roundOf(record, task).receipts.push({
      stage: "plan",
      runId: run.runId,
      at: run.at,
      result: run.result,
      detail: `${run.findings.length} finding(s); brief ${run.brief.slice(0, 12)}`,
    });
  }, [task]);
}

/** A person's evidence (a screenshot, a log) for the tree it was taken on. */
export interface Verification {
  at: string;
  head: string;
  tree: string;
  /** The file as kept by relay (under .git/relay/verifications/), and its sha256. */
  file: string;
  sha256: string;
  /** The file's name as the person gave it. */
  name: string;
  text?: string;
}

export interface Note {
  at: string;
  text: string;
  /** The turn it was shown to; absent while it waits for one. */
  delivered?: { runId: string; role: string; at: string };
}

export interface FrozenConfig {
  version: 1;
  at: string;
  [key: string]: unknown;
}

/** Where relay's records live (StatePaths has both). */
export interface RecordDirs {
  tasks: string;
  reviews: string;
}

/** A brief as far as the records care: its number, and the task it fixes. */
export interface BriefRef {
  task: number;
  fixes?: number | undefined;
}

/** The task a brief's work belongs to: a fix brief's is the task whose PR it fixes. */
export function ownerOf(brief: BriefRef): number {
  return brief.fixes ?? brief.task;
}

export function taskRecordPath(tasksDir: string, task: number): string {
  return join(tasksDir, `${task}.json`);
}

/** Version 1's review file, read only to migrate it. */
export function legacyReviewPath(reviewsDir: string, task: number): string {
  return join(reviewsDir, `task-${task}.json`);
}

const FIX =
  "move the file aside and rerun: relay rebuilds the record from the version-1 files still beside it, if any, else starts it afresh";

/** The task's record: validated, migrated from version 1 when that is what is on disk. */
export async function readTask(dirs: RecordDirs, task: number): Promise<TaskRecord> {
  const path = taskRecordPath(dirs.tasks, task);
  const raw = await readRaw(path);
  if (raw !== null && raw.version !== undefined) {
    if (raw.version !== TASK_RECORD_VERSION) {
      throw new InputError(
        { file: path, key: "version" },
        `the task record is version ${
          JSON.stringify(raw.version)
        }; this relay reads version ${TASK_RECORD_VERSION}`,
        "run the relay that wrote it, or " + FIX,
      );
    }
    return await validate(path, raw, "v2") as TaskRecord;
  }
  return await migrate(dirs, task, raw === null ? null : path);
}

/** Version 1 on disk (or nothing): the brief's file, its review file, its fix briefs' files. */
async function migrate(dirs: RecordDirs, task: number, v1Path: string | null): Promise<TaskRecord> {
  const first = v1Path ? await readV1(v1Path) : null;
  const reviewPath = legacyReviewPath(dirs.reviews, task);
  const rawReview = await readJson<unknown>(reviewPath);
  const review = rawReview === null
    ? null
    : await validate(reviewPath, rawReview, "review") as ReviewRecord;
  const rounds: Round[] = [];
  if (first) rounds.push({ round: 1, brief: task, ...first });
  for (const fix of review?.fixes ?? []) {
    const path = taskRecordPath(dirs.tasks, fix.task);
    const raw = await readRaw(path);
    // A fix brief's own version-1 file; a version-2 file of that number is a task of its own.
    const own = raw !== null && raw.version === undefined ? await readV1(path) : null;
    if (!rounds.length) rounds.push({ round: 1, brief: task, attempts: [], receipts: [] });
    rounds.push({
      round: rounds.length + 1,
      brief: fix.task,
      ...(own ?? { attempts: [], receipts: [] }),
    });
  }
  return { version: TASK_RECORD_VERSION, task, rounds, review };
}

/** A record file's JSON, or null when there is none; a file that is not JSON is bad input. */
async function readRaw(path: string): Promise<Record<string, unknown> | null> {
  try {
    return await readJson<Record<string, unknown>>(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    if (err instanceof Error && /is not valid JSON/.test(err.message)) {
      throw new InputError({ file: path }, "relay's task record is not valid JSON", FIX);
    }
    throw err;
  }
}

/**
 * A fix brief's round that the record does not have yet: from the brief's own
 * version-1 file when there is one (a fix a person queued is in no review's
 * `fixes`, so the migration could not place it), else none.
 */
async function seedRound(dirs: RecordDirs, record: TaskRecord, brief: number): Promise<void> {
  if (brief === record.task || record.rounds.some((r) => r.brief === brief)) return;
  const path = taskRecordPath(dirs.tasks, brief);
  const raw = await readRaw(path);
  // A version-2 file of that number is a task of its own.
  if (raw === null || raw.version !== undefined) return;
  if (!record.rounds.length) {
    record.rounds.push({ round: 1, brief: record.task, attempts: [], receipts: [] });
  }
  record.rounds.push({ round: record.rounds.length + 1, brief, ...await readV1(path) });
}

async function readV1(path: string): Promise<Pick<Round, "attempts" | "receipts">> {
  const raw = await readRaw(path);
  const v1 = await validate(path, raw, "v1") as Pick<Round, "attempts" | "receipts">;
  return { attempts: v1.attempts, receipts: v1.receipts };
}

/**
 * Reads, changes and writes the task's record under the records lock. `change`
 * edits the record in place; what it returns is passed through.
 */
export async function updateTask<T>(
  dirs: RecordDirs,
  task: number,
  change: (record: TaskRecord) => T,
  /** Briefs whose rounds `change` may touch: seeded from version-1 files first. */
  briefs: number[] = [],
): Promise<T> {
  // Beside the records, not among them: the turn guard watches tasks/ for changes.
  const path = join(dirname(dirs.tasks), "records.lock");
  await using lock = await waitLock(path, "record", { waitMs: 30_000, everyMs: 20 });
  if (!lock) {
    throw new HoldError(
      `Cannot update task ${task}'s record: ${path} stayed locked for 30s`,
      "Check that no relay process is stuck (ps aux | grep relay); the lock is released when its holder exits. Then run the tick again.",
      { recheck: true },
    );
  }
  const record = await readTask(dirs, task);
  for (const brief of briefs) await seedRound(dirs, record, brief);
  const out = change(record);
  await writeJson(taskRecordPath(dirs.tasks, task), record);
  return out;
}

/** The round of this brief, added (as the next round) when it has none yet. */
export function roundOf(record: TaskRecord, brief: number): Round {
  let round = record.rounds.find((r) => r.brief === brief);
  if (!round) {
    round = { round: record.rounds.length + 1, brief, attempts: [], receipts: [] };
    record.rounds.push(round);
  }
  return round;
}

/** A brief's round as it is on disk (empty when it has none): nothing is written. */
export async function readRound(dirs: RecordDirs, brief: BriefRef): Promise<Round> {
  const record = await readTask(dirs, ownerOf(brief));
  await seedRound(dirs, record, brief.task);
  return record.rounds.find((r) => r.brief === brief.task) ??
    { round: record.rounds.length + 1, brief: brief.task, attempts: [], receipts: [] };
}

/** Records an attempt once (by run id), so a resumed tick never counts it twice. */
export function recordAttempt(dirs: RecordDirs, brief: BriefRef, attempt: Attempt): Promise<Round> {
  return updateTask(dirs, ownerOf(brief), (record) => {
    const round = roundOf(record, brief.task);
    const i = round.attempts.findIndex((a) => a.runId === attempt.runId);
    if (i === -1) round.attempts.push(attempt);
    else round.attempts[i] = attempt;
    return structuredClone(round);
  }, [brief.task]);
}

export function addReceipt(dirs: RecordDirs, brief: BriefRef, receipt: Receipt): Promise<void> {
  return updateTask(dirs, ownerOf(brief), (record) => {
    const round = roundOf(record, brief.task);
    if (!round.receipts.some((r) => r.runId === receipt.runId && r.stage === receipt.stage)) {
      round.receipts.push(receipt);
    }
  }, [brief.task]);
}

/**
 * The task whose record holds brief `brief`'s work: the task itself, or the
 * task a fix brief is a round of. Null when no record names it.
 */
export async function ownerOfBrief(dirs: RecordDirs, brief: number): Promise<number | null> {
  let names: string[] = [];
  try {
    for await (const e of Deno.readDir(dirs.tasks)) {
      if (e.isFile && /^\d+\.json$/.test(e.name)) names.push(e.name);
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
  names = names.sort((a, b) => parseInt(a) - parseInt(b));
  for (const name of names) {
    const raw = await readRaw(join(dirs.tasks, name)).catch(() => null);
    if (raw?.version !== TASK_RECORD_VERSION) continue;
    const record = raw as unknown as TaskRecord;
    const owns = record.task === brief || record.rounds.some((r) => r.brief === brief) ||
      (record.review?.fixes ?? []).some((f) => f.task === brief);
    if (owns) return record.task;
  }
  return null;
}

/**
 * Lets go of the frozen configuration of the task brief `brief` works on: its
 * next attempt freezes the profile and repo config as they are then. Returns
 * the task whose configuration was let go of, or null when none was frozen.
 */
export async function letGoOfConfig(dirs: RecordDirs, brief: number): Promise<number | null> {
  const task = await ownerOfBrief(dirs, brief);
  if (task === null) return null;
  return await updateTask(dirs, task, (r) => {
    if (r.config === undefined) return null;
    delete r.config;
    return task;
  });
}

/** Adds a person's verification to the task's record. */
export function addVerification(dirs: RecordDirs, task: number, v: Verification): Promise<void> {
  return updateTask(dirs, task, (record) => {
    (record.verifications ??= []).push(v);
  });
}

/** Adds a person's note to the task's record. */
export function addNote(dirs: RecordDirs, task: number, text: string): Promise<void> {
  return updateTask(dirs, task, (record) => {
    (record.notes ??= []).push({ at: new Date().toISOString(), text });
  });
}

/**
 * The notes no turn has been shown yet, marked as shown to this one. Called
 * before the turn's guard takes its baseline: the record is one the guard watches.
 */
export async function takeNotes(
  dirs: RecordDirs,
  task: number,
  turn: { runId: string; role: string },
): Promise<string[]> {
  const record = await readTask(dirs, task);
  if (!record.notes?.some((n) => !n.delivered)) return [];
  return await updateTask(dirs, task, (r) => {
    const at = new Date().toISOString();
    const waiting = (r.notes ?? []).filter((n) => !n.delivered);
    for (const n of waiting) n.delivered = { ...turn, at };
    return waiting.map((n) => n.text);
  });
}

/** Failed attempts at this version of the brief. */
export function failedAttempts(round: Pick<Round, "attempts">, briefHash: string): number {
  return round.attempts.filter((a) => a.brief === briefHash && a.result === "failed").length;
}

/** The review part of task `task`'s record, or a fresh one for its branch. */
export async function readReview(
  dirs: RecordDirs,
  task: number,
  branch: string,
): Promise<ReviewRecord> {
  return (await readTask(dirs, task)).review ??
    { task, branch, verdicts: [], voids: [], fixes: [] };
}

/**
 * Replaces the review part of its task's record, and gives each verdict its
 * `review` receipt in the round of the brief whose report it judged. The
 * executor's attempts and receipts are left as they are.
 */
export function writeReview(dirs: RecordDirs, review: ReviewRecord): Promise<void> {
  return updateTask(dirs, review.task, (record) => {
    record.review = review;
    for (const v of review.verdicts) {
      const round = roundOf(record, v.reportTask);
      if (round.receipts.some((r) => r.stage === "review" && r.runId === v.runId)) continue;
      round.receipts.push({
        stage: "review",
        runId: v.runId,
        at: v.at,
        result: v.verdict,
        head: v.head,
        tree: v.tree,
        base: v.main,
        detail: `${v.findings.length} finding(s)`,
      });
    }
    // Each post-review stage's run is a receipt of the round whose report it judged.
    for (const run of review.stages ?? []) {
      const round = roundOf(record, run.reportTask ?? review.task);
      if (round.receipts.some((r) => r.stage === run.stage && r.runId === run.runId)) continue;
      round.receipts.push({
        stage: run.stage,
        runId: run.runId,
        at: run.at,
        result: run.result,
        head: run.head,
        tree: run.tree,
        detail: [run.detail, run.findings.length ? `${run.findings.length} finding(s)` : ""]
          .filter((x) => x).join("; "),
      });
    }
  }, [
    ...review.verdicts.map((v) => v.reportTask),
    ...(review.stages ?? []).map((r) => r.reportTask ?? review.task),
  ]);
}

type Shape = "v1" | "v2" | "review";
const schemas = new Map<Shape, { safeParse(v: unknown): SafeParse }>();
type SafeParse =
  | { success: true; data: unknown }
  | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };

/** Checks a record's shape, naming the file and the key that is wrong. */
async function validate(path: string, value: unknown, shape: Shape): Promise<unknown> {
  // The common case, a record relay wrote, without loading zod; the schema explains the rest.
  if (shape === "v2" && isPlainTaskRecord(value, TASK_RECORD_VERSION)) return value;
  const schema = schemas.get(shape) ?? (await buildSchemas()).get(shape)!;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const key = issue.path.map(String).join(".");
  throw new InputError(
    { file: path, ...(key ? { key } : {}) },
    `relay's task record is not valid: ${issue.message}`,
    FIX,
  );
}

/** The zod schemas of the record's shapes (exported for tests: record_shape.ts mirrors "v2"). */
export async function buildSchemas(): Promise<Map<Shape, { safeParse(v: unknown): SafeParse }>> {
  const { z } = await import("zod");
  const attempt = z.object({
    runId: z.string(),
    brief: z.string(),
    started: z.string(),
    result: z.enum(["shipped", "failed", "blocked", "superseded"]),
    reason: z.string().optional(),
  });
  const receipt = z.object({
    stage: z.enum(STAGES),
    runId: z.string(),
    at: z.string(),
    result: z.string(),
    head: z.string().optional(),
    tree: z.string().optional(),
    base: z.string().optional(),
    detail: z.string().optional(),
  });
  const finding = z.object({ severity: z.enum(["blocker", "major", "minor"]), text: z.string() });
  const task = z.number().int().positive();
  const review = z.object({
    task,
    branch: z.string(),
    verdicts: z.array(z.object({
      runId: z.string(),
      at: z.string(),
      reportTask: task,
      head: z.string(),
      tree: z.string(),
      main: z.string(),
      verdict: z.enum(["PASS", "FAIL"]),
      findings: z.array(finding),
      stale: z.boolean().optional(),
      revalidations: z.array(z.object({
        main: z.string(),
        mergeTree: z.string(),
        passed: z.boolean(),
        at: z.string(),
      })).optional(),
    })),
    voids: z.array(z.object({ runId: z.string(), at: z.string(), why: z.string() })),
    fixes: z.array(z.object({
      task,
      at: z.string(),
      head: z.string(),
      why: z.string().optional(),
      findings: z.array(finding).optional(),
    })),
    merged: z.object({
      sha: z.string(),
      at: z.string(),
      by: z.enum(["relay", "out-of-band"]),
    }).optional(),
    closed: z.object({ head: z.string(), at: z.string(), reason: z.string() }).optional(),
    human: z.object({ head: z.string(), at: z.string(), files: z.array(z.string()) }).optional(),
    previewWait: z.object({ head: z.string(), since: z.string() }).optional(),
    stages: z.array(z.object({
      stage: z.enum(["finish", "polish", "docs", "security", "plan"]),
      runId: z.string(),
      at: z.string(),
      reportTask: task.optional(),
      head: z.string(),
      tree: z.string(),
      result: z.enum(["PASS", "FAIL", "SKIPPED"]),
      findings: z.array(finding),
      detail: z.string().optional(),
    })).optional(),
  });
  const v1 = z.object({ attempts: z.array(attempt), receipts: z.array(receipt).default([]) });
  const v2 = z.object({
    version: z.literal(TASK_RECORD_VERSION),
    task,
    rounds: z.array(z.object({
      round: z.number().int().positive(),
      brief: task,
      attempts: z.array(attempt),
      receipts: z.array(receipt),
    })),
    review: review.nullable(),
    config: z.looseObject({ version: z.literal(1), at: z.string() }).optional(),
    verifications: z.array(z.object({
      at: z.string(),
      head: z.string(),
      tree: z.string(),
      file: z.string(),
      sha256: z.string(),
      name: z.string(),
      text: z.string().optional(),
    })).optional(),
    notes: z.array(z.object({
      at: z.string(),
      text: z.string(),
      delivered: z.object({ runId: z.string(), role: z.string(), at: z.string() }).optional(),
    })).optional(),
    plans: z.array(z.object({
      runId: z.string(),
      at: z.string(),
      brief: z.string(),
      result: z.enum(["PASS", "FAIL"]),
      findings: z.array(finding),
      by: z.enum(["person", "tick"]),
    })).optional(),
  });
  schemas.set("v1", v1);
  schemas.set("v2", v2);
  schemas.set("review", review);
  return schemas;
}
