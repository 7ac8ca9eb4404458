/**
 * The planner's facts that prove a merge was earned, as git notes on the head
 * they judged (lib/git/notes.ts): a verdict, a stage receipt, a scope check, a
 * gate decision, the merge, a person's acceptance. Written as the driver saves
 * each fact; pushed once the command is done with the task. A note that
 * cannot be written or pushed is a warning, never a failed tick: the task's
 * own record under `.git/relay/` has it, and the next tick pushes what is left.
 */
import { HoldError } from "../errors.ts";
import { join } from "../path.ts";
import type { Git } from "../git/git.ts";
import { appendNote, type NoteRecord, pushNotes } from "../git/notes.ts";
import type { PlannerEvent, PlannerState } from "../task/planner.ts";
import type { PlanContext } from "./effects/context.ts";

/** The file under `.git/relay/` that says notes were written and not pushed yet. */
export const NOTES_UNPUSHED = "notes-unpushed";

function unpushedMarker(ctx: PlanContext): string {
  return join(ctx.state.dir, NOTES_UNPUSHED);
}

/** The note a planner fact adds, and the commit it goes on; null for facts that prove nothing. */
export function noteOf(
  ctx: PlanContext,
  after: PlannerState,
  e: PlannerEvent,
): { commit: string; record: NoteRecord } | null {
  const task = ctx.subject?.task;
  const head = ctx.pr?.head;
  if (task === undefined) return null;
  const at = new Date().toISOString();
  switch (e.kind) {
    case "verdict":
      return {
        commit: e.verdict.head,
        record: {
          kind: "verdict",
          task,
          head: e.verdict.head,
          result: e.verdict.verdict,
          findings: e.verdict.findings.length,
          at,
        },
      };
    case "stage-ran":
      return {
        commit: e.run.head,
        record: {
          kind: "stage",
          stage: e.run.stage,
          task,
          head: e.run.head,
          result: e.run.result,
          at,
        },
      };
    case "scope-checked":
      if (!head || e.result === "PASS") return null;
      return {
        commit: head,
        record: { kind: "scope", task, head, result: e.result, reason: e.reason, at },
      };
    case "gate-decided":
      if (e.decision.decision === "WAIT") return null;
      return {
        commit: e.decision.head,
        record: {
          kind: "gate",
          task,
          head: e.decision.head,
          base: e.decision.base,
          decision: e.decision.decision,
          at,
        },
      };
    case "routed-to-person":
      return {
        commit: e.head,
        record: { kind: "routed", task, head: e.head, files: e.files, at },
      };
    case "merge-landed":
      if (!head) return null;
      return {
        commit: head,
        record: {
          kind: "merged",
          task,
          head,
          sha: e.sha,
          by: after.intent ? "relay, accepted by a person" : "relay",
          at,
        },
      };
    case "merge-noted":
      // Merged by relay on another reviewer machine (split): that machine wrote its note.
      if (!head || ctx.pr?.mergedBy === "relay") return null;
      return {
        commit: head,
        record: { kind: "merged", task, head, sha: e.sha, by: "a person, outside relay", at },
      };
    default:
      return null;
  }
}

/** Writes the note of a fact (when it has one); a failure is logged, not thrown. */
export async function writeNote(
  ctx: PlanContext,
  after: PlannerState,
  e: PlannerEvent,
): Promise<void> {
  const note = noteOf(ctx, after, e);
  const primary = ctx.ready?.primary;
  if (!note || !primary) return;
  await appendRecords(ctx, primary, note.commit, [note.record]);
}

/** A person's acceptance or rejection, on the head it was for. */
export async function writeIntentNote(ctx: PlanContext, after: PlannerState): Promise<void> {
  const primary = ctx.ready?.primary;
  const task = ctx.subject?.task;
  if (!after.intent || !primary || task === undefined) return;
  const { intent, digest } = after.intent;
  await appendRecords(ctx, primary, intent.head, [{
    kind: intent.action === "accept" ? "accepted" : "rejected",
    task,
    head: intent.head,
    digest,
    at: new Date().toISOString(),
  }]);
}

async function appendRecords(
  ctx: PlanContext,
  primary: Git,
  commit: string,
  records: NoteRecord[],
): Promise<void> {
  try {
    if (await appendNote(primary, commit, records)) {
      await Deno.writeTextFile(unpushedMarker(ctx), `${new Date().toISOString()}\n`);
    }
  } catch (err) {
    ctx.log.step(
      `warning: could not write relay's git note on ${commit.slice(0, 12)}: ${
        ((err as Error)?.message ?? String(err)).split("\n")[0]
      }`,
    );
  }
}

/**
 * Pushes notes written and not pushed yet (by this command or one before it
 * whose push failed). Starts no process when there is nothing to push.
 */
export async function publishNotes(ctx: PlanContext): Promise<void> {
  const marker = unpushedMarker(ctx);
  const primary = ctx.ready?.primary;
  const remote = ctx.ready?.config.remote;
  if (!primary || !remote) return;
  try {
    await Deno.stat(marker);
  } catch {
    return;
  }
  try {
    const why = await pushNotes(primary, remote);
    if (why === null) {
      await Deno.remove(marker).catch(() => {});
    } else {
      ctx.log.step(
        `warning: relay's git notes were not pushed (the next tick tries again): ${why}`,
      );
    }
  } catch (err) {
    // A HOLD: no "next tick" here until a person acts.
    const when = err instanceof HoldError ? "" : " (the next tick tries again)";
    ctx.log.step(
      `warning: relay's git notes were not pushed${when}: ${
        ((err as Error)?.message ?? String(err)).split("\n")[0]
      }`,
    );
  }
}
