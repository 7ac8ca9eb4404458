/**
 * `relay review`: the reviewer tick that cron runs every minute.
 *
 * It reads the executor's report from origin/main (never from the PR or the
 * working tree), has a different agent review the PR head in a disposable
 * worktree, records the verdict against that exact head, and then either
 * merges through the gate (PASS) or writes a fix brief (FAIL). The planner
 * never commits: the promotion and fix briefs it writes are left uncommitted
 * for the executor's next paperwork commit.
 */
import { runId as newRunId } from "../state/run_id.ts";
import { readTextOrNull } from "../state/json_file.ts";
import { join } from "node:path";
import { HoldError, InputError } from "../errors.ts";
import { Git } from "../git/git.ts";
import { loadRepoConfig, type RepoConfig } from "../config/repo.ts";
import { loadProfile, type Profile, profilePath } from "../config/profile.ts";
import { parseBrief, writeBrief } from "../protocol/brief.ts";
import { parseReport } from "../protocol/report.ts";
import { readStatus } from "../protocol/status_line.ts";
import type { Brief, Report } from "../protocol/types.ts";
import { formatVerdict, parseVerdict, type Verdict } from "../protocol/verdict.ts";
import { reviewerPrompt } from "../agents/prompt.ts";
import {
  orphanTurn,
  requireRoleProgram,
  roleTimeoutMs,
  startTurn,
  timedOutText,
} from "../agents/turn.ts";
import { runDemoReviewer } from "../agents/demo_reviewer.ts";
import { LOCK_WAIT_MS, lockHolder, tryLock, waitLock } from "../state/lock.ts";
import { BRIEF_FILE, REPORT_FILE, type StatePaths, statePaths } from "../state/paths.ts";
import { holdOnRecord, readHold, writeHold } from "../state/hold.ts";
import { blockedOptions } from "./blocked.ts";
import { failpoint } from "../state/failpoint.ts";
import { readReview, type ReviewRecord, verdictFor, writeReview } from "../state/reviews.ts";
import { plannerForge } from "../forge/planner_forge.ts";
import type { PlannerForge, PrStatus } from "../forge/types.ts";
import {
  formatGate,
  type GateDecision,
  revalidateOnMerge,
  runGate,
  scopeCheck,
} from "../gate/gate.ts";
import { checkWorktreeRoot, defaultWorktreeRoot, parseWorktreeList } from "./worktree.ts";
import {
  changedControls,
  controlFiles,
  type ControlScope,
  executorScope,
  markRemoteLogs,
  pushesSince,
  worktreeGitDir,
} from "./guard.ts";
import {
  anchorWithGit,
  anchorWithoutGit,
  markTurn,
  turnCommits,
  type TurnMark,
  unreachable,
} from "./turn_anchors.ts";
import { fixBrief, taskTitle } from "./fix_brief.ts";
import { redactFile } from "../proc/redact.ts";
import { type BuildOutputMatcher, buildOutputMatcher } from "../git/build_output.ts";
import {
  clearUntrackedBuildOutput,
  voidCause,
  withoutUntrackedBuildOutput,
} from "./build_output.ts";
import { listInbox, usedTaskNumbers } from "./inbox.ts";
import { demoteOpenBrief, promoteNext, promotionIdle, retireFixBrief } from "./promote.ts";
import { firstMerged } from "./merged.ts";
import type { TickOptions } from "./log.ts";

export type ReviewResult =
  | { kind: "idle"; message: string }
  | { kind: "busy"; message: string }
  | { kind: "waiting"; message: string }
  /** A PR merged or closed outside relay, noticed now (said once, also under --quiet). */
  | { kind: "settled"; message: string }
  | { kind: "human"; message: string; files: string[] }
  | { kind: "merged"; message: string; task: number; sha: string }
  | { kind: "fix"; message: string; task: number; fixTask: number };

export type ReviewOptions = TickOptions;

interface Tick extends Omit<TickOptions, "profileFlag"> {
  state: StatePaths;
  primary: Git;
  config: RepoConfig;
  profile: Profile;
  forge: PlannerForge;
}

/** What the tick found on origin/main. */
interface Subject {
  report: Report;
  brief: Brief;
  /** The PR's own task: the brief's `Fixes:` on a fix, else its task. */
  task: number;
  originMain: string;
}

export async function runReviewTick(opts: ReviewOptions): Promise<ReviewResult> {
  const state = statePaths(opts.repo.commonDir);
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

  const hold = await readHold(state.hold);
  if (hold) throw holdOnRecord(hold);

  const config = await loadRepoConfig(opts.repo.root);
  const primary = new Git(opts.repo.root, config.timeouts.networkMs);
  await primary.fetch(config.remote);
  const originMain = await primary.resolve(`refs/remotes/${config.remote}/${config.main}`);
  if (!originMain) {
    return { kind: "idle", message: `idle: ${config.remote}/${config.main} does not exist` };
  }
  const subject = await readSubject(primary, originMain);
  if (!subject) {
    return { kind: "idle", message: `idle: no report on ${config.remote}/${config.main}` };
  }

  const profile = await loadProfile(profilePath(opts.profileFlag));
  const tick: Tick = {
    repo: opts.repo,
    state,
    primary,
    config,
    profile,
    forge: plannerForge(config, primary, state.prs),
    log: opts.log,
    progress: opts.progress,
  };
  const { ReviewerStillRunning } = await import("./review_journal.ts");
  try {
    return await review(tick, subject);
  } catch (err) {
    if (err instanceof ReviewerStillRunning) return { kind: "busy", message: err.message };
    // A HOLD from deeper down (the forge refused the merge push) is about the PR's task.
    if (err instanceof HoldError && err.task === undefined && !err.recheck && !err.recorded) {
      throw new HoldError(err.message, err.next, { task: subject.task });
    }
    throw err;
  }
}

