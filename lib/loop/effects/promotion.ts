/**
 * Promotion: once a task's PR is merged or closed, its worktree goes (when
 * clean), a fix brief relay wrote for it is retired, and the next queued
 * brief is opened. Shares the poll lock, so the executor's paperwork commit
 * never picks up a half-written promotion.
 */
import { join, resolve } from "../../path.ts";
import { Git } from "../../git/git.ts";
import { buildOutputMatcher } from "../../git/build_output.ts";
import { tryLock, waitLock } from "../../state/lock.ts";
import { BRIEF_FILE } from "../../state/paths.ts";
import { readTextOrNull } from "../../state/json_file.ts";
import { readHeaderField, readHeaderTask, readStatus } from "../../protocol/status_line.ts";
import type { PlannerEvent } from "../../task/planner.ts";
import { promoteNext, promotionIdle, retireFixBrief } from "../promote.ts";
import { runPlan } from "../plan.ts";
import { PLAN_SECTION, planDigest, planGate } from "../plan_gate.ts";
import { HoldError } from "../../errors.ts";
import { parkWorktree, parseWorktreeList, worktreeRootOf } from "../worktree.ts";
import { clearUntrackedBuildOutput } from "../build_output.ts";
import { type PlanContext, prOf, ready } from "./context.ts";

/** Shorter than LOCK_WAIT_MS: a poll waiting for this tick's lock must not wait for it in turn. */
const PROMOTE_WAIT_MS = 15_000;

export async function promote(
  tick: PlanContext,
  effect: { done: string; retire?: string },
  /** The review tick reviews a brief that waits for its plan review; a person's command does not. */
  planTurn = true,
): Promise<PlannerEvent> {
  const branch = prOf(tick).branch;
  let done = effect.done;
  const said = (message: string): PlannerEvent => ({ kind: "promoted", message });
  // A brief a person wrote into main's NEXT-STEPS.md by hand is something to do (below).
  const arrived = await mainBriefToQueue(tick);
  // Every review tick comes back here while the report on main is for a merged task: the
  // loop's resting state. Take the poll lock only when there is something to do, so a
  // poll that fires at the same second never waits for a review that has nothing to say.
  const idle = arrived !== null
    ? null
    : await promotionIdle(tick.repo.root, effect.retire ? branch : undefined);
  // Listed once: the task is merged, so no poll moves its worktree meanwhile (a person who
  // does finds plain `git worktree move` and `remove` refusing a folder that is not there).
  const wt = idle !== null ? await taskWorktree(tick, branch) : undefined;
  if (idle !== null && !wt) return said(`${done}; ${idle}`);
  // When a tick holds the poll lock, the next review tick promotes (a merged PR always comes
  // back here). A poll that is only looking (no attempt journaled) is waited for; one
  // running an agent turn is not.
  const attempt = (await readTextOrNull(tick.state.journal)) !== null;
  await using lock = tick.pollLockHeld
    ? null
    : attempt
    ? await tryLock(tick.state.pollLock, "promote")
    // A poll holding its lock may itself be waiting for this tick's lock: never wait for it.
    : await waitLock(tick.state.pollLock, "promote", {
      waitMs: PROMOTE_WAIT_MS,
      waitFor: (holder) => holder.command !== "poll",
    });
  if (!lock && !tick.pollLockHeld) {
    return said(`${done}; promotion waits for the executor's tick to end`);
  }
  await removeTaskWorktree(tick, branch, wt);
  const retired = effect.retire
    ? await retireFixBrief(tick.repo.root, branch, effect.retire)
    : null;
  if (retired !== null) {
    tick.log.step(`retired fix brief ${retired} (set to DONE): ${effect.retire}`);
    done += `; fix brief ${retired} retired`;
  }
  if (arrived !== null) {
    // Under the poll lock, as the poll queues such a brief when it brings main up to date.
    const { queueFromMain } = await import("../inbox.ts");
    const where = `${ready(tick).config.remote}/${ready(tick).config.main}:${BRIEF_FILE}`;
    const queued = await queueFromMain(tick.repo, arrived, where);
    if (queued) tick.log.step(`${queued} (a person wrote it there by hand)`);
  }
  const gate = planGate(tick.state, ready(tick).config.planReview);
  let res = await promoteNext(tick.repo.root, gate);
  if (res.result === "needs-plan" && !planTurn) {
    return said(
      `${done}; task ${res.task} waits for its plan review: the next review tick runs it (or relay plan ${res.task})`,
    );
  }
  if (res.result === "needs-plan") {
    const planned = await planNext(tick, res.task, res.from);
    if (planned !== null) return said(`${done}; ${planned}`);
    res = await promoteNext(tick.repo.root, gate);
  }
  if (res.result === "promoted") {
    tick.log.step(`promoted task ${res.task}: ${res.title}`);
    return {
      kind: "promoted",
      message: `${done}; promoted task ${res.task} into ${BRIEF_FILE}`,
      task: res.task,
      title: res.title,
    };
  }
  return said(`${done}; ${res.message}`);
}

