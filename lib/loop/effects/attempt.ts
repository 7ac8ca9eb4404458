/**
 * The executor's effects before a turn: get ready (config, profile, the
 * primary tree, the brief), look for a PR in flight, prepare an attempt
 * (worktree, anchors, the journal), and retire a fix brief whose PR is settled.
 */
import { join } from "../../path.ts";
import { HoldError } from "../../errors.ts";
import { Git, NO_SUBMODULE_STATUS } from "../../git/git.ts";
import { currentBranch, operationInProgress } from "../../git/discover.ts";
import { loadRepoConfig } from "../../config/repo_load.ts";
import { loadProfile, profilePath, withFlags } from "../../config/profile_load.ts";
import { parseBrief } from "../../protocol/brief.ts";
import { briefDigest, writeBrief } from "../../protocol/brief_write.ts";
import type { Brief } from "../../protocol/types.ts";
import { LOCK_WAIT_MS, lockHolder, waitLock } from "../../state/lock.ts";
import { anchorRef, BRIEF_FILE, REPORT_FILE } from "../../state/paths.ts";
import type { Journal } from "../../state/journal.ts";
import { failedAttempts, ownerOf, readReview, readRound, takeNotes } from "../../state/tasks.ts";
import { failpoint } from "../../state/failpoint.ts";
import { readTextOrNull } from "../../state/json_file.ts";
import { runId as newRunId } from "../../state/run_id.ts";
import { fileHash, sha256 } from "../../proc/hash.ts";
import { copyRedacted } from "../../proc/redact.ts";
import { executorForge as chooseExecutorForge } from "../../forge/executor_forge.ts";
import type { ExecutorForge } from "../../forge/types.ts";
import type { BriefView, ExecutorEvent, ExecutorState } from "../../task/executor.ts";
import { promoteNext, retireFixBrief } from "../promote.ts";
import { mergedIntoMain } from "../merged.ts";
import { checkWorktreeRoot, ensureWorktree, worktreeRootOf } from "../worktree.ts";
import { controlFiles, executorScope, markRemoteLogs } from "../guard.ts";
import { markWorktree, primaryFiles } from "../turn_guard.ts";
import { briefOf, type ExecContext, ready } from "./context.ts";
import { applyTaskConfig, freezeTask, requireFrozenProgram } from "./freeze.ts";

/** A turn's notes from a person, in its run folder (JSON: an array of strings). */
export const NOTES_FILE = "notes.json";

/** The notes kept for the turn of this run folder. */
export async function notesOf(runDir: string): Promise<string[]> {
  const text = await readTextOrNull(join(runDir, NOTES_FILE));
  if (text === null) return [];
  const parsed: unknown = JSON.parse(text);
  return Array.isArray(parsed) ? parsed.filter((n): n is string => typeof n === "string") : [];
}

type Tick = ExecContext;

export async function executorForge(tick: Tick): Promise<ExecutorForge> {
  const { config, primary } = ready(tick);
  return await chooseExecutorForge(config, primary, tick.state.prs);
}

function view(brief: Brief): BriefView {
  return {
    task: brief.task,
    title: brief.title,
    branch: brief.branch,
    kind: brief.kind,
    ...(brief.fixes !== undefined ? { fixes: brief.fixes } : {}),
  };
}

/**
 * Loads the config and the profile, checks the primary tree, and reads the
 * brief: a journaled run's own copy, or the open one.
 */
export async function getReady(tick: Tick, s: ExecutorState): Promise<ExecutorEvent> {
  const config = await loadRepoConfig(tick.repo.root);
  const profile = withFlags(await loadProfile(profilePath(tick.profileFlag)), tick.flags);
  const primary = new Git(tick.repo.root, config.timeouts.networkMs);
  tick.ready = { config, profile, primary };
  checkPrimary(tick);
  let brief: Brief;
  if (s.run) {
    const path = join(tick.state.runs, s.run.runId, "brief.md");
    const text = await readTextOrNull(path);
    if (text === null) {
      throw new Error(`Cannot resume run ${s.run.runId}: its brief copy is missing`);
    }
    brief = parseBrief(text, path);
    tick.log.step(`resuming task ${s.run.task} run ${s.run.runId} after step "${s.run.step}"`);
  } else {
    const text = await readTextOrNull(join(tick.repo.root, BRIEF_FILE));
    brief = parseBrief(text ?? "", BRIEF_FILE);
  }
  tick.brief = brief;
  // A task that started runs with the configuration it started with.
  await applyTaskConfig(tick.ready, tick.state, ownerOf(brief));
  const { config: applied } = tick.ready;
  const failed = failedAttempts(await readRound(tick.state, brief), await briefDigest(brief));
  if (!s.run && failed >= applied.attempts) {
    // The cap was reached but the BLOCKED paperwork never landed: finish it now.
    tick.log.step(
      `task ${brief.task} already failed ${failed} time(s); writing the BLOCKED report`,
    );
  }
  return { kind: "ready", cap: applied.attempts, failed, brief: view(brief) };
}