async function showOrNull(git: Git, spec: string): Promise<string | null> {
  const res = await git.run(["show", spec], { allowFail: true });
  return res.code === 0 ? res.stdout : null;
}

async function readSubject(git: Git, originMain: string): Promise<Subject | null> {
  const reportText = await showOrNull(git, `${originMain}:${REPORT_FILE}`);
  if (reportText === null) return null;
  const report = parseReport(reportText, `origin/main:${REPORT_FILE}`);
  const briefText = await showOrNull(git, `${originMain}:${BRIEF_FILE}`);
  if (briefText === null) {
    throw new InputError(
      { file: `origin/main:${BRIEF_FILE}` },
      "the report on main has no brief beside it",
      "restore NEXT-STEPS.md on main",
    );
  }
  const brief = parseBrief(briefText, `origin/main:${BRIEF_FILE}`);
  if (brief.task !== report.task) {
    throw new InputError(
      { file: `origin/main:${REPORT_FILE}`, key: "Task" },
      `the report is for task ${report.task} but the brief on main is task ${brief.task}`,
      "the executor commits both in one paperwork commit; restore them together",
    );
  }
  return { report, brief, task: brief.fixes ?? brief.task, originMain };
}

async function review(tick: Tick, s: Subject): Promise<ReviewResult> {
  // Nothing while an executor attempt is open: the executor's guard HOLDs on any change to
  // relay's records (reviews/, prs/, tasks/, hold.json) during its agent's turn, and it
  // cannot tell this tick's writes from a forged verdict. `relay poll` holds the review lock
  // while it prepares an attempt, so no review is half done when the journal appears.
  if ((await readTextOrNull(tick.state.journal)) !== null) {
    return { kind: "waiting", message: "waiting: the executor is mid-tick" };
  }
  const { report, brief } = s;
  const record = await readReview(tick.state.reviews, s.task, brief.branch);

  if (report.outcome === "BLOCKED") return await holdForBlocked(tick, s, record);

  const pr = await tick.forge.find(brief.branch);
  if (!pr) return { kind: "idle", message: `idle: no PR for ${brief.branch}` };

  // Merged (by relay or by a person): make sure the next brief is promoted, once. A person
  // may have merged any head of this PR — the one reported, or one an open fix brief was
  // written for — and a PR main already has is never merged again.
  const merged = pr.state === "merged" || record.merged !== undefined ? pr.head : await firstMerged(
    tick.primary,
    [
      report.head,
      pr.head,
      ...record.fixes.map((f) => f.head),
      ...record.verdicts.map((v) => v.head),
    ],
    s.originMain,
    tick.state.tasks,
    [s.task, report.task, ...record.fixes.map((f) => f.task)],
  );
  if (merged !== null) {
    const first = !record.merged;
    if (first) {
      record.merged = { sha: s.originMain, at: now(), by: "out-of-band" };
      await writeReview(tick.state.reviews, record);
      await tick.forge.noteMerged(pr);
      if (merged !== pr.head && !(await tick.primary.isAncestor(pr.head, s.originMain))) {
        // The branch moved on after the head a person merged (a fix ran meanwhile): its
        // newer commits are in no merge. relay does not merge the branch again; a person says.
        const hold = {
          task: s.task,
          reason: `${pr.id} was merged outside relay at ${
            merged.slice(0, 12)
          }, but ${pr.branch} has moved on to ${
            pr.head.slice(0, 12)
          } since: those commits are not in ${tick.config.main}`,
          next:
            `To keep them, merge ${pr.branch} by hand, or queue a brief for them (relay inbox add); to drop them, do nothing. Then run "relay resume": relay treats task ${s.task} as merged and moves on.`,
          at: now(),
        };
        await writeHold(tick.state.hold, hold);
        throw new HoldError(hold.reason, hold.next);
      }
      tick.log.step(
        `task ${s.task}: ${pr.id} was merged outside relay (${
          merged.slice(0, 12)
        } is in ${tick.config.main})${
          merged !== pr.head
            ? `; ${pr.branch} has moved on to ${
              pr.head.slice(0, 12)
            } since, and relay does not merge it again`
            : ""
        }`,
      );
    }
    const after = await promoteAfterMerge(
      tick,
      first ? `task ${s.task}: ${pr.id} was merged outside relay` : `task ${s.task} is merged`,
      pr.branch,
      {
        retire: `${pr.id} (task ${s.task}) was merged outside relay: ${
          merged.slice(0, 12)
        } is in ${tick.config.main}. Nothing was launched for this fix.`,
      },
    );
    // Said once, also under --quiet: a person merged a PR and relay moved on.
    return first ? { ...after, kind: "settled" } : after;
  }
  if (pr.state === "closed") {
    // Closed on the forge by a person (relay close records this itself): the task is over,
    // as with relay close, and the loop moves on instead of idling on it forever.
    const first = !record.closed;
    if (first) {
      record.closed = { head: pr.head, at: now(), reason: `${pr.id} was closed on the forge` };
      await writeReview(tick.state.reviews, record);
      tick.log.step(`task ${s.task}: ${pr.id} was closed outside relay`);
    }
    const after = await promoteAfterMerge(tick, `task ${s.task}: ${pr.id} is closed`, pr.branch, {
      retire:
        `${pr.id} (task ${s.task}) was closed outside relay. Nothing was launched for this fix.`,
    });
    return first ? { ...after, kind: "settled" } : after;
  }
  // The executor goes first when it is on this PR's branch (a fix brief) or mid-tick.
  // Another brief opened while this PR is in flight waits for it, so the review goes on.
  const working = await readTextOrNull(join(tick.repo.root, BRIEF_FILE));
  const open = working !== null && readStatus(working) === "OPEN"
    ? parseBrief(working, BRIEF_FILE)
    : null;
  if (open?.branch === pr.branch || (await readTextOrNull(tick.state.journal)) !== null) {
    return {
      kind: "waiting",
      message: `waiting: a brief is open in ${BRIEF_FILE}; the executor goes first`,
    };
  }
  if (pr.head !== report.head) {
    // Nobody in the loop pushed this: relay neither reviews nor merges code no report stands behind.
    const hold = {
      task: s.task,
      reason: `${pr.id} moved to ${pr.head.slice(0, 12)} outside relay; the report on main is for ${
        report.head.slice(0, 12)
      }`,
      next:
        `Find out who pushed to ${pr.branch}. To keep the new commits, queue a fix brief for task ${s.task} (Kind: fix, Fixes: ${s.task}, Branch: ${pr.branch}) so the executor reports on them; otherwise move them off the branch. Then run "relay resume". To give up on the task instead: relay close ${s.task} --reason "…".`,
      at: now(),
    };
    await writeHold(tick.state.hold, hold);
    throw new HoldError(hold.reason, hold.next);
  }

  let verdict = verdictFor(record, pr.head);
  if (verdict?.verdict === "FAIL") {
    const fix = record.fixes.filter((f) => f.head === pr.head).at(-1);
    if (!fix) {
      return await sendBack(tick, s, record, pr, verdict.findings, "The reviewer failed this PR.");
    }
    if (report.task !== fix.task) {
      return {
        kind: "waiting",
        message: `waiting: the fix brief (task ${fix.task}) for ${pr.id} is with the executor`,
      };
    }
    // The executor answered the fix without a new commit (it pushed back, or found nothing to
    // change): the reviewer reads that answer. Only once per fix: a FAIL after it sends back again.
    if (verdict.at > fix.at) {
      return await sendBack(tick, s, record, pr, verdict.findings, "The reviewer failed this PR.");
    }
    verdict = undefined;
  }
  if (!verdict || verdict.stale) {
    const early = await preGate(tick, s, record, pr);
    if (early) return early;
    await requireRoleProgram("reviewer", tick.profile.roles.reviewer, tick.profile.path);
    const v = await runReview(tick, s, record, pr);
    if (v.verdict === "FAIL") {
      return await sendBack(tick, s, record, pr, v.findings, "The reviewer failed this PR.");
    }
    verdict = verdictFor(record, pr.head)!;
  }
  return await gateAndMerge(tick, s, record, pr);
}

