/**
 * A person's commands, as pure decisions: `relay resume` (clear the HOLD,
 * keeping or abandoning the held run) and `relay close <task>` (give up on a
 * PR: close it unmerged, settle the run on its branch, retire its open fix
 * brief, clear its HOLD, promote the next brief). They run on the same driver
 * as the ticks; the steps and the facts that move them are the person's
 * table in lib/task/table.ts.
 */
import type { Ending, PersonEffect } from "./effects.ts";
import { type PersonStep, personStepAfter } from "./table.ts";

export type PersonCommand =
  /** `retryUncertain`: `relay resume --retry-uncertain`, the only way to replay an uncertain turn. */
  | { kind: "resume"; retryUncertain?: boolean }
  | { kind: "close"; task: number; reason: string };

/** What the command found before it changed anything. */
export interface PersonSeen {
  hold: { task: number; reason: string; at: string; runId?: string } | null;
  /** The journaled run, if any. */
  run: {
    runId: string;
    branch: string;
    task: number;
    step: string;
    /** Its turn is committed: the next tick finishes it rather than starting over. */
    keeps: boolean;
    /** The pid of an agent a killed tick left running (still alive, or past its deadline). */
    agentPid: number | null;
  } | null;
  /**
   * The held turn is uncertain: its process ended while no tick watched it, so
   * nobody knows what it did. Only `--retry-uncertain` runs it again.
   */
  uncertain?: { runId: string; role: "reviewer"; task: number } | null;
  /** `close` only: the task's PR, or null when there is none. */
  pr?: { id: string; head: string; state: "open" | "merged" | "closed"; branch: string } | null;
  /** `close` only: the OPEN brief's Task number when it works on the task's branch. */
  openBrief?: number | null;
  /** `close` only: the task numbers the HOLD may name (the task and its fix briefs). */
  taskBriefs?: number[];
}

export type PersonEvent =
  | { kind: "observed"; seen: PersonSeen }
  | { kind: "pr-closed"; pr: string; head: string }
  | { kind: "agent-stopped"; runId: string; pid: number }
  | { kind: "run-kept"; runId: string; step: string }
  | { kind: "run-abandoned"; runId: string; branch: string; task: number }
  | { kind: "close-recorded"; task: number; head: string }
  | { kind: "brief-retired"; task: number }
  | {
    kind: "hold-cleared";
    task: number;
    reason: string;
    at: string;
    /** resume: the task whose frozen configuration was let go of. */
    unfrozen?: number | null;
  }
  | { kind: "promoted"; task: number | null; title: string | null; message: string }
  | { kind: "uncertain-released"; runId: string; role: "reviewer"; task: number };

export interface PersonState {
  command: PersonCommand;
  step: PersonStep;
  seen: PersonSeen | null;
  /** What the command did, a line each, in order: what it prints. */
  lines: string[];
}

export function initialPerson(command: PersonCommand): PersonState {
  return { command, step: "start", seen: null, lines: [] };
}

const short = (sha: string) => sha.slice(0, 12);

/** The run the command settles: the held one (resume), or the one on the closed branch (close). */
function runToSettle(s: PersonState): NonNullable<PersonSeen["run"]> | null {
  const run = s.seen?.run ?? null;
  if (!run) return null;
  if (s.command.kind === "resume") {
    const hold = s.seen!.hold;
    return hold?.runId !== undefined && hold.runId === run.runId ? run : null;
  }
  return run.branch === `task-${s.command.task}` ? run : null;
}

function holdIsThisTasks(s: PersonState): boolean {
  const hold = s.seen?.hold;
  if (!hold) return false;
  return s.command.kind === "resume" || (s.seen!.taskBriefs ?? []).includes(hold.task);
}

