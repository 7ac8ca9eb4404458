/**
 * A task's configuration, resolved once when the task starts and frozen into
 * its record: the programs and models of every role, the limits, the stages
 * and the modes — each value with where it came from. A later edit of the
 * profile or the repo config does not change a task that is running; the next
 * task starts with the new values.
 *
 * Where a value comes from, strongest first: a command-line flag, the legacy
 * `.review-loop/config.md` (for the keys it maps), the operator profile, the
 * repo config (within the profile's limits), relay's default.
 */
import { InputError } from "../errors.ts";
import { CONFIG_PATH } from "./repo_load.ts";
import type { Profile, RoleSpec } from "./profile_load.ts";
import type { RepoConfig } from "./repo_load.ts";
import { LEGACY_FILE, type LegacySettings } from "./legacy.ts";

export type Source =
  | "flag"
  | "brief"
  | "legacy config"
  | "profile"
  | "repo config"
  | "default";

export interface Sourced<T> {
  value: T;
  from: Source;
}

/** The program a role runs, as found when the task started. */
export interface ProgramSeen {
  /** Absolute path, or "built-in" for the demo vendor. */
  path: string;
  /** `--version`'s first line, where the program answers one. */
  version?: string;
  /** sha256 of the file. */
  sha256?: string;
}

export interface FrozenRole {
  spec: RoleSpec;
  from: Source;
  program?: ProgramSeen;
}

export const STAGES = [
  "plan",
  "exec",
  "review",
  "finish",
  "polish",
  "docs",
  "security",
  "acceptance",
] as const;
export type StageName = typeof STAGES[number];

export interface TaskConfig {
  version: 1;
  /** When the task started and this was resolved. */
  at: string;
  profile: string;
  roles: { executor: FrozenRole; reviewer: FrozenRole; security: FrozenRole };
  attempts: Sourced<number>;
  /** Fix rounds after the first: exec rounds in all are one more. */
  fixRounds: Sourced<number>;
  planRounds: Sourced<number>;
  planReview: Sourced<boolean>;
  docsFile: Sourced<string | null>;
  skipQualityPolish: Sourced<boolean>;
  merge: Sourced<"auto" | "human">;
  safetyMode: Sourced<"efficient" | "strict">;
  handsfree: Sourced<boolean>;
  testCommand: Sourced<string | null>;
  /** The stages this task runs, in order, with why a stage is left out. */
  stages: { stage: StageName; runs: boolean; why?: string }[];
  /** Settings found but not applied. */
  warnings: string[];
}

export interface ConfigInputs {
  profile: Profile;
  repo: RepoConfig;
  /** The repo config file's own keys (to tell a set value from a default). */
  repoKeys: ReadonlySet<string>;
  legacy: LegacySettings | null;
  at: string;
  /** The brief's `Acceptance: human`: a person accepts this task, whatever the policy. */
  briefAcceptance?: "human";
}

const sourced = <T>(value: T, from: Source): Sourced<T> => ({ value, from });

