/**
 * `relay close <task>`: a person gives up on a PR. The PR is closed on the
 * forge without merging (its branch and commits stay), an open fix brief for
 * it is set to DONE, a HOLD about it is cleared, and the next brief is
 * promoted — so a task that can neither pass nor be fixed never wedges the loop.
 */
import { join } from "node:path";
import { UsageError } from "../errors.ts";
import { Git } from "../git/git.ts";
import type { RepoPaths } from "../git/discover.ts";
import { loadRepoConfig } from "../config/repo.ts";
import { plannerForge } from "../forge/planner_forge.ts";
import { parseBrief } from "../protocol/brief.ts";
import { writeBrief } from "../protocol/brief_write.ts";
import { readStatus } from "../protocol/status_line.ts";
import { clearHold, readHold } from "../state/hold.ts";
import { recordHoldCleared } from "../state/last_tick.ts";
import { tryLock } from "../state/lock.ts";
import { BRIEF_FILE, statePaths } from "../state/paths.ts";
import { readReview, writeReview } from "../state/tasks.ts";
import { promoteNext } from "./promote.ts";
import { abandonRun } from "./abandon.ts";
import { orphanState, stopOrphan } from "./orphan.ts";
import { readJournal } from "../state/journal.ts";

export interface CloseResult {
  result: "closed" | "busy";
  lines: string[];
}

export async function closeTask(
  repo: RepoPaths,
  task: number,
  reason: string,
): Promise<CloseResult> {
  const state = statePaths(repo.commonDir);
  await using review = await tryLock(state.reviewLock, "close");
  await using poll = review ? await tryLock(state.pollLock, "close") : null;
  if (!review || !poll) {
    return { result: "busy", lines: ["busy: a tick is running; try again in a minute"] };
  }

  const config = await loadRepoConfig(repo.root);
  const git = new Git(repo.root, config.timeouts.networkMs);
  await git.fetch(config.remote);
  const branch = `task-${task}`;
  const forge = plannerForge(config, git, state.prs);
  const pr = await forge.find(branch);
  if (!pr || pr.state !== "open") {
    throw new UsageError(
      `there is no open PR for task ${task} (${
        pr ? `${pr.id} is ${pr.state}` : `no PR for branch ${branch}`
      }); "relay status" shows which task is in flight`,
      "close",
    );
  }
  const lines: string[] = [];
  await forge.close(pr, `Closed by a person with relay close: ${reason}`);
  lines.push(`closed ${pr.id} without merging; ${branch} stays at ${pr.head.slice(0, 12)}`);

  // A run on this branch that was held (or interrupted) must not come back and reopen it.
  const journal = await readJournal(state.journal);
  if (journal && journal.branch === branch) {
    // An agent still running from a killed tick would go on committing to the closed branch.
    if (journal.step === "agent-started" && journal.agentPid !== undefined) {
      const orphan = await orphanState(journal);
      if (orphan.kind === "running" || orphan.kind === "overdue") {
        await stopOrphan(journal.agentPid);
        lines.push(`stopped the agent of run ${journal.runId} (pid ${journal.agentPid})`);
      }
    }
    await abandonRun(state, journal, `abandoned: ${pr.id} was closed by relay close (${reason})`);
    lines.push(
      `abandoned run ${journal.runId} on ${branch} (its work stays on the branch and under refs/relay/anchors/task-${journal.task}/${journal.runId}-*)`,
    );
  }

  const record = await readReview(state, task, branch);
  record.closed = { head: pr.head, at: new Date().toISOString(), reason };
  await writeReview(state, record);

  const path = join(repo.root, BRIEF_FILE);
  const text = await Deno.readTextFile(path).catch(() => null);
  if (text !== null && readStatus(text) === "OPEN") {
    const brief = parseBrief(text, BRIEF_FILE);
    if (brief.branch === branch) {
      await Deno.writeTextFile(path, writeBrief({ ...brief, status: "DONE" }));
      lines.push(`set the open fix brief (task ${brief.task}) to DONE`);
    }
  }
  const hold = await readHold(state.hold);
  if (hold && (hold.task === task || record.fixes.some((f) => f.task === hold.task))) {
    await clearHold(state.hold);
    await recordHoldCleared(repo.commonDir, "close", hold);
    lines.push(`cleared the HOLD: ${hold.reason}`);
  }
  const next = await promoteNext(repo.root);
  lines.push(
    next.result === "promoted" ? `promoted task ${next.task}: ${next.title}` : next.message,
  );
  return { result: "closed", lines };
}
