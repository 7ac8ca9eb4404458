/**
 * `relay poll`: the executor tick that cron runs every minute.
 *
 * One tick takes the open brief through one attempt: worktree → agent →
 * commit (product only) → relay's own evidence → push → PR → paperwork commit
 * on main. Every step is journaled, so a tick killed anywhere is finished by
 * the next one.
 */
import { join } from "node:path";
import { HoldError, InputError } from "../errors.ts";
import { Git } from "../git/git.ts";
import { currentBranch, operationInProgress } from "../git/discover.ts";
import { loadRepoConfig, type RepoConfig } from "../config/repo.ts";
import { formatDuration } from "../config/duration.ts";
import { loadProfile, type Profile, profilePath } from "../config/profile.ts";
import { briefDigest, parseBrief, writeBrief } from "../protocol/brief.ts";
import { checkReport, parseReport, writeReport } from "../protocol/report.ts";
import type { Brief, Report } from "../protocol/types.ts";
import { executorPrompt } from "../agents/prompt.ts";
import {
  orphanTurn,
  requireRoleProgram,
  roleTimeoutMs,
  startTurn,
  timedOutText,
} from "../agents/turn.ts";
import { journaledAgent } from "./orphan.ts";
import { runDemoAgent } from "../agents/demo.ts";
import { LOCK_WAIT_MS, lockHolder, waitLock } from "../state/lock.ts";
import {
  anchorRef,
  BRIEF_FILE,
  INBOX_DIR,
  REPORT_FILE,
  type StatePaths,
  statePaths,
  turnAnchorPrefix,
} from "../state/paths.ts";
import {
  archiveJournal,
  type Journal,
  readJournal,
  type Step,
  stepIndex,
  writeJournal,
} from "../state/journal.ts";
import { addReceipt, failedAttempts, readTaskRecord, recordAttempt } from "../state/tasks.ts";
import { type Hold, holdOnRecord, readHold, writeHold } from "../state/hold.ts";
import { failpoint } from "../state/failpoint.ts";
import { readJson, readTextOrNull, writeJson } from "../state/json_file.ts";
import { runId as newRunId } from "../state/run_id.ts";
import { executorForge as chooseExecutorForge } from "../forge/executor_forge.ts";
import type { ExecutorForge } from "../forge/types.ts";
import { demoteOpenBrief, promoteNext, retireFixBrief } from "./promote.ts";
import { mergedIntoMain } from "./merged.ts";
import { readReview } from "../state/reviews.ts";
import { readStatus } from "../protocol/status_line.ts";
import { checkWorktreeRoot, defaultWorktreeRoot, ensureWorktree } from "./worktree.ts";
import { commitLeftovers, savePaperwork } from "./branch_commit.ts";
import { disagreements } from "./evidence.ts";
import { runBar, truncateOutput } from "../bar/run.ts";
import { copyRedacted } from "../proc/redact.ts";
import { commitPaperwork, pushMain, syncMain } from "./paperwork.ts";
import { fileHash, sha256 } from "../proc/hash.ts";
import {
  changedControls,
  changedPrimaryFiles,
  controlFiles,
  executorScope,
  markRemoteLogs,
  pushesSince,
  worktreeGitDir,
} from "./guard.ts";
import {
  anchorWithGit,
  anchorWithoutGit,
  journalMark,
  markTurn,
  turnCommits,
} from "./turn_anchors.ts";
import type { TickOptions } from "./log.ts";
import type { Evidence } from "../protocol/types.ts";

export type TickResult =
  | { kind: "idle"; message: string }
  | { kind: "busy"; message: string }
  | { kind: "shipped"; message: string; task: number; pr: string; head: string }
  | { kind: "blocked"; message: string; task: number }
  /** A fix brief whose PR a person already merged or closed: set to DONE, nothing launched. */
  | { kind: "retired"; message: string; task: number }
  | { kind: "failed"; message: string; task: number; attempt: number };

export type PollOptions = TickOptions;

interface Tick extends Omit<TickOptions, "profileFlag"> {
  state: StatePaths;
  primary: Git;
  config: RepoConfig;
  profile: Profile;
}

export async function runPollTick(opts: PollOptions): Promise<TickResult> {
  const state = statePaths(opts.repo.commonDir);
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

  const journal = await readJournal(state.journal);
  const briefText = await readTextOrNull(join(opts.repo.root, BRIEF_FILE));
  if (!journal) {
    if (briefText === null || readStatus(briefText) !== "OPEN") {
      return { kind: "idle", message: "idle: no open brief" };
    }
  }

  const hold = await readHold(state.hold);
  if (hold) throw holdOnRecord(hold);

  const config = await loadRepoConfig(opts.repo.root);
  const profile = await loadProfile(profilePath(opts.profileFlag));
  const primary = new Git(opts.repo.root, config.timeouts.networkMs);
  const tick: Tick = {
    repo: opts.repo,
    state,
    primary,
    config,
    profile,
    log: opts.log,
    progress: opts.progress,
  };

  checkPrimary(tick);

  // A HOLD raised from here on is recorded by the tick runner (lib/cli/tick.ts), with what
  // `relay resume` will do with the journaled run.
  if (journal) {
    const runBrief = await readTextOrNull(join(state.runs, journal.runId, "brief.md"));
    if (runBrief === null) {
      throw new Error(`Cannot resume run ${journal.runId}: its brief copy is missing`);
    }
    const brief = parseBrief(runBrief, join(state.runs, journal.runId, "brief.md"));
    tick.log.step(
      `resuming task ${journal.task} run ${journal.runId} after step "${journal.step}"`,
    );
    return await continueAttempt(tick, brief, journal);
  }

  const brief = parseBrief(briefText!, BRIEF_FILE);
  return await startAttempt(tick, brief);
}

