/**
 * Loading `.relay/config.yaml`, light: the RepoConfig shape, its defaults, and
 * a reader for the common file (`version: 1`, the sample `relay init` writes,
 * a few plain settings) that needs neither yaml nor zod — loading those two
 * costs more than a `relay gate` or `relay audit` does with git. Anything the
 * reader is not sure of (a key it does not know, a value outside its small
 * grammar, one the schema would refuse) goes to the full parser in repo.ts,
 * which alone explains a bad config (exit 2, naming the key); so the quick
 * reader only ever answers what the full one would answer.
 */
import { join } from "../path.ts";
import { parseDuration } from "./duration.ts";

export interface RepoConfig {
  version: 1;
  /** The base branch. */
  main: string;
  remote: string;
  /** Executor attempts per brief. */
  attempts: number;
  /** Fix briefs the reviewer may write per task. */
  fixRounds: number;
  merge: "auto" | "human";
  forge: "plain" | "github";
  /**
   * Where the two ticks run: `one` clone shares both (relay's records are local files), or
   * `split` across machines that share only the remote (records and leases live on it).
   */
  machines: "one" | "split";
  timeouts: {
    /** Agent turn limit; only ever lowers the profile's (see effectiveAgentTimeoutMs). */
    agentMs?: number;
    /** Per verification command. */
    barMs: number;
    /** Per fetch / push. */
    networkMs: number;
    /**
     * How long a role's lease (machines: split) lasts without renewal; a tick renews it every
     * fifth of that (lib/loop/split.ts leaseTimes).
     */
    leaseMs: number;
  };
  evidenceMaxBytes: number;
  gate: {
    /** Globs that are product code. */
    product: string[];
    /** Extra refusal globs, added to the built-in ones. */
    refuse: string[];
  };
  /** Globs a human accepted: they route to the human path, never auto-merged. */
  acceptedInfra: string[];
  /** Globs relay never commits on the agent's behalf, added to the built-in build output list. */
  neverCommit: string[];
  /** Names of relay's environment that bar commands also get (beyond the minimal set). */
  barEnv: string[];
  /** A document the docs stage keeps current with the change (repo-relative). */
  docsFile?: string;
  /** The polish stage is skipped. */
  skipQualityPolish: boolean;
  /** The plan stage runs before a brief is promoted. */
  planReview: boolean;
  /** Plan review FAILs a task may have. */
  planRounds: number;
  /** The deploy preview reviewer-side turns look at (lib/loop/preview.ts). */
  preview?: PreviewConfig;
  /** Appended to relay's paperwork commit subjects, e.g. "[skip ci]" (host build triggers). */
  paperwork: { commitSuffix?: string };
}

export interface PreviewConfig {
  /** A URL template with {pr}, {branch}, {head}; or GitHub's deployment for the head. */
  source: { template: string } | { githubDeployments: true };
  /** Appended to the preview's URL: it must answer 200 before a reviewer-side turn starts. */
  path: string;
  /** How long relay waits for it, from the first tick that looked, before a HOLD. */
  timeoutMs: number;
}

export const CONFIG_PATH = join(".relay", "config.yaml");

