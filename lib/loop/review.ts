/**
 * `relay review`: the reviewer tick that cron runs every minute, and
 * `relay merge`, what a PASS does on demand.
 *
 * The tick reads the executor's report from origin/main (never from the PR or
 * the working tree), has a different agent review the PR head in a disposable
 * worktree, records the verdict against that exact head, and then either
 * merges through the gate (PASS) or writes a fix brief (FAIL). The planner
 * never commits: the promotion and fix briefs it writes are left uncommitted
 * for the executor's next paperwork commit. The decisions are
 * lib/task/planner.ts and planner_next.ts (pure); the effects are the handlers in
 * lib/loop/effects/; lib/loop/drive.ts runs the one between the other.
 */
import { HoldError, LeaseLostError, RetryError } from "../errors.ts";
import { join } from "../path.ts";
import { type HeldLock, LOCK_WAIT_MS, lockHolder, tryLock, waitLock } from "../state/lock.ts";
import { statePaths } from "../state/paths.ts";
import { readHold } from "../state/hold.ts";
import { writeReview } from "../state/tasks.ts";
import type { GateDecision } from "../gate/gate.ts";
import type { PlannerEffect } from "../task/effects.ts";
import {
  type AcceptRequest,
  initialPlanner,
  type Intent,
  type PlannerEvent,
  type PlannerMode,
  type PlannerState,
  reducePlanner,
} from "../task/planner.ts";
import { nextPlanner } from "../task/planner_next.ts";
import { drive, type Machine } from "./drive.ts";
import type { PlanContext } from "./effects/context.ts";
import { observe } from "./effects/observe.ts";
import { runReviewerTurn } from "./effects/review_turn.ts";
import { runStage } from "./effects/stage.ts";
import { checkPreview } from "./effects/preview.ts";
import { checkScope, gate, merge } from "./effects/gate.ts";
import {
  handBlockedOver,
  markStale,
  noteClose,
  noteMerge,
  routeToPerson,
  sendBack,
} from "./effects/verdicts.ts";
import { promote } from "./effects/promotion.ts";
import { recordAcceptance, weighAcceptance } from "./effects/acceptance.ts";
import { recordHold, stopOnHold } from "./effects/hold.ts";
import type { TickOptions } from "./log.ts";
import { heldEntry, plannerEntry, Timeline } from "./timeline.ts";
import { publishNotes, writeIntentNote, writeNote } from "./notes.ts";

export type ReviewResult =
  | { kind: "idle"; message: string }
  /** relay pause is on: nothing was started. */
  | { kind: "paused"; message: string }
  | { kind: "busy"; message: string }
  | { kind: "waiting"; message: string }
  /** A PR merged or closed outside relay, noticed now (said once, also under --quiet). */
  | { kind: "settled"; message: string }
  | { kind: "human"; message: string; files: string[] }
  | { kind: "merged"; message: string; task: number; sha: string }
  | {
    kind: "fix";
    message: string;
    task: number;
    fixTask: number;
    why: string;
    /** The merge gate refused the PR (rather than a verdict's or a stage's FAIL). */
    refused: boolean;
  }
  /** relay accept/reject --intent-only: what it would do, and the digest to do it with. */
  | { kind: "intent"; message: string; digest: string; intent: Intent }
  /** relay accept/reject --expect with a digest the state no longer yields. */
  | { kind: "refused"; message: string; digest: string; intent: Intent; changed: string[] };

export type ReviewOptions = TickOptions;

/** How long a split-mode review waits for this machine's poll to leave the primary tree. */
const SPLIT_POLL_WAIT_MS = 15_000;