/** Preconditions on the primary tree; nothing is changed when one fails. */
function checkPrimary(tick: Tick): void {
  const branch = currentBranch(tick.repo.gitDir);
  if (branch !== tick.config.main) {
    throw new HoldError(
      `The primary tree is on "${branch ?? "a detached HEAD"}", not "${tick.config.main}"`,
      `Run "git switch ${tick.config.main}" in ${tick.repo.root}; relay works in its own worktrees and keeps the primary tree on ${tick.config.main}.`,
      { recheck: true },
    );
  }
  const op = operationInProgress(tick.repo.gitDir);
  if (op) {
    throw new HoldError(
      `The primary tree is in the middle of ${op}`,
      `Finish or abort it in ${tick.repo.root}, then rerun.`,
      { recheck: true },
    );
  }
}

/**
 * The primary tree's own changes (tracked and untracked, outside the inbox) as
 * path → content hash. Taken before and after the agent: any difference means
 * the agent reached out of its worktree.
 */
async function primaryFiles(primary: Git): Promise<Record<string, string>> {
  const spec = ["--", "."];
  const tracked =
    (await primary.out(["diff", "--name-only", "--no-renames", "-z", "HEAD", ...spec]))
      .split("\0");
  const untracked =
    (await primary.out(["ls-files", "--others", "--exclude-standard", "-z", ...spec]))
      .split("\0");
  // Every queued brief, changed or not: one the agent rewrites must show as changed,
  // not as new (a person may add or drop briefs during the turn; see changedPrimaryFiles).
  const inbox = (await primary.out(["ls-files", "-z", "--", INBOX_DIR])).split("\0");
  const files: Record<string, string> = {};
  for (
    const path of [...new Set([...tracked, ...untracked, ...inbox])].filter((p) => p !== "").sort()
  ) {
    files[path] = (await fileHash(join(primary.cwd, path))) || "(deleted)";
  }
  return files;
}

async function primaryDiffHash(primary: Git): Promise<string> {
  return await sha256(JSON.stringify(await primaryFiles(primary)));
}

async function startAttempt(tick: Tick, brief: Brief): Promise<TickResult> {
  const { primary, config, state, profile } = tick;
  const briefHash = await briefDigest(brief);
  const record = await readTaskRecord(state.tasks, brief.task);
  const failed = failedAttempts(record, briefHash);
  const runId = newRunId(`task${brief.task}-a${failed + 1}`);

  if (failed >= config.attempts) {
    // The cap was reached but the BLOCKED paperwork never landed: finish it now.
    tick.log.step(
      `task ${brief.task} already failed ${failed} time(s); writing the BLOCKED report`,
    );
  }

  // One PR in flight at a time: only its own fix brief may work while it waits for review.
  // Asked before the review lock: while a PR is in flight the review may hold that lock
  // for a whole reviewer turn, and this brief has nothing to do until the PR is settled.
  const inFlight = (await executorForge(tick).listOpen()).filter((pr) =>
    !(brief.kind === "fix" && pr.branch === brief.branch)
  );
  if (inFlight.length) {
    return {
      kind: "busy",
      message: `waiting: ${
        inFlight.map((p) => p.id).join(", ")
      } is in flight; task ${brief.task} starts once the reviewer merges it or sends it back`,
    };
  }

  // The review tick writes relay's records (verdicts, PR records) that the turn's guard
  // compares. Hold its lock while preparing: a review running now finishes first, and one
  // starting later finds the journal and does nothing until the attempt is over. Cron
  // starts both ticks at the same second, so a review that is only fetching or finding
  // nothing to do is waited for rather than costing this brief its minute.
  let journal: Journal;
  {
    await using reviewLock = await waitLock(state.reviewLock, "poll", {
      waitMs: LOCK_WAIT_MS,
    });
    if (!reviewLock) {
      return {
        kind: "busy",
        message: `waiting: relay ${
          (await lockHolder(state.reviewLock))?.command ?? "review"
        } is still running after ${LOCK_WAIT_MS / 1000}s; task ${brief.task} starts after it`,
      };
    }
    // A program that is not there is the operator's problem, not a failed attempt.
    // (With the cap reached only relay's BLOCKED report is left to write: no program needed.)
    if (failed < config.attempts) {
      await requireRoleProgram("executor", profile.roles.executor, profile.path);
    }

    await primary.fetch(config.remote);
    const originMain = await primary.resolve(`refs/remotes/${config.remote}/${config.main}`);
    if (!originMain) {
      throw new HoldError(
        `"${config.remote}/${config.main}" does not exist`,
        `Push ${config.main} to ${config.remote} first (git push ${config.remote} ${config.main}).`,
        { recheck: true },
      );
    }
    await warnUnpublished(tick);
    // A fix works on its PR's branch: not when a person already merged or closed that PR.
    if (brief.kind === "fix") {
      const why = await settledOutOfBand(tick, brief, originMain);
      if (why) return await retire(tick, brief, why);
    }
    const root = profile.worktreeRoot ?? defaultWorktreeRoot(tick.repo.root);
    checkWorktreeRoot(root, tick.repo.root, tick.repo.commonDir);
    const worktree = join(root, brief.branch.replaceAll("/", "-"));
    const how = await ensureWorktree(primary, {
      path: worktree,
      branch: brief.branch,
      remote: config.remote,
      start: originMain,
    });
    tick.log.step(`task ${brief.task}: worktree ${how} at ${worktree} on ${brief.branch}`);
    const wt = new Git(worktree, config.timeouts.networkMs);
    const before = await wt.head();
    await primary.updateRef(
      anchorRef(brief.task, runId, "before"),
      before,
      "relay: before agent turn",
    );
    failpoint("after-worktree");

    const runDir = join(state.runs, runId);
    await Deno.mkdir(runDir, { recursive: true });
    await Deno.writeTextFile(join(runDir, "brief.md"), writeBrief(brief));
    await copyInstructions(tick, worktree);
    await clearStaleReport(wt, runDir);

    const scope = await executorScope({
      commonDir: tick.repo.commonDir,
      gitDir: tick.repo.gitDir,
      worktree,
      runDir,
      profilePath: profile.path,
    });
    const fresh: Journal = {
      version: 1,
      task: brief.task,
      runId,
      attempt: failed + 1,
      step: "prepared",
      branch: brief.branch,
      worktree,
      originMain,
      before,
      mainBefore: (await primary.resolve(`refs/heads/${config.main}`)) ?? "",
      primaryDiff: await primaryDiffHash(primary),
      primaryFiles: await primaryFiles(primary),
      reportBefore: await fileHash(join(worktree, REPORT_FILE)),
      // Last, so nothing relay does while preparing counts as the agent's.
      ...(await markWorktree(tick, worktree, brief.branch)),
      remoteLogs: await markRemoteLogs(tick.repo.commonDir, config.remote),
      control: await controlFiles(scope),
      updated: "",
    };
    if (failed >= config.attempts) {
      fresh.step = "agent-finished";
      fresh.outcome = "BLOCKED";
      fresh.failure = `${failed} attempt(s) failed; see earlier runs`;
    }
    await writeJournal(state.journal, fresh);
    journal = fresh;
  }
  failpoint("after-prepared");
  return await continueAttempt(tick, brief, journal);
}

