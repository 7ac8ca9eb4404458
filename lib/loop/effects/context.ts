/**
 * What the effect handlers of a tick share: the repository, relay's paths,
 * the log, and — once the `get-ready` (executor) or `observe` (planner)
 * effect has loaded them — the repo config, the operator profile and the
 * primary tree's Git.
 */
import type { RepoPaths } from "../../git/discover.ts";
import type { Git } from "../../git/git.ts";
import type { RepoConfig } from "../../config/repo_load.ts";
import type { Profile } from "../../config/profile_load.ts";
import type { Brief } from "../../protocol/types.ts";
import type { StatePaths } from "../../state/paths.ts";
import type { Log, Progress } from "../../proc/log.ts";

export interface Ready {
  primary: Git;
  config: RepoConfig;
  profile: Profile;
  /** The task whose frozen configuration `config` and `profile` carry (lib/loop/effects/freeze.ts). */
  frozen?: { task: number; config: import("../../config/task_config.ts").TaskConfig };
}

export interface TickContext {
  repo: RepoPaths;
  state: StatePaths;
  log: Log;
  progress: Progress;
  profileFlag?: string;
  /** This command's flags over the profile (--merge-policy, --handsfree, --safety-mode). */
  flags?: import("../../config/profile_load.ts").ProfileFlags;
  /** Says a line as it happens (lib/loop/log.ts TickOptions.say). */
  say?: (line: string) => void;
  /** Set by the effect that loads the config. */
  ready?: Ready;
  /**
   * This tick already holds the poll lock (`machines: split`: a review tick keeps the
   * primary tree to itself while it may commit there), so promotion does not take it again.
   */
  pollLockHeld?: boolean;
  /** The task's timeline this tick appends to (lib/loop/timeline.ts), keyed by task/brief. */
  timeline?: { key: string; log: import("../timeline.ts").Timeline };
}

/** An executor tick's context: the brief it works on, once known. */
export interface ExecContext extends TickContext {
  brief?: Brief;
  /** Set when this tick froze its task's configuration: the start line, for the timeline. */
  started?: { line: string; warnings: string[] };
}

export function ready(ctx: TickContext): Ready {
  if (!ctx.ready) throw new Error("relay bug: an effect ran before the config was loaded");
  return ctx.ready;
}

export function briefOf(ctx: ExecContext): Brief {
  if (!ctx.brief) throw new Error("relay bug: an effect ran before the brief was read");
  return ctx.brief;
}

/** What the planner found on origin/main: the report, the brief beside it, and the PR's task. */
export interface PlanSubject {
  report: import("../../protocol/types.ts").Report;
  brief: Brief;
  /** The PR's own task: the brief's `Fixes:` on a fix, else its task. */
  task: number;
  originMain: string;
  /** Main's NEXT-STEPS.md as the tick read it: with split machines, often the next brief. */
  mainBrief?: string | null;
}

/** A planner tick's context: the forge, and what `observe` found. */
export interface PlanContext extends TickContext {
  forge?: import("../../forge/types.ts").PlannerForge;
  subject?: PlanSubject;
  pr?: import("../../forge/types.ts").PrStatus;
}

export function subjectOf(ctx: PlanContext): PlanSubject {
  if (!ctx.subject) throw new Error("relay bug: an effect ran before the report was read");
  return ctx.subject;
}

export function prOf(ctx: PlanContext): import("../../forge/types.ts").PrStatus {
  if (!ctx.pr) throw new Error("relay bug: an effect ran before the PR was found");
  return ctx.pr;
}

export function forgeOf(ctx: PlanContext): import("../../forge/types.ts").PlannerForge {
  if (!ctx.forge) throw new Error("relay bug: an effect ran before the forge was chosen");
  return ctx.forge;
}