export async function runReviewTick(opts: ReviewOptions): Promise<ReviewResult> {
  const state = statePaths(opts.repo.commonDir);
  const { pausedLine, readPause } = await import("../state/pause.ts");
  const paused = await readPause(state.pause);
  if (paused) return { kind: "paused", message: pausedLine(paused) };
  // machines: split — the reviewer's role is leased on the remote, and its paperwork is its own.
  const { splitConfig } = await import("./split.ts");
  const split = await splitConfig(opts.repo.root);
  const splitPoll = split ? await splitPollLock(state, "review") : null;
  if (splitPoll && "busy" in splitPoll) return { kind: "busy", message: splitPoll.busy };
  await using _poll = splitPoll;
  // A poll preparing an attempt (or a person's merge or close) holds this lock for moments:
  // wait for it. Another review holds it for a whole reviewer turn: that one is not stacked.
  await using lock = await waitLock(state.reviewLock, "review", {
    waitMs: LOCK_WAIT_MS,
    waitFor: (holder) => holder.command !== "review",
  });
  if (!lock) {
    const holder = await lockHolder(state.reviewLock);
    return {
      kind: "busy",
      message: holder?.command === "review"
        ? "busy: another relay review is running"
        : `busy: relay ${holder?.command ?? "poll"} held the review lock for ${
          LOCK_WAIT_MS / 1000
        }s; the next tick reviews`,
    };
  }
  if (!split) return await reviewTick(opts, state);
  return await asSplitReviewer(split, opts, state, () => reviewTick(opts, state, true));
}

/**
 * `machines: split`: a reviewer-side command commits in the primary tree, so this machine's
 * poll must not work there meanwhile: it holds the poll lock too. Taken before the review lock,
 * in the order the poll tick takes them (it holds its lock for the whole tick and takes the
 * review lock to prepare an attempt): taken the other way round, a review and a poll started
 * together would each wait on the other until the review gave up. A poll is waited for (one
 * that only looks, or starts an attempt, ends within moments), as is a person's command (none
 * waits for a lock it does not hold); another review is not.
 */
async function splitPollLock(
  state: ReturnType<typeof statePaths>,
  command: string,
): Promise<HeldLock | { busy: string }> {
  const lock = await waitLock(state.pollLock, command, {
    waitMs: SPLIT_POLL_WAIT_MS,
    waitFor: (holder) => holder.command !== "review",
  });
  if (lock) return lock;
  const holder = (await lockHolder(state.pollLock))?.command;
  return {
    busy: holder === "review"
      ? "busy: another relay review is running"
      : holder === "poll" || holder === undefined
      ? "busy: relay poll is running on this machine"
      : `busy: relay ${holder} is running on this machine`,
  };
}

/** Results that did something on the remote: their news stands when only the paperwork waits. */
const DID: ReadonlySet<ReviewResult["kind"]> = new Set(["merged", "fix", "human"]);

/**
 * `machines: split`: runs a reviewer-side command (the tick, `relay merge`, `relay accept`)
 * under the reviewer's lease on the remote, with the primary tree brought up to the remote's
 * main first and what the command left in the brief and the inbox committed and pushed after.
 * The command commits in the primary tree: its caller holds the poll lock (splitPollLock).
 */
async function asSplitReviewer<R extends ReviewResult>(
  split: import("../config/repo_load.ts").RepoConfig,
  opts: ReviewOptions,
  state: ReturnType<typeof statePaths>,
  run: () => Promise<R>,
): Promise<R | ReviewResult> {
  const { publishReviewerPaperwork, startReviewer } = await import("./split.ts");
  const start = await startReviewer(split, opts.repo, state, opts.log, opts.say);
  if ("busy" in start) return { kind: "busy", message: start.busy };
  let result: R;
  try {
    result = await run();
  } catch (err) {
    // The promotion or fix brief written before a HOLD still goes out; the HOLD is the news.
    await publishReviewerPaperwork(split, opts.repo, state, opts.log).catch((e) =>
      opts.log.step(`the reviewer's paperwork waits on local ${split.main}: ${e.message}`)
    );
    await endReview(start.role, state);
    throw err;
  }
  try {
    await publishReviewerPaperwork(split, opts.repo, state, opts.log);
  } catch (err) {
    // What the command did (a merge pushed, a PR sent back or routed to a person) stands and is
    // said as ever; only its paperwork, which the remote did not take, waits, as after a
    // killed tick. Anything else (nothing done, a lease lost, a HOLD) ends the command as ever.
    if (!(err instanceof RetryError) || err instanceof LeaseLostError || !DID.has(result.kind)) {
      throw err;
    }
    (opts.say ?? ((line: string) => opts.log.step(line)))(
      `the reviewer's paperwork waits on local ${split.main} (${err.message}): the next relay ` +
        "review on this machine pushes it, or sets it aside if another machine went on meanwhile",
    );
  } finally {
    await endReview(start.role, state);
  }
  return result;
}

