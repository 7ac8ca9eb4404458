/**
 * What the next tick of each kind will do, for `relay status`: the same
 * machines the ticks run (lib/loop/poll.ts, lib/loop/review.ts), from the
 * same records, with the same pure decisions — but every effect that would
 * change something is where the prediction stops, and the looking is done
 * offline (no fetch; origin/main as of the last fetch; the plain-git forge's
 * records are local, a GitHub PR is not). Nothing is written.
 */
import { join } from "../path.ts";
import { HoldError } from "../errors.ts";
import type { RepoPaths } from "../git/discover.ts";
import { silentLog } from "../proc/log.ts";
import { BRIEF_FILE, CONFIG_FILE, statePaths } from "../state/paths.ts";
import { readJournal } from "../state/journal.ts";
import { readHold } from "../state/hold.ts";
import { readTextOrNull } from "../state/json_file.ts";
import { readHeaderField, readHeaderTask, readStatus } from "../protocol/status_line.ts";
import { mayBeSplit } from "../state/machines.ts";
import type { ExecutorEffect, PlannerEffect } from "../task/effects.ts";
import { type ExecutorState, initialExecutor } from "../task/executor.ts";
import { initialPlanner, type PlannerState } from "../task/planner.ts";
import { sayExecutor, sayPlanner } from "../task/say.ts";
import { drive, type Machine } from "./drive.ts";
import { executorMachine } from "./poll.ts";
import { plannerMachine } from "./review.ts";
import { getReady, lookForPrsInFlight, requireOriginMain } from "./effects/attempt.ts";
import { observe, Offline } from "./effects/observe.ts";
import type { ExecContext, PlanContext } from "./effects/context.ts";

export interface Prediction {
  /** The effect the next tick performs first that changes something (or wait, done, …). */
  effect: string;
  says: string;
}

/** Where a prediction stops: the first effect that would change something. */
class Stop<F, S> extends Error {
  constructor(readonly effect: F, readonly state: S) {
    super("prediction");
  }
}

function dry<S, E extends { kind: string }, F extends ExecutorEffect | PlannerEffect>(
  machine: Machine<S, E, F>,
  look: (effect: F, state: S) => Promise<E | void> | null,
): Machine<S, E, F> {
  return {
    ...machine,
    handle: (effect, state) => {
      const looked = look(effect as F, state);
      if (looked === null) throw new Stop(effect, state);
      return looked;
    },
    save: () => Promise.resolve(),
    onHold: () => Promise.resolve(),
  };
}

function unknown(err: unknown): Prediction {
  if (err instanceof HoldError) return { effect: "hold", says: `stops: ${err.message}` };
  if (err instanceof Offline) return { effect: "observe", says: `looks first (${err.message})` };
  return { effect: "unknown", says: `cannot tell: ${(err as Error)?.message ?? err}` };
}

export async function predictPoll(repo: RepoPaths, profileFlag?: string): Promise<Prediction> {
  const state = statePaths(repo.commonDir);
  const ctx: ExecContext = {
    repo,
    state,
    log: silentLog,
    progress: "quiet",
    ...(profileFlag !== undefined ? { profileFlag } : {}),
  };
  const brief = await readTextOrNull(join(repo.root, BRIEF_FILE));
  const run = await readJournal(state.journal);
  const split = mayBeSplit(await readTextOrNull(join(repo.root, CONFIG_FILE)) ?? "");
  // No Status relay knows on line 1 of a brief with something in it: the poll says so (exit 2),
  // as lib/cli/poll.ts does before any tick (none is unfinished, the brief is this tree's).
  if (!run && !split && brief !== null && readStatus(brief) === null && brief.trim() !== "") {
    return {
      effect: "bad-input",
      says: `stops (exit 2): ${BRIEF_FILE} has no Status line relay knows on line 1`,
    };
  }
  const initial = initialExecutor({
    run,
    briefOpen: brief !== null && readStatus(brief) === "OPEN",
    hold: (await readHold(state.hold)) !== null,
  });
  const machine = dry(executorMachine(ctx), (effect, s: ExecutorState) => {
    if (effect.kind === "get-ready") return getReady(ctx, s);
    if (effect.kind === "look-for-prs-in-flight" && ctx.ready?.config.forge === "plain") {
      return lookForPrsInFlight(ctx);
    }
    return null;
  });
  try {
    const { state: s, end } = await drive(machine, initial);
    return { effect: end.kind, says: sayExecutor(end, s) };
  } catch (err) {
    if (err instanceof Stop) {
      // The attempt fetches first; as of the last fetch, it would stop where the last one did.
      if (err.effect.kind === "prepare-attempt") {
        try {
          await requireOriginMain(ctx);
        } catch (hold) {
          return unknown(hold);
        }
      }
      return { effect: err.effect.kind, says: sayExecutor(err.effect, err.state) };
    }
    return unknown(err);
  }
}

export async function predictReview(repo: RepoPaths, profileFlag?: string): Promise<Prediction> {
  const state = statePaths(repo.commonDir);
  const ctx: PlanContext = {
    repo,
    state,
    log: silentLog,
    progress: "quiet",
    ...(profileFlag !== undefined ? { profileFlag } : {}),
  };
  const mode = { kind: "tick" as const };
  const hold = (await readHold(state.hold)) !== null;
  // A reviewer-side turn an interrupted tick left (settleOrphanReviewer): the next tick looks
  // at it before anything else. Read only: a prediction never stops a process.
  // With split machines the remote decides what such a turn was worth (review_stale.ts).
  const rj = await import("./review_journal.ts");
  const split = mayBeSplit(await readTextOrNull(join(repo.root, CONFIG_FILE)) ?? "");
  const orphan = hold || split ? null : await rj.readReviewJournal(state.reviewJournal);
  if (orphan && !(await rj.outcomeRecorded(state, orphan))) {
    const { orphanState } = await import("../agents/orphan.ts");
    const turn = `the ${orphan.role ?? "reviewer"} of run ${orphan.runId} (pid ${orphan.pid})`;
    const now = await orphanState(orphan);
    if (now.kind === "running") {
      return {
        effect: "wait",
        says: `waits: ${turn}, which an interrupted tick left running, runs on`,
      };
    }
    if (now.kind === "overdue") {
      return { effect: "stop-orphan", says: `stops ${turn}, left running past its turn limit` };
    }
    // Ended unwatched: uncertain when it was about the PR the report is for (as of this tree's
    // last sync: a fix brief's own task, else the brief's), else void, and the tick goes on.
    const brief = await readTextOrNull(join(repo.root, BRIEF_FILE));
    const fixes = Number(readHeaderField(brief, "fixes") ?? NaN);
    const pr = readStatus(brief ?? "") !== "DONE"
      ? null
      : Number.isInteger(fixes)
      ? fixes
      : readHeaderTask(brief);
    if (orphan.task === pr) {
      return {
        effect: "hold",
        says:
          `stops: ${turn} ended while no tick watched it (an uncertain turn a person decides on)`,
      };
    }
  }
  const initial = initialPlanner(mode, hold);
  const machine = dry(
    plannerMachine(ctx, mode),
    (effect, _s: PlannerState) =>
      effect.kind === "observe" ? observe(ctx, mode, { offline: true }) : null,
  );
  try {
    const { state: s, end } = await drive(machine, initial);
    return { effect: end.kind, says: sayPlanner(end, s) };
  } catch (err) {
    if (err instanceof Stop) {
      return { effect: err.effect.kind, says: sayPlanner(err.effect, err.state) };
    }
    return unknown(err);
  }
}
