/**
 * A task's configuration is frozen into its record when its first attempt is
 * prepared (lib/config/task_config.ts resolves it): programs, models, limits,
 * stages and modes, each with where it came from. Every later tick of the
 * task — its fix rounds, its reviews — runs with the frozen values, so an edit
 * of the operator profile or the repo config mid-task reaches the next task,
 * not this one. `relay resume` lets go of a held task's frozen configuration
 * (lib/loop/effects/person.ts): the way to hand it a fixed profile.
 */
import { join } from "../../path.ts";
import { HoldError } from "../../errors.ts";
import type { RoleName } from "../../config/profile_load.ts";
import { readLegacy } from "../../config/legacy.ts";
import { CONFIG_PATH } from "../../config/repo_load.ts";
import { resolveTaskConfig, startLine, type TaskConfig } from "../../config/task_config.ts";
import { requireRoleProgram } from "../../agents/turn.ts";
import { programLooks, programSeen } from "../../agents/program_seen.ts";
import { stamped } from "../../proc/log.ts";
import { type BriefRef, ownerOf, readTask, updateTask } from "../../state/tasks.ts";
import type { StatePaths } from "../../state/paths.ts";
import { readTextOrNull } from "../../state/json_file.ts";
import type { ExecContext, Ready } from "./context.ts";

/** The task's frozen configuration, or null when it has none (not started, or let go of). */
export async function readFrozen(state: StatePaths, task: number): Promise<TaskConfig | null> {
  const record = await readTask(state, task);
  return (record.config as TaskConfig | undefined) ?? null;
}

/** Makes the frozen values the ones this tick runs with. */
export function applyFrozen(r: Ready, c: TaskConfig, task: number): void {
  r.profile = {
    ...r.profile,
    roles: {
      ...r.profile.roles,
      executor: c.roles.executor.spec,
      reviewer: c.roles.reviewer.spec,
      security: c.roles.security.spec,
    },
  };
  delete r.profile.testCommand;
  if (c.testCommand.value !== null) r.profile.testCommand = c.testCommand.value;
  r.config = {
    ...r.config,
    attempts: c.attempts.value,
    fixRounds: c.fixRounds.value,
    merge: c.merge.value,
    skipQualityPolish: c.skipQualityPolish.value,
  };
  delete r.config.docsFile;
  if (c.docsFile.value !== null) r.config.docsFile = c.docsFile.value;
  r.frozen = { task, config: c };
}

/**
 * Applies the task's frozen configuration to the tick, when it has one; then
 * this command's flags over it (for this command only: nothing is saved).
 */
export async function applyTaskConfig(r: Ready, state: StatePaths, task: number): Promise<void> {
  const frozen = await readFrozen(state, task);
  if (frozen) applyFrozen(r, frozen, task);
  const flagged = r.profile.flagged ?? [];
  if (!r.frozen || !flagged.length) return;
  const c = { ...r.frozen.config };
  const p = r.profile;
  // A brief that asks for a person keeps one: a flag does not waive it.
  if (flagged.includes("mergePolicy") && p.mergePolicy && c.merge.from !== "brief") {
    c.merge = { value: p.mergePolicy, from: "flag" };
    r.config = { ...r.config, merge: p.mergePolicy };
  }
  if (flagged.includes("safetyMode")) c.safetyMode = { value: p.safetyMode, from: "flag" };
  if (flagged.includes("handsfree")) c.handsfree = { value: p.handsfree, from: "flag" };
  r.frozen = { ...r.frozen, config: c };
}

/** The keys `.relay/config.yaml` sets itself (so a value can say it came from there). */
async function repoKeys(root: string): Promise<Set<string>> {
  const text = await readTextOrNull(join(root, CONFIG_PATH)) ?? "";
  return new Set([...text.matchAll(/^([a-z_]+)\s*:/gm)].map((m) => m[1]!));
}

/**
 * Freezes the task's configuration when it has none yet (first writer wins:
 * a configuration already on record is applied as it is). Prints the start
 * line once, when this call is the one that froze it.
 */
export async function freezeTask(tick: ExecContext, brief: BriefRef, r: Ready): Promise<void> {
  const task = ownerOf(brief);
  if (r.frozen?.task === task) return;
  const resolved = resolveTaskConfig({
    profile: r.profile,
    repo: r.config,
    repoKeys: await repoKeys(tick.repo.root),
    legacy: await readLegacy(tick.repo.root),
    at: new Date().toISOString(),
    ...(tick.brief?.acceptance ? { briefAcceptance: tick.brief.acceptance } : {}),
  });
  const looks = programLooks();
  for (const role of ["executor", "reviewer", "security"] as const) {
    const preset: RoleName = role === "executor" ? "executor" : "reviewer";
    const seen = await programSeen(preset, resolved.roles[role].spec, tick.repo.root, looks);
    if (seen) resolved.roles[role].program = seen;
  }
  const kept = await updateTask(tick.state, task, (record) => {
    record.config ??= resolved as unknown as NonNullable<typeof record.config>;
    return record.config as unknown as TaskConfig;
  });
  applyFrozen(r, kept, task);
  if (kept.at !== resolved.at) return;
  const line = startLine(task, kept);
  // Also under --quiet, like a tick's result: cron.log keeps what every task started with.
  (tick.say ?? ((l: string) => console.log(stamped(l, Deno.stdout.isTerminal()))))(line);
  const terminal = Deno.stderr.isTerminal();
  for (const w of kept.warnings) console.error(stamped(`relay: warning: ${w}`, terminal));
  tick.started = { line, warnings: kept.warnings };
}

/**
 * The role's program must be there. For a task whose configuration is frozen
 * a fixed profile does not reach it by itself: the HOLD is recorded and says
 * that `relay resume` hands the task the profile as it is then.
 */
export async function requireFrozenProgram(
  role: "executor" | "reviewer" | "security",
  r: Ready,
): Promise<void> {
  const spec = r.profile.roles[role];
  try {
    await requireRoleProgram(role, spec, r.profile.path);
  } catch (err) {
    if (!(err instanceof HoldError) || !r.frozen) throw err;
    throw new HoldError(
      `${err.message} (task ${r.frozen.task} froze its configuration when it started, at ${r.frozen.config.at})`,
      `Fix roles.${role} in the operator profile (${r.profile.path}) or install the program, then run "relay resume": task ${r.frozen.task} then takes up the profile as it is.`,
      { task: r.frozen.task },
    );
  }
}
