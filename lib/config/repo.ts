/**
 * The repo's own settings, `.relay/config.yaml`. Agents can write this file,
 * so it may tune limits and lists but never name a program: programs live
 * only in the operator profile. This is the full parser (yaml and zod, with
 * messages naming the line and key); the common file is read without them by
 * repo_load.ts, which loads this module only when it cannot be sure.
 */
import { isAbsolute } from "../path.ts";
import { z } from "zod";
import { InputError } from "../errors.ts";
import { formatDuration } from "./duration.ts";
import { dottedKey, issuesToInputError } from "./issues.ts";
import { DEFAULT_PROFILE_HINT } from "./profile_load.ts";
import { type KeyPath, parseYamlWithLines, type YamlSource } from "./yaml_source.ts";
import { dropNullKeys, DURATION_FIX, durationMs } from "./zod_types.ts";
import {
  DEFAULT_REPO_CONFIG,
  isSafeBranchName,
  MIN_LEASE_MS,
  REMOTE_NAME,
  type RepoConfig,
  settingsToConfig,
} from "./repo_load.ts";

export {
  CONFIG_PATH,
  DEFAULT_REPO_CONFIG,
  effectiveAgentTimeoutMs,
  isSafeBranchName,
  loadRepoConfig,
  type PreviewConfig,
  type RepoConfig,
} from "./repo_load.ts";

/** The placeholders a preview_url template may use. */
export const PREVIEW_PLACEHOLDERS = ["pr", "branch", "head"] as const;

/** Keys that would let the repo (and so an agent) pick a program. Refused anywhere in the file. */
export const PROGRAM_KEYS: readonly string[] = [
  "vendor",
  "argv",
  "command",
  "program",
  "model",
  "roles",
  "executor",
  "reviewer",
  "agent",
];

/** Where a program key's name is a legitimate setting (a duration, not a program). */
const NOT_A_PROGRAM = new Set(["timeouts.agent"]);

const glob = z
  .string()
  .trim()
  .min(1, { message: "empty glob" })
  .refine((g) => !g.startsWith("!"), { message: "negated globs are not supported" });
const globList = () => z.array(glob).default(() => []);
const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: "not an environment variable name" });

const repoSchema = z.strictObject({
  version: z.literal(1).default(1),
  main: z.string().refine(isSafeBranchName, { message: "not a usable branch name" }).default(
    "main",
  ),
  remote: z
    .string()
    .regex(REMOTE_NAME, { message: "not a usable remote name" })
    .default("origin"),
  attempts: z.number().int().min(1).max(10).default(2),
  fix_rounds: z.number().int().min(0).max(20).default(3),
  merge: z.enum(["auto", "human"]).default("auto"),
  forge: z.enum(["plain", "github"]).default("plain"),
  machines: z.enum(["one", "split"]).default("one"),
  timeouts: z
    .strictObject({
      agent: durationMs().optional(),
      bar: durationMs().default(DEFAULT_REPO_CONFIG.timeouts.barMs),
      network: durationMs().default(DEFAULT_REPO_CONFIG.timeouts.networkMs),
      lease: durationMs()
        .refine((ms) => ms >= MIN_LEASE_MS, { message: "shorter than 1m" })
        .default(DEFAULT_REPO_CONFIG.timeouts.leaseMs),
    })
    .prefault({}),
  evidence_max_bytes: z.number().int().min(1024).max(16 * 1024 * 1024).default(65_536),
  gate: z.strictObject({ product: globList(), refuse: globList() }).prefault({}),
  accepted_infra: globList(),
  never_commit: globList(),
  bar_env: z.array(envName).default(() => []),
  docs_file: z
    .string()
    .trim()
    .min(1)
    .refine((p) => !isAbsolute(p) && !p.split(/[\\/]/).includes(".."), {
      message: "must be a path inside the repository",
    })
    .optional(),
  skip_quality_polish: z.boolean().default(false),
  // YAML 1.2 reads on/off as words: both they and true/false are accepted.
  plan_review: z
    .union([z.boolean(), z.enum(["on", "off"]).transform((v) => v === "on")])
    .default(false),
  plan_rounds: z.number().int().min(1).max(10).default(2),
  preview_url: z
    .string()
    .trim()
    .regex(/^https?:\/\/[^\s]+$/, { message: "not an http(s) URL" })
    .refine(
      (u) =>
        [...u.matchAll(/\{([^}]*)\}/g)].every((m) =>
          (PREVIEW_PLACEHOLDERS as readonly string[]).includes(m[1]!)
        ),
      { message: "uses a placeholder other than {pr}, {branch}, {head}" },
    )
    .optional(),
  preview: z.literal("github-deployments").optional(),
  preview_path: z
    .string()
    .regex(/^\/[^\s]*$/, { message: "not a path starting with /" })
    .default("/"),
  preview_timeout: durationMs().default(15 * 60_000),
  paperwork: z
    .strictObject({
      commit_suffix: z
        .string()
        .trim()
        .min(1)
        .max(60)
        // deno-lint-ignore no-control-regex
        .regex(/^[^\x00-\x1f\x7f]*$/, { message: "must be one line of text" })
        .optional(),
    })
    .prefault({}),
}).refine((c) => !(c.preview_url !== undefined && c.preview !== undefined), {
  message: "preview_url and preview are two ways to say where the preview is: set one",
  path: ["preview"],
});