/**
 * One line (also under --quiet, so cron.log has it) when REVIEWER.md or the
 * repo config is in the primary tree but not on origin/main. Runs just after
 * the fetch: never on the idle path.
 */
async function warnUnpublished(tick: Tick): Promise<void> {
  const { unpublishedWarning } = await import("./unpublished.ts");
  const { stamped } = await import("../proc/log.ts");
  const { remote, main } = tick.config;
  const line = await unpublishedWarning(tick.primary, { remote, main });
  if (line) console.error(stamped(`relay: ${line}`, Deno.stderr.isTerminal()));
}

/**
 * Why the PR a fix brief works on is already settled outside relay: the forge
 * says it was merged or closed, or the branch's head is already in main (a
 * person merged it by hand). Null when the fix should run.
 */
async function settledOutOfBand(
  tick: Tick,
  brief: Brief,
  originMain: string,
): Promise<string | null> {
  // Only a fix relay wrote for that PR: one a person queued on the branch after it was
  // settled (to go on from its work) is theirs to run.
  if (brief.fixes === undefined) return null;
  const record = await readReview(tick.state.reviews, brief.fixes, brief.branch);
  if (!record.fixes.some((f) => f.task === brief.task)) return null;
  const state = await executorForge(tick).settled(brief.branch);
  if (state) return `the PR for ${brief.branch} was ${state} before this fix ran`;
  const head = await tick.primary.resolve(`refs/remotes/${tick.config.remote}/${brief.branch}`) ??
    await tick.primary.resolve(`refs/heads/${brief.branch}`);
  if (!head) return null;
  // The receipts that may name the head's starting point: the task and every fix since.
  const from = brief.fixes ?? brief.task;
  const tasks = Array.from({ length: Math.max(1, brief.task - from + 1) }, (_, i) => from + i);
  if (!(await mergedIntoMain(tick.primary, head, originMain, tick.state.tasks, tasks))) return null;
  return `${brief.branch} at ${
    head.slice(0, 12)
  } is already in ${tick.config.remote}/${tick.config.main} (merged outside relay) before this fix ran`;
}

/**
 * Sets a fix brief whose PR is settled to DONE with the reason, launches
 * nothing, and promotes the next queued brief (this tick holds the poll lock).
 */
async function retire(tick: Tick, brief: Brief, why: string): Promise<TickResult> {
  const reason = `${why}. Nothing was launched for it.`;
  await retireFixBrief(tick.repo.root, brief.branch, reason);
  tick.log.step(`task ${brief.task}: retired the fix brief (set to DONE): ${reason}`);
  const next = await promoteNext(tick.repo.root);
  return {
    kind: "retired",
    task: brief.task,
    message: `task ${brief.task} retired: ${why}; ${
      next.result === "promoted" ? `promoted task ${next.task} into ${BRIEF_FILE}` : next.message
    }`,
  };
}

/**
 * A report left in the worktree by an earlier attempt (one that ended in a
 * HOLD) would pass for this turn's report if the agent wrote the same bytes,
 * or for no report at all. Keep it in the run folder and start clean.
 */