function now(): string {
  return new Date().toISOString();
}

async function holdForBlocked(tick: Tick, s: Subject, record: ReviewRecord): Promise<ReviewResult> {
  if (record.voids.some((v) => v.runId === `blocked-${s.report.head}-${s.report.task}`)) {
    return {
      kind: "waiting",
      message: `waiting: task ${s.report.task} is BLOCKED and was handed to a person`,
    };
  }
  record.voids.push({
    runId: `blocked-${s.report.head}-${s.report.task}`,
    at: now(),
    why: "executor reported BLOCKED",
  });
  await writeReview(tick.state.reviews, record);
  const hold = {
    task: s.report.task,
    reason: `task ${s.report.task} is BLOCKED: the executor could not finish it`,
    next: blockedOptions(s.task),
    at: now(),
  };
  await writeHold(tick.state.hold, hold);
  throw new HoldError(hold.reason, hold.next);
}

/** Snapshot of what a reviewer must not change (untracked build output aside: see build_output.ts). */
async function snapshot(
  wt: Git,
  primary: Git,
  buildOutput: BuildOutputMatcher,
): Promise<{ head: string; status: string; refs: string }> {
  const refs = (await primary.out(["for-each-ref", "--format=%(refname) %(objectname)"]))
    .split("\n").filter((l) => !l.startsWith("refs/relay/") && !l.startsWith("refs/remotes/")).join(
      "\n",
    );
  return {
    head: await wt.out(["rev-parse", "HEAD"]),
    status: withoutUntrackedBuildOutput(
      await wt.out(["status", "--porcelain=v1", "--untracked-files=all"]),
      buildOutput,
    ),
    refs,
  };
}