/**
 * A review turn still journaled here (interrupted, its outcome not on record) or a HOLD here
 * keeps the lease (split.ts letGo); so do notes written here and not pushed yet: another
 * machine tells relay's merge from a person's by the note on the head
 * (lib/loop/effects/observe.ts), so it must not review before that note is on the remote.
 * This machine's next tick renews the lease and pushes them. Otherwise the lease is let go.
 */
async function endReview(
  role: import("./split.ts").HeldRole,
  state: ReturnType<typeof statePaths>,
): Promise<void> {
  const { readTextOrNull } = await import("../state/json_file.ts");
  const { NOTES_UNPUSHED } = await import("./notes.ts");
  const { letGo } = await import("./split.ts");
  const unpushed = (await readTextOrNull(join(state.dir, NOTES_UNPUSHED))) !== null;
  // A turn whose tick died after its outcome was recorded left its journal: when this tick
  // ran no turn (the PR merged meanwhile on another machine), nothing else clears it, and it
  // would keep the lease here for good.
  const { clearRecordedReviewJournal } = await import("./review_journal.ts");
  await clearRecordedReviewJournal(state);
  await letGo(role, state, state.reviewJournal, unpushed);
}

async function reviewTick(
  opts: ReviewOptions,
  state: ReturnType<typeof statePaths>,
  pollLockHeld = false,
): Promise<ReviewResult> {
  const ctx: PlanContext = {
    repo: opts.repo,
    state,
    ...(pollLockHeld ? { pollLockHeld } : {}),
    log: opts.log,
    progress: opts.progress,
    ...(opts.profileFlag !== undefined ? { profileFlag: opts.profileFlag } : {}),
    ...(opts.flags ? { flags: opts.flags } : {}),
  };
  const mode: PlannerMode = { kind: "tick" };
  try {
    const initial = initialPlanner(mode, (await readHold(state.hold)) !== null);
    const { end } = await drive(plannerMachine(ctx, mode), initial, opts.effects);
    return end.result as ReviewResult;
  } catch (err) {
    // A HOLD from deeper down (the forge refused the merge push) is about the PR's task.
    const task = ctx.subject?.task;
    if (
      err instanceof HoldError && err.task === undefined && !err.recheck && !err.recorded &&
      task !== undefined
    ) {
      throw new HoldError(err.message, err.next, { task });
    }
    throw err;
  } finally {
    // Also after a HOLD: the verdict that led to it is part of the record.
    await publishNotes(ctx);
  }
}

/** `relay merge [<task>]`: the gate, then the merge, then promotion — what a PASS does, on demand. */
export async function runMerge(
  opts: ReviewOptions & { task?: number; accept?: AcceptRequest },
): Promise<ReviewResult & { decision?: GateDecision }> {
  const state = statePaths(opts.repo.commonDir);
  const command = opts.accept ? opts.accept.action : "merge";
  const { splitConfig } = await import("./split.ts");
  const split = await splitConfig(opts.repo.root);
  // machines: split — held for the whole command, taken before the review lock (see there).
  const splitPoll = split ? await splitPollLock(state, command) : null;
  if (splitPoll && "busy" in splitPoll) {
    return { kind: "busy", message: `${splitPoll.busy}; try again when it ends` };
  }
  await using _poll = splitPoll;
  await using lock = await tryLock(state.reviewLock, command);
  if (!lock) {
    const holder = (await lockHolder(state.reviewLock))?.command ?? "review";
    return { kind: "busy", message: `busy: relay ${holder} is running; try again when it ends` };
  }
  // A person's acceptance never runs beside a poll: its records are ones a running turn's
  // guard watches, and an agent mid-turn must not be able to accept its own work. Checked,
  // then let go (the promotion takes the poll lock itself); a poll that starts now waits for
  // the review lock, held here, before it prepares an attempt. (Split mode holds it already.)
  if (opts.accept && !split) {
    await using poll = await tryLock(state.pollLock, opts.accept.action);
    if (!poll) {
      return { kind: "busy", message: "busy: a relay poll is running; try again when it ends" };
    }
  }
  if (split) return await asSplitReviewer(split, opts, state, () => mergeNow(opts, state, true));
  return await mergeNow(opts, state);
}