export const DEFAULT_REPO_CONFIG: RepoConfig = deepFreeze({
  version: 1,
  main: "main",
  remote: "origin",
  attempts: 2,
  fixRounds: 3,
  merge: "auto",
  forge: "plain",
  machines: "one",
  timeouts: { barMs: 10 * 60_000, networkMs: 2 * 60_000, leaseMs: 10 * 60_000 },
  evidenceMaxBytes: 65_536,
  gate: { product: [], refuse: [] },
  acceptedInfra: [],
  neverCommit: [],
  barEnv: [],
  skipQualityPolish: false,
  planReview: false,
  planRounds: 2,
  paperwork: {},
});

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** A branch name relay can pass to git safely (a conservative subset of git's rules). */
export function isSafeBranchName(name: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(name) &&
    !name.includes("..") && !name.includes("//") && !name.includes("/.") &&
    !name.endsWith("/") && !name.endsWith(".") && !name.endsWith(".lock");
}

/** The agent timeout actually used: the repo can only lower the operator's. */
export function effectiveAgentTimeoutMs(profileMs: number, repo: RepoConfig): number {
  return repo.timeouts.agentMs === undefined
    ? profileMs
    : Math.min(profileMs, repo.timeouts.agentMs);
}

/** The shortest lease (`timeouts.lease`): its renewal every 12 s, clocks 24 s apart at most. */
export const MIN_LEASE_MS = 60_000;

/** A usable remote name (the schema's rule for `remote`). */
export const REMOTE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** The file as the schema reads it: its own (snake_case) keys, every default filled in. */
export interface RepoSettings {
  version: 1;
  main: string;
  remote: string;
  attempts: number;
  fix_rounds: number;
  merge: "auto" | "human";
  forge: "plain" | "github";
  machines: "one" | "split";
  timeouts: { agent?: number | undefined; bar: number; network: number; lease: number };
  evidence_max_bytes: number;
  gate: { product: string[]; refuse: string[] };
  accepted_infra: string[];
  never_commit: string[];
  bar_env: string[];
  docs_file?: string | undefined;
  skip_quality_polish: boolean;
  plan_review: boolean;
  plan_rounds: number;
  preview_url?: string | undefined;
  preview?: "github-deployments" | undefined;
  preview_path: string;
  preview_timeout: number;
  paperwork: { commit_suffix?: string | undefined };
}

/** The settings as relay uses them. */
export function settingsToConfig(c: RepoSettings): RepoConfig {
  const timeouts: RepoConfig["timeouts"] = {
    barMs: c.timeouts.bar,
    networkMs: c.timeouts.network,
    leaseMs: c.timeouts.lease,
  };
  if (c.timeouts.agent !== undefined) timeouts.agentMs = c.timeouts.agent;
  return {
    version: c.version,
    main: c.main,
    remote: c.remote,
    attempts: c.attempts,
    fixRounds: c.fix_rounds,
    merge: c.merge,
    forge: c.forge,
    machines: c.machines,
    timeouts,
    evidenceMaxBytes: c.evidence_max_bytes,
    gate: { product: c.gate.product, refuse: c.gate.refuse },
    acceptedInfra: c.accepted_infra,
    neverCommit: c.never_commit,
    barEnv: c.bar_env,
    skipQualityPolish: c.skip_quality_polish,
    planReview: c.plan_review,
    planRounds: c.plan_rounds,
    paperwork: c.paperwork.commit_suffix === undefined
      ? {}
      : { commitSuffix: c.paperwork.commit_suffix },
    ...(c.docs_file === undefined ? {} : { docsFile: c.docs_file }),
    ...(c.preview_url !== undefined || c.preview !== undefined
      ? {
        preview: {
          source: c.preview_url !== undefined
            ? { template: c.preview_url }
            : { githubDeployments: true as const },
          path: c.preview_path,
          timeoutMs: c.preview_timeout,
        },
      }
      : {}),
  };
}

/** Reads `<root>/.relay/config.yaml`; a missing file gives the defaults. */
export async function loadRepoConfig(root: string): Promise<RepoConfig> {
  const file = join(root, CONFIG_PATH);
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return structuredClone(DEFAULT_REPO_CONFIG);
    throw err;
  }
  const common = parseCommonRepoConfig(text);
  if (common !== undefined) return common;
  const { parseRepoConfig } = await import("./repo.ts");
  return parseRepoConfig(text, file);
}

// ------------------------------------------------------- the common file

type Value = string | number | boolean | never[] | null;

