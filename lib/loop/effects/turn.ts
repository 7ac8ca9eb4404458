/**
 * The executor's turn: the agent runs once in the task's worktree, in its own
 * process group, with the pid journaled as it starts; and the turn an
 * interrupted tick left behind: waited for within its limit, stopped past it,
 * or noted as ended — never started a second time.
 */
import { join } from "node:path";
import { formatDuration } from "../../config/duration.ts";
import { briefDigest } from "../../protocol/brief_write.ts";
import { buildInvocation } from "../../agents/presets.ts";
import { executorPrompt } from "../../agents/prompt.ts";
import { runAgent } from "../../agents/runner.ts";
import { runDemoAgent } from "../../agents/demo.ts";
import { REPORT_FILE } from "../../state/paths.ts";
import { readTaskRecord } from "../../state/tasks.ts";
import { failpoint } from "../../state/failpoint.ts";
import type { ExecutorEvent, ExecutorState } from "../../task/executor.ts";
import { orphanState, stopOrphan } from "../orphan.ts";
import { briefOf, type ExecContext, ready } from "./context.ts";

type Tick = ExecContext;

export async function runExecutorTurn(
  tick: Tick,
  s: ExecutorState,
  emit: (e: ExecutorEvent) => Promise<void>,
): Promise<ExecutorEvent> {
  const { profile, config } = ready(tick);
  const { state } = tick;
  const brief = briefOf(tick);
  const journal = s.run!;
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
  const timeoutMs = Math.min(spec.timeoutMs, config.timeouts.agentMs ?? Infinity);
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
  const isRoot = Deno.build.os !== "windows" && Deno.uid() === 0;
  const inv = buildInvocation("executor", spec, prompt, { isRoot });
  tick.log.step(
    `task ${brief.task}: starting the executor (${spec.vendor}), run ${journal.runId}, timeout ${
      formatDuration(timeoutMs)
    }`,
  );
  const logPath = join(runDir, "agent.log");
  if (inv.kind === "demo") {
    await emit({ kind: "turn-started" });
    const started = performance.now();
    const code = await runDemoAgent({ worktree: journal.worktree, briefPath, reportPath, logPath });
    return {
      kind: "turn-ended",
      agent: {
        exitCode: code,
        signal: null,
        timedOut: false,
        durationMs: Math.round(performance.now() - started),
      },
    };
  }
  const result = await runAgent({
    argv: inv.argv,
    cwd: journal.worktree,
    env: { ...inv.env, ...env },
    timeoutMs,
    logPath,
    progress: tick.progress,
    label: `executor task ${brief.task}`,
    onStart: async (pid) => {
      const started = Date.now();
      await emit({
        kind: "turn-started",
        pid,
        started: new Date(started).toISOString(),
        ...(Number.isFinite(timeoutMs)
          ? { deadline: new Date(started + timeoutMs).toISOString() }
          : {}),
      });
      failpoint("agent-running");
    },
  });
  return {
    kind: "turn-ended",
    agent: {
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut: result.timedOut,
      durationMs: result.durationMs,
      ...(result.startError ? { startError: result.startError } : {}),
    },
  };
}

/** The agent of an interrupted tick: still ours and running, past its limit, or gone. */
export async function checkOrphanTurn(tick: Tick, s: ExecutorState): Promise<ExecutorEvent> {
  const journal = s.run!;
  const orphan = await orphanState(journal);
  const pid = journal.agentPid!;
  if (orphan.kind === "running") {
    return {
      kind: "orphan-running",
      pid,
      ...(orphan.unverified ? { unverified: orphan.unverified } : {}),
    };
  }
  if (orphan.kind === "overdue") {
    tick.log.step(
      `the agent of run ${journal.runId} (pid ${pid}) outlived its tick and passed its turn limit (${journal.agentDeadline}); stopping its process group`,
    );
    if (!(await stopOrphan(pid))) return { kind: "orphan-stuck", pid };
    return {
      kind: "turn-ended",
      agent: {
        exitCode: null,
        signal: null,
        timedOut: true,
        durationMs: Date.now() - orphan.startedMs,
        interrupted: true,
      },
    };
  }
  if (orphan.reused) tick.log.step(`not our agent: ${orphan.reused}`);
  tick.log.step(
    `the agent of run ${journal.runId} ended while no tick watched it; not relaunching that turn`,
  );
  return {
    kind: "turn-ended",
    agent: { exitCode: null, signal: null, timedOut: false, durationMs: 0, interrupted: true },
  };
}