async function clearStaleReport(wt: Git, runDir: string): Promise<void> {
  const status = await wt.out([
    "status",
    "--porcelain=v1",
    "--untracked-files=all",
    "--",
    REPORT_FILE,
  ]);
  if (status === "") return;
  await Deno.mkdir(runDir, { recursive: true });
  await copyRedacted(join(wt.cwd, REPORT_FILE), join(runDir, "stale-report.md")).catch(() => {});
  if (await wt.ok(["cat-file", "-e", `HEAD:${REPORT_FILE}`])) {
    await wt.run(["checkout", "--quiet", "HEAD", "--", REPORT_FILE]);
  } else {
    await Deno.remove(join(wt.cwd, REPORT_FILE)).catch(() => {});
  }
}

/**
 * With `--web-root`, CLAUDE.md/AGENTS.md are git-excluded: copy them into the
 * worktree for the agent. Only an ignored file is copied: an untracked one git
 * does not ignore would be committed onto the task branch (`git add --all`),
 * and the gate refuses every branch that carries agent instructions.
 */
async function copyInstructions(tick: Tick, worktree: string): Promise<void> {
  const wt = new Git(worktree, tick.config.timeouts.networkMs);
  for (const name of ["CLAUDE.md", "AGENTS.md"]) {
    const src = join(tick.repo.root, name);
    const dest = join(worktree, name);
    const tracked = await tick.primary.ok(["ls-files", "--error-unmatch", "--", name]);
    if (tracked) continue;
    const ignored = await tick.primary.ok(["check-ignore", "-q", "--", name]) &&
      await wt.ok(["check-ignore", "-q", "--", name]);
    if (!ignored) continue;
    const text = await readTextOrNull(src);
    if (text !== null) await Deno.writeTextFile(dest, text);
  }
}

async function advance(tick: Tick, journal: Journal, step: Step): Promise<void> {
  journal.step = step;
  await writeJournal(tick.state.journal, journal);
  failpoint(`after-${step}`);
}

function done(journal: Journal, step: Step): boolean {
  return stepIndex(journal.step) >= stepIndex(step);
}