/** `key: value  # comment`, `key:` (a mapping follows, or null), indented by spaces only. */
const LINE = /^( *)([a-z_]+):(?: +([^ #][^ ]*))?(?: +#.*)? *$/;
const BLANK = /^ *(?:#.*)?$/;
/** Words YAML 1.2 reads as null or a boolean (true and false themselves are read above). */
const RESERVED = /^(?:[Nn]ull|NULL|[Tt]rue|TRUE|[Ff]alse|FALSE)$/;

/**
 * A value of the small grammar, as YAML 1.2 reads it; undefined when outside it (a quoted
 * string, a float, a flow mapping, a non-empty list, an alias, a tag …).
 */
function scalar(token: string | undefined): Value | undefined {
  if (token === undefined) return null;
  if (token === "[]") return [];
  if (token === "true" || token === "false") return token === "true";
  if (/^(?:0|[1-9][0-9]{0,8})$/.test(token)) return Number(token);
  // A duration such as 10m or 1h30m: a string to YAML (no number reads like it).
  if (/^[0-9]+[hms](?:[0-9]+[hms])*$/.test(token)) return token;
  if (/^[A-Za-z][A-Za-z0-9._/-]*$/.test(token) && !RESERVED.test(token)) return token;
  return undefined;
}

/** The file as a two-level mapping of the small grammar; undefined when it is anything else. */
function readSimpleYaml(text: string): Map<string, Value | Map<string, Value>> | undefined {
  if (/[^\n\x20-\x7e]/.test(text)) return undefined; // tabs, CR, BOM, beyond ASCII: the full path
  const top = new Map<string, Value | Map<string, Value>>();
  let open: { map: Map<string, Value>; indent: number | null } | null = null;
  for (const line of text.split("\n")) {
    if (BLANK.test(line)) continue;
    const m = LINE.exec(line);
    if (!m) return undefined;
    const [, spaces, key, token] = m as unknown as [string, string, string, string | undefined];
    const value = scalar(token);
    if (value === undefined) return undefined;
    if (spaces === "") {
      if (top.has(key)) return undefined;
      if (value === null) {
        // A mapping may follow; with nothing under it, the key is null.
        open = { map: new Map(), indent: null };
        top.set(key, open.map);
      } else {
        open = null;
        top.set(key, value);
      }
      continue;
    }
    if (open === null || (open.indent !== null && open.indent !== spaces.length)) return undefined;
    open.indent = spaces.length;
    if (open.map.has(key)) return undefined;
    open.map.set(key, value);
  }
  return top;
}

/** Fills `into[key]` from a duration value; false when the schema would refuse it. */
function duration(value: Value, set: (ms: number) => void): boolean {
  if (typeof value !== "number" && typeof value !== "string") return false;
  try {
    set(parseDuration(value));
    return true;
  } catch {
    return false;
  }
}

function wholeIn(value: Value, min: number, max: number): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= min && value <= max;
}

/**
 * The common config file read without yaml or zod: the same RepoConfig the full parser
 * gives, or undefined whenever the text is outside the small grammar or a value is one the
 * full parser would refuse or that this reader does not handle (then the full parser
 * answers, and explains).
 */
export function parseCommonRepoConfig(text: string): RepoConfig | undefined {
  const doc = readSimpleYaml(text);
  if (doc === undefined) return undefined;
  const d = DEFAULT_REPO_CONFIG;
  const s: RepoSettings = {
    version: 1,
    main: d.main,
    remote: d.remote,
    attempts: d.attempts,
    fix_rounds: d.fixRounds,
    merge: d.merge,
    forge: d.forge,
    machines: d.machines,
    timeouts: { bar: d.timeouts.barMs, network: d.timeouts.networkMs, lease: d.timeouts.leaseMs },
    evidence_max_bytes: d.evidenceMaxBytes,
    gate: { product: [], refuse: [] },
    accepted_infra: [],
    never_commit: [],
    bar_env: [],
    skip_quality_polish: d.skipQualityPolish,
    plan_review: d.planReview,
    plan_rounds: d.planRounds,
    preview_path: "/",
    preview_timeout: 15 * 60_000,
    paperwork: {},
  };
  for (const [key, value] of doc) {
    // A key with nothing after it is null, which means "the default" (dropNullKeys).
    if (value === null) continue;
    if (value instanceof Map) {
      if (value.size === 0) continue;
      if (key === "timeouts") {
        for (const [sub, v] of value) {
          if (v === null) continue;
          const ok = (sub === "agent" || sub === "bar" || sub === "network" || sub === "lease") &&
            duration(v, (ms) => s.timeouts[sub] = ms) &&
            (sub !== "lease" || s.timeouts.lease >= MIN_LEASE_MS);
          if (!ok) return undefined;
        }
      } else if (key === "gate") {
        for (const [sub, v] of value) {
          if (v === null) continue;
          if ((sub !== "product" && sub !== "refuse") || !Array.isArray(v)) return undefined;
        }
      } else return undefined;
      continue;
    }
    if (!settle(s, key, value)) return undefined;
  }
  return settingsToConfig(s);
}

/** Sets one plain top-level key; false when it is not one this reader takes as given. */
function settle(s: RepoSettings, key: string, v: Exclude<Value, null>): boolean {
  switch (key) {
    case "version":
      return v === 1;
    case "main":
      if (typeof v !== "string" || !isSafeBranchName(v)) return false;
      s.main = v;
      return true;
    case "remote":
      if (typeof v !== "string" || !REMOTE_NAME.test(v)) return false;
      s.remote = v;
      return true;
    case "attempts":
      if (!wholeIn(v, 1, 10)) return false;
      s.attempts = v;
      return true;
    case "fix_rounds":
      if (!wholeIn(v, 0, 20)) return false;
      s.fix_rounds = v;
      return true;
    case "plan_rounds":
      if (!wholeIn(v, 1, 10)) return false;
      s.plan_rounds = v;
      return true;
    case "evidence_max_bytes":
      if (!wholeIn(v, 1024, 16 * 1024 * 1024)) return false;
      s.evidence_max_bytes = v;
      return true;
    case "merge":
      if (v !== "auto" && v !== "human") return false;
      s.merge = v;
      return true;
    case "forge":
      if (v !== "plain" && v !== "github") return false;
      s.forge = v;
      return true;
    case "machines":
      if (v !== "one" && v !== "split") return false;
      s.machines = v;
      return true;
    case "skip_quality_polish":
      if (typeof v !== "boolean") return false;
      s.skip_quality_polish = v;
      return true;
    case "plan_review":
      if (typeof v === "boolean") s.plan_review = v;
      else if (v === "on" || v === "off") s.plan_review = v === "on";
      else return false;
      return true;
    case "timeouts":
    case "gate":
      return false; // a scalar where a mapping belongs: the full parser explains
    case "accepted_infra":
    case "never_commit":
    case "bar_env":
      return Array.isArray(v); // only `[]` reads as a list here
    default:
      return false;
  }
}