/** Runs the reviewer, once more if its first turn was void or gave no verdict. Records the verdict. */
async function runReview(
  tick: Tick,
  s: Subject,
  record: ReviewRecord,
  pr: PrStatus,
): Promise<Verdict> {
  // A tick killed during the reviewer's turn leaves the reviewer running in its own process
  // group: wait for it within its turn limit, stop it past that, never start a second one.
  const rj = await import("./review_journal.ts");
  const orphan = await rj.readReviewJournal(tick.state.reviewJournal);
  if (orphan) {
    const run = `pid ${orphan.pid}, run ${orphan.runId}`;
    const state = await orphanTurn(orphan, {
      stopping: () =>
        tick.log.step(
          `the reviewer of an interrupted tick (${run}) passed its turn limit (${orphan.deadline}); stopping its process group`,
        ),
    });
    if (state.kind === "running") {
      throw new rj.ReviewerStillRunning(
        `busy: the reviewer from an interrupted tick is still running (${run}${
          orphan.deadline ? `, turn limit at ${orphan.deadline}` : ""
        })${state.unverified ? `; ${state.unverified}, so relay will not stop it` : ""}`,
      );
    }
    if (state.kind === "stuck") {
      throw new rj.ReviewerStillRunning(
        `busy: the reviewer of an interrupted tick (${run}) is past its turn limit and did not stop on SIGTERM and SIGKILL; the next tick tries again`,
      );
    }
    let why = "interrupted";
    if (state.kind === "stopped") {
      why = "interrupted; stopped past its turn limit";
    } else {
      if (state.reused) tick.log.step(`not our reviewer: ${state.reused}`);
      tick.log.step(
        `the reviewer of run ${orphan.runId} ended while no tick watched it; its turn is void`,
      );
    }
    if (orphan.task === s.task) {
      record.voids.push({ runId: orphan.runId, at: now(), why });
      await writeReview(tick.state.reviews, record);
    }
    await rj.clearReviewJournal(tick.state.reviewJournal);
  }
  const root = tick.profile.worktreeRoot ?? defaultWorktreeRoot(tick.repo.root);
  checkWorktreeRoot(root, tick.repo.root, tick.repo.commonDir);
  await removeLeftoverReviewWorktrees(tick.primary);
  for (let turn = 1; turn <= 2; turn++) {
    const runId = newRunId(`review${s.task}-t${turn}`);
    const runDir = join(tick.state.runs, runId);
    await Deno.mkdir(runDir, { recursive: true });
    const worktree = join(root, `review-${runId}`);
    await tick.primary.run(["worktree", "add", "--quiet", "--detach", "--", worktree, pr.head]);
    const wt = new Git(worktree);
    const buildOutput = buildOutputMatcher(tick.config.neverCommit);
    const before = await snapshot(wt, tick.primary, buildOutput);
    // What the executor may not touch, the reviewer may not either: git's control files,
    // relay's records, the operator profile — and no push through the remote's name.
    // The run folder is left out: the reviewer may write its verdict there.
    const { runDir: _own, ...scope }: ControlScope = await executorScope({
      commonDir: tick.repo.commonDir,
      gitDir: tick.repo.gitDir,
      worktree,
      runDir,
      profilePath: tick.profile.path,
    });
    const controlBefore = await controlFiles(scope);
    const remoteLogs = await markRemoteLogs(tick.repo.commonDir, tick.config.remote);
    const headMark = await markTurn(
      tick.repo.commonDir,
      (await worktreeGitDir(worktree)) ?? join(tick.repo.commonDir, "worktrees", `review-${runId}`),
      null,
    );
    const out = await dispatchReviewer(tick, s, pr, worktree, runDir);
    const controlAfter = await controlFiles(scope);
    const steered = changedControls(controlBefore, controlAfter);
    const pushed = await pushesSince(tick.repo.commonDir, tick.config.remote, remoteLogs);
    if (steered.length || pushed.length) {
      const kept = await keepReviewerCommits(tick, runId, headMark, pr.head, false);
      return await holdReview(
        tick,
        s,
        runId,
        [
          steered.length
            ? `the reviewer changed files that steer git or relay: ${steered.join(", ")}`
            : "",
          pushed.length
            ? `the reviewer pushed to ${
              pushed.map((p) => `${tick.config.remote}/${p.branch}`).join(", ")
            }`
            : "",
          kept.length ? `the commits it made are kept under ${kept.join(", ")}` : "",
        ].filter((x) => x).join("; ") +
          " — relay ran no further git command in this repository; restore those files (or undo the push) before you run git here",
      );
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
        return await holdReview(
          tick,
          s,
          runId,
          `the reviewer changed its worktree and relay could not undo it: ${
            (err as Error).message.split("\n")[0]
          }`,
          `Compare the refs under refs/relay/void/${runId}/ with the repository's (git for-each-ref) and put back what the reviewer moved; the turn's folder is ${worktree} (or ${worktree}.void). Then run "relay resume".`,
        );
      }
      const why = voidCause(before.status, after.status, buildOutput, {
        task: s.task,
        branch: pr.branch,
      });
      record.voids.push({ runId, at: now(), why: `${why.cause}: ${changes.join("; ")}` });
      await writeReview(tick.state.reviews, record);
      tick.log.step(`review turn ${runId} is void: ${why.cause}`);
      // Tracked build output is rewritten on every run: another turn would only be void again.
      if (turn === 2 || why.next !== undefined) {
        return await holdReview(
          tick,
          s,
          runId,
          `${turn === 2 ? why.twice : why.cause} (${changes.join("; ")})`,
          why.next,
        );
      }
      continue;
    }
    await tick.primary.run(["worktree", "remove", "--", worktree], { allowFail: true });
    const parsed = out.problem
      ? { ok: false as const, problem: out.problem }
      : parseVerdict(out.text);
    if (!parsed.ok) {
      record.voids.push({ runId, at: now(), why: `invalid verdict: ${parsed.problem}` });
      await writeReview(tick.state.reviews, record);
      tick.log.step(`review turn ${runId} gave no valid verdict: ${parsed.problem}`);
      if (turn === 2) {
        return await holdReview(
          tick,
          s,
          runId,
          `the reviewer gave no valid verdict twice (${parsed.problem})`,
        );
      }
      continue;
    }
    record.verdicts.push({
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
    });
    await writeReview(tick.state.reviews, record);
    await tick.forge.recordVerdict(pr, pr.head, formatVerdict(parsed.value));
    tick.log.step(`task ${s.task}: verdict ${parsed.value.verdict} on ${pr.head.slice(0, 12)}`);
    failpoint("review-after-verdict");
    return parsed.value;
  }
  throw new Error("unreachable");
}

