/**
 * The reviewer's turn: a different agent reviews the PR head in a disposable
 * worktree, once more if its first turn was void or gave no verdict. What the
 * executor may not touch, the reviewer may not either; a turn that changed
 * its worktree is void (its work kept under refs/relay/void/), one that
 * reached past it is a HOLD. The turn an interrupted tick left running is
 * waited for, stopped past its limit, or noted as void — never doubled (that,
 * and the worktree's snapshot and voiding, are review_checkout.ts).
 * Reports facts: voids and the verdict as they happen (through `emit`), or
 * why there is none.
 */
import { basename, join } from "../../path.ts";
import { Git } from "../../git/git.ts";
import { confirmLease } from "../../git/lease_guard.ts";
import { writeBrief } from "../../protocol/brief_write.ts";
import { formatVerdict, parseVerdict } from "../../protocol/verdict.ts";
import { reviewerPrompt, stagePrompt } from "../../agents/prompt.ts";
import { roleTimeoutMs, startTurn, timedOutText } from "../../agents/turn.ts";
import { runDemoReviewer } from "../../agents/demo_reviewer.ts";
import { procedureOnMain, REPORT_FILE, REVIEW_PROCEDURES } from "../../state/paths.ts";
import { failpoint } from "../../state/failpoint.ts";
import { takeNotes } from "../../state/tasks.ts";
import { readTextOrNull } from "../../state/json_file.ts";
import { runId as newRunId } from "../../state/run_id.ts";
import { redactFile } from "../../proc/redact.ts";
import { buildOutputMatcher } from "../../git/build_output.ts";
import type { PrStatus } from "../../forge/types.ts";
import type { PlannerEvent } from "../../task/planner.ts";
import { checkWorktreeRoot, worktreeRootOf } from "../worktree.ts";
import {
  changedControls,
  controlFiles,
  type ControlScope,
  describeControls,
  executorScope,
  markRemoteLogs,
  pushesSince,
  worktreeGitDir,
} from "../guard.ts";
import { markTurn } from "../turn_anchors.ts";
import { voidCause } from "../build_output.ts";
import { forgeOf, type PlanContext, type PlanSubject, prOf, ready, subjectOf } from "./context.ts";
import { requireFrozenProgram } from "./freeze.ts";
import {
  keepReviewerCommits,
  refsOf,
  removeLeftoverReviewWorktrees,
  reviewCheckout,
  settleOrphanReviewer,
  snapshot,
  type Tick,
  voidFolder,
  voidTurn,
} from "./review_checkout.ts";

/** What a turn judges: the report's task and brief on main (for a plan review, a queued brief). */
export type Subject = Pick<PlanSubject, "task" | "brief" | "originMain"> & {
  report: { task: number };
};

function now(): string {
  return new Date().toISOString();
}

/**
 * A reviewer-side turn: the reviewer's own, or a stage after review (polish
 * and docs are the reviewer's program; security is the `security` role's).
 */
export type TurnStage = "polish" | "docs" | "security" | "plan";

/** The profile role whose program plays `stage` (the reviewer's turn is the reviewer's). */
export function roleOf(stage: TurnStage | null): "reviewer" | "security" {
  return stage === "security" ? "security" : "reviewer";
}

/** The `run-turn` effect for the reviewer, and the `run-stage` effect of a stage's turn. */
export async function runReviewerTurn(
  ctx: PlanContext,
  emit: (e: PlannerEvent) => Promise<void>,
  stage: TurnStage | null = null,
  /** The head's deploy preview, when one is configured and answered. */
  previewUrl?: string,
): Promise<PlannerEvent | void> {
  const tick: Tick = { ...ctx, ...ready(ctx), forge: forgeOf(ctx) };
  const role = roleOf(stage);
  await requireFrozenProgram(role, ready(ctx));
  if ((ready(ctx).frozen?.config.safetyMode.value ?? tick.profile.safetyMode) === "strict") {
    const { requireProbe } = await import("../probe.ts");
    await requireProbe(ctx.state, role, tick.profile.roles[role]);
  }
  return await runReview(tick, subjectOf(ctx), prOf(ctx), emit, stage, previewUrl);
}

/**
 * Runs the turn, once more if its first was void or gave no verdict. Records
 * the verdict (the reviewer's) or the stage's run.
 */