/**
 * machines: one — an open brief a person wrote into main's NEXT-STEPS.md by hand, for another
 * task than the report's (relay's own briefs reach main only with their report, DONE): the
 * loop's clone would never see it, its idle poll reading its own tree. Its text when it is to
 * be queued (queueFromMain, once), so the promotion opens it as any other; else null.
 */
async function mainBriefToQueue(tick: PlanContext): Promise<string | null> {
  const text = tick.subject?.mainBrief;
  if (!text || ready(tick).config.machines === "split" || readStatus(text) !== "OPEN") {
    return null;
  }
  if (
    readHeaderTask(text) === tick.subject!.report.task &&
    readHeaderField(text, "title") === tick.subject!.brief.title
  ) {
    return null;
  }
  // Promoted here already (or opened by hand in this tree too): nothing waits for it.
  const local = await readTextOrNull(join(tick.repo.root, BRIEF_FILE));
  if (local === text || (local !== null && readStatus(local) === "OPEN")) return null;
  const { queuedFromMain } = await import("../inbox.ts");
  return (await queuedFromMain(tick.repo, text)) ? null : text;
}

/**
 * plan_review is on and the next brief has no plan PASS: the reviewer reviews
 * it now. Returns null on a PASS (promote it), a line to say when the turn
 * could not run now; a FAIL, or a brief already failed as it is, stops for a
 * person (a HOLD on that task, with the findings in its inbox file).
 */
async function planNext(tick: PlanContext, task: number, file: string): Promise<string | null> {
  const r = ready(tick);
  const failed = (when: string) =>
    new HoldError(
      `task ${task} failed its plan review${when}: the findings are under "## ${PLAN_SECTION}" in ${file}`,
      `Edit the brief in ${file} to answer them (or have it reviewed now: relay plan ${task}), then run "relay resume": the next review tick reviews the brief as it then is.`,
      { task },
    );
  const { readTask } = await import("../../state/tasks.ts");
  const { listInbox } = await import("../inbox.ts");
  const entry = (await listInbox(tick.repo.root)).find((e) => e.task === task)!;
  const digest = await planDigest(entry.brief);
  const runs = ((await readTask(tick.state, task)).plans ?? []).filter((p) => p.brief === digest);
  if (runs.some((p) => p.result === "FAIL")) throw failed(" as it is");
  const { requireRoleProgram } = await import("../../agents/turn.ts");
  await requireRoleProgram("reviewer", r.profile.roles.reviewer, r.profile.path);
  const outcome = await runPlan({ ...tick, ...r }, task, "tick", tick.subject?.task);
  switch (outcome.kind) {
    case "PASS":
      tick.log.step(`task ${task}: plan review PASS`);
      return null;
    case "FAIL":
      throw failed("");
    case "busy":
      return outcome.message;
    case "held": {
      const { recordHold } = await import("./hold.ts");
      return await recordHold(tick.state.hold, {
        kind: "record-hold",
        reason: outcome.reason,
        next: outcome.next,
        runId: outcome.runId,
        task,
      }, task);
    }
    case "rounds-used":
      throw new HoldError(
        `task ${task} failed its plan review ${outcome.fails} time(s), its plan_rounds`,
        `Rewrite the brief in ${file}, then run relay plan ${task} once plan_rounds allows another (raise plan_rounds in .relay/config.yaml, within the operator profile's limits.plan_rounds), or turn plan_review off to promote it unreviewed; then run "relay resume".`,
        { task },
      );
  }
}

/**
 * The task is over: its worktree is parked for the next task, or goes, when it is
 * clean (plain `git worktree remove` refuses anything else, which then stays for a
 * person). The branch and every commit on it stay.
 */
async function removeTaskWorktree(
  tick: PlanContext,
  branch: string,
  /** The worktree as the caller listed it a moment ago. */
  listed?: { path: string },
): Promise<void> {
  const wt = listed ?? await taskWorktree(tick, branch);
  if (!wt) return;
  const { config, primary } = ready(tick);
  // What relay never commits is all that may be left (no .gitignore): it goes first.
  const cleared = await clearUntrackedBuildOutput(
    new Git(wt.path),
    buildOutputMatcher(config.neverCommit),
  ).catch(() => null);
  const root = worktreeRootOf(ready(tick).profile.worktreeRoot, tick.repo.root);
  // Only relay's own worktree for the branch, at the path relay made it: never a person's.
  const own = resolve(wt.path) === resolve(join(root, branch.replaceAll("/", "-")));
  // A status that listed nothing a moment ago, with nothing deleted since, is not asked again.
  if (own && await parkWorktree(primary, root, wt.path, { statusEmpty: cleared?.clean === true })) {
    tick.log.step(`parked the worktree of ${branch} for the next task (the branch stays)`);
    return;
  }
  const res = await primary.run(["worktree", "remove", "--", wt.path], { allowFail: true });
  if (res.code === 0) tick.log.step(`removed the worktree of ${branch} (the branch stays)`);
}

/** The worktree relay made for `branch`, if it is still there. */
async function taskWorktree(
  tick: PlanContext,
  branch: string,
): Promise<{ path: string } | undefined> {
  const { primary } = ready(tick);
  const list = parseWorktreeList(await primary.out(["worktree", "list", "--porcelain", "-z"]));
  return list.find((w) => w.branch === branch && w.path !== tick.repo.root);
}