/**
 * A review tick killed mid-turn leaves its disposable worktree behind. Remove
 * the clean ones (plain `git worktree remove` refuses anything dirty, which
 * then stays for a person to look at).
 */
async function removeLeftoverReviewWorktrees(primary: Git): Promise<void> {
  const list = await primary.out(["worktree", "list", "--porcelain"]);
  for (const line of list.split("\n")) {
    const path = line.startsWith("worktree ") ? line.slice("worktree ".length) : "";
    if (/\/review-[^/]+-review\d+-t\d$/.test(path)) {
      await primary.run(["worktree", "remove", "--", path], { allowFail: true });
    }
  }
}

async function holdReview(
  tick: Tick,
  s: Subject,
  runId: string,
  reason: string,
  next?: string,
): Promise<never> {
  const hold = {
    task: s.task,
    reason: `review of task ${s.task}: ${reason}`,
    next: next ??
      `Look at .git/relay/runs/${runId}/ (reviewer log and output). Fix the reviewer's profile or REVIEWER.md, then run "relay resume".`,
    at: now(),
    runId,
  };
  await writeHold(tick.state.hold, hold);
  throw new HoldError(hold.reason, hold.next);
}

/**
 * Commits the reviewer made and left on no ref (committed on its detached HEAD, then
 * checked the PR head out again): its worktree's HEAD reflog is their only trace, and
 * that goes when the worktree does. Kept under refs/relay/void/<run>/commit-<k>; without
 * git when the turn changed what steers git. Returns the refs.
 */
async function keepReviewerCommits(
  tick: Tick,
  runId: string,
  turn: TurnMark,
  head: string,
  gitAllowed: boolean,
): Promise<string[]> {
  const prefix = `refs/relay/void/${runId}/commit-`;
  const made = await turnCommits(tick.repo.commonDir, turn, null, [head]);
  if (!gitAllowed) return await anchorWithoutGit(tick.repo.commonDir, prefix, made);
  // A checkout of main or another commit that a ref already keeps is not the reviewer's work.
  const lost = await unreachable(tick.primary, made);
  return await anchorWithGit(tick.primary, prefix, lost, [], "relay: void reviewer turn");
}

/**
 * Throws a void reviewer turn away without destroying anything: a moved HEAD
 * and new refs are kept under refs/relay/void/<run>/, and the dirty worktree
 * folder is moved aside, not deleted.
 */
async function voidTurn(
  tick: Tick,
  worktree: string,
  runId: string,
  before: { head: string; refs: string },
  after: { head: string; refs: string },
): Promise<void> {
  const keep = `refs/relay/void/${runId}`;
  if (after.head !== before.head) {
    await tick.primary.updateRef(`${keep}/HEAD`, after.head, "relay: void reviewer turn");
  }
  // Refs go back to how they were; what the reviewer pointed them at is kept under refs/relay/void/.
  const parse = (text: string) =>
    new Map(text.split("\n").filter((l) => l).map((l) => l.split(" ") as [string, string]));
  const was = parse(before.refs);
  const now = parse(after.refs);
  const restore = "relay: restore after a void reviewer turn";
  for (const [ref, sha] of now) {
    if (was.get(ref) === sha) continue;
    await tick.primary.updateRef(`${keep}/${ref}`, sha, "relay: void reviewer turn");
    const old = was.get(ref);
    if (old) await tick.primary.updateRef(ref, old, restore, sha);
    else await tick.primary.deleteRef(ref, sha);
  }
  for (const [ref, sha] of was) {
    if (!now.has(ref)) await tick.primary.updateRef(ref, sha, restore, "");
  }
  const aside = `${worktree}.void`;
  await Deno.rename(worktree, aside);
  await tick.primary.run(["worktree", "prune"]);
  tick.log.step(`kept the void turn's files at ${aside}`);
}