async function continueAttempt(tick: Tick, brief: Brief, journal: Journal): Promise<TickResult> {
  const { state, config } = tick;
  const wt = new Git(journal.worktree, config.timeouts.networkMs);
  const runDir = join(state.runs, journal.runId);

  if (!done(journal, "agent-finished")) {
    if (journal.step === "agent-started") {
      const pid = journal.agentPid!;
      const orphan = await orphanTurn(journaledAgent(journal), {
        stopping: () =>
          tick.log.step(
            `the agent of run ${journal.runId} (pid ${pid}) outlived its tick and passed its turn limit (${journal.agentDeadline}); stopping its process group`,
          ),
      });
      if (orphan.kind === "running") {
        const until = journal.agentDeadline ? `, turn limit at ${journal.agentDeadline}` : "";
        return {
          kind: "busy",
          message:
            `busy: the agent from an interrupted tick is still running (pid ${pid}, run ${journal.runId}${until})${
              orphan.unverified ? `; ${orphan.unverified}, so relay will not stop it` : ""
            }`,
        };
      }
      if (orphan.kind === "stuck") {
        return {
          kind: "busy",
          message:
            `busy: the agent of run ${journal.runId} (pid ${pid}) is past its turn limit and did not stop on SIGTERM and SIGKILL; the next tick tries again`,
        };
      }
      if (orphan.kind === "gone") {
        if (orphan.reused) tick.log.step(`not our agent: ${orphan.reused}`);
        tick.log.step(
          `the agent of run ${journal.runId} ended while no tick watched it; not relaunching that turn`,
        );
      }
      journal.agent = orphan.outcome;
    } else {
      journal.agent = await runExecutor(tick, brief, journal);
    }
    await advance(tick, journal, "agent-finished");
  }

  if (!done(journal, "committed")) {
    // Whatever the agent did, these must hold before anything is committed or leaves this machine.
    await checkAgentStayedInBounds(tick, journal);
    await saveAgentReport(journal, runDir);
    await savePaperwork(wt, runDir);
    if (!journal.outcome) judgeTurn(journal, await readAgentReport(runDir, brief));
    const base = (await wt.out(["merge-base", "HEAD", journal.originMain]).catch(() =>
      journal.originMain
    )) ||
      journal.originMain;
    const message = journal.outcome === "SHIPPED"
      ? `Task #${brief.task}: ${brief.title}`
      : `WIP: Task #${brief.task} attempt ${journal.attempt} (${
        journal.failure ?? "unfinished"
      }) [relay]`;
    await commitLeftovers(wt, base, message, { log: tick.log, neverCommit: config.neverCommit });
    journal.head = await wt.head();
    await tick.primary.updateRef(
      anchorRef(brief.task, journal.runId, "after"),
      journal.head,
      "relay: after agent turn",
    );
    await advance(tick, journal, "committed");
  }

  if (journal.outcome === "FAILED") return await recordFailure(tick, brief, journal);

  if (!done(journal, "pushed")) await adoptFixedBranch(tick, wt, journal);

  let report: Report;
  if (journal.outcome === "SHIPPED") {
    report = (await readAgentReport(runDir, brief)).report!;
    const evidence = await evidenceFor(tick, wt, brief, journal, runDir);
    report.warnings = [
      ...disagreements(report, evidence),
      ...report.warnings.filter((w) => !w.startsWith("DISAGREEMENT")),
    ];
    report.evidence = evidence;
    // What the agent pasted goes on main too: keep it to the size relay keeps of its own runs.
    report.verification = report.verification.map((v) => ({
      ...v,
      output: truncateOutput(v.output, tick.config.evidenceMaxBytes),
    }));
    const forge = executorForge(tick);
    if (!done(journal, "pushed")) {
      await forge.pushBranch(brief.branch, journal.head!);
      await advance(tick, journal, "pushed");
    }
    if (!done(journal, "pr-opened")) {
      const pr = await forge.openPr({
        task: brief.task,
        branch: brief.branch,
        head: journal.head!,
        base: config.main,
        title: `Task #${brief.task}: ${brief.title}`,
        body: report.whatShipped,
      });
      journal.pr = pr.id;
      await advance(tick, journal, "pr-opened");
    }
  } else {
    const own = await readAgentReport(runDir, brief);
    report = own.report && !own.problem && own.report.outcome === "BLOCKED"
      ? own.report
      : blockedReport(brief, journal, await readTaskRecord(state.tasks, brief.task));
    if (!done(journal, "pushed")) {
      // Keep the work visible off this machine; a refusal here is not worth a HOLD.
      const res = await wt.push(config.remote, journal.head!, `refs/heads/${brief.branch}`);
      if (!res.ok) {
        tick.log.step(`could not push ${brief.branch} (kept locally): ${res.stderr.trim()}`);
      }
      await advance(tick, journal, "pr-opened");
    }
  }

  report.task = brief.task;
  report.branch = brief.branch;
  report.head = journal.head!;
  report.pr = journal.pr ?? "";
  const outcome = journal.outcome === "SHIPPED" ? "SHIPPED" : "BLOCKED";
  report.outcome = outcome;

  if (!done(journal, "paperwork-committed")) {
    // Never write DONE over somebody else's open brief: it goes back to the queue first.
    const open = await readTextOrNull(join(tick.repo.root, BRIEF_FILE));
    if (
      open !== null && readStatus(open) === "OPEN" &&
      parseBrief(open, BRIEF_FILE).task !== brief.task
    ) {
      const queued = await demoteOpenBrief(tick.repo.root);
      tick.log.step(`NEXT-STEPS.md held another open brief; moved it back to ${queued}`);
    }
    await syncMain(tick.primary, config.remote, config.main, {
      aside: join(state.dir, "paperwork-aside"),
      log: tick.log,
    });
    const message = `Task #${brief.task}: status — ${outcome} (${journal.pr ?? brief.branch})`;
    journal.paperworkCommit = await commitPaperwork(tick.primary, {
      brief: writeBrief({ ...brief, status: "DONE" }),
      report: writeReport(report),
    }, message);
    await advance(tick, journal, "paperwork-committed");
  }
  if (!done(journal, "paperwork-pushed")) {
    await pushMain(tick.primary, config.remote, config.main, {
      aside: join(state.dir, "paperwork-aside"),
      log: tick.log,
    });
    await advance(tick, journal, "paperwork-pushed");
  }

  const at = new Date().toISOString();
  await recordAttempt(state.tasks, brief.task, {
    runId: journal.runId,
    brief: await briefDigest(brief),
    started: journal.runId,
    result: outcome === "SHIPPED" ? "shipped" : "blocked",
    ...(journal.failure ? { reason: journal.failure } : {}),
  });
  await addReceipt(state.tasks, brief.task, {
    stage: "implementation",
    runId: journal.runId,
    at,
    result: outcome,
    head: journal.head!,
    tree: await wt.treeOf(journal.head!),
    base: journal.originMain,
    detail: `PR ${report.pr || "(none)"}; paperwork ${journal.paperworkCommit}`,
  });
  await archiveJournal(state.journal, state.runs, journal);
  if (outcome === "SHIPPED") {
    return {
      kind: "shipped",
      task: brief.task,
      pr: report.pr,
      head: journal.head!,
      message: `task ${brief.task} shipped: ${brief.branch} at ${
        journal.head!.slice(0, 12)
      }, PR ${report.pr}${
        report.warnings.length ? ` — ${report.warnings.length} warning(s) in the report` : ""
      }`,
    };
  }
  return {
    kind: "blocked",
    task: brief.task,
    message: `task ${brief.task} BLOCKED: ${journal.failure}`,
  };
}

/**
 * A run held before its push (the remote refused it) and resumed: the person
 * may have fixed the branch meanwhile (merged the remote's commits into it).
 * Carry on from the branch as it is now, when it only moved forward.
 */
async function adoptFixedBranch(tick: Tick, wt: Git, journal: Journal): Promise<void> {
  const now = (await wt.resolve(`refs/heads/${journal.branch}`)) ?? "";
  if (now === journal.head) return;
  if (!journal.head || !(await wt.isAncestor(journal.head, now))) {
    throw new HoldError(
      `${journal.branch} no longer contains the run's commit ${
        journal.head?.slice(0, 12)
      }: it was rewritten while the run was held`,
      `Put ${journal.head} back on ${journal.branch} (it is kept under ${
        anchorRef(journal.task, journal.runId, "after")
      }), then rerun.`,
    );
  }
  tick.log.step(
    `${journal.branch} moved on to ${
      now.slice(0, 12)
    } while the run was held; carrying on from there`,
  );
  journal.head = now;
  await writeJournal(tick.state.journal, journal);
}

function executorForge(tick: Tick): ExecutorForge {
  return chooseExecutorForge(tick.config, tick.primary, tick.state.prs);
}