export async function runReview(
  tick: Tick,
  s: Subject,
  pr: PrStatus,
  emit: (e: PlannerEvent) => Promise<void>,
  stage: TurnStage | null,
  previewUrl?: string,
): Promise<PlannerEvent | void> {
  const who = stage ?? "reviewer";
  const busy = await settleOrphanReviewer(tick, s, emit);
  if (busy) return busy;
  const root = worktreeRootOf(tick.profile.worktreeRoot, tick.repo.root);
  checkWorktreeRoot(root, tick.repo.root, tick.repo.commonDir);
  let registered = await removeLeftoverReviewWorktrees(tick.primary);
  const buildOutput = buildOutputMatcher(tick.config.neverCommit);
  let notes: string[] = [];
  for (let turn = 1; turn <= 2; turn++) {
    const runId = newRunId(`${stage ?? "review"}${s.task}-t${turn}`);
    const runDir = join(tick.state.runs, runId);
    await Deno.mkdir(runDir, { recursive: true });
    const checkout = await reviewCheckout(tick.primary, {
      root,
      head: pr.head,
      runId,
      registered,
      commonDir: tick.repo.commonDir,
      buildOutput,
      log: tick.log,
    });
    const worktree = checkout.path;
    // A void turn's checkout is moved aside: the next turn makes a fresh one.
    registered = [];
    const wt = new Git(worktree);
    // A switched checkout was just verified at the head with nothing in it: only the refs to read.
    const before = checkout.verified
      ? { head: pr.head, status: "", refs: await refsOf(tick.primary) }
      : await snapshot(wt, tick.primary, buildOutput);
    // What the executor may not touch, the reviewer may not either: git's control files,
    // relay's records, the operator profile — and no push through the remote's name.
    // The run folder is left out: the reviewer may write its verdict there.
    const { runDir: _own, ...scope }: ControlScope = executorScope({
      commonDir: tick.repo.commonDir,
      gitDir: tick.repo.gitDir,
      worktree,
      runDir,
      profilePath: tick.profile.path,
    });
    // A person's notes go to the first turn (and its retry): taken before the baseline.
    if (turn === 1) {
      notes = await takeNotes(tick.state, s.task, { runId, role: who });
    }
    const controlBefore = await controlFiles(scope, { beforeTurn: true });
    const remoteLogs = markRemoteLogs(tick.repo.commonDir, tick.config.remote);
    const headMark = await markTurn(
      tick.repo.commonDir,
      worktreeGitDir(worktree) ??
        join(tick.repo.commonDir, "worktrees", basename(worktree)),
      null,
    );
    const out = await dispatchReviewer(tick, s, pr, worktree, runDir, notes, stage, previewUrl);
    // A lease lost during the turn (split machines): its outcome is not recorded here, and its
    // journal stays, so the next tick that holds the lease weighs it against the remote
    // (review_stale.ts), as after a crash.
    let leaseLost = false;
    try {
      const controlAfter = await controlFiles(scope);
      const steered = changedControls(controlBefore, controlAfter);
      const pushed = pushesSince(tick.repo.commonDir, tick.config.remote, remoteLogs);
      if (steered.length || pushed.length) {
        const kept = await keepReviewerCommits(tick, runId, headMark, pr.head, false);
        return holdReview(
          tick,
          s,
          runId,
          [
            steered.length
              ? `the ${who} changed files that steer git or relay: ${
                describeControls(controlBefore, controlAfter, steered).join(", ")
              }`
              : "",
            pushed.length
              ? `the ${who} pushed to ${
                pushed.map((p) => `${tick.config.remote}/${p.branch}`).join(", ")
              }`
              : "",
            kept.length ? `the commits it made are kept under ${kept.join(", ")}` : "",
          ].filter((x) => x).join("; ") +
            " — relay ran no further git command in this repository; restore those files (or undo the push) before you run git here",
          undefined,
          stage,
        );
      }
      try {
        await confirmLease();
      } catch (err) {
        leaseLost = true;
        throw err;
      }
      const after = await snapshot(wt, tick.primary, buildOutput);
      const changes: string[] = [];
      if (after.head !== before.head) changes.push(`HEAD moved to ${after.head.slice(0, 12)}`);
      if (after.status !== before.status) changes.push(`files changed:\n${after.status}`);
      if (after.refs !== before.refs) changes.push("refs changed");
      const dropped = await keepReviewerCommits(tick, runId, headMark, pr.head, true);
      if (dropped.length) {
        changes.push(`it made commits it left on no ref (kept under ${dropped.join(", ")})`);
      }
      if (changes.length) {
        try {
          await voidTurn(tick, worktree, runId, before, after);
        } catch (err) {
          // The refs could not be put back as they were: a person must look before anything
          // else runs on them (what the reviewer left is kept under refs/relay/void/).
          return holdReview(
            tick,
            s,
            runId,
            `the ${who} changed its worktree and relay could not undo it: ${
              (err as Error).message.split("\n")[0]
            }`,
            `Compare the refs under refs/relay/void/${runId}/ with the repository's (git for-each-ref) and put back what the ${who} moved; the turn's folder is ${worktree} (or, moved aside, ${
              voidFolder(worktree, runId)
            }). Then run "relay resume".`,
            stage,
          );
        }
        const why = voidCause(before.status, after.status, buildOutput, {
          task: s.task,
          branch: pr.branch,
        }, stage ? `the ${stage} stage` : "the reviewer");
        await emit({
          kind: "review-void",
          runId,
          at: now(),
          why: `${why.cause}: ${changes.join("; ")}`,
        });
        tick.log.step(`${stage ?? "review"} turn ${runId} is void: ${why.cause}`);
        // Tracked build output is rewritten on every run: another turn would only be void again.
        if (turn === 2 || why.next !== undefined) {
          return holdReview(
            tick,
            s,
            runId,
            `${turn === 2 ? why.twice : why.cause} (${changes.join("; ")})`,
            why.next,
            stage,
          );
        }
        continue;
      }
      // The shared checkout stays for the next turn (which switches and verifies it).
      if (!checkout.kept) {
        await tick.primary.run(["worktree", "remove", "--", worktree], { allowFail: true });
      } else registered = [{ path: worktree, head: pr.head, branch: null }];
      const parsed = out.problem
        ? { ok: false as const, problem: out.problem }
        : parseVerdict(out.text);
      if (!parsed.ok) {
        await emit({
          kind: "review-void",
          runId,
          at: now(),
          why: `invalid verdict: ${parsed.problem}`,
        });
        tick.log.step(
          `${stage ?? "review"} turn ${runId} gave no valid verdict: ${parsed.problem}`,
        );
        if (turn === 2) {
          return holdReview(
            tick,
            s,
            runId,
            `the ${who} gave no valid verdict twice (${parsed.problem})`,
            undefined,
            stage,
          );
        }
        continue;
      }
      if (stage) {
        await emit({
          kind: "stage-ran",
          run: {
            stage,
            runId,
            at: now(),
            reportTask: s.report.task,
            head: pr.head,
            tree: await tick.primary.treeOf(pr.head),
            result: parsed.value.verdict,
            findings: parsed.value.findings,
          },
        });
        tick.log.step(
          `task ${s.task}: ${stage} stage ${parsed.value.verdict} on ${pr.head.slice(0, 12)}`,
        );
        return;
      }
      await emit({
        kind: "verdict",
        verdict: {
          runId,
          at: now(),
          reportTask: s.report.task,
          head: pr.head,
          tree: await tick.primary.treeOf(pr.head),
          // The main the reviewer saw is the one the head is built on: if main has product
          // commits past it, the gate re-runs the bar on the would-be merge before trusting this.
          main: await tick.primary.out(["merge-base", pr.head, s.originMain]),
          verdict: parsed.value.verdict,
          findings: parsed.value.findings,
        },
      });
      await tick.forge?.recordVerdict(pr, pr.head, formatVerdict(parsed.value));
      tick.log.step(`task ${s.task}: verdict ${parsed.value.verdict} on ${pr.head.slice(0, 12)}`);
      failpoint("review-after-verdict");
      return;
    } finally {
      // Cleared once the turn's outcome is on record (a verdict, a void, a HOLD): a tick
      // killed before then leaves the journal, and the next tick finds the turn uncertain
      // unless its outcome is recorded (settleOrphanReviewer).
      const rj = await import("../review_journal.ts");
      if (!leaseLost) await rj.clearReviewJournal(tick.state.reviewJournal);
    }
  }
  throw new Error("unreachable");
}