async function dispatchReviewer(
  tick: Tick,
  s: Subject,
  pr: PrStatus,
  worktree: string,
  runDir: string,
): Promise<{ text: string; problem?: string }> {
  const spec = tick.profile.roles.reviewer;
  const briefPath = join(runDir, "brief.md");
  const reportPath = join(runDir, "report.md");
  const verdictPath = join(runDir, "verdict.md");
  const stdoutPath = join(runDir, "reviewer.stdout");
  await Deno.writeTextFile(briefPath, writeBrief(s.brief));
  await Deno.writeTextFile(
    reportPath,
    (await showOrNull(tick.primary, `${s.originMain}:${REPORT_FILE}`)) ?? "",
  );
  const procedure = await showOrNull(tick.primary, `${s.originMain}:REVIEWER.md`);
  const procedurePath = procedure === null ? null : join(runDir, "REVIEWER.md");
  if (procedurePath) await Deno.writeTextFile(procedurePath, procedure!);
  tick.log.step(
    `task ${s.task}: starting the reviewer (${spec.vendor}) on ${pr.head.slice(0, 12)}`,
  );
  const timeoutMs = roleTimeoutMs(spec, tick.config.timeouts.agentMs);
  const rj = await import("./review_journal.ts");
  let res;
  try {
    res = await startTurn({
      role: "reviewer",
      spec,
      prompt: reviewerPrompt({
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
      }),
      allowCommands: s.brief.bar,
      env: {
        RELAY_ROLE: "reviewer",
        RELAY_TASK: String(s.task),
        RELAY_BRIEF: briefPath,
        RELAY_REPORT: reportPath,
        RELAY_VERDICT: verdictPath,
      },
      cwd: worktree,
      timeoutMs,
      logPath: join(runDir, "reviewer.log"),
      stdoutPath,
      progress: tick.progress,
      label: `reviewer task ${s.task}`,
      // Journaled while it runs: a later tick must find a reviewer this tick leaves behind.
      journal: {
        onStart: async (pid, started, deadline) => {
          await rj.writeReviewJournal(tick.state.reviewJournal, {
            version: 1,
            runId: runDir.split(/[\\/]/).pop() ?? runDir,
            task: s.task,
            pid,
            started,
            ...(deadline !== undefined ? { deadline } : {}),
            worktree,
          });
          failpoint("reviewer-running");
        },
      },
      demo: () =>
        runDemoReviewer({
          worktree,
          bar: s.brief.bar,
          verdictPath,
          timeoutMs: tick.config.timeouts.barMs,
          passEnv: tick.config.barEnv,
        }),
    });
  } finally {
    await rj.clearReviewJournal(tick.state.reviewJournal);
  }
  // A reviewer that failed or was cut off gave no verdict, whatever it printed on the way.
  if (res.startError) {
    return { text: "", problem: `the reviewer could not start: ${res.startError}` };
  }
  if (res.timedOut) {
    return {
      text: "",
      problem: `the reviewer ${timedOutText(timeoutMs, res.durationMs)}`,
    };
  }
  if (res.exitCode !== 0) {
    return { text: "", problem: `the reviewer exited ${res.exitCode ?? `by ${res.signal}`}` };
  }
  await redactFile(verdictPath); // the reviewer wrote it into relay's records
  const file = (await readTextOrNull(verdictPath))?.trim();
  if (file) return { text: file };
  return { text: (await readTextOrNull(stdoutPath)) ?? "" };
}

async function sendBack(
  tick: Tick,
  s: Subject,
  record: ReviewRecord,
  pr: PrStatus,
  findings: { severity: "blocker" | "major" | "minor"; text: string }[],
  why: string,
): Promise<ReviewResult> {
  if (record.fixes.length >= tick.config.fixRounds) {
    const hold = {
      task: s.task,
      reason:
        `task ${s.task} was sent back ${record.fixes.length} time(s) and still does not pass (${why.trim()})`,
      next:
        `Read the findings in .git/relay/reviews/task-${s.task}.json and the report on main. Either fix ${pr.branch} by hand and queue a fix brief (Kind: fix, Fixes: ${s.task}, Branch: ${pr.branch}), then run "relay resume"; or give up with relay close ${s.task} --reason "…" (closes ${pr.id} unmerged, promotes the next brief, clears this HOLD).`,
      at: now(),
    };
    await writeHold(tick.state.hold, hold);
    throw new HoldError(hold.reason, hold.next);
  }
  const inbox = await listInbox(tick.repo.root);
  const used = await usedTaskNumbers(tick.repo, inbox);
  const task = Math.max(0, s.report.task, ...used.keys()) + 1;
  const brief = fixBrief({
    task,
    original: s.brief,
    originalTask: s.task,
    head: pr.head,
    findings,
    why,
  });
  // A brief someone promoted while this PR was in flight goes back to the queue, not away.
  const demoted = await demoteOpenBrief(tick.repo.root);
  if (demoted) {
    tick.log.step(`moved the open brief back to ${demoted}: the fix for ${pr.id} goes first`);
  }
  await Deno.writeTextFile(join(tick.repo.root, BRIEF_FILE), writeBrief(brief));
  record.fixes.push({ task, at: now(), head: pr.head });
  await writeReview(tick.state.reviews, record);
  return {
    kind: "fix",
    task: s.task,
    fixTask: task,
    message:
      `task ${s.task}: sent back — fix brief ${task} is open in ${BRIEF_FILE} (round ${record.fixes.length}/${tick.config.fixRounds})`,
  };
}

/** A merge is the task's: its own title, not the "Fix task <n>: …" of a fix brief in flight. */
function mergeSubject(branch: string, brief: Brief, task: number): string {
  return `Merge ${branch}: ${taskTitle(brief)} (task ${task}, reviewed by relay)`;
}

/**
 * The gate's scope check, before a reviewer's paid turn: a PR that changes
 * nothing (an empty diff against its merge base with main, or a head main
 * already has) or touches paths the gate refuses goes back now with the gate's
 * finding, as a gate REFUSE after review would; owner-accepted infra goes to a
 * person, who reviews it. Anything else (or a head git cannot find) is reviewed.
 */
async function preGate(
  tick: Tick,
  s: Subject,
  record: ReviewRecord,
  pr: PrStatus,
): Promise<ReviewResult | null> {
  const head = await tick.primary.resolve(pr.head);
  if (!head) return null;
  const scope = await scopeCheck(tick.primary, tick.config, s.originMain, head);
  if (scope.result === "REFUSE") {
    tick.log.step(`gate for ${pr.id}, before review: ${scope.result} ${scope.reason}`);
    return await sendBack(
      tick,
      s,
      record,
      pr,
      [{ severity: "blocker", text: `${scope.name}: ${scope.reason}` }],
      "The merge gate refused this PR (checked before review).",
    );
  }
  if (scope.result === "HUMAN") return await routeToHuman(tick, record, pr, scope.files ?? []);
  return null;
}

/** The human path: recorded once per head; relay never merges the PR. */
async function routeToHuman(
  tick: Tick,
  record: ReviewRecord,
  pr: PrStatus,
  files: string[],
): Promise<ReviewResult> {
  if (record.human?.head !== pr.head) {
    record.human = { head: pr.head, at: now(), files };
    await writeReview(tick.state.reviews, record);
  }
  return {
    kind: "human",
    files,
    message: `human path: ${pr.id} changes owner-accepted infra (${
      files.join(", ")
    }); a person reviews and merges it — relay never will`,
  };
}

