/**
 * Promotion: the next queued brief becomes NEXT-STEPS.md with Status: OPEN,
 * only when no brief is open. Left uncommitted: the executor's next paperwork
 * commit carries it (the planner never commits).
 */
import { join } from "../path.ts";
import { parseBrief } from "../protocol/brief.ts";
import { writeBrief } from "../protocol/brief_write.ts";
import { readHeaderField, readHeaderTask, readStatus } from "../protocol/status_line.ts";
import { BRIEF_FILE, INBOX_DIR } from "../state/paths.ts";
import { inboxFile, listInbox } from "./inbox.ts";
import type { PlanGate } from "./plan_gate.ts";

export type PromoteResult =
  | { result: "promoted"; task: number; title: string; from: string }
  /** plan_review is on and the next brief has no plan PASS as it is (lib/loop/plan.ts). */
  | { result: "needs-plan"; task: number; title: string; from: string; message: string }
  | { result: "open"; task: number | null; message: string }
  | { result: "empty"; message: string };

export async function promoteNext(root: string, gate?: PlanGate): Promise<PromoteResult> {
  const path = join(root, BRIEF_FILE);
  let current: string | null = null;
  try {
    current = await Deno.readTextFile(path);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  let currentTask: number | null = null;
  if (current !== null) {
    const status = readStatus(current);
    // A Status line with an unknown value (`Status: MAYBE`), or none in a file with something
    // in it (a line deleted by hand, a file of notes that is not relay's), is refused by
    // parseBrief, not overwritten: the poll stops on it the same way.
    const brief = status === null && current.trim() === "" ? null : parseBrief(current, BRIEF_FILE);
    currentTask = brief?.task ?? null;
    if (status === "OPEN") {
      return {
        result: "open",
        task: currentTask,
        message: `not promoting: task ${currentTask} is still open in ${BRIEF_FILE}`,
      };
    }
  }
  for (const entry of await listInbox(root)) {
    if (entry.task === currentTask) {
      // Promoted before, but the queue file survived (an interrupted promote): drop the stale copy.
      await Deno.remove(join(root, entry.file));
      continue;
    }
    const waits = gate ? await gate(entry.brief) : null;
    if (waits !== null) {
      return {
        result: "needs-plan",
        task: entry.task,
        title: entry.title,
        from: entry.file,
        message: `not promoting: ${waits}`,
      };
    }
    await Deno.writeTextFile(path, writeBrief({ ...entry.brief, status: "OPEN" }));
    await Deno.remove(join(root, entry.file));
    return { result: "promoted", task: entry.task, title: entry.title, from: entry.file };
  }
  return { result: "empty", message: "nothing to promote: the inbox is empty" };
}

/**
 * Why promoting now would change nothing (a brief is open, or the inbox is
 * empty), or null when it would promote — or retire the open fix brief for
 * the `retiring` branch. Reads files only; takes no lock.
 */
export async function promotionIdle(root: string, retiring?: string): Promise<string | null> {
  const current = await Deno.readTextFile(join(root, BRIEF_FILE)).catch(() => null);
  if (current !== null && readStatus(current) === "OPEN") {
    // An open fix brief for a branch that is being retired is something to do.
    if (
      retiring !== undefined && readHeaderField(current, "kind")?.toLowerCase() === "fix" &&
      readHeaderField(current, "branch") === retiring
    ) {
      return null;
    }
    const task = readHeaderTask(current) ?? "?";
    return `not promoting: task ${task} is still open in ${BRIEF_FILE}`;
  }
  if ((await listInbox(root)).length === 0) return "nothing to promote: the inbox is empty";
  return null;
}

/**
 * Puts an OPEN brief in NEXT-STEPS.md back into the inbox (Status: QUEUED),
 * so the planner can write a fix brief there without losing it. Returns the
 * inbox file, or null when NEXT-STEPS.md holds no open brief.
 */
export async function demoteOpenBrief(root: string): Promise<string | null> {
  let text: string;
  try {
    text = await Deno.readTextFile(join(root, BRIEF_FILE));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
  if (readStatus(text) !== "OPEN") return null;
  const brief = parseBrief(text, BRIEF_FILE);
  const file = inboxFile(brief.task, brief.title);
  await Deno.mkdir(join(root, INBOX_DIR), { recursive: true });
  await Deno.writeTextFile(join(root, file), writeBrief({ ...brief, status: "QUEUED" }));
  return file;
}

/**
 * Retires the open fix brief for `branch` when its PR was settled outside
 * relay (merged or closed by a person): NEXT-STEPS.md keeps the brief, set to
 * DONE, with the reason under "## Retired by relay", and nothing is launched
 * for it. Returns the retired task, or null when no such brief is open.
 */
export async function retireFixBrief(
  root: string,
  branch: string,
  reason: string,
): Promise<number | null> {
  const path = join(root, BRIEF_FILE);
  const text = await Deno.readTextFile(path).catch(() => null);
  if (text === null || readStatus(text) !== "OPEN") return null;
  const brief = parseBrief(text, BRIEF_FILE);
  if (brief.kind !== "fix" || brief.branch !== branch) return null;
  await Deno.writeTextFile(
    path,
    writeBrief({
      ...brief,
      status: "DONE",
      extra: [...brief.extra, { heading: "Retired by relay", body: reason }],
    }),
  );
  return brief.task;
}
