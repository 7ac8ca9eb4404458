/**
 * `relay poll`: the executor tick that cron runs every minute.
 *
 * One tick takes the open brief through one attempt: worktree → agent →
 * commit (product only) → relay's own evidence → push → PR → paperwork commit
 * on main. The decisions are lib/task/executor.ts (pure); the effects are the
 * handlers in lib/loop/effects/; lib/loop/drive.ts runs the one between the
 * other. Every step is journaled, so a tick killed anywhere is finished by
 * the next one.
 */
import { join } from "../path.ts";
import { LOCK_WAIT_MS, lockHolder, waitLock } from "../state/lock.ts";
import { BRIEF_FILE, statePaths } from "../state/paths.ts";
import { readJournal, writeJournal } from "../state/journal.ts";
import { readHold } from "../state/hold.ts";
import { failpoint } from "../state/failpoint.ts";
import { readTextOrNull } from "../state/json_file.ts";
import { readStatus } from "../protocol/status_line.ts";
import type { ExecutorEffect } from "../task/effects.ts";
import {
  type ExecutorEvent,
  type ExecutorState,
  initialExecutor,
  nextExecutor,
  reduceExecutor,
} from "../task/executor.ts";
import { drive, type Machine } from "./drive.ts";
import type { ExecContext } from "./effects/context.ts";
import { getReady, lookForPrsInFlight, prepareAttempt, retireFix } from "./effects/attempt.ts";
import { checkOrphanTurn, runExecutorTurn } from "./effects/turn.ts";
import { adoptBranch, guardAndCommit, openBlockedRun, recordFailure } from "./effects/commit.ts";
import {
  commitPaperworkEffect,
  finishAttempt,
  openPr,
  pushBranch,
  pushPaperwork,
  runBarEffect,
} from "./effects/publish.ts";
import { recordHold, stopOnHold } from "./effects/hold.ts";
import type { TickOptions } from "./log.ts";
import { executorEntry, heldEntry, Timeline } from "./timeline.ts";

export type TickResult =
  | { kind: "idle"; message: string }
  /** relay pause is on: nothing was started. */
  | { kind: "paused"; message: string }
  | { kind: "busy"; message: string }
  | { kind: "shipped"; message: string; task: number; pr: string; head: string }
  | { kind: "blocked"; message: string; task: number }
  /** A fix brief whose PR a person already merged or closed: set to DONE, nothing launched. */
  | { kind: "retired"; message: string; task: number }
  | { kind: "failed"; message: string; task: number; attempt: number };

export type PollOptions = TickOptions;

export async function runPollTick(opts: PollOptions): Promise<TickResult> {
  const state = statePaths(opts.repo.commonDir);
  // Paused: nothing starts, not even the rest of a killed tick's run.
  const { pausedLine, readPause } = await import("../state/pause.ts");
  const paused = await readPause(state.pause);
  if (paused) return { kind: "paused", message: pausedLine(paused) };
  // Another poll is not waited for (a long run must not stack); a promotion, a resume or a
  // close holds this lock for a moment and is.
  await using lock = await waitLock(state.pollLock, "poll", {
    waitMs: LOCK_WAIT_MS,
    waitFor: (holder) => holder.command !== "poll",
  });
  if (!lock) {
    const holder = (await lockHolder(state.pollLock))?.command ?? "poll";
    return {
      kind: "busy",
      message: holder === "poll"
        ? "busy: another relay poll is running"
        : `busy: relay ${holder} held the poll lock for ${LOCK_WAIT_MS / 1000}s`,
    };
  }
  failpoint("after-lock");

  // machines: split — new work arrives on the remote, and the role is leased there.
  const { splitConfig } = await import("./split.ts");
  const split = await splitConfig(opts.repo.root);
  if (!split) return await pollTick(opts, state);
  const { letGo, startExecutor } = await import("./split.ts");
  const start = await startExecutor(split, opts.repo, state, opts.log, {
    say: opts.say,
    profileFlag: opts.profileFlag,
  });
  if ("idle" in start) return { kind: "idle", message: start.idle };
  if ("busy" in start) return { kind: "busy", message: start.busy };
  let result: TickResult | undefined;
  try {
    result = await pollTick(opts, state);
    return result;
  } finally {
    // An attempt still journaled here, or a HOLD, keeps the lease: no other machine starts
    // the task over (a second attempt, or one past the HOLD a person is to look at). So does
    // a failed attempt with attempts left: this machine has its count and its unpushed work,
    // and makes the next one.
    await letGo(start.role, state, state.journal, result?.kind === "failed");
  }
}

