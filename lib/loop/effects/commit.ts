/**
 * The executor's effects between the turn and publishing: the guard, then
 * the agent's leftovers committed (product files only) and anchored; a failed
 * attempt recorded; the BLOCKED run relay opens once the attempts are used up;
 * and a held run's branch checked before it is pushed.
 */
import { join } from "../../path.ts";
import { HoldError } from "../../errors.ts";
import { Git } from "../../git/git.ts";
import { confirmLease } from "../../git/lease_guard.ts";
import { briefDigest, writeBrief } from "../../protocol/brief_write.ts";
import { anchorRef } from "../../state/paths.ts";
import { failpoint } from "../../state/failpoint.ts";
import { archiveJournal, writeJournal } from "../../state/journal.ts";
import { failedAttempts, recordAttempt } from "../../state/tasks.ts";
import type { ExecutorEvent, ExecutorState } from "../../task/executor.ts";
import { judgeTurn } from "../../task/judge.ts";
import { commitLeftovers, savePaperwork } from "../branch_commit.ts";
import { checkAgentStayedInBounds } from "../turn_guard.ts";
import { briefOf, type ExecContext, ready } from "./context.ts";
import { readAgentReport, saveAgentReport } from "./report.ts";
import { agentLimitMs } from "../orphan.ts";

type Tick = ExecContext;

/** Whatever the agent did, the guard must pass before anything is committed or leaves this machine. */
export async function guardAndCommit(tick: Tick, s: ExecutorState): Promise<ExecutorEvent> {
  const { config, primary } = ready(tick);
  const brief = briefOf(tick);
  const journal = s.run!;
  // Split machines: the role is still this machine's before the turn's outcome is judged and
  // recorded (a failed attempt, a commit). One lost meanwhile stops the tick here with the run
  // journaled, and the next tick that holds the lease settles it from the remote
  // (lib/loop/supersede.ts): not counted as failed when the task went on without it.
  await confirmLease();
  if (!journal.guarded) {
    const held = await checkAgentStayedInBounds(tick, journal);
    if (held) return { kind: "held", ...held };
    await writeJournal(tick.state.journal, { ...journal, guarded: new Date().toISOString() });
  }
  const runDir = join(tick.state.runs, journal.runId);
  const wt = new Git(journal.worktree, config.timeouts.networkMs);
  // Strict mode: the author writes files, relay commits them. A turn that moved HEAD
  // committed (or switched) by itself: its commits stay, anchored, for a person to judge.
  const r = ready(tick);
  if ((r.frozen?.config.safetyMode.value ?? r.profile.safetyMode) === "strict") {
    const head = await wt.head();
    if (head !== journal.before) {
      return {
        kind: "held",
        runId: journal.runId,
        reason:
          `task ${brief.task}: in strict mode the executor must not commit, but its turn moved ${journal.branch} from ${
            journal.before.slice(0, 12)
          } to ${head.slice(0, 12)}`,
        next:
          `Its commits are kept on ${journal.branch} and under refs/relay/anchors/task-${brief.task}/${journal.runId}-*. Look at them (git log ${
            journal.before.slice(0, 12)
          }..${journal.branch}); to keep the work, queue a fix brief on the branch, or drop it by hand; tell the agent not to commit (or set safety_mode: efficient in the operator profile). Then run "relay resume".`,
      };
    }
  }
  await saveAgentReport(journal, runDir);
  await savePaperwork(wt, runDir);
  failpoint("after-report-saved");
  let { outcome, failure } = journal;
  if (!outcome) {
    const own = await readAgentReport(runDir, brief);
    ({ outcome, failure } = judgeTurn(
      journal.agent,
      agentLimitMs(journal),
      own.problem ? null : own.report?.outcome ?? null,
      own.problem,
    ));
  }
  const base =
    (await wt.out(["merge-base", "HEAD", journal.originMain]).catch(() => journal.originMain)) ||
    journal.originMain;
  const message = outcome === "SHIPPED"
    ? `Task #${brief.task}: ${brief.title}`
    : `WIP: Task #${brief.task} attempt ${journal.attempt} (${failure ?? "unfinished"}) [relay]`;
  await commitLeftovers(wt, base, message, { log: tick.log, neverCommit: config.neverCommit });
  const head = await wt.head();
  await primary.updateRef(
    anchorRef(brief.task, journal.runId, "after"),
    head,
    "relay: after agent turn",
  );
  return { kind: "committed", outcome, ...(failure !== undefined ? { failure } : {}), head };
}

/** Records the failed attempt (once, by run id) and closes its journal. */
export async function recordFailure(tick: Tick, s: ExecutorState): Promise<ExecutorEvent> {
  const brief = briefOf(tick);
  const journal = s.run!;
  const briefHash = await briefDigest(brief);
  const reason = journal.failure ?? "unknown";
  const record = await recordAttempt(tick.state, brief, {
    runId: journal.runId,
    brief: briefHash,
    started: journal.runId,
    result: "failed",
    reason,
  });
  await archiveJournal(tick.state.journal, tick.state.runs, journal);
  return {
    kind: "attempt-failed",
    failed: failedAttempts(record, briefHash),
    reason,
    log: join(tick.state.runs, journal.runId, "agent.log"),
  };
}

/** The run in which relay writes the BLOCKED report itself, in this same tick. */
export async function openBlockedRun(tick: Tick, s: ExecutorState): Promise<ExecutorEvent> {
  const runId = `${s.last!.run.runId}-blocked`;
  await Deno.mkdir(join(tick.state.runs, runId), { recursive: true });
  await Deno.writeTextFile(join(tick.state.runs, runId, "brief.md"), writeBrief(briefOf(tick)));
  return { kind: "blocked-run-opened", runId };
}

/**
 * A run held before its push (the remote refused it) and resumed: the person
 * may have fixed the branch meanwhile (merged the remote's commits into it).
 * Carry on from the branch as it is now, when it only moved forward.
 */
export async function adoptBranch(tick: Tick, s: ExecutorState): Promise<ExecutorEvent> {
  const journal = s.run!;
  const wt = new Git(journal.worktree, ready(tick).config.timeouts.networkMs);
  const now = (await wt.resolve(`refs/heads/${journal.branch}`)) ?? "";
  if (now === journal.head) return { kind: "branch-adopted", head: now };
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
  return { kind: "branch-adopted", head: now };
}