async function gateAndMerge(
  tick: Tick,
  s: Subject,
  record: ReviewRecord,
  pr: PrStatus,
): Promise<ReviewResult> {
  // The reviewer may have taken many minutes: judge the main that is there now.
  await tick.primary.fetch(tick.config.remote);
  const mainNow = await tick.primary.resolve(
    `refs/remotes/${tick.config.remote}/${tick.config.main}`,
  );
  if (mainNow && mainNow !== s.originMain) s = { ...s, originMain: mainNow };
  const decision = await gateFor(tick, s, record, pr);
  tick.log.step(`gate for ${pr.id}:\n${formatGate(decision)}`);
  switch (decision.decision) {
    case "WAIT": {
      const stale = decision.checks.find((c) =>
        c.name === "verdict" && c.result === "WAIT" && /stale/i.test(c.reason)
      );
      if (stale) {
        const v = verdictFor(record, pr.head);
        if (v) v.stale = true;
        await writeReview(tick.state.reviews, record);
        // Reviewed again and still failing on the merge: only the executor can fix that, not another review.
        if (record.verdicts.filter((x) => x.head === pr.head && x.stale).length >= 2) {
          return await sendBack(tick, s, record, pr, [{
            severity: "blocker",
            text:
              `the verification bar fails on the merge of ${pr.branch} with ${tick.config.main} (${
                s.originMain.slice(0, 12)
              }); bring the branch up to date with ${tick.config.main} and make the bar pass`,
          }], "The PR no longer passes its bar once merged with main.");
        }
      }
      return {
        kind: "waiting",
        message: `waiting: ${
          decision.checks.filter((c) => c.result === "WAIT").map((c) => c.reason).join("; ")
        }`,
      };
    }
    case "HUMAN": {
      const files = decision.checks.flatMap((c) => c.result === "HUMAN" ? c.files ?? [] : []);
      return await routeToHuman(tick, record, pr, files);
    }
    case "REFUSE": {
      const findings = decision.checks.filter((c) => c.result === "REFUSE").map((c) => ({
        severity: "blocker" as const,
        text: `${c.name}: ${c.reason}`,
      }));
      return await sendBack(tick, s, record, pr, findings, "The merge gate refused this PR.");
    }
    case "MERGE": {
      if (tick.config.merge !== "auto") {
        return {
          kind: "human",
          files: [],
          message:
            `ready: ${pr.id} passed review and the gate; merge policy is "${tick.config.merge}": a person merges it`,
        };
      }
      const res = await tick.forge.merge(
        pr,
        pr.head,
        mergeSubject(pr.branch, s.brief, s.task),
        decision.base,
      );
      if (!res.merged) {
        return {
          kind: "waiting",
          message: `waiting: merge of ${pr.id} did not land: ${res.why}; the next tick tries again`,
        };
      }
      record.merged = { sha: res.sha, at: now(), by: "relay" };
      await writeReview(tick.state.reviews, record);
      tick.log.step(`task ${s.task}: merged ${pr.id} as ${res.sha.slice(0, 12)}`);
      const after = await promoteAfterMerge(
        tick,
        `task ${s.task} merged (${res.sha.slice(0, 12)})`,
        pr.branch,
      );
      return { kind: "merged", task: s.task, sha: res.sha, message: after.message };
    }
  }
}

async function gateFor(
  tick: Pick<Tick, "primary" | "config" | "forge" | "state">,
  s: Subject,
  record: ReviewRecord,
  pr: PrStatus,
): Promise<GateDecision> {
  const scratchRoot = await Deno.makeTempDir({ prefix: "relay-merge-preview-" });
  try {
    return await runGate({
      git: tick.primary,
      config: tick.config,
      pr,
      report: s.report,
      brief: s.brief,
      review: record,
      openPrs: await tick.forge.listOpen(),
      revalidate: async (v) => {
        const res = await revalidateOnMerge(tick.primary, {
          originMain: s.originMain,
          head: v.head,
          bar: s.brief.bar,
          timeoutMs: tick.config.timeouts.barMs,
          maxBytes: tick.config.evidenceMaxBytes,
          passEnv: tick.config.barEnv,
          scratchRoot,
        });
        // Recorded, so the next tick (and relay status) reuse it instead of re-running the bar.
        v.revalidations = [...(v.revalidations ?? []), {
          main: s.originMain,
          mergeTree: res.mergeTree,
          passed: res.passed,
          at: now(),
        }];
        if (tick.state) await writeReview(tick.state.reviews, record);
        return res;
      },
    });
  } finally {
    await Deno.remove(scratchRoot, { recursive: true }).catch(() => {});
  }
}

/** Shorter than LOCK_WAIT_MS: a poll waiting for this tick's lock must not wait for it in turn. */
const PROMOTE_WAIT_MS = 15_000;

