/**
 * The handlers of a person's commands (`relay resume`, `relay close`): each
 * does one piece of I/O and reports the fact. What comes next is
 * lib/task/person.ts's to decide.
 */
import { join } from "../../path.ts";
import type { RepoPaths } from "../../git/discover.ts";
import type { PrStatus } from "../../forge/types.ts";
import { parseBrief } from "../../protocol/brief.ts";
import { writeBrief } from "../../protocol/brief_write.ts";
import { readStatus } from "../../protocol/status_line.ts";
import { clearHold, type Hold, readHold, resumeKeepsRun } from "../../state/hold.ts";
import { type Journal, readJournal } from "../../state/journal.ts";
import { recordHoldCleared } from "../../state/last_tick.ts";
import { BRIEF_FILE, type StatePaths } from "../../state/paths.ts";
import { letGoOfConfig, readReview, writeReview } from "../../state/tasks.ts";
import type { PersonEffect } from "../../task/effects.ts";
import type { PersonCommand, PersonEvent, PersonSeen, PersonState } from "../../task/person.ts";
import { abandonRun } from "../abandon.ts";
import { orphanState, stopOrphan } from "../orphan.ts";
import { promoteNext } from "../promote.ts";

export interface PersonContext {
  repo: RepoPaths;
  state: StatePaths;
  /** What the survey read, for the handlers after it. */
  hold?: Hold | null;
  journal?: Journal | null;
  pr?: PrStatus | null;
  forge?: { close(pr: PrStatus, comment: string): Promise<void> };
}

/** The pid of an agent a killed tick left running, if it is still alive or past its deadline. */
async function leftRunning(journal: Journal): Promise<number | null> {
  if (journal.step !== "agent-started" || journal.agentPid === undefined) return null;
  const orphan = await orphanState(journal);
  return orphan.kind === "running" || orphan.kind === "overdue" ? journal.agentPid : null;
}

async function survey(ctx: PersonContext, command: PersonCommand): Promise<PersonEvent> {
  const hold = ctx.hold = await readHold(ctx.state.hold);
  const journal = ctx.journal = await readJournal(ctx.state.journal);
  const seen: PersonSeen = {
    hold: hold &&
      {
        task: hold.task,
        reason: hold.reason,
        at: hold.at,
        ...(hold.runId ? { runId: hold.runId } : {}),
      },
    run: journal && {
      runId: journal.runId,
      branch: journal.branch,
      task: journal.task,
      step: journal.step,
      keeps: resumeKeepsRun(journal),
      agentPid: command.kind === "close" && journal.branch === `task-${command.task}`
        ? await leftRunning(journal)
        : null,
    },
  };
  if (command.kind === "resume") {
    const { readReviewJournal } = await import("../review_journal.ts");
    const rj = await readReviewJournal(ctx.state.reviewJournal);
    if (rj?.uncertain) seen.uncertain = { runId: rj.runId, role: "reviewer", task: rj.task };
  }
  if (command.kind === "close") {
    const { loadRepoConfig } = await import("../../config/repo_load.ts");
    const { Git } = await import("../../git/git.ts");
    const { plannerForge } = await import("../../forge/planner_forge.ts");
    const config = await loadRepoConfig(ctx.repo.root);
    const git = new Git(ctx.repo.root, config.timeouts.networkMs);
    await git.fetch(config.remote);
    const branch = `task-${command.task}`;
    const forge = ctx.forge = await plannerForge(config, git, ctx.state.prs);
    const pr = ctx.pr = await forge.find(branch);
    seen.pr = pr && { id: pr.id, head: pr.head, state: pr.state, branch: pr.branch };
    const text = await Deno.readTextFile(join(ctx.repo.root, BRIEF_FILE)).catch(() => null);
    const brief = text !== null && readStatus(text) === "OPEN"
      ? parseBrief(text, BRIEF_FILE)
      : null;
    seen.openBrief = brief?.branch === branch ? brief.task : null;
    const record = await readReview(ctx.state, command.task, branch);
    // The HOLD may name the task, a fix brief relay sent, or a fix brief a person queued on it.
    seen.taskBriefs = [
      command.task,
      ...record.fixes.map((f) => f.task),
      ...(seen.openBrief == null ? [] : [seen.openBrief]),
    ];
  }
  return { kind: "observed", seen };
}

export async function handlePerson(
  ctx: PersonContext,
  effect: PersonEffect,
  s: PersonState,
): Promise<PersonEvent> {
  const { command } = s;
  switch (effect.kind) {
    case "survey":
      return await survey(ctx, command);
    case "keep-run": {
      const run = ctx.journal!;
      return { kind: "run-kept", runId: run.runId, step: run.step };
    }
    case "abandon-run": {
      const run = ctx.journal!;
      const why = command.kind === "resume"
        ? `abandoned by relay resume after a HOLD: ${effect.why}`
        : effect.why;
      await abandonRun(ctx.state, run, why);
      return { kind: "run-abandoned", runId: run.runId, branch: run.branch, task: run.task };
    }
    case "stop-agent": {
      const run = ctx.journal!;
      await stopOrphan(run.agentPid!);
      return { kind: "agent-stopped", runId: run.runId, pid: run.agentPid! };
    }
    case "close-pr": {
      await ctx.forge!.close(ctx.pr!, effect.comment);
      return { kind: "pr-closed", pr: ctx.pr!.id, head: ctx.pr!.head };
    }
    case "record-close": {
      const { task, reason } = command as Extract<PersonCommand, { kind: "close" }>;
      const record = await readReview(ctx.state, task, ctx.pr!.branch);
      record.closed = { head: ctx.pr!.head, at: new Date().toISOString(), reason };
      await writeReview(ctx.state, record);
      return { kind: "close-recorded", task, head: ctx.pr!.head };
    }
    case "retire-open-brief": {
      const path = join(ctx.repo.root, BRIEF_FILE);
      const brief = parseBrief(await Deno.readTextFile(path), BRIEF_FILE);
      await Deno.writeTextFile(path, writeBrief({ ...brief, status: "DONE" }));
      return { kind: "brief-retired", task: brief.task };
    }
    case "clear-hold": {
      const hold = ctx.hold!;
      await clearHold(ctx.state.hold);
      // From now on, `relay status` shows tick records from before this as history.
      await recordHoldCleared(ctx.repo.commonDir, command.kind, hold);
      // A person who resumes may have fixed the profile: the held task takes it up.
      const unfrozen = command.kind === "resume" ? await letGoOfConfig(ctx.state, hold.task) : null;
      return { kind: "hold-cleared", task: hold.task, reason: hold.reason, at: hold.at, unfrozen };
    }
    case "release-uncertain": {
      const rj = await import("../review_journal.ts");
      const journal = (await rj.readReviewJournal(ctx.state.reviewJournal))!;
      await rj.recordVoid(
        ctx.state,
        journal,
        `task-${journal.task}`,
        `uncertain (${
          journal.uncertain?.why ?? "ended while no tick watched it"
        }); run again by relay resume --retry-uncertain`,
      );
      await rj.clearReviewJournal(ctx.state.reviewJournal);
      return {
        kind: "uncertain-released",
        runId: journal.runId,
        role: "reviewer",
        task: journal.task,
      };
    }
    case "promote-next": {
      const { planGateFor } = await import("../plan_gate.ts");
      const next = await promoteNext(ctx.repo.root, await planGateFor(ctx.repo.root, ctx.state));
      return next.result === "promoted"
        ? { kind: "promoted", task: next.task, title: next.title, message: "" }
        : { kind: "promoted", task: null, title: null, message: next.message };
    }
  }
}