/** origin/main as of the last fetch; a HOLD that clears by itself when it is missing. */
export async function requireOriginMain(tick: Tick): Promise<string> {
  const { config, primary } = ready(tick);
  const originMain = await primary.resolve(`refs/remotes/${config.remote}/${config.main}`);
  if (!originMain) {
    throw new HoldError(
      `"${config.remote}/${config.main}" does not exist`,
      `Push ${config.main} to ${config.remote} first (git push ${config.remote} ${config.main}).`,
      { recheck: true },
    );
  }
  return originMain;
}

/** Preconditions on the primary tree; nothing is changed when one fails. */
function checkPrimary(tick: Tick): void {
  const { config } = ready(tick);
  const branch = currentBranch(tick.repo.gitDir);
  if (branch !== config.main) {
    throw new HoldError(
      `The primary tree is on "${branch ?? "a detached HEAD"}", not "${config.main}"`,
      `Run "git switch ${config.main}" in ${tick.repo.root}; relay works in its own worktrees and keeps the primary tree on ${config.main}.`,
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
 * One PR in flight at a time: only the brief's own fix may work while it waits for
 * review. Asked before the review lock: while a PR is in flight the review may hold
 * that lock for a whole reviewer turn, and this brief has nothing to do until then.
 */
export async function lookForPrsInFlight(tick: Tick): Promise<ExecutorEvent> {
  const brief = briefOf(tick);
  const prs = (await (await executorForge(tick)).listOpen()).filter((pr) =>
    !(brief.kind === "fix" && pr.branch === brief.branch)
  );
  return { kind: "prs-in-flight", prs: prs.map((p) => p.id) };
}

/**
 * Prepares an attempt: worktree, anchor, run folder, and the journal — written
 * while the review lock is held (see below), through `emit`.
 */
export async function prepareAttempt(
  tick: Tick,
  s: ExecutorState,
  emit: (e: ExecutorEvent) => Promise<void>,
): Promise<ExecutorEvent | void> {
  const r = ready(tick);
  const brief = briefOf(tick);
  const failed = s.failed;
  const runId = newRunId(`task${brief.task}-a${failed + 1}`);
  // The review tick writes relay's records (verdicts, PR records) that the turn's guard
  // compares. Hold its lock while preparing: a review running now finishes first, and one
  // starting later finds the journal and does nothing until the attempt is over. Cron
  // starts both ticks at the same second, so a review that is only fetching or finding
  // nothing to do is waited for rather than costing this brief its minute.
  {
    await using reviewLock = await waitLock(tick.state.reviewLock, "poll", {
      waitMs: LOCK_WAIT_MS,
    });
    if (!reviewLock) {
      return {
        kind: "review-lock-busy",
        holder: (await lockHolder(tick.state.reviewLock))?.command ?? "review",
        waitedS: LOCK_WAIT_MS / 1000,
      };
    }
    // A program that is not there is the operator's problem, not a failed attempt; checked
    // before the configuration is frozen, so a typo in a new task's profile is fixed in place.
    // (With the cap reached only relay's BLOCKED report is left to write: no program needed.)
    if (failed < r.config.attempts) await requireFrozenProgram("executor", r);
    // Strict mode runs only a program whose probe passed, as it is now (a task that has
    // not started yet is checked with the profile it would freeze).
    const mode = r.frozen?.config.safetyMode.value ?? r.profile.safetyMode;
    if (mode === "strict" && failed < r.config.attempts) {
      const { requireProbe } = await import("../probe.ts");
      await requireProbe(tick.state, "executor", r.profile.roles.executor);
    }
    await freezeTask(tick, brief, r);
    const { primary, config, profile } = r;

    await primary.fetch(config.remote);
    const originMain = await requireOriginMain(tick);
    await warnUnpublished(tick);
    // A fix works on its PR's branch: not when a person already merged or closed that PR.
    if (brief.kind === "fix") {
      const why = await settledOutOfBand(tick, brief, originMain);
      if (why) return { kind: "fix-settled", why };
    }
    const root = worktreeRootOf(profile.worktreeRoot, tick.repo.root);
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

    const runDir = join(tick.state.runs, runId);
    await Deno.mkdir(runDir, { recursive: true });
    await Deno.writeTextFile(join(runDir, "brief.md"), writeBrief(brief));
    await copyInstructions(tick, worktree);
    // A worktree made or switched just now holds the branch's files and nothing else.
    if (how === "reused") await clearStaleReport(wt, runDir);
    // A person's notes go to this turn: taken before the guard's baseline below (the
    // record is one it watches), kept in the run folder for a resumed turn.
    if (failed < config.attempts) {
      const notes = await takeNotes(tick.state, ownerOf(brief), { runId, role: "executor" });
      if (notes.length) await Deno.writeTextFile(join(runDir, NOTES_FILE), JSON.stringify(notes));
    }

    const scope = executorScope({
      commonDir: tick.repo.commonDir,
      gitDir: tick.repo.gitDir,
      worktree,
      runDir,
      profilePath: profile.path,
    });
    const files = await primaryFiles(primary);
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
      primaryFiles: files,
      primaryDiff: await sha256(JSON.stringify(files)),
      reportBefore: await fileHash(join(worktree, REPORT_FILE)),
      // Last, so nothing relay does while preparing counts as the agent's.
      ...(await markWorktree(tick, worktree, brief.branch)),
      remoteLogs: markRemoteLogs(tick.repo.commonDir, config.remote),
      control: await controlFiles(scope, { beforeTurn: true }),
      updated: "",
    };
    if (failed >= config.attempts) {
      fresh.step = "agent-finished";
      fresh.outcome = "BLOCKED";
      fresh.failure = `${failed} attempt(s) failed; see earlier runs`;
    }
    await emit({ kind: "attempt-prepared", journal: fresh });
  }
  failpoint("after-prepared");
}

/**
 * One line (also under --quiet, so cron.log has it) when REVIEWER.md or the
 * repo config is in the primary tree but not on origin/main. Runs just after
 * the fetch: never on the idle path.
 */
async function warnUnpublished(tick: Tick): Promise<void> {
  const { unpublishedWarning } = await import("../unpublished.ts");
  const { stamped } = await import("../../proc/log.ts");
  const { config, primary } = ready(tick);
  const { remote, main } = config;
  const line = await unpublishedWarning(primary, { remote, main });
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
  const { primary, config } = ready(tick);
  const record = await readReview(tick.state, brief.fixes, brief.branch);
  if (!record.fixes.some((f) => f.task === brief.task)) return null;
  const state = await (await executorForge(tick)).settled(brief.branch);
  if (state) return `the PR for ${brief.branch} was ${state} before this fix ran`;
  const head = await primary.resolve(`refs/remotes/${config.remote}/${brief.branch}`) ??
    await primary.resolve(`refs/heads/${brief.branch}`);
  if (!head) return null;
  // The receipts that may name the head's starting point: any round of the PR's task.
  if (!(await mergedIntoMain(primary, head, originMain, tick.state, brief.fixes))) return null;
  return `${brief.branch} at ${
    head.slice(0, 12)
  } is already in ${config.remote}/${config.main} (merged outside relay) before this fix ran`;
}

/**
 * Sets a fix brief whose PR is settled to DONE with the reason, launches
 * nothing, and promotes the next queued brief (this tick holds the poll lock).
 */
export async function retireFix(tick: Tick, why: string): Promise<ExecutorEvent> {
  const brief = briefOf(tick);
  const reason = `${why}. Nothing was launched for it.`;
  await retireFixBrief(tick.repo.root, brief.branch, reason);
  tick.log.step(`task ${brief.task}: retired the fix brief (set to DONE): ${reason}`);
  const { planGate } = await import("../plan_gate.ts");
  const next = await promoteNext(
    tick.repo.root,
    planGate(tick.state, ready(tick).config.planReview),
  );
  return {
    kind: "fix-retired",
    promoted: next.result === "promoted"
      ? `promoted task ${next.task} into ${BRIEF_FILE}`
      : next.message,
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
    NO_SUBMODULE_STATUS,
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
  const { config, primary } = ready(tick);
  const wt = new Git(worktree, config.timeouts.networkMs);
  for (const name of ["CLAUDE.md", "AGENTS.md"]) {
    // Most repositories have neither: then no git runs at all.
    const text = await readTextOrNull(join(tick.repo.root, name));
    if (text === null) continue;
    const tracked = await primary.ok(["ls-files", "--error-unmatch", "--", name]);
    if (tracked) continue;
    const ignored = await primary.ok(["check-ignore", "-q", "--", name]) &&
      await wt.ok(["check-ignore", "-q", "--", name]);
    if (ignored) await Deno.writeTextFile(join(worktree, name), text);
  }
}