function holdReview(
  _tick: Tick,
  s: Subject,
  runId: string,
  reason: string,
  next?: string,
  stage: TurnStage | null = null,
): PlannerEvent {
  const procedure = procedureOnMain(stage);
  return {
    kind: "review-held",
    reason: `${stage ? `${stage} stage` : "review"} of task ${s.task}: ${reason}`,
    next: next ??
      `Look at .git/relay/runs/${runId}/ (the ${
        stage ? `${stage} stage` : "reviewer"
      }'s log and output). Fix roles.${
        roleOf(stage)
      } in the operator profile or ${procedure}, then run "relay resume".`,
    runId,
  };
}

/** A stage's procedure file under `.relay/` on main (relay init installs one per stage). */
export function procedureFile(stage: TurnStage): string {
  return basename(procedureOnMain(stage));
}

async function dispatchReviewer(
  tick: Tick,
  s: Subject,
  pr: PrStatus,
  worktree: string,
  runDir: string,
  notes: string[],
  stage: TurnStage | null,
  previewUrl?: string,
): Promise<{ text: string; problem?: string }> {
  const role = roleOf(stage);
  const who = stage ?? "reviewer";
  const spec = tick.profile.roles[role];
  const briefPath = join(runDir, "brief.md");
  const reportPath = join(runDir, "report.md");
  const verdictPath = join(runDir, "verdict.md");
  const stdoutPath = join(runDir, `${who}.stdout`);
  await Deno.writeTextFile(briefPath, writeBrief(s.brief));
  // A plan review comes before any work: there is no report to read.
  await Deno.writeTextFile(
    reportPath,
    stage === "plan" ? "" : (await tick.primary.showFile(s.originMain, REPORT_FILE)) ?? "",
  );
  const procedureName = procedureOnMain(stage);
  // Read with the report when the tick looked at main (observe.ts); else every procedure in one
  // git call, for this turn and the tick's next ones.
  const procedure = (await tick.primary.showFiles(s.originMain, [
    procedureName,
    ...REVIEW_PROCEDURES,
  ]))[0] ?? null;
  const procedurePath = procedure === null
    ? null
    : join(runDir, stage ? procedureFile(stage) : "REVIEWER.md");
  if (procedurePath) await Deno.writeTextFile(procedurePath, procedure!);
  tick.log.step(
    `task ${s.task}: starting the ${stage ? `${stage} stage` : "reviewer"} (${spec.vendor}) on ${
      pr.head.slice(0, 12)
    }`,
  );
  const docsFile = stage === "docs" ? tick.config.docsFile ?? null : null;
  const promptCtx = {
    task: s.task,
    title: s.brief.title,
    branch: pr.branch,
    head: pr.head,
    base: s.originMain,
    briefPath,
    reportPath,
    procedurePath,
    verdictPath,
    bar: s.brief.bar,
    notes,
    ...(previewUrl ? { previewUrl } : {}),
  };
  const timeoutMs = roleTimeoutMs(spec, tick.config.timeouts.agentMs);
  const rj = await import("../review_journal.ts");
  let res;
  try {
    res = await startTurn({
      role: who,
      preset: "reviewer",
      spec,
      prompt: stage ? stagePrompt({ ...promptCtx, stage, docsFile }) : reviewerPrompt(promptCtx),
      allowCommands: stage === null || !tick.profile.testCommand
        ? s.brief.bar
        : [...s.brief.bar, tick.profile.testCommand],
      ...(tick.profile.browser ? { browser: tick.profile.browser } : {}),
      env: {
        RELAY_ROLE: who,
        ...(stage ? { RELAY_STAGE: stage } : {}),
        ...(docsFile ? { RELAY_DOCS_FILE: docsFile } : {}),
        ...(previewUrl ? { RELAY_PREVIEW_URL: previewUrl } : {}),
        RELAY_TASK: String(s.task),
        RELAY_BRIEF: briefPath,
        RELAY_REPORT: reportPath,
        RELAY_VERDICT: verdictPath,
      },
      cwd: worktree,
      timeoutMs,
      logPath: join(runDir, `${who}.log`),
      stdoutPath,
      progress: tick.progress,
      label: `${who} task ${s.task}`,
      // Journaled while it runs: a later tick must find a reviewer this tick leaves behind.
      journal: {
        onStart: async (start) => {
          await rj.writeReviewJournal(tick.state.reviewJournal, {
            version: 1,
            runId: runDir.split(/[\\/]/).pop() ?? runDir,
            task: s.task,
            ...start,
            worktree,
            role: who,
            head: pr.head,
            branch: pr.branch,
            brief: s.report.task,
            ...(tick.config.machines === "split" ? { leaseMs: tick.config.timeouts.leaseMs } : {}),
          });
          failpoint(stage ? `${stage}-running` : "reviewer-running");
        },
      },
      // The demo's plan review has nothing to run yet: the bar is for the work to come.
      demo: stage === "plan"
        ? async () => {
          await Deno.writeTextFile(
            verdictPath,
            "Verdict: PASS\n- [minor] the bar names commands that exist\n",
          );
          return 0;
        }
        : () =>
          runDemoReviewer({
            worktree,
            bar: s.brief.bar,
            verdictPath,
            timeoutMs: tick.config.timeouts.barMs,
            passEnv: tick.config.barEnv,
          }),
    });
  } catch (err) {
    // The turn did not run to an end this tick can judge: nothing is left to wait for.
    await rj.clearReviewJournal(tick.state.reviewJournal);
    throw err;
  }
  // A reviewer that failed or was cut off gave no verdict, whatever it printed on the way.
  if (res.startError) {
    return { text: "", problem: `the ${who} could not start: ${res.startError}` };
  }
  if (res.timedOut) {
    return {
      text: "",
      problem: `the ${who} ${timedOutText(timeoutMs, res.durationMs)}`,
    };
  }
  if (res.exitCode !== 0) {
    return { text: "", problem: `the ${who} exited ${res.exitCode ?? `by ${res.signal}`}` };
  }
  await redactFile(verdictPath); // the reviewer wrote it into relay's records
  const file = (await readTextOrNull(verdictPath))?.trim();
  if (file) return { text: file };
  return { text: (await readTextOrNull(stdoutPath)) ?? "" };
}
