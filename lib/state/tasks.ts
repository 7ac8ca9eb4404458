/**
 * Per-task records under `.git/relay/tasks/<n>.json`: every attempt and a
 * receipt for each stage a task passes. Part 1 writes the `implementation`
 * stage; review, finish, polish, docs, security and acceptance add their own
 * receipts to the same list later.
 */
import { join } from "node:path";
import { readJson, writeJson } from "./json_file.ts";

export type Stage =
  | "plan"
  | "implementation"
  | "review"
  | "finish"
  | "polish"
  | "docs"
  | "security"
  | "acceptance";

export interface Attempt {
  runId: string;
  /** sha256 of the brief the attempt worked on: an edited brief starts a fresh count. */
  brief: string;
  started: string;
  result: "shipped" | "failed" | "blocked";
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

export interface TaskRecord {
  task: number;
  attempts: Attempt[];
  receipts: Receipt[];
}

export function taskRecordPath(tasksDir: string, task: number): string {
  return join(tasksDir, `${task}.json`);
}

export async function readTaskRecord(tasksDir: string, task: number): Promise<TaskRecord> {
  return (await readJson<TaskRecord>(taskRecordPath(tasksDir, task))) ??
    { task, attempts: [], receipts: [] };
}

/** Records an attempt once (by run id), so a resumed tick never counts it twice. */
export async function recordAttempt(
  tasksDir: string,
  task: number,
  attempt: Attempt,
): Promise<TaskRecord> {
  const record = await readTaskRecord(tasksDir, task);
  const i = record.attempts.findIndex((a) => a.runId === attempt.runId);
  if (i === -1) record.attempts.push(attempt);
  else record.attempts[i] = attempt;
  await writeJson(taskRecordPath(tasksDir, task), record);
  return record;
}

export async function addReceipt(tasksDir: string, task: number, receipt: Receipt): Promise<void> {
  const record = await readTaskRecord(tasksDir, task);
  if (!record.receipts.some((r) => r.runId === receipt.runId && r.stage === receipt.stage)) {
    record.receipts.push(receipt);
    await writeJson(taskRecordPath(tasksDir, task), record);
  }
}

/** Failed attempts at this version of the brief. */
export function failedAttempts(record: TaskRecord, briefHash: string): number {
  return record.attempts.filter((a) => a.brief === briefHash && a.result === "failed").length;
}