async function pollTick(
  opts: PollOptions,
  state: ReturnType<typeof statePaths>,
): Promise<TickResult> {
  const run = await readJournal(state.journal);
  const briefText = await readTextOrNull(join(opts.repo.root, BRIEF_FILE));
  const ctx: ExecContext = {
    repo: opts.repo,
    state,
    log: opts.log,
    progress: opts.progress,
    ...(opts.profileFlag !== undefined ? { profileFlag: opts.profileFlag } : {}),
    ...(opts.flags ? { flags: opts.flags } : {}),
    ...(opts.say ? { say: opts.say } : {}),
  };
  const initial = initialExecutor({
    run,
    briefOpen: briefText !== null && readStatus(briefText) === "OPEN",
    hold: (await readHold(state.hold)) !== null,
  });
  const { end } = await drive(executorMachine(ctx), initial, opts.effects);
  return end.result as TickResult;
}

/** The executor's side of the machine: its decisions, its handlers, what it saves. */
export function executorMachine(
  ctx: ExecContext,
): Machine<ExecutorState, ExecutorEvent, ExecutorEffect> {
  return {
    side: "executor",
    reduce: reduceExecutor,
    next: nextExecutor,
    handle: (effect, s, emit) => handle(ctx, effect, s, emit),
    save: async (before, after, event) => {
      const run = after.run;
      if (run && run !== before.run) await writeJournal(ctx.state.journal, run);
      const entry = executorEntry(before, after, event);
      const log = timeline(ctx, after);
      if (entry && log) {
        if (event.kind === "attempt-prepared" && !(await log.hasBrief())) {
          const b = after.brief!;
          await log.add({
            event: "brief-opened",
            role: "relay",
            details: {
              title: b.title,
              branch: b.branch,
              kind: b.kind === "fix" ? "fix" : "task",
              ...(b.fixes !== undefined ? { fixes: b.fixes } : {}),
            },
          });
        }
        if (event.kind === "attempt-prepared" && ctx.started) {
          await log.add({ event: "config-frozen", role: "relay", details: ctx.started });
          delete ctx.started;
        }
        await log.add(entry);
      }
      // The crash points the tests kill a tick at: right after each step is on record.
      if (run && before.run?.runId === run.runId && before.run.step !== run.step) {
        if (run.step !== "agent-started") failpoint(`after-${run.step}`);
      }
    },
    onHold: async (s, err) => {
      // A HOLD the executor decided (its "held" fact) is on the timeline already.
      if (s.held && err instanceof Error && err.message === s.held.reason) return;
      const entry = heldEntry(err);
      const log = timeline(ctx, s);
      if (entry && log) await log.add({ ...entry, run: s.run?.runId ?? null });
    },
  };
}

/** The task's timeline, once the brief is known: a fix brief's goes into its task's. */
function timeline(ctx: ExecContext, s: ExecutorState): Timeline | null {
  const b = s.brief;
  if (!b) return null;
  const key = `${b.fixes ?? b.task}/${b.task}`;
  if (ctx.timeline?.key !== key) {
    ctx.timeline = { key, log: new Timeline(ctx.repo.commonDir, b.fixes ?? b.task, b.task) };
  }
  return ctx.timeline.log;
}

function handle(
  ctx: ExecContext,
  effect: Exclude<ExecutorEffect, { kind: "wait" | "done" }>,
  s: ExecutorState,
  emit: (e: ExecutorEvent) => Promise<void>,
): Promise<ExecutorEvent | void> {
  switch (effect.kind) {
    case "stop-on-hold":
      return stopOnHold(ctx.state.hold);
    case "record-hold":
      return recordHold(ctx.state.hold, effect, s.run?.task ?? s.brief?.task ?? 0);
    case "get-ready":
      return getReady(ctx, s);
    case "look-for-prs-in-flight":
      return lookForPrsInFlight(ctx);
    case "prepare-attempt":
      return prepareAttempt(ctx, s, emit);
    case "retire-fix":
      return retireFix(ctx, effect.why);
    case "run-turn":
      return runExecutorTurn(ctx, s, emit);
    case "check-orphan-turn":
      return checkOrphanTurn(ctx, s);
    case "guard-and-commit":
      return guardAndCommit(ctx, s);
    case "record-failure":
      return recordFailure(ctx, s);
    case "open-blocked-run":
      return openBlockedRun(ctx, s);
    case "adopt-branch":
      return adoptBranch(ctx, s);
    case "run-bar":
      return runBarEffect(ctx, s);
    case "push-branch":
      return pushBranch(ctx, s, effect.strict);
    case "open-pr":
      return openPr(ctx, s);
    case "commit-paperwork":
      return commitPaperworkEffect(ctx, s);
    case "push-paperwork":
      return pushPaperwork(ctx);
    case "finish-attempt":
      return finishAttempt(ctx, s);
  }
}