export function reducePerson(s: PersonState, e: PersonEvent): PersonState {
  const step = personStepAfter(s.step, e);
  const said = (line: string) => ({ ...s, step, lines: [...s.lines, line] });
  switch (e.kind) {
    case "observed":
      return { ...s, step, seen: e.seen };
    case "pr-closed":
      return said(
        `closed ${e.pr} without merging; task-${(s.command as { task: number }).task} stays at ${
          short(e.head)
        }`,
      );
    case "agent-stopped":
      return said(`stopped the agent of run ${e.runId} (pid ${e.pid})`);
    case "run-kept":
      return said(
        `kept run ${e.runId}: the agent's turn is done; the next poll carries on from step "${e.step}" without running it again`,
      );
    case "run-abandoned":
      return said(
        s.command.kind === "resume"
          ? `abandoned run ${e.runId}; its work stays on ${e.branch} and every commit of its turn under refs/relay/anchors/task-${e.task}/${e.runId}-*; the next poll starts a new attempt`
          : `abandoned run ${e.runId} on ${e.branch} (its work stays on the branch and under refs/relay/anchors/task-${e.task}/${e.runId}-*)`,
      );
    case "close-recorded":
      return { ...s, step };
    case "brief-retired":
      return said(`set the open fix brief (task ${e.task}) to DONE`);
    case "hold-cleared":
      // resume says the HOLD first, then what became of its run.
      return s.command.kind === "resume"
        ? {
          ...s,
          step,
          lines: [
            `cleared: HOLD on task ${e.task} (since ${e.at}): ${e.reason}`,
            ...s.lines,
            ...(e.unfrozen != null
              ? [
                `task ${e.unfrozen} takes up the operator profile and repo config as they are now: its configuration is frozen again at its next attempt`,
              ]
              : []),
          ],
        }
        : said(`cleared the HOLD: ${e.reason}`);
    case "promoted":
      return said(e.task === null ? e.message : `promoted task ${e.task}: ${e.title}`);
    case "uncertain-released":
      return said(
        `the uncertain ${e.role} turn of run ${e.runId} is void; the next review tick runs the review of task ${e.task} again (a new ${e.role} turn)`,
      );
  }
}

type Done = Extract<Ending, { kind: "done" }>;
const done = (kind: string, message: string, lines: string[] = []): Done => ({
  kind: "done",
  result: { kind, message, lines },
});

export function nextPerson(s: PersonState): PersonEffect | Done {
  if (!s.seen) return { kind: "survey" };
  const { command, seen, step } = s;
  const run = runToSettle(s);
  if (command.kind === "resume") {
    const uncertain = seen.hold && seen.uncertain?.runId === seen.hold.runId
      ? seen.uncertain
      : null;
    if (command.retryUncertain && !uncertain) {
      return done(
        "refused",
        `nothing to replay: ${
          seen.hold ? "the HOLD is not about an uncertain turn" : "there is no HOLD"
        }; "relay status" shows what the loop waits for`,
      );
    }
    if (!seen.hold) return done("idle", "no HOLD to clear");
    if (uncertain && step === "surveyed") {
      if (command.retryUncertain) return { kind: "release-uncertain" };
      return done(
        "uncertain",
        `not cleared: the HOLD is an uncertain ${uncertain.role} turn (run ${uncertain.runId}, task ${uncertain.task}), and relay resume never replays one by itself. To run it again: relay resume --retry-uncertain. To give up on the task: relay close ${uncertain.task} --reason "…".`,
      );
    }
    if (step === "surveyed" && run) {
      return run.keeps ? { kind: "keep-run" } : { kind: "abandon-run", why: seen.hold.reason };
    }
    if (step !== "hold-cleared") return { kind: "clear-hold" };
    const lines = [...s.lines];
    if (!run && seen.run) {
      lines.push(`run ${seen.run.runId} was not the held run; the next poll carries on with it`);
    }
    return done("cleared", lines[0]!, lines);
  }
  // close
  const pr = seen.pr ?? null;
  if (step === "surveyed") {
    if (!pr || pr.state !== "open") {
      return done(
        "refused",
        `there is no open PR for task ${command.task} (${
          pr ? `${pr.id} is ${pr.state}` : `no PR for branch task-${command.task}`
        }); "relay status" shows which task is in flight`,
      );
    }
    return {
      kind: "close-pr",
      comment: `Closed by a person with relay close: ${command.reason}`,
    };
  }
  // An agent a killed tick left running would go on committing to the closed branch.
  if (step === "pr-closed" && run?.agentPid != null) return { kind: "stop-agent" };
  // A run on the branch must not come back and reopen it.
  if ((step === "pr-closed" || step === "agent-stopped") && run) {
    return {
      kind: "abandon-run",
      why: `abandoned: ${pr!.id} was closed by relay close (${command.reason})`,
    };
  }
  if (step === "pr-closed" || step === "agent-stopped" || step === "run-settled") {
    return { kind: "record-close" };
  }
  if (step === "close-recorded" && seen.openBrief != null) return { kind: "retire-open-brief" };
  if ((step === "close-recorded" || step === "brief-retired") && holdIsThisTasks(s)) {
    return { kind: "clear-hold" };
  }
  if (step !== "promoted") return { kind: "promote-next" };
  return done("closed", s.lines[0]!, s.lines);
}
