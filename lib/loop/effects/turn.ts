/**
 * The executor's turn: the agent runs once in the task's worktree through the
 * one turn module every role uses (lib/agents/turn.ts), with the pid
 * journaled as it starts; and the turn an interrupted tick left behind:
 * waited for within its limit, stopped past it, or noted as ended — never
 * started a second time.
 */
import { join } from "../../path.ts";
import { formatDuration } from "../../config/duration.ts";
import { briefDigest } from "../../protocol/brief_write.ts";
import { executorPrompt } from "../../agents/prompt.ts";
import { orphanTurn, overdueText, roleTimeoutMs, startTurn } from "../../agents/turn.ts";
import { runDemoAgent } from "../../agents/demo.ts";
import { REPORT_FILE } from "../../state/paths.ts";
import { readRound } from "../../state/tasks.ts";
import { failpoint } from "../../state/failpoint.ts";
import type { ExecutorEvent, ExecutorState } from "../../task/executor.ts";
import { journaledAgent } from "../orphan.ts";
import { briefOf, type ExecContext, ready } from "./context.ts";
import { notesOf } from "./attempt.ts";

export async function runExecutorTurn(
  tick: ExecContext,
  s: ExecutorState,
  emit: (e: ExecutorEvent) => Promise<void>,
): Promise<ExecutorEvent> {
  const { profile, config } = ready(tick);
  const brief = briefOf(tick);
  const journal = s.run!;
  const spec = profile.roles.executor;
  const runDir = join(tick.state.runs, journal.runId);
  const briefPath = join(runDir, "brief.md");
  const reportPath = join(journal.worktree, REPORT_FILE);
  const timeoutMs = roleTimeoutMs(spec, config.timeouts.agentMs);
  const briefHash = await briefDigest(brief);
  const previousFailures = (await readRound(tick.state, brief)).attempts
    .filter((a) => a.brief === briefHash && a.result === "failed" && a.runId !== journal.runId)
    .map((a) => a.reason ?? "unknown");
  tick.log.step(
    `task ${brief.task}: starting the executor (${spec.vendor}), run ${journal.runId}, timeout ${
      formatDuration(timeoutMs)
    }`,
  );
  const logPath = join(runDir, "agent.log");
  const agent = await startTurn({
    role: "executor",
    spec,
    prompt: executorPrompt({
      task: brief.task,
      title: brief.title,
      briefPath,
      reportPath,
      branch: brief.branch,
      bar: brief.bar,
      previousFailures,
      relayCommits:
        (ready(tick).frozen?.config.safetyMode.value ?? profile.safetyMode) === "strict",
      notes: await notesOf(runDir),
    }),
    env: {
      RELAY_TASK: String(brief.task),
      RELAY_BRIEF: briefPath,
      RELAY_REPORT: reportPath,
      RELAY_ROLE: "executor",
      RELAY_BRANCH: brief.branch,
      RELAY_RUN_ID: journal.runId,
    },
    cwd: journal.worktree,
    timeoutMs,
    logPath,
    progress: tick.progress,
    label: `executor task ${brief.task}`,
    journal: {
      onStart: async (start) => {
        await emit({ kind: "turn-started", ...start });
        failpoint("agent-running");
      },
    },
    // Journaled as started too: a tick killed mid-demo must not run that turn again.
    demo: async () => {
      await emit({ kind: "turn-started" });
      return await runDemoAgent({ worktree: journal.worktree, briefPath, reportPath, logPath });
    },
  });
  return { kind: "turn-ended", agent };
}

/** The agent of an interrupted tick: still ours and running, past its limit, or gone. */
export async function checkOrphanTurn(tick: ExecContext, s: ExecutorState): Promise<ExecutorEvent> {
  const journal = s.run!;
  const pid = journal.agentPid!;
  const turn = journaledAgent(journal);
  const orphan = await orphanTurn(turn, {
    stopping: (ranMs) =>
      tick.log.step(
        `the agent of run ${journal.runId} (pid ${pid}) outlived its tick and passed its turn limit (${
          overdueText(turn, ranMs)
        }); stopping its process group`,
      ),
  });
  switch (orphan.kind) {
    case "running":
      return {
        kind: "orphan-running",
        pid,
        ...(orphan.unverified ? { unverified: orphan.unverified } : {}),
      };
    case "stuck":
      return { kind: "orphan-stuck", pid };
    case "gone":
      if (orphan.reused) tick.log.step(`not our agent: ${orphan.reused}`);
      tick.log.step(
        `the agent of run ${journal.runId} ended while no tick watched it; not relaunching that turn`,
      );
      return { kind: "turn-ended", agent: orphan.outcome };
    case "stopped":
      return { kind: "turn-ended", agent: orphan.outcome };
  }
}
