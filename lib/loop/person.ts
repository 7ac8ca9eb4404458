/**
 * A person's commands on the driver every tick uses: `relay resume` clears the
 * HOLD (keeping a held run whose turn is committed, abandoning one whose turn
 * is not), and `relay close <task>` gives up on a PR — closed on the forge
 * without merging (its branch and commits stay), the run on its branch
 * abandoned, an open fix brief for it set to DONE, a HOLD about it cleared,
 * the next brief promoted — so a task that can neither pass nor be fixed
 * never wedges the loop. Each fact goes into the task's timeline.
 */
import type { RepoPaths } from "../git/discover.ts";
import { tryLock, whileNoTickRuns } from "../state/lock.ts";
import { statePaths } from "../state/paths.ts";
import type { Ending, PersonEffect, TickEnd } from "../task/effects.ts";
import {
  initialPerson,
  nextPerson,
  type PersonCommand,
  type PersonEvent,
  type PersonState,
  reducePerson,
} from "../task/person.ts";
import { readEvents, taskOfBrief } from "../task/log.ts";
import { drive, type Machine } from "./drive.ts";
import { handlePerson, type PersonContext } from "./effects/person.ts";
import { Timeline } from "./timeline.ts";

export interface PersonResult extends TickEnd {
  /** `uncertain`: resume left a HOLD on an uncertain turn as it is (see --retry-uncertain). */
  kind: "busy" | "idle" | "cleared" | "closed" | "refused" | "uncertain";
  lines: string[];
}

export function personMachine(
  ctx: PersonContext,
): Machine<PersonState, PersonEvent, PersonEffect | Ending> {
  return {
    side: "person",
    reduce: reducePerson,
    next: nextPerson,
    handle: (effect, s) => handlePerson(ctx, effect as PersonEffect, s),
    save: (before, after, event) => logPerson(ctx, before, after, event),
  };
}

/** The timeline of the task brief `brief` belongs to (a fix brief's is the task it fixes). */
async function timelineOf(ctx: PersonContext, brief: number, task?: number): Promise<Timeline> {
  const owner = task ?? await taskOfBrief(ctx.repo.commonDir, brief) ?? brief;
  // A fact about the task as a whole lands in its latest round: the brief last at work on it.
  const last = brief === owner
    ? (await readEvents(ctx.repo.commonDir, owner).catch(() => [])).at(-1)?.brief
    : undefined;
  return new Timeline(ctx.repo.commonDir, owner, last ?? brief);
}

/**
 * The person's facts worth the task's history. Best effort: the command has
 * done its work by the time a fact is logged, and a log that cannot be
 * written must not stop it halfway (the HOLD cleared, the brief not promoted).
 */
async function logPerson(
  ctx: PersonContext,
  before: PersonState,
  after: PersonState,
  e: PersonEvent,
): Promise<void> {
  try {
    await logFact(ctx, before, after, e);
  } catch (err) {
    console.error(
      `relay: warning: the task's timeline was not updated (${e.kind}): ${
        (err as Error)?.message ?? String(err)
      }`,
    );
  }
}

async function logFact(
  ctx: PersonContext,
  before: PersonState,
  after: PersonState,
  e: PersonEvent,
): Promise<void> {
  const c = before.command;
  switch (e.kind) {
    case "hold-cleared": {
      // A HOLD that names no task (task 0) has no timeline to go in.
      if (e.task < 1) return;
      const outcome = c.kind === "close"
        ? `cleared by relay close ${c.task}`
        : after.lines.slice(1).join("; ");
      const log = c.kind === "close"
        ? await timelineOf(ctx, e.task, c.task)
        : await timelineOf(ctx, e.task);
      await log.add({
        event: "resumed",
        role: "person",
        details: { reason: e.reason, ...(outcome ? { outcome } : {}) },
      });
      return;
    }
    case "close-recorded":
      if (c.kind !== "close") return;
      await (await timelineOf(ctx, e.task, e.task)).add({
        event: "closed",
        role: "person",
        details: { reason: c.reason, by: "relay close" },
      });
      return;
    case "promoted":
      if (c.kind !== "close" || e.task === null) return;
      await (await timelineOf(ctx, c.task, c.task)).add({
        event: "promoted",
        role: "person",
        details: { task: e.task, title: e.title ?? "" },
      });
      return;
    default:
      return;
  }
}

async function run(command: PersonCommand, ctx: PersonContext): Promise<PersonResult> {
  const { end } = await drive(personMachine(ctx), initialPerson(command));
  return end.result as PersonResult;
}

const busy = (message: string): PersonResult => ({ kind: "busy", message, lines: [message] });

/**
 * `relay resume`: under the poll lock, so no poll acts on the run while it is
 * settled; with --retry-uncertain also under the review lock (it settles a
 * reviewer turn).
 */
export async function resumeHold(
  repo: RepoPaths,
  opts: { retryUncertain?: boolean } = {},
): Promise<PersonResult> {
  const state = statePaths(repo.commonDir);
  await using review = opts.retryUncertain ? await tryLock(state.reviewLock, "resume") : null;
  if (opts.retryUncertain && !review) {
    return busy("busy: a tick is running; try again when it ends");
  }
  await using lock = await tryLock(state.pollLock, "resume");
  if (!lock) return busy("busy: a tick is running; try again when it ends");
  return await run(
    { kind: "resume", ...(opts.retryUncertain ? { retryUncertain: true } : {}) },
    { repo, state },
  );
}

/** `relay close <task>`: under both ticks' locks. */
export async function closeTask(
  repo: RepoPaths,
  task: number,
  reason: string,
): Promise<PersonResult> {
  const state = statePaths(repo.commonDir);
  const closed = await whileNoTickRuns(
    state,
    "close",
    () => run({ kind: "close", task, reason }, { repo, state }),
  );
  return closed?.value ?? busy("busy: a tick is running; try again in a minute");
}