const FIXES: Record<string, string> = {
  "": "write a mapping of settings (see the sample `relay init` writes), or leave the file empty",
  version: "set version: 1 (the only version this relay reads)",
  main: "set main to the base branch, e.g. main",
  remote: "set remote to a git remote name, e.g. origin",
  attempts: "use a whole number from 1 to 10",
  fix_rounds: "use a whole number from 0 to 20",
  merge: "use auto or human",
  forge: "use plain or github",
  machines:
    "use one (both ticks in this clone) or split (executor and reviewer on different machines, forge: plain)",
  timeouts: "write a mapping with any of: agent, bar, network, lease",
  "timeouts.agent": DURATION_FIX,
  "timeouts.bar": DURATION_FIX,
  "timeouts.network": DURATION_FIX,
  "timeouts.lease":
    'write a duration from 1m to 24h, e.g. "10m": how long a role\'s lease (machines: split) lasts without renewal',
  evidence_max_bytes: "use a whole number of bytes from 1024 to 16777216",
  gate: "write a mapping with any of: product, refuse",
  "gate.product": 'write a list of repo-relative globs, e.g. ["src/**", "lib/**"]',
  "gate.refuse": 'write a list of repo-relative globs to refuse, e.g. ["deploy/**"]',
  accepted_infra: 'write a list of repo-relative globs, e.g. [".github/workflows/**"]',
  never_commit: 'write a list of repo-relative globs, e.g. ["*.log", "tmp/**"]',
  docs_file: "write a path inside the repository, e.g. docs/CHANGES.md",
  skip_quality_polish: "use true or false",
  plan_review: "use on or off",
  plan_rounds: "use a whole number from 1 to 10",
  preview_url:
    'write an http(s) URL; {pr}, {branch} and {head} are filled in, e.g. "https://deploy-preview-{pr}--mysite.netlify.app"',
  preview: "write github-deployments (the URL GitHub records for the head), or use preview_url",
  preview_path: 'write the path that must answer 200, starting with /, e.g. "/healthz"',
  preview_timeout: DURATION_FIX,
  paperwork: 'write a mapping with commit_suffix, e.g. paperwork: { commit_suffix: "[skip ci]" }',
  "paperwork.commit_suffix":
    'write one short line relay appends to its paperwork commit subjects, e.g. "[skip ci]" or "[skip netlify]"',
  bar_env: "write a list of environment variable names (letters, digits, _), e.g. [JAVA_HOME]",
};

/** Parses `.relay/config.yaml` text; `file` is used in messages. Empty text gives the defaults. */
export function parseRepoConfig(text: string, file: string): RepoConfig {
  const source = parseYamlWithLines(text, file);
  refuseProgramKeys(source, file);
  const parsed = repoSchema.safeParse(dropNullKeys(source.value ?? {}));
  if (!parsed.success) {
    throw issuesToInputError(parsed.error, {
      file,
      source,
      schema: repoSchema,
      fixFor: (path) => FIXES[path.join(".")],
    });
  }
  return settingsToConfig(parsed.data);
}