async function runExecutor(tick: Tick, brief: Brief, journal: Journal) {
  const { profile, config, state } = tick;
  const spec = profile.roles.executor;
  const runDir = join(state.runs, journal.runId);
  const briefPath = join(runDir, "brief.md");
  const reportPath = join(journal.worktree, REPORT_FILE);
  const env: Record<string, string> = {
    RELAY_TASK: String(brief.task),
    RELAY_BRIEF: briefPath,
    RELAY_REPORT: reportPath,
    RELAY_ROLE: "executor",
    RELAY_BRANCH: brief.branch,
    RELAY_RUN_ID: journal.runId,
  };
  const timeoutMs = roleTimeoutMs(spec, config.timeouts.agentMs);
  const briefHash = await briefDigest(brief);
  const previousFailures = (await readTaskRecord(state.tasks, brief.task)).attempts
    .filter((a) => a.brief === briefHash && a.result === "failed" && a.runId !== journal.runId)
    .map((a) => a.reason ?? "unknown");
  const prompt = executorPrompt({
    task: brief.task,
    title: brief.title,
    briefPath,
    reportPath,
    branch: brief.branch,
    bar: brief.bar,
    previousFailures,
  });
  tick.log.step(
    `task ${brief.task}: starting the executor (${spec.vendor}), run ${journal.runId}, timeout ${
      formatDuration(timeoutMs)
    }`,
  );
  const logPath = join(runDir, "agent.log");
  return await startTurn({
    role: "executor",
    spec,
    prompt,
    env,
    cwd: journal.worktree,
    timeoutMs,
    logPath,
    progress: tick.progress,
    label: `executor task ${brief.task}`,
    journal: {
      onStart: async (pid, started, deadline) => {
        journal.agentPid = pid;
        journal.agentStarted = started;
        if (deadline !== undefined) journal.agentDeadline = deadline;
        journal.step = "agent-started";
        await writeJournal(state.journal, journal);
        failpoint("agent-running");
      },
    },
    // Journaled as started too: a tick killed mid-demo must not run that turn again.
    demo: async () => {
      journal.step = "agent-started";
      await writeJournal(state.journal, journal);
      return await runDemoAgent({ worktree: journal.worktree, briefPath, reportPath, logPath });
    },
  });
}

/**
 * HOLD when the agent reached past its worktree: changed what steers git or
 * relay (config, hooks, info/, relay's records), pushed anything but its own
 * branch, moved main (local or on the remote), switched the worktree's branch,
 * or touched the primary tree.
 */
async function checkAgentStayedInBounds(tick: Tick, journal: Journal): Promise<void> {
  const { primary, config } = tick;
  const problems: string[] = [];
  const repair: string[] = [];
  const vanished = !(await Deno.stat(journal.worktree).then(() => true, () => false));
  // Pure file reads first: a planted core.fsmonitor, hook, filter or ssh command runs on
  // relay's next git call, so when one of these changed relay runs no git at all.
  const changedControl = journal.control
    ? changedControls(
      journal.control,
      await controlFiles(
        await executorScope({
          commonDir: tick.repo.commonDir,
          gitDir: tick.repo.gitDir,
          worktree: journal.worktree,
          runDir: join(tick.state.runs, journal.runId),
          profilePath: tick.profile.path,
        }),
      ),
    )
    : [];
  // Before any HOLD: every commit of the turn on an anchor, or the advice below could lose it.
  const kept = keptText(
    journal,
    await anchorTurn(tick, journal, !vanished && changedControl.length === 0),
  );
  // A worktree folder that vanished is not the agent reaching out: say what happened.
  if (vanished) {
    const hold: Hold = {
      task: journal.task,
      reason: `the task worktree ${journal.worktree} was deleted during run ${journal.runId}`,
      next:
        `relay pushed nothing. ${kept} Run "git worktree prune" in ${tick.repo.root}, then "relay resume": the next tick starts a new attempt in a fresh worktree.`,
      at: new Date().toISOString(),
      runId: journal.runId,
    };
    await writeHold(tick.state.hold, hold);
    throw new HoldError(hold.reason, hold.next);
  }
  if (changedControl.length) {
    problems.push(`it changed files that steer git or relay: ${changedControl.join(", ")}`);
    repair.push(
      "relay ran no git command after the turn. Before you run git in this repository, put those files back as they were: a program planted in git config or hooks runs on any git command.",
    );
  } else {
    const remote = config.remote;
    // Its own branch is the agent's to push (relay pushes it next anyway); any other push
    // through the remote's name left a trace in this clone's reflogs.
    const pushed = journal.remoteLogs
      ? (await pushesSince(tick.repo.commonDir, remote, journal.remoteLogs))
        .filter((p) => p.branch !== journal.branch)
      : [];
    if (pushed.length) {
      problems.push(
        `it pushed to ${[...new Set(pushed.map((p) => `${remote}/${p.branch}`))].join(", ")}`,
      );
    }
    const main = (await primary.resolve(`refs/heads/${config.main}`)) ?? "";
    if (main !== journal.mainBefore) {
      problems.push(
        `${config.main} moved from ${journal.mainBefore.slice(0, 12)} to ${main.slice(0, 12)}`,
      );
    }
    const wt = new Git(journal.worktree);
    const branch = await wt.branch().catch(() => null);
    if (branch !== journal.branch) {
      problems.push(
        `the worktree is on "${branch ?? "a detached HEAD"}" instead of "${journal.branch}"`,
      );
    }
    if (currentBranch(tick.repo.gitDir) !== config.main) {
      problems.push(`the primary tree is no longer on ${config.main}`);
      repair.push(
        `Put the primary tree back with "git switch ${config.main}" in ${tick.repo.root}.`,
      );
    }
    // The agent may hold credentials and push to main itself; relay would then build its
    // paperwork on top and the review tick would call it "merged outside relay". HOLD when
    // the remote's main now has work of this turn: a commit made in the worktree during the
    // turn (reachable from its HEAD, not from the branch before the turn nor from main when
    // the turn began), or the worktree's HEAD itself. Other new commits on main are not
    // judged: a person may push anything to main from another clone during a turn, and
    // nothing tells those apart from an agent's push of a branch it then deleted (the
    // reflog check above catches that one when it pushed through the remote's name).
    let fetched = true;
    try {
      await primary.fetch(remote);
    } catch (err) {
      if (problems.length === 0) throw err;
      fetched = false;
    }
    const originMain = fetched
      ? await primary.resolve(`refs/remotes/${remote}/${config.main}`)
      : journal.originMain;
    if (!originMain) {
      problems.push(`${remote}/${config.main} no longer exists`);
    } else if (originMain !== journal.originMain) {
      const revs = async (args: string[]) =>
        (await primary.out(["rev-list", ...args, "--"])).split("\n").filter((l) => l !== "");
      const landed = new Set(await revs([originMain, `^${journal.originMain}`]));
      const head = await wt.resolve("HEAD");
      const made = head ? await revs([head, `^${journal.before}`, `^${journal.originMain}`]) : [];
      const ours = made.filter((c) => landed.has(c));
      if (head && landed.has(head) && !ours.includes(head)) ours.unshift(head);
      if (ours.length) {
        problems.push(
          `${remote}/${config.main} now contains ${
            ours.length === 1 ? "a commit" : `${ours.length} commits`
          } of this turn: ${ours.slice(0, 5).map((c) => c.slice(0, 12)).join(", ")}${
            ours.length > 5 ? ", …" : ""
          }`,
        );
        repair.push(
          `${remote}/${config.main} is at ${
            originMain.slice(0, 12)
          }: keep or revert the agent's commits there by hand.`,
        );
      }
    }
    if ((await primaryDiffHash(primary)) !== journal.primaryDiff) {
      const changed = changedPrimaryFiles(
        journal.primaryFiles ?? {},
        await primaryFiles(primary),
        INBOX_DIR,
      );
      if (changed.length) problems.push(`files of the primary tree changed: ${changed.join(", ")}`);
    }
  }
  if (problems.length === 0) return;
  const hold: Hold = {
    task: journal.task,
    // Usually the agent; sometimes a person working in the loop's clone during the turn.
    reason:
      `during run ${journal.runId}, something outside the agent's worktree changed (the agent, or someone in this clone): ${
        problems.join("; ")
      }`,
    next: [
      "relay pushed nothing.",
      ...repair,
      kept,
      `Inspect and repair by hand, then run "relay resume" to start a new attempt.`,
    ].join(" "),
    at: new Date().toISOString(),
    runId: journal.runId,
  };
  await writeHold(tick.state.hold, hold);
  throw new HoldError(hold.reason, hold.next);
}

