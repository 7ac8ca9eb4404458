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
  const { tryLock } = await import("../state/lock.ts");
  const { addNote } = await import("../state/tasks.ts");
  const state = statePaths(repo.commonDir);
  {
    await using review = await tryLock(state.reviewLock, "note");
    await using poll = review ? await tryLock(state.pollLock, "note") : null;
    if (!review || !poll) {
      console.log(
        "not noted: a tick is running (an agent turn may be under way); try again when it ends",
      );
      return 1;
    }
    await addNote(state, task, text);
  }
  const { Timeline } = await import("../loop/timeline.ts");
  await new Timeline(repo.commonDir, task, task).add({
    event: "noted",
    role: "person",
    details: { text },
  }).catch((err) =>
    console.error(`relay: warning: the task's timeline was not updated: ${(err as Error).message}`)
  );
  console.log(`noted for task ${task}: the next agent turn of task ${task} is shown it`);
  return 0;
}