function refuseProgramKeys(source: YamlSource, file: string): void {
  const found = findProgramKey(source.value, []);
  if (found === undefined) return;
  const key = dottedKey(found);
  const name = String(found[found.length - 1]);
  const line = source.lineOf(found);
  throw new InputError(
    line === undefined ? { file, key } : { file, line, key },
    `Cannot name a program in the repo config: "${name}" is not allowed in ${file}`,
    `remove it; agents can write this file, so programs, models and roles live only in the operator profile, ${DEFAULT_PROFILE_HINT}`,
  );
}

function findProgramKey(value: unknown, path: KeyPath): KeyPath | undefined {
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const hit = findProgramKey(item, [...path, i]);
      if (hit !== undefined) return hit;
    }
  } else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      const here = [...path, k];
      if (PROGRAM_KEYS.includes(k.toLowerCase()) && !NOT_A_PROGRAM.has(dottedKey(here))) {
        return here;
      }
      const hit = findProgramKey(v, here);
      if (hit !== undefined) return hit;
    }
  }
  return undefined;
}

/** The commented config that `relay init` writes; it parses back to DEFAULT_REPO_CONFIG. */
export function renderDefaultRepoConfig(): string {
  const d = DEFAULT_REPO_CONFIG;
  const row = (yaml: string, comment?: string) =>
    comment === undefined ? yaml : `${yaml.padEnd(27)} # ${comment}`;
  return [
    "# relay settings for this repository. Every key is optional; the values",
    "# below are the defaults. Programs and models are NOT set here (agents can",
    "# write this file): they live in the operator profile,",
    `# ${DEFAULT_PROFILE_HINT}.`,
    row(`version: ${d.version}`),
    row(`main: ${d.main}`, "base branch tasks start from and merge into"),
    row(`remote: ${d.remote}`),
    row(`attempts: ${d.attempts}`, "executor attempts per brief (1..10)"),
    row(`fix_rounds: ${d.fixRounds}`, "fix briefs the reviewer may write per task (0..20)"),
    row(`merge: ${d.merge}`, "auto | human"),
    row(`forge: ${d.forge}`, "plain | github"),
    row(`machines: ${d.machines}`, "one clone runs both ticks | split: two machines"),
    "",
    row("timeouts:", "90s, 45m, 2h, 1h30m; a bare number is seconds"),
    row("  # agent: 30m", "can only LOWER the operator profile's per-role timeout"),
    row(`  bar: ${formatDuration(d.timeouts.barMs)}`, "each verification command"),
    row(`  network: ${formatDuration(d.timeouts.networkMs)}`, "each fetch / push"),
    row(
      `  lease: ${formatDuration(d.timeouts.leaseMs)}`,
      "machines: split: a role's lease without renewal (1m..24h)",
    ),
    "",
    row(`evidence_max_bytes: ${d.evidenceMaxBytes}`, "output kept per command in the report"),
    "",
    "gate:",
    row("  product: []", 'globs that are product code, e.g. ["src/**"]'),
    row("  refuse: []", "extra globs a branch may never touch (built-ins always apply)"),
    "",
    row("accepted_infra: []", "globs a human accepted: routed to a human, never auto-merged"),
    row("never_commit: []", "globs relay never commits for the agent (build output is built in)"),
    row("bar_env: []", "variables bar commands get beyond PATH, HOME, locale, TMPDIR, USER"),
    "",
    "# The staged lifecycle (each bounded by the operator profile's limits):",
    row("# docs_file: docs/CHANGES.md", "kept current with each change by the docs stage"),
    row(`skip_quality_polish: ${d.skipQualityPolish}`),
    row(`plan_review: ${d.planReview ? "on" : "off"}`, "on: the reviewer checks a brief first"),
    row(`plan_rounds: ${d.planRounds}`, "plan review FAILs a task may have (1..10)"),
    "",
    "# The deploy preview reviewer-side turns check (RELAY_PREVIEW_URL); off by default:",
    row("# preview_url: https://deploy-preview-{pr}--mysite.netlify.app", "{pr} {branch} {head}"),
    row("# preview: github-deployments", "or the URL GitHub records for the head"),
    row("# preview_path: /", "must answer 200 before a reviewer-side turn"),
    row("# preview_timeout: 15m", "then a HOLD"),
    "",
    "# Appended to relay's paperwork commit subjects, for hosts that build on every",
    "# push to main (see README: which hosts honour which marker):",
    "# paperwork:",
    '#   commit_suffix: "[skip ci]"',
    "",
  ].join("\n");
}
