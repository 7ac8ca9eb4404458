/**
 * One agent turn, the same for every role (executor, reviewer, and any later
 * stage): the profile's program for the role (or its demo), the prompt, the
 * RELAY_* environment the caller names, the turn limit, the process group
 * (runner.ts), and the journal entry that lets a later tick find a turn this
 * tick leaves behind (orphan.ts decides what to do with it). What a role
 * reads from its turn — a report, a verdict — stays with the role's tick.
 */
import { confirmLease } from "../git/lease_guard.ts";
import type { RoleName, RoleSpec } from "../config/profile_load.ts";
import { buildInvocation } from "./presets.ts";
import { runAgent } from "./runner.ts";
import type { ProgressStyle } from "./progress.ts";
import { requireProgram } from "./which.ts";
import { forgetFetches } from "../git/git.ts";
import { procStart } from "../proc/started.ts";

export { timedOutText } from "./progress.ts";
export {
  type JournaledTurn,
  type OrphanDecision,
  type OrphanOptions,
  orphanTurn,
  overdueText,
} from "./orphan.ts";

/** How a turn ended. Kept in the poll journal as it is (`AgentOutcome`). */
export interface TurnOutcome {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  durationMs: number;
  /** Set when the program could not be started at all. */
  startError?: string;
  /** The tick that ran the turn died; its exit status is unknown. */
  interrupted?: boolean;
}

/** A turn's program as it started: what the caller journals (see JournaledTurn). */
export interface TurnStart {
  pid: number;
  /** ISO. */
  started: string;
  /** started + the turn limit (ISO); absent with no turn limit. */
  deadline?: string;
  /** Linux: the process's boot id and start ticks (`procStart`); absent when unreadable. */
  stamp?: string;
}

/** Where the caller records the running turn, so a tick that dies mid-turn leaves it findable. */
export interface TurnJournal {
  /**
   * The program started: persist what names it. Should this throw, the turn's process group
   * is killed and the error passed on: no turn runs unrecorded.
   */
  onStart(start: TurnStart): void | Promise<void>;
}

export interface TurnOptions {
  /** Names the role in messages and in the profile ("roles.<role>"). */
  role: string;
  /**
   * Which vendor preset shapes the argv: the reviewer's (read-only tools) or
   * the executor's (writes its worktree). Defaults to `role` when it is one of
   * the two; any other role must choose.
   */
  preset?: RoleName;
  spec: RoleSpec;
  prompt: string;
  /** The role's RELAY_* variables; merged over the profile's env for the role. */
  env: Record<string, string>;
  cwd: string;
  /** Both output streams are appended here; parent folders are created. */
  logPath: string;
  /** stdout alone is also written here. */
  stdoutPath?: string;
  /** The turn limit: roleTimeoutMs() of the spec and the repo's cap. */
  timeoutMs: number;
  progress: ProgressStyle;
  /** Names the turn in progress and log lines, e.g. "executor task 3". */
  label: string;
  journal: TurnJournal;
  /** Runs instead of a program when the profile's vendor is "demo"; returns its exit code. */
  demo: () => Promise<number>;
  /** Whether relay runs as root (claude's executor flags differ); detected when absent. */
  isRoot?: boolean;
  /** Exact commands a claude reviewer may run (the brief's bar). */
  allowCommands?: readonly string[];
  /** Browser tools for a reviewer-side claude turn (the profile's `browser`). */
  browser?: { mcpConfig: string; tools: readonly string[] };
  /** On timeout: SIGTERM to the group, this long, then SIGKILL (runner.ts's default otherwise). */
  graceMs?: number;
}

/** relay runs as uid 0 (containers, root crontabs). */
export function runsAsRoot(): boolean {
  return Deno.build.os !== "windows" && Deno.uid() === 0;
}

/** The role's turn limit: its own in the profile, capped by the repo's `timeouts.agent`. */
export function roleTimeoutMs(spec: RoleSpec, capMs: number | undefined): number {
  return Math.min(spec.timeoutMs, capMs ?? Infinity);
}

/** Runs one turn of the role's program (or its demo) and says how it ended. */
export async function startTurn(opts: TurnOptions): Promise<TurnOutcome> {
  // The program may push: no fetch from before its turn stands for one after it.
  forgetFetches();
  try {
    return await turn(opts);
  } finally {
    forgetFetches();
  }
}

async function turn(opts: TurnOptions): Promise<TurnOutcome> {
  const inv = buildInvocation(presetFor(opts.role, opts.preset), opts.spec, opts.prompt, {
    isRoot: opts.isRoot ?? runsAsRoot(),
    ...(opts.allowCommands !== undefined ? { allowCommands: opts.allowCommands } : {}),
    ...(opts.browser !== undefined ? { browser: opts.browser } : {}),
  });
  if (inv.kind === "demo") {
    const started = performance.now();
    const code = await opts.demo();
    return {
      exitCode: code,
      signal: null,
      timedOut: false,
      durationMs: Math.round(performance.now() - started),
    };
  }
  const { timeoutMs } = opts;
  // Split machines: the role is still this machine's before an agent starts on the task.
  await confirmLease();
  const result = await runAgent({
    argv: inv.argv,
    cwd: opts.cwd,
    env: { ...inv.env, ...opts.env },
    timeoutMs,
    logPath: opts.logPath,
    ...(opts.stdoutPath !== undefined ? { stdoutPath: opts.stdoutPath } : {}),
    ...(opts.graceMs !== undefined ? { graceMs: opts.graceMs } : {}),
    progress: opts.progress,
    label: opts.label,
    onStart: async (pid) => {
      const started = Date.now();
      const seen = await procStart(pid);
      await opts.journal.onStart({
        pid,
        started: new Date(started).toISOString(),
        ...(Number.isFinite(timeoutMs)
          ? { deadline: new Date(started + timeoutMs).toISOString() }
          : {}),
        ...(seen !== null ? { stamp: seen.stamp } : {}),
      });
    },
  });
  return {
    exitCode: result.exitCode,
    signal: result.signal,
    timedOut: result.timedOut,
    durationMs: result.durationMs,
    ...(result.startError ? { startError: result.startError } : {}),
  };
}

/**
 * HOLD (before any attempt or turn is spent) when the role's program cannot be
 * found: a typo in the profile is the operator's to fix, not a failed turn.
 * A demo role needs no program.
 */
export async function requireRoleProgram(
  role: string,
  spec: RoleSpec,
  profilePath: string,
): Promise<void> {
  // Only the program and the profile's env matter here: every preset starts the same program.
  const preset: RoleName = role === "reviewer" ? "reviewer" : "executor";
  const probe = buildInvocation(preset, spec, "relay", { isRoot: false });
  if (probe.kind === "process") await requireProgram(role, probe.argv, probe.env, profilePath);
}

function presetFor(role: string, preset: RoleName | undefined): RoleName {
  if (preset !== undefined) return preset;
  if (role === "executor" || role === "reviewer") return role;
  throw new Error(`startTurn: role "${role}" needs a preset (executor or reviewer)`);
}
