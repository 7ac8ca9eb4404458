/**
 * The executor's effects that make an attempt public: relay runs the bar
 * itself, pushes the task branch, opens the PR, commits the paperwork (brief
 * DONE, report) straight to main in its own commit, pushes it, and records
 * the attempt's receipt.
 */
import { join } from "../../path.ts";
import { Git } from "../../git/git.ts";
import { parseBrief } from "../../protocol/brief.ts";
import { briefDigest, writeBrief } from "../../protocol/brief_write.ts";
import { writeReport } from "../../protocol/report.ts";
import { readStatus } from "../../protocol/status_line.ts";
import { BRIEF_FILE } from "../../state/paths.ts";
import { archiveJournal } from "../../state/journal.ts";
import { readTextOrNull } from "../../state/json_file.ts";
import { addReceipt, recordAttempt } from "../../state/tasks.ts";
import type { ExecutorEvent, ExecutorState } from "../../task/executor.ts";
import { demoteOpenBrief } from "../promote.ts";
import { commitPaperwork, pushMain, syncMain } from "../paperwork.ts";
import { executorForge } from "./attempt.ts";
import { briefOf, type ExecContext, ready } from "./context.ts";
import { runEvidence, runReport } from "./report.ts";

type Tick = ExecContext;

export async function runBarEffect(tick: Tick, s: ExecutorState): Promise<ExecutorEvent> {
  const evidence = await runEvidence(tick, s.run!);
  return {
    kind: "bar-ran",
    head: s.run!.head!,
    passed: evidence.every((e) => e.exit === 0),
    results: evidence.map((e) => ({ command: e.command, exit: e.exit, durationMs: e.durationMs })),
  };
}

/**
 * A SHIPPED run's branch goes to the remote through the forge (a refusal is a
 * HOLD); a BLOCKED run's is pushed to keep its work visible off this machine,
 * and a refusal there is only said.
 */
export async function pushBranch(
  tick: Tick,
  s: ExecutorState,
  strict: boolean,
): Promise<ExecutorEvent> {
  const { config } = ready(tick);
  const brief = briefOf(tick);
  const journal = s.run!;
  if (strict) {
    await (await executorForge(tick)).pushBranch(brief.branch, journal.head!);
    return { kind: "branch-pushed", ok: true };
  }
  const wt = new Git(journal.worktree, config.timeouts.networkMs);
  const res = await wt.push(config.remote, journal.head!, `refs/heads/${brief.branch}`);
  if (!res.ok) {
    tick.log.step(`could not push ${brief.branch} (kept locally): ${res.stderr.trim()}`);
  }
  return { kind: "branch-pushed", ok: res.ok };
}

export async function openPr(tick: Tick, s: ExecutorState): Promise<ExecutorEvent> {
  const { config } = ready(tick);
  const brief = briefOf(tick);
  const journal = s.run!;
  const report = await runReport(tick, journal);
  const pr = await (await executorForge(tick)).openPr({
    task: brief.task,
    branch: brief.branch,
    head: journal.head!,
    base: config.main,
    title: `Task #${brief.task}: ${brief.title}`,
    body: report.whatShipped,
  });
  return { kind: "pr-opened", pr: pr.id };
}

export async function commitPaperworkEffect(tick: Tick, s: ExecutorState): Promise<ExecutorEvent> {
  const { config, primary } = ready(tick);
  const brief = briefOf(tick);
  const journal = s.run!;
  const report = await runReport(tick, journal);
  // Never write DONE over somebody else's open brief: it goes back to the queue first.
  const open = await readTextOrNull(join(tick.repo.root, BRIEF_FILE));
  if (
    open !== null && readStatus(open) === "OPEN" &&
    parseBrief(open, BRIEF_FILE).task !== brief.task
  ) {
    const queued = await demoteOpenBrief(tick.repo.root);
    tick.log.step(`NEXT-STEPS.md held another open brief; moved it back to ${queued}`);
  }
  await syncMain(primary, config.remote, config.main, {
    aside: join(tick.state.dir, "paperwork-aside"),
    log: tick.log,
    personBriefs: config.machines !== "split",
  });
  // A host that builds on every push to main need not build for paperwork (commit_suffix).
  const suffix = config.paperwork.commitSuffix;
  const message = `Task #${brief.task}: status — ${report.outcome} (${journal.pr ?? brief.branch})${
    suffix ? ` ${suffix}` : ""
  }`;
  const sha = await commitPaperwork(primary, {
    brief: writeBrief({ ...brief, status: "DONE" }),
    report: writeReport(report),
  }, message);
  return { kind: "paperwork-committed", sha };
}

export async function pushPaperwork(tick: Tick): Promise<ExecutorEvent> {
  const { config, primary } = ready(tick);
  await pushMain(primary, config.remote, config.main, {
    aside: join(tick.state.dir, "paperwork-aside"),
    log: tick.log,
    personBriefs: config.machines !== "split",
  });
  return { kind: "paperwork-pushed" };
}

/** The attempt is over: its result and its implementation receipt are recorded, its journal closed. */
export async function finishAttempt(tick: Tick, s: ExecutorState): Promise<ExecutorEvent> {
  const { config } = ready(tick);
  const brief = briefOf(tick);
  const journal = s.run!;
  const report = await runReport(tick, journal);
  const outcome = report.outcome;
  await recordAttempt(tick.state, brief, {
    runId: journal.runId,
    brief: await briefDigest(brief),
    started: journal.runId,
    result: outcome === "SHIPPED" ? "shipped" : "blocked",
    ...(journal.failure ? { reason: journal.failure } : {}),
  });
  const wt = new Git(journal.worktree, config.timeouts.networkMs);
  await addReceipt(tick.state, brief, {
    stage: "implementation",
    runId: journal.runId,
    at: new Date().toISOString(),
    result: outcome,
    head: journal.head!,
    tree: await wt.treeOf(journal.head!),
    base: journal.originMain,
    detail: `PR ${report.pr || "(none)"}; paperwork ${journal.paperworkCommit}`,
  });
  await archiveJournal(tick.state.journal, tick.state.runs, journal);
  return { kind: "attempt-finished", outcome, warnings: report.warnings.length };
}