async function mergeNow(
  opts: ReviewOptions & { task?: number; accept?: AcceptRequest },
  state: ReturnType<typeof statePaths>,
  pollLockHeld = false,
): Promise<ReviewResult & { decision?: GateDecision }> {
  const ctx: PlanContext = {
    repo: opts.repo,
    state,
    log: opts.log,
    progress: opts.progress,
    ...(pollLockHeld ? { pollLockHeld } : {}),
  };
  const mode: PlannerMode = {
    kind: "merge",
    ...(opts.task !== undefined ? { task: opts.task } : {}),
    ...(opts.accept ? { accept: opts.accept } : {}),
  };
  try {
    const { end } = await drive(plannerMachine(ctx, mode), initialPlanner(mode, false));
    return end.result as ReviewResult & { decision?: GateDecision };
  } finally {
    await publishNotes(ctx);
  }
}

/** The planner's side of the machine: its decisions, its handlers, what it saves. */
export function plannerMachine(
  ctx: PlanContext,
  mode: PlannerMode,
): Machine<PlannerState, PlannerEvent, PlannerEffect> {
  return {
    side: "planner",
    reduce: reducePlanner,
    next: nextPlanner,
    handle: (effect, s, emit) => handle(ctx, mode, effect, s, emit),
    save: async (before, after, event) => {
      // What was read is not written back: a review that only looks changes nothing.
      if (event.kind === "observed") return;
      if (after.record && after.record !== before.record) {
        await writeReview(ctx.state, after.record);
      }
      const entry = plannerEntry(before, after, event);
      const log = timeline(ctx);
      if (entry && log) await log.add(entry);
      // The facts that prove a merge was earned also go on the head, as git notes.
      await writeNote(ctx, after, event);
      // A person's acceptance is on record once it took effect: merged, or sent back.
      if (after.intent && (event.kind === "merge-landed" || event.kind === "sent-back")) {
        await recordAcceptance(ctx, after);
        await writeIntentNote(ctx, after);
        const { intent, digest } = after.intent;
        await log?.add({
          event: intent.action === "accept" ? "accepted" : "rejected",
          role: "person",
          details: { digest, head: intent.head, reason: intent.reason },
        });
      }
    },
    onHold: async (_s, err) => {
      const entry = heldEntry(err);
      const log = timeline(ctx);
      if (entry && log) await log.add(entry);
    },
  };
}

/** The PR's task's timeline, once the report on main is read. */
function timeline(ctx: PlanContext): Timeline | null {
  const s = ctx.subject;
  if (!s) return null;
  const key = `${s.task}/${s.report.task}`;
  if (ctx.timeline?.key !== key) {
    ctx.timeline = { key, log: new Timeline(ctx.repo.commonDir, s.task, s.report.task) };
  }
  return ctx.timeline.log;
}

function handle(
  ctx: PlanContext,
  mode: PlannerMode,
  effect: Exclude<PlannerEffect, { kind: "wait" | "done" }>,
  s: PlannerState,
  emit: (e: PlannerEvent) => Promise<void>,
): Promise<PlannerEvent | void> | PlannerEvent {
  switch (effect.kind) {
    case "stop-on-hold":
      return stopOnHold(ctx.state.hold);
    case "record-hold":
      return recordHold(ctx.state.hold, effect, ctx.subject?.task ?? 0);
    case "observe":
      return observe(ctx, mode);
    case "hand-blocked-over":
      return handBlockedOver(s);
    case "note-merge":
      return noteMerge(ctx, s);
    case "note-close":
      return noteClose(ctx);
    case "promote":
      // A person's merge or accept promotes, but never runs a plan review's turn itself.
      return promote(ctx, effect, mode.kind === "tick");
    case "check-scope":
      return checkScope(ctx);
    case "check-preview":
      return checkPreview(ctx);
    case "run-turn":
      return runReviewerTurn(ctx, emit, null, s.preview?.ready ? s.preview.url : undefined);
    case "run-stage":
      return runStage(ctx, effect.stage, emit);
    case "gate":
      return gate(ctx, s, mode, emit);
    case "mark-stale":
      return markStale(ctx);
    case "send-back":
      return sendBack(ctx, effect.findings, effect.why, effect.again);
    case "route-to-person":
      return routeToPerson(ctx, effect.files);
    case "merge":
      return merge(ctx, s, mode);
    case "weigh-acceptance":
      return weighAcceptance(ctx, s, (mode as { accept: AcceptRequest }).accept);
  }
}
