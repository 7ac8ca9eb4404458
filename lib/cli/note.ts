/**
 * `relay note <task> TEXT`: a person's note, shown to the next agent turn of
 * that task (executor or reviewer, whichever runs first), then marked as
 * shown to it. Notes live in the task's record, which the turn guard watches:
 * an agent cannot plant one for another. So a note is added only while no
 * tick runs (both locks, for a moment), like relay close.
 */
import { UsageError } from "../errors.ts";
import { type Context, parseCommand, requireRepo } from "./args.ts";

const MAX_NOTE = 4_000;

export async function note(args: string[], ctx: Context): Promise<number> {
  const { positionals } = parseCommand("note", args, {}, {
    min: 2,
    max: 2,
    names: "<task> TEXT",
  });
  const task = Number(positionals[0]);
  if (!Number.isInteger(task) || task <= 0) {
    throw new UsageError(`"${positionals[0]}" is not a task number`, "note");
  }
  const text = positionals[1]!.trim();
  if (text === "") {
    throw new UsageError("the note is empty: say what the next turn should know", "note");
  }
  if (text.length > MAX_NOTE) {
    throw new UsageError(
      `the note is ${text.length} characters; keep it under ${MAX_NOTE} (put more in the brief)`,
      "note",
    );
  }
  const repo = requireRepo(ctx);
  const { statePaths } = await import("../state/paths.ts");
  const { whileNoTickRuns } = await import("../state/lock.ts");
  const { addNote } = await import("../state/tasks.ts");
  const state = statePaths(repo.commonDir);
  const { ownerOfBrief, readTask } = await import("../state/tasks.ts");
  const owner = await ownerOfBrief(state, task) ?? await waitingTask(repo.root, task);
  if (owner === null) {
    throw new UsageError(
      `task ${task} is neither running nor queued (no record, not in NEXT-STEPS.md, not in the inbox): a note would reach no turn`,
      "note",
    );
  }
  const review = (await readTask(state, owner)).review;
  if (review?.merged || review?.closed) {
    throw new UsageError(
      `task ${owner} is ${
        review.merged ? "merged" : "closed"
      }: no turn of it is left to read a note`,
      "note",
    );
  }
  if (!await whileNoTickRuns(state, "note", () => addNote(state, owner, text))) {
    console.log(
      "not noted: a tick is running (an agent turn may be under way); try again when it ends",
    );
    return 1;
  }
  const { Timeline } = await import("../loop/timeline.ts");
  await new Timeline(repo.commonDir, owner, task).add({
    event: "noted",
    role: "person",
    details: { text },
  }).catch((err) =>
    console.error(`relay: warning: the task's timeline was not updated: ${(err as Error).message}`)
  );
  console.log(
    `noted for task ${owner}${
      owner === task ? "" : ` (brief ${task} is a round of it)`
    }: the next agent turn of task ${owner} is shown it`,
  );
  return 0;
}

/**
 * A brief that has no record yet but will run: the open brief (a fix brief's
 * work belongs to the task it fixes) or one queued in the inbox.
 */
async function waitingTask(root: string, task: number): Promise<number | null> {
  const { join } = await import("../path.ts");
  const { BRIEF_FILE } = await import("../state/paths.ts");
  const text = await Deno.readTextFile(join(root, BRIEF_FILE)).catch(() => "");
  const header = (key: string) => new RegExp(`^${key}:[ \\t]*(\\d+)[ \\t]*$`, "m").exec(text)?.[1];
  if (Number(header("Task")) === task) return Number(header("Fixes") ?? task);
  const { listInbox } = await import("../loop/inbox.ts");
  const queued = await listInbox(root).catch(() => []);
  return queued.some((e) => e.task === task) ? task : null;
}
