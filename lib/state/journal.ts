/**
 * The journal of the executor tick in progress. Each step of a tick is
 * idempotent and is recorded here once done, so a tick killed at any point
 * (SIGKILL, reboot) is finished by the next one: no duplicate PR, no lost
 * commit, and no second launch of an agent turn that already ended.
 */
import { readJson, removeFile, writeJson } from "./json_file.ts";
import { join } from "../path.ts";

/** The steps of one executor attempt, in order. */
export const STEPS = [
  "prepared", // worktree ready, anchor written
  "agent-started", // agent process launched (pid recorded)
  "agent-finished", // agent exited (or was found dead)
  "committed", // leftovers committed, paperwork kept off the branch
  "evidence", // relay ran the verification bar
  "pushed", // branch pushed
  "pr-opened", // PR open (or, for BLOCKED, skipped)
  "paperwork-committed", // status commit made on main
  "paperwork-pushed", // main pushed; the attempt is over
] as const;
export type Step = typeof STEPS[number];

export function stepIndex(step: Step): number {
  return STEPS.indexOf(step);
}

export interface AgentOutcome {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  durationMs: number;
  /** The tick that ran the agent died; its exit status is unknown. */
  interrupted?: boolean;
  startError?: string;
}

export interface Journal {
  version: 1;
  task: number;
  runId: string;
  attempt: number;
  step: Step;
  branch: string;
  worktree: string;
  /** origin/main when the attempt started. */
  originMain: string;
  /** The branch head before the agent ran. */
  before: string;
  /** Local main before the agent ran (it must not move). */
  mainBefore: string;
  /** Hash of the primary tree's own changes before the agent ran. */
  primaryDiff: string;
  /** Those changes, path → content hash: a HOLD names only what the agent changed. */
  primaryFiles?: Record<string, string>;
  /**
   * Files that steer git and relay (config, hooks, info/, relay's records), label →
   * content hash, before the agent ran: any change HOLDs before relay runs git again.
   */
  control?: Record<string, string>;
  /** Sizes of this clone's remote-tracking reflogs before the agent ran: its pushes show up after them. */
  remoteLogs?: { since: number; sizes: Record<string, number> };
  /**
   * The worktree's git dir and where its HEAD's and the branch's reflogs stood before the
   * agent ran: the commits of the turn are read on from there and anchored before any HOLD.
   */
  turn?: { gitDir: string; headLog: number; branchLog: number; since: number };
  /** Hash of the worktree report file before the agent ran ("" = absent). */
  reportBefore: string;
  agentPid?: number;
  /** When the agent process started (ISO): a later tick tells our agent from a reused pid. */
  agentStarted?: string;
  /** agentStarted + the turn limit (ISO): a later tick stops an orphaned agent past it. */
  agentDeadline?: string;
  /** Linux: the agent's boot id and start ticks, which no wall-clock step moves (procStart). */
  agentStamp?: string;
  agent?: AgentOutcome;
  /** Set once the attempt's result is known. */
  outcome?: "SHIPPED" | "BLOCKED" | "FAILED";
  failure?: string;
  head?: string;
  pr?: string;
  paperworkCommit?: string;
  /**
   * When the turn's guard passed (ISO). The turn is judged then and nothing of it runs any
   * more, so a tick killed after that does not judge it again: relay's own copies of the
   * agent's report in the run folder, made right after, would look like the agent's doing.
   */
  guarded?: string;
  updated: string;
}

export async function readJournal(path: string): Promise<Journal | null> {
  return await readJson<Journal>(path);
}

export async function writeJournal(path: string, journal: Journal): Promise<void> {
  journal.updated = new Date().toISOString();
  await writeJson(path, journal);
}

/** Moves a finished (or abandoned) journal into its run folder. */
export async function archiveJournal(
  path: string,
  runsDir: string,
  journal: Journal,
): Promise<void> {
  await writeJson(join(runsDir, journal.runId, "journal.json"), journal);
  await removeFile(path);
}