async function promoteAfterMerge(
  tick: Tick,
  done: string,
  branch: string,
  opts: { retire?: string } = {},
): Promise<ReviewResult> {
  // Every review tick comes back here while the report on main is for a merged task: the
  // loop's resting state. Take the poll lock only when there is something to do, so a
  // poll that fires at the same second never waits for a review that has nothing to say.
  const idle = await promotionIdle(tick.repo.root, opts.retire ? branch : undefined);
  if (idle !== null && !(await taskWorktree(tick, branch))) {
    return { kind: "idle", message: `${done}; ${idle}` };
  }
  // The executor's paperwork commit must not pick up a half-written promotion: share its lock.
  // When a tick holds it, the next review tick promotes (a merged PR always comes back here).
  // A poll that is only looking (no attempt journaled) is waited for; one running an
  // agent turn is not, and the next review tick promotes.
  const attempt = (await readTextOrNull(tick.state.journal)) !== null;
  await using lock = attempt
    ? await tryLock(tick.state.pollLock, "promote")
    // A poll holding its lock may itself be waiting for this tick's lock: never wait for it.
    : await waitLock(tick.state.pollLock, "promote", {
      waitMs: PROMOTE_WAIT_MS,
      waitFor: (holder) => holder.command !== "poll",
    });
  if (!lock) {
    return { kind: "idle", message: `${done}; promotion waits for the executor's tick to end` };
  }
  await removeTaskWorktree(tick, branch);
  const retired = opts.retire ? await retireFixBrief(tick.repo.root, branch, opts.retire) : null;
  if (retired !== null) {
    tick.log.step(`retired fix brief ${retired} (set to DONE): ${opts.retire}`);
    done += `; fix brief ${retired} retired`;
  }
  const res = await promoteNext(tick.repo.root);
  if (res.result === "promoted") {
    tick.log.step(`promoted task ${res.task}: ${res.title}`);
    return { kind: "idle", message: `${done}; promoted task ${res.task} into ${BRIEF_FILE}` };
  }
  return { kind: "idle", message: `${done}; ${res.message}` };
}

/**
 * The task is over: its worktree goes, when it is clean (plain `git worktree
 * remove` refuses anything else, which then stays for a person). The branch and
 * every commit on it stay.
 */
async function removeTaskWorktree(tick: Tick, branch: string): Promise<void> {
  const wt = await taskWorktree(tick, branch);
  if (!wt) return;
  // What relay never commits is all that may be left (no .gitignore): it goes first.
  await clearUntrackedBuildOutput(new Git(wt.path), buildOutputMatcher(tick.config.neverCommit))
    .catch(() => {});
  const res = await tick.primary.run(["worktree", "remove", "--", wt.path], { allowFail: true });
  if (res.code === 0) tick.log.step(`removed the worktree of ${branch} (the branch stays)`);
}

/** The worktree relay made for `branch`, if it is still there. */
async function taskWorktree(tick: Tick, branch: string): Promise<{ path: string } | undefined> {
  const list = parseWorktreeList(await tick.primary.out(["worktree", "list", "--porcelain", "-z"]));
  return list.find((w) => w.branch === branch && w.path !== tick.repo.root);
}

/** `relay merge [<task>]`: the gate, then the merge, then promotion — what a PASS does, on demand. */
export async function runMerge(
  opts: ReviewOptions & { task?: number },
): Promise<ReviewResult & { decision?: GateDecision }> {
  const state = statePaths(opts.repo.commonDir);
  await using lock = await tryLock(state.reviewLock, "merge");
  if (!lock) {
    return { kind: "busy", message: "busy: a relay review is running; try again when it ends" };
  }
  const config = await loadRepoConfig(opts.repo.root);
  const primary = new Git(opts.repo.root, config.timeouts.networkMs);
  await primary.fetch(config.remote);
  const originMain = await primary.resolve(`refs/remotes/${config.remote}/${config.main}`);
  const subject = originMain ? await readSubject(primary, originMain) : null;
  // Nothing in flight is an ordinary state (exit 0, decision NONE), not an error.
  if (
    !subject ||
    (opts.task !== undefined && opts.task !== subject.task && opts.task !== subject.report.task)
  ) {
    return {
      kind: "idle",
      message: `nothing to merge: no report ${
        opts.task === undefined ? "" : `for task ${opts.task} `
      }on ${config.remote}/${config.main}; "relay status" shows which task is in flight`,
    };
  }
  if (subject.report.outcome === "BLOCKED") {
    return {
      kind: "idle",
      message:
        `nothing to merge: task ${subject.report.task} is BLOCKED; "relay status" shows the options`,
    };
  }
  const tick: Tick = {
    repo: opts.repo,
    state,
    primary,
    config,
    profile: { path: "", roles: {} as Profile["roles"] },
    forge: plannerForge(config, primary, state.prs),
    log: opts.log,
    progress: opts.progress,
  };
  const pr = await tick.forge.find(subject.brief.branch);
  if (!pr || pr.state !== "open") {
    return {
      kind: "idle",
      message: `nothing to merge: ${
        pr ? `${pr.id} is ${pr.state}` : `no PR for ${subject.brief.branch}`
      }`,
    };
  }
  const record = await readReview(state.reviews, subject.task, subject.brief.branch);
  const decision = await gateFor(tick, subject, record, pr);
  if (decision.decision !== "MERGE") {
    return {
      kind: "waiting",
      decision,
      message: `not merging ${pr.id}: the gate says ${decision.decision}\n${formatGate(decision)}`,
    };
  }
  const res = await tick.forge.merge(
    pr,
    pr.head,
    mergeSubject(pr.branch, subject.brief, subject.task),
    decision.base,
  );
  if (!res.merged) return { kind: "waiting", decision, message: `not merged: ${res.why}` };
  record.merged = { sha: res.sha, at: now(), by: "relay" };
  await writeReview(state.reviews, record);
  const after = await promoteAfterMerge(
    tick,
    `merged ${pr.id} as ${res.sha.slice(0, 12)}`,
    pr.branch,
  );
  return { kind: "merged", task: subject.task, sha: res.sha, decision, message: after.message };
}