/** Where the worktree's reflogs stand before the turn (see anchorTurn). */
async function markWorktree(
  tick: Tick,
  worktree: string,
  branch: string,
): Promise<Pick<Journal, "turn">> {
  const gitDir = await worktreeGitDir(worktree);
  return gitDir ? { turn: await markTurn(tick.repo.commonDir, gitDir, branch) } : {};
}

/**
 * Anchors every commit the turn made (`<run>-after-<k>`): what the worktree's HEAD points
 * at, the branch tip, and what their reflogs recorded during the turn — a commit on a
 * detached HEAD, or dropped from the branch, is on no ref otherwise, and moving the worktree
 * aside and pruning it would lose it. When the turn changed what steers git, no git runs:
 * relay reads the worktree's files and writes the refs as loose files itself.
 * Returns the refs that hold the turn's commits.
 */
async function anchorTurn(tick: Tick, journal: Journal, gitAllowed: boolean): Promise<string[]> {
  const common = tick.repo.commonDir;
  const mark = await journalMark(common, journal);
  const prefix = turnAnchorPrefix(journal.task, journal.runId);
  const commits = await turnCommits(common, mark, journal.branch, [journal.before]);
  return gitAllowed
    ? await anchorWithGit(tick.primary, prefix, commits, [journal.before], "relay: agent turn")
    : await anchorWithoutGit(common, prefix, commits);
}

/** For a HOLD's advice: where the turn's commits are kept. */
function keptText(journal: Journal, refs: readonly string[]): string {
  const before = anchorRef(journal.task, journal.runId, "before");
  return refs.length === 0
    ? `relay found no commit of the turn (the branch before it is ${before}).`
    : `Every commit of the turn is kept under ${
      refs.join(", ")
    }, whatever happens to the worktree or ${journal.branch} (the branch before the turn is ${before}).`;
}

const AGENT_REPORT = "report.agent.md";

/** Keeps the report the agent wrote in the worktree (changed since the turn began) in the run folder. */
async function saveAgentReport(journal: Journal, runDir: string): Promise<void> {
  const saved = join(runDir, AGENT_REPORT);
  if ((await readTextOrNull(saved)) !== null) return;
  const path = join(journal.worktree, REPORT_FILE);
  const hash = await fileHash(path);
  if (hash === "" || hash === journal.reportBefore) return;
  await copyRedacted(path, saved);
}