/** Resolves a task's configuration; a repo value over the profile's limit is bad input. */
export function resolveTaskConfig(inputs: ConfigInputs): TaskConfig {
  const { profile, repo, repoKeys, legacy } = inputs;
  const fromRepo = <T>(key: string, value: T) =>
    sourced(value, repoKeys.has(key) ? "repo config" : "default");
  const within = (key: string, value: number, limit: number, limitKey: string) => {
    if (repoKeys.has(key) && value > limit) {
      throw new InputError(
        { file: CONFIG_PATH, key },
        `${key} is ${value}, over the operator profile's limit of ${limit}`,
        `lower it to ${limit} or less, or raise limits.${limitKey} in the operator profile (${profile.path})`,
      );
    }
  };
  within("attempts", repo.attempts, profile.limits.attempts, "attempts");
  within("fix_rounds", repo.fixRounds, profile.limits.fixRounds, "fix_rounds");
  within("plan_rounds", repo.planRounds, profile.limits.planRounds, "plan_rounds");

  const fixRounds = legacy?.execRounds !== undefined
    ? sourced(Math.min(legacy.execRounds - 1, profile.limits.fixRounds), "legacy config")
    : fromRepo("fix_rounds", repo.fixRounds);
  const planRounds = legacy?.planRounds !== undefined
    ? sourced(Math.min(legacy.planRounds, profile.limits.planRounds), "legacy config")
    : fromRepo("plan_rounds", repo.planRounds);
  const docsFile = legacy?.docsFile !== undefined
    ? sourced<string | null>(legacy.docsFile, "legacy config")
    : fromRepo<string | null>("docs_file", repo.docsFile ?? null);
  const skipQualityPolish = legacy?.skipQualityPolish !== undefined
    ? sourced(legacy.skipQualityPolish, "legacy config")
    : fromRepo("skip_quality_polish", repo.skipQualityPolish);
  const flagged = (k: "mergePolicy" | "handsfree" | "safetyMode") =>
    profile.flagged?.includes(k) === true;
  const merge = inputs.briefAcceptance === "human"
    ? sourced<"auto" | "human">("human", "brief")
    : profile.mergePolicy !== undefined
    ? sourced(profile.mergePolicy, flagged("mergePolicy") ? "flag" : "profile")
    : fromRepo("merge", repo.merge);
  const planReview = fromRepo("plan_review", repo.planReview);

  const stages = stagesOf({
    planReview: planReview.value,
    skipQualityPolish: skipQualityPolish.value,
    docsFile: docsFile.value,
  });

  const profileOr = <T>(value: T, set: boolean) => sourced(value, set ? "profile" : "default");
  return {
    version: 1,
    at: inputs.at,
    profile: profile.path,
    roles: {
      executor: { spec: structuredClone(profile.roles.executor), from: "profile" },
      reviewer: { spec: structuredClone(profile.roles.reviewer), from: "profile" },
      security: {
        spec: structuredClone(profile.roles.security),
        from: profile.securityDefaulted ? "default" : "profile",
      },
    },
    attempts: fromRepo("attempts", repo.attempts),
    fixRounds,
    planRounds,
    planReview,
    docsFile,
    skipQualityPolish,
    merge,
    safetyMode: flagged("safetyMode")
      ? sourced(profile.safetyMode, "flag")
      : profileOr(profile.safetyMode, profile.safetyMode !== "efficient"),
    handsfree: flagged("handsfree")
      ? sourced(profile.handsfree, "flag")
      : profileOr(profile.handsfree, profile.handsfree),
    testCommand: sourced(profile.testCommand ?? null, profile.testCommand ? "profile" : "default"),
    stages,
    warnings: [...(legacy?.warnings ?? [])],
  };
}

/** The stages a task with these settings runs, each with why it is left out when it is. */
export function stagesOf(
  c: { planReview: boolean; skipQualityPolish: boolean; docsFile: string | null },
): TaskConfig["stages"] {
  return STAGES.map((stage) => {
    switch (stage) {
      case "plan":
        return c.planReview
          ? { stage, runs: true }
          : { stage, runs: false, why: "plan_review is off" };
      case "polish":
        return c.skipQualityPolish
          ? { stage, runs: false, why: "skip_quality_polish is set" }
          : { stage, runs: true };
      case "docs":
        return c.docsFile === null
          ? { stage, runs: false, why: "no docs_file is set" }
          : { stage, runs: true };
      default:
        return { stage, runs: true };
    }
  });
}

function who(role: FrozenRole): string {
  const s = role.spec;
  const name = s.vendor === "command" ? `command ${s.argv?.[0] ?? ""}` : s.vendor;
  return s.model ? `${name} ${s.model}` : name;
}

function minutes(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000}m` : `${Math.round(ms / 1000)}s`;
}

/** The one start line a task prints and logs when its configuration is frozen. */
export function startLine(task: number, c: TaskConfig): string {
  // Named as the legacy file names them.
  const legacyKeys: [keyof TaskConfig, string][] = [
    ["docsFile", "docs_file"],
    ["skipQualityPolish", "skip_quality_polish"],
    ["planRounds", "soft_limit_plan"],
    ["fixRounds", "soft_limit_exec"],
  ];
  const legacy = legacyKeys
    .filter(([k]) => (c[k] as Sourced<unknown>).from === "legacy config")
    .map(([, name]) => name);
  const r = c.roles;
  return [
    `task ${task} starts:`,
    `executor ${who(r.executor)}, reviewer ${who(r.reviewer)}, security ${who(r.security)}${
      r.security.from === "default"
        ? r.executor.spec.vendor === "command" ? " (the reviewer's)" : " (the executor's)"
        : ""
    };`,
    `plan rounds ${c.planReview.value ? c.planRounds.value : "off"}, exec rounds ${
      c.fixRounds.value + 1
    };`,
    `attempts ${c.attempts.value} per round;`,
    `timeout ${minutes(r.executor.spec.timeoutMs)}/${minutes(r.reviewer.spec.timeoutMs)};`,
    `docs file ${c.docsFile.value ?? "none"};`,
    `skip-quality-polish ${c.skipQualityPolish.value ? "yes" : "no"};`,
    `merge ${c.merge.value}${
      c.merge.from === "brief" ? " (the brief asks for a person)" : ""
    }, ${c.safetyMode.value}${c.handsfree.value ? ", handsfree" : ""};`,
    `from ${LEGACY_FILE}: ${legacy.length ? legacy.join(", ") : "nothing"}`,
  ].join(" ");
}
