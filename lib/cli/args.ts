/** Command-line parsing (lib/cli/options.ts), with unknown flags turned into usage errors (exit 2). */
import { UsageError } from "../errors.ts";
import { discoverRepo, type RepoPaths } from "../git/discover.ts";
import { basename, dirname, fromFileUrl, join } from "../path.ts";
import { redactor } from "../proc/redact.ts";
import { type OptionTable, parseOptions } from "./options.ts";

export interface Context {
  /** The folder relay acts on (`-C` applied). */
  cwd: string;
  /** `--profile`, when given. */
  profile?: string;
  /** `-C` was given: the folder is what the person asked for, even relay's own checkout. */
  explicitDir?: boolean;
}

export function parseCommand<T extends OptionTable>(
  command: string,
  args: string[],
  options: T,
  positionals: { min: number; max: number; names?: string },
) {
  let parsed;
  try {
    parsed = parseOptions(args, options);
  } catch (err) {
    throw new UsageError((err as Error).message, command);
  }
  const n = parsed.positionals.length;
  if (n < positionals.min) {
    throw new UsageError(
      `missing argument${positionals.names ? `: ${positionals.names}` : ""}`,
      command,
    );
  }
  if (n > positionals.max) {
    throw new UsageError(`unexpected argument "${parsed.positionals[positionals.max]}"`, command);
  }
  return parsed;
}

/** The repository around the context's folder; a usage error outside one. */
export function requireRepo(ctx: Context): RepoPaths {
  const repo = discoverRepo(ctx.cwd);
  if (!repo) {
    throw new UsageError(
      `Cannot find a git repository at or above "${ctx.cwd}". Run relay inside one, or pass -C <path>.`,
    );
  }
  if (repo.gitDir !== repo.commonDir && isRelayWorktree(repo.root)) {
    // Task and review worktrees are linked worktrees: their NEXT-STEPS.md is a stale copy.
    const primary = basename(repo.commonDir) === ".git" ? dirname(repo.commonDir) : repo.commonDir;
    throw new UsageError(
      `"${repo.root}" is one of relay's task or review worktrees; relay runs in the loop's own checkout: relay -C ${primary} …`,
    );
  }
  if (!ctx.explicitDir && isRelaySource(repo.root)) {
    throw new UsageError(
      `"${repo.root}" is relay's own source checkout, not your project (deno task runs here). Pass -C <your repository>.`,
    );
  }
  return repo;
}

/**
 * relay's own worktrees: `task-<n>`, `review`, `review-…` and `spare` folders, by default under
 * `<repo>.relay-worktrees/`, and what relay moved aside there (`<name>.stale-<run>`,
 * `<name>.void`, a set-aside run's under `.relay-aside/`): each holds a stale copy of the
 * protocol files, and a tick run in one would act on it.
 */
export function isRelayWorktree(root: string): boolean {
  const parent = basename(dirname(root));
  return /^(?:task-\d+|review|spare)(?:\.stale-.+|\.void)?$|^review-.+$/.test(basename(root)) ||
    parent.endsWith(".relay-worktrees") || parent === ".relay-aside";
}

/** True when `root` is the checkout relay runs from (from source) and relay is not set up in it. */
function isRelaySource(root: string): boolean {
  const url = new URL("../..", import.meta.url);
  if (url.protocol !== "file:") return false; // the compiled binary
  let source: string;
  try {
    source = Deno.realPathSync(fromFileUrl(url));
    if (Deno.realPathSync(root) !== source) return false;
  } catch {
    return false;
  }
  try {
    Deno.statSync(join(source, ".relay", "config.yaml"));
    return false; // relay set up in its own repository: that is allowed
  } catch {
    return true;
  }
}

/** Prints data as JSON on stdout. */
/**
 * Prints `text` and a newline in one write. For long output (`relay audit` over 10,000
 * commits): console.log scans its first argument for format specifiers first.
 */
export function printText(text: string): void {
  const data = new TextEncoder().encode(`${text}\n`);
  for (let at = 0; at < data.length;) at += Deno.stdout.writeSync(data.subarray(at));
}

export function printJson(value: unknown): void {
  console.log(JSON.stringify(redactor().redactDeep(value), null, 2));
}

/**
 * lib/config/profile_load.ts's ProfileFlags, spelled out here: the idle poll loads
 * nothing from lib/config/, not even for a type.
 */
type Flags = {
  mergePolicy?: "auto" | "human";
  handsfree?: boolean;
  safetyMode?: "efficient" | "strict";
};

/** The options `relay poll` and `relay review` take over the operator profile, for one command. */
export const PROFILE_FLAG_OPTIONS = {
  "merge-policy": { type: "string" },
  handsfree: { type: "boolean" },
  "safety-mode": { type: "string" },
} as const;

/** Reads those flags; a value relay does not know is a usage error (exit 2) naming the flag. */
export function profileFlags(
  command: string,
  values: { "merge-policy"?: string; handsfree?: boolean; "safety-mode"?: string },
): Flags | undefined {
  const flags: Flags = {};
  const pick = <T extends string>(flag: string, what: string, allowed: readonly T[]) => {
    const value = values[flag as "merge-policy" | "safety-mode"];
    if (value === undefined || (allowed as readonly string[]).includes(value)) {
      return value as T | undefined;
    }
    throw new UsageError(
      `--${flag} "${value}" is not ${what}: use ${allowed.join(" or ")}`,
      command,
    );
  };
  const merge = pick("merge-policy", "a merge policy", ["auto", "human"] as const);
  if (merge) flags.mergePolicy = merge;
  const mode = pick("safety-mode", "a safety mode", ["efficient", "strict"] as const);
  if (mode) flags.safetyMode = mode;
  if (values.handsfree) flags.handsfree = true;
  return Object.keys(flags).length ? flags : undefined;
}