interface AgentReport {
  report: Report | null;
  problem: string | null;
}

async function readAgentReport(runDir: string, brief: Brief): Promise<AgentReport> {
  const path = join(runDir, AGENT_REPORT);
  const text = await readTextOrNull(path);
  if (text === null) return { report: null, problem: "the agent wrote no report" };
  let report: Report;
  try {
    report = parseReport(text, REPORT_FILE);
  } catch (err) {
    if (err instanceof InputError) {
      return { report: null, problem: `invalid report: ${err.message}` };
    }
    throw err;
  }
  const problems = checkReport(report, brief);
  if (problems.length) return { report, problem: `invalid report: ${problems.join("; ")}` };
  return { report, problem: null };
}

/** The turn limit the journal recorded at launch (the orphan path has no other record of it). */
function turnLimitMs(journal: Journal): number | undefined {
  if (!journal.agentStarted || !journal.agentDeadline) return undefined;
  return Date.parse(journal.agentDeadline) - Date.parse(journal.agentStarted);
}

/** Decides what the agent's turn amounts to: SHIPPED, BLOCKED (by the agent) or FAILED. */
function judgeTurn(journal: Journal, agentReport: AgentReport): void {
  const agent = journal.agent;
  const why: string[] = [];
  if (agent?.startError) why.push(`the agent could not start: ${agent.startError}`);
  else if (agent?.timedOut) {
    why.push(`the agent ${timedOutText(turnLimitMs(journal), agent.durationMs)}`);
  } else if (agent && !agent.interrupted && agent.exitCode !== 0) {
    why.push(`the agent exited ${agent.exitCode ?? `by ${agent.signal}`}`);
  }
  if (agentReport.problem) why.push(agentReport.problem);
  if (why.length === 0 && agentReport.report) {
    journal.outcome = agentReport.report.outcome;
    if (journal.outcome === "BLOCKED") journal.failure = "the agent reported BLOCKED";
    return;
  }
  if (agent?.interrupted && why.length === 0) why.push("the tick running the agent was killed");
  journal.outcome = "FAILED";
  journal.failure = why.join("; ");
}

async function evidenceFor(
  tick: Tick,
  wt: Git,
  brief: Brief,
  journal: Journal,
  runDir: string,
): Promise<Evidence[]> {
  const path = join(runDir, "evidence.json");
  const saved = await readJson<{ head: string; evidence: Evidence[] }>(path);
  if (saved && saved.head === journal.head) return saved.evidence;
  tick.log.step(
    `task ${brief.task}: running the verification bar (${brief.bar.length} command(s))`,
  );
  const evidence = await runBar(wt, brief.bar, {
    timeoutMs: tick.config.timeouts.barMs,
    maxBytes: tick.config.evidenceMaxBytes,
    passEnv: tick.config.barEnv,
  });
  await writeJson(path, { head: journal.head, evidence });
  if (!done(journal, "evidence")) await advance(tick, journal, "evidence");
  return evidence;
}

async function recordFailure(tick: Tick, brief: Brief, journal: Journal): Promise<TickResult> {
  const { state, config } = tick;
  const briefHash = await briefDigest(brief);
  const record = await recordAttempt(state.tasks, brief.task, {
    runId: journal.runId,
    brief: briefHash,
    started: journal.runId,
    result: "failed",
    reason: journal.failure ?? "unknown",
  });
  const failed = failedAttempts(record, briefHash);
  await archiveJournal(state.journal, state.runs, journal);
  const log = join(state.runs, journal.runId, "agent.log");
  if (failed < config.attempts) {
    return {
      kind: "failed",
      task: brief.task,
      attempt: failed,
      message:
        `task ${brief.task}: attempt ${failed}/${config.attempts} failed: ${journal.failure}. Work kept on ${brief.branch} (${
          journal.head?.slice(0, 12)
        }); log: ${log}. The next tick tries again.`,
    };
  }
  // Cap reached: relay writes the BLOCKED report itself on the next step, in this same tick.
  const next: Journal = {
    ...journal,
    runId: `${journal.runId}-blocked`,
    step: "committed",
    outcome: "BLOCKED",
    failure: `${failed} attempt(s) failed; last: ${journal.failure}`,
  };
  await Deno.mkdir(join(state.runs, next.runId), { recursive: true });
  await Deno.writeTextFile(join(state.runs, next.runId, "brief.md"), writeBrief(brief));
  await writeJournal(state.journal, next);
  return await continueAttempt(tick, brief, next);
}

function blockedReport(
  brief: Brief,
  journal: Journal,
  record: { attempts: { runId: string; reason?: string }[] },
): Report {
  const attempts = record.attempts
    .filter((a) => a.reason)
    .map((a) => `- run ${a.runId}: ${a.reason}`)
    .join("\n");
  return {
    task: brief.task,
    outcome: "BLOCKED",
    branch: brief.branch,
    head: journal.head ?? "",
    pr: "",
    warnings: [],
    whatShipped:
      `Nothing shipped. relay stopped task ${brief.task} after its executor failed: ${journal.failure}.\n\nThe work of every attempt is kept on ${brief.branch} and under refs/relay/anchors/task-${brief.task}/.`,
    verification: [],
    beyond: "Nothing.",
    pushback: `Written by relay, not by the agent. Attempts:\n${
      attempts || "- (none recorded)"
    }\n\nLogs: .git/relay/runs/<run>/agent.log. A person should look before this task is queued again.`,
    evidence: [],
    extra: [],
  };
}
