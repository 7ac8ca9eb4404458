/**
 * The operator profile: which programs play executor and reviewer. It lives
 * outside every repository (agents write files in the repo and must never
 * choose which program runs), at --profile, $RELAY_PROFILE,
 * $XDG_CONFIG_HOME/relay/profile.yaml or ~/.config/relay/profile.yaml.
 */
import { isAbsolute, join, resolve } from "node:path";
import { z } from "zod";
import { InputError, UsageError } from "../errors.ts";
import { formatDuration } from "./duration.ts";
import { issuesToInputError } from "./issues.ts";
import { TEST_COMMAND_FIX, testCommandProblem } from "./test_command.ts";
import { parseYamlWithLines } from "./yaml_source.ts";
import { dropNullKeys, DURATION_FIX, durationMs } from "./zod_types.ts";

export type RoleName = "executor" | "reviewer";
export type Vendor = "claude" | "codex" | "command" | "demo";

export interface RoleSpec {
  vendor: Vendor;
  /** Always set for claude and codex (defaulted); never for command or demo. */
  model?: string;
  /** Only for vendor "command": the program and its arguments, "{prompt}" replaced. */
  argv?: string[];
  timeoutMs: number;
  /** Extra environment for the agent process. */
  env: Record<string, string>;
}

export interface Profile {
  /** The file this profile was read from. */
  path: string;
  /** `security` is the adversarial reviewer-side role (`gate` in profiles of the paired-session workflow). */
  roles: { executor: RoleSpec; reviewer: RoleSpec; security: RoleSpec };
  /**
   * The security role was not in the profile: it is the executor's vendor and model
   * (the reviewer's program when the executor is a `command`).
   */
  securityDefaulted: boolean;
  /** Where task worktrees go; absent means a sibling folder of the repo. */
  worktreeRoot?: string;
  /** The project's test run, one exact command (lib/config/test_command.ts). */
  testCommand?: string;
  safetyMode: "efficient" | "strict";
  /** Decides over the repo config's `merge` when set. */
  mergePolicy?: "auto" | "human";
  /** Nobody answers: every point that would wait for a person is a HOLD with the question. */
  handsfree: boolean;
  /** Browser tools for reviewer-side claude turns: an MCP config and the tools it may use. */
  browser?: BrowserTools;
  /** Notifiers: argv commands run with each state change as JSON on stdin (lib/loop/notify.ts). */
  notify: string[][];
  /** Keys a command-line flag set for this one command (withFlags): their source is "flag". */
  flagged?: (keyof ProfileFlags)[];
  /** The most the repo config may ask for. */
  limits: ProfileLimits;
}

/** What `relay poll` / `relay review` flags may decide for that one command, over the profile. */
export interface ProfileFlags {
  mergePolicy?: "auto" | "human";
  handsfree?: boolean;
  safetyMode?: "efficient" | "strict";
}

/** The profile with this command's flags over it, each flagged so it says where it came from. */
export function withFlags(profile: Profile, flags: ProfileFlags | undefined): Profile {
  const set = (Object.keys(flags ?? {}) as (keyof ProfileFlags)[])
    .filter((k) => flags![k] !== undefined);
  if (!set.length) return profile;
  return { ...profile, ...flags, flagged: set };
}

/** An MCP server config (a JSON file) for a browser, and the tool names a reviewer may call. */
export interface BrowserTools {
  mcpConfig: string;
  tools: string[];
}

/** Upper bounds on what `.relay/config.yaml` may set. */
export interface ProfileLimits {
  attempts: number;
  fixRounds: number;
  planRounds: number;
}

export const DEFAULT_LIMITS: ProfileLimits = { attempts: 10, fixRounds: 20, planRounds: 5 };

export const DEFAULT_MODELS = { claude: "claude-opus-5-5", codex: "gpt-6.1-sol" } as const;
export const DEFAULT_ROLE_TIMEOUT_MS: Record<RoleName, number> = {
  executor: 60 * 60_000,
  reviewer: 30 * 60_000,
};
/** The placeholder a `command` role's argv must contain, as an element or inside one. */
export const PROMPT_PLACEHOLDER = "{prompt}";
/** Where the profile lives by default, for messages. */
export const DEFAULT_PROFILE_HINT =
  "$XDG_CONFIG_HOME/relay/profile.yaml (default ~/.config/relay/profile.yaml)";

interface EnvLike {
  get(name: string): string | undefined;
}

/** The profile's path: the flag, else $RELAY_PROFILE, else the XDG location, else ~/.config. */
export function profilePath(flag?: string, env: EnvLike = Deno.env): string {
  const set = (name: string) => {
    const v = env.get(name);
    return v === undefined || v === "" ? undefined : v;
  };
  if (flag !== undefined && flag !== "") return resolve(flag);
  const fromEnv = set("RELAY_PROFILE");
  if (fromEnv !== undefined) return resolve(fromEnv);
  const xdg = set("XDG_CONFIG_HOME");
  // The XDG spec says relative values are invalid and must be ignored.
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, "relay", "profile.yaml");
  const home = set("HOME");
  if (home === undefined) {
    throw new UsageError(
      "Cannot locate the operator profile: neither XDG_CONFIG_HOME nor HOME is set; pass --profile <path> or set RELAY_PROFILE",
    );
  }
  return join(home, ".config", "relay", "profile.yaml");
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const roleSchema = z
  .strictObject({
    vendor: z.enum(["claude", "codex", "command", "demo"]),
    model: z.string().trim().min(1).optional(),
    argv: z.array(z.string()).min(1).optional(),
    timeout: durationMs().optional(),
    env: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String))
      .optional(),
  })
  .superRefine((r, ctx) => {
    const vendor = r.vendor;
    if (vendor === "command") {
      if (r.argv === undefined) {
        ctx.addIssue({ code: "custom", path: ["argv"], message: "vendor command needs argv" });
      } else {
        const program = r.argv[0] ?? "";
        if (program.trim() === "") {
          ctx.addIssue({ code: "custom", path: ["argv", 0], message: "the program name is empty" });
        } else if (program.includes("/") && !isAbsolute(program)) {
          ctx.addIssue({
            code: "custom",
            path: ["argv", 0],
            message:
              "a relative path would resolve inside the agent's worktree, which agents can write",
          });
        }
        if (!r.argv.some((a) => a.includes(PROMPT_PLACEHOLDER))) {
          ctx.addIssue({
            code: "custom",
            path: ["argv"],
            message:
              `no element contains ${PROMPT_PLACEHOLDER}, so the prompt would never reach the program`,
          });
        }
      }
      if (r.model !== undefined) {
        ctx.addIssue({ code: "custom", path: ["model"], message: "vendor command takes no model" });
      }
    } else {
      if (r.argv !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["argv"],
          message: `argv is only for vendor command, not ${vendor}`,
        });
      }
      if (vendor === "demo" && r.model !== undefined) {
        ctx.addIssue({ code: "custom", path: ["model"], message: "vendor demo takes no model" });
      }
    }
    for (const name of Object.keys(r.env ?? {})) {
      if (!ENV_NAME.test(name)) {
        ctx.addIssue({ code: "custom", path: ["env", name], message: "not a valid variable name" });
      } else if (name.startsWith("RELAY_")) {
        ctx.addIssue({
          code: "custom",
          path: ["env", name],
          message: "RELAY_* variables are set by relay",
        });
      }
    }
  });

const bound = (max: number) => z.number().int().min(0).max(max).optional();

const profileSchema = z.strictObject({
  roles: z
    .strictObject({
      executor: roleSchema,
      reviewer: roleSchema,
      security: roleSchema.optional(),
      gate: roleSchema.optional(),
    })
    .superRefine((r, ctx) => {
      if (r.security !== undefined && r.gate !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["gate"],
          message: "gate is another name for security: set one of them",
        });
      }
    }),
  worktree_root: z
    .string()
    .refine((p) => isAbsolute(p), { message: "must be an absolute path" })
    .optional(),
  test_command: z
    .string()
    .superRefine((c, ctx) => {
      const problem = testCommandProblem(c);
      if (problem) ctx.addIssue({ code: "custom", message: `not one exact command: ${problem}` });
    })
    .optional(),
  safety_mode: z.enum(["efficient", "strict"]).default("efficient"),
  merge_policy: z.enum(["auto", "human"]).optional(),
  handsfree: z.boolean().default(false),
  notify: z
    .array(
      z.array(z.string().min(1)).min(1).refine((argv) => !/\s/.test(argv[0]!), {
        message: "the first item is the program (a name on PATH or an absolute path), alone",
      }),
    )
    .default(() => []),
  browser: z
    .strictObject({
      mcp_config: z.string().refine((p) => isAbsolute(p), { message: "must be an absolute path" }),
      tools: z
        .array(
          z.string().regex(/^mcp__[A-Za-z0-9_-]+(__[A-Za-z0-9_*-]+)?$/, {
            message: "not an MCP tool name (mcp__<server>__<tool>)",
          }),
        )
        .min(1),
    })
    .optional(),
  limits: z
    .strictObject({
      attempts: z.number().int().min(1).max(10).optional(),
      fix_rounds: bound(20),
      plan_rounds: bound(10),
    })
    .optional(),
});

const ROLE_FIXES: Record<string, string> = {
  vendor: "use one of: claude, codex, command, demo",
  model:
    "write a model name (e.g. claude-opus-5-5, gpt-6.1-sol) for claude or codex only; for command put it in argv",
  argv:
    'for vendor command only: a list whose first item is an absolute path or a program on PATH and where "{prompt}" appears, e.g. ["/usr/local/bin/my-agent", "--prompt", "{prompt}"]',
  timeout: DURATION_FIX,
  env: 'write a mapping of NAME: value, e.g. IS_SANDBOX: "1" (names other than RELAY_*)',
};

const TOP_FIXES: Record<string, string> = {
  notify:
    'write a list of argv lists, one per notifier, e.g. - ["notify-send", "relay"]; no shell: to pipe, put it in a script and name the script',
  worktree_root: "write an absolute path, e.g. /srv/relay-worktrees",
  test_command: TEST_COMMAND_FIX,
  safety_mode: "use efficient or strict",
  merge_policy: "use auto (relay merges through the gate) or human (a person accepts)",
  handsfree: "use true or false",
  limits: "write a mapping with any of: attempts (1-10), fix_rounds (0-20), plan_rounds (0-10)",
};

function fixFor(path: readonly string[]): string | undefined {
  if (path.length === 0) return "write a mapping with roles (and optionally worktree_root)";
  if (path[0] !== "roles") return TOP_FIXES[String(path[0])];
  if (path.length === 1) {
    return "add roles.executor and roles.reviewer, each with at least a vendor";
  }
  if (path.length === 2) {
    return `add roles.${path[1]} with at least "vendor: claude|codex|command|demo"`;
  }
  return ROLE_FIXES[path[2] ?? ""];
}

/** Parses profile YAML text; `file` is used in messages and stored as `path`. */
export function parseProfile(text: string, file: string): Profile {
  const source = parseYamlWithLines(text, file);
  const parsed = profileSchema.safeParse(dropNullKeys(source.value ?? {}));
  if (!parsed.success) {
    throw issuesToInputError(parsed.error, { file, source, schema: profileSchema, fixFor });
  }
  const p = parsed.data;
  const executor = toRoleSpec("executor", p.roles.executor);
  const reviewer = toRoleSpec("reviewer", p.roles.reviewer);
  const security = p.roles.security ?? p.roles.gate;
  const profile: Profile = {
    path: file,
    roles: {
      executor,
      reviewer,
      // Unset, it is the executor's vendor and model, with a reviewer's time limit: run with
      // the reviewer's read-only preset. A `command` has no read-only mode relay can impose
      // (the executor's script would write, and every security turn would be void): there
      // it is the reviewer's program.
      security: security === undefined
        ? executor.vendor === "command"
          ? structuredClone(reviewer)
          : { ...structuredClone(executor), timeoutMs: DEFAULT_ROLE_TIMEOUT_MS.reviewer }
        : toRoleSpec("reviewer", security),
    },
    securityDefaulted: security === undefined,
    safetyMode: p.safety_mode,
    handsfree: p.handsfree,
    notify: p.notify,
    ...(p.browser ? { browser: { mcpConfig: p.browser.mcp_config, tools: p.browser.tools } } : {}),
    limits: {
      attempts: p.limits?.attempts ?? DEFAULT_LIMITS.attempts,
      fixRounds: p.limits?.fix_rounds ?? DEFAULT_LIMITS.fixRounds,
      planRounds: p.limits?.plan_rounds ?? DEFAULT_LIMITS.planRounds,
    },
  };
  if (p.worktree_root !== undefined) profile.worktreeRoot = p.worktree_root;
  if (p.test_command !== undefined) profile.testCommand = p.test_command.trim();
  if (p.merge_policy !== undefined) profile.mergePolicy = p.merge_policy;
  return profile;
}

function toRoleSpec(role: RoleName, r: z.output<typeof roleSchema>): RoleSpec {
  const spec: RoleSpec = {
    vendor: r.vendor,
    timeoutMs: r.timeout ?? DEFAULT_ROLE_TIMEOUT_MS[role],
    env: { ...(r.env ?? {}) },
  };
  if (r.vendor === "claude" || r.vendor === "codex") {
    spec.model = r.model ?? DEFAULT_MODELS[r.vendor];
  }
  if (r.argv !== undefined) spec.argv = [...r.argv];
  return spec;
}

const MINIMAL_EXAMPLE = `roles:
    executor: { vendor: claude }
    reviewer: { vendor: codex }`;

/** Reads and validates the profile at `path`; a missing file says how to create one. */
export async function loadProfile(path: string): Promise<Profile> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      throw new InputError(
        { file: path },
        "Cannot read the operator profile: the file does not exist",
        `run \`relay init\`, or create it (or pass --profile <path>) with at least:\n  ${MINIMAL_EXAMPLE}`,
      );
    }
    throw err;
  }
  return parseProfile(text, path);
}

/** The commented sample profile that `relay init` writes. */
export function renderDefaultProfile(): string {
  const t = (role: RoleName) => formatDuration(DEFAULT_ROLE_TIMEOUT_MS[role]);
  const row = (yaml: string, comment?: string) =>
    comment === undefined ? yaml : `${yaml.padEnd(27)} # ${comment}`;
  return [
    "# relay operator profile: which programs play the two roles.",
    "# It lives outside every repository on purpose: agents write files in the",
    "# repo, so the repo must never choose which program runs.",
    "# Looked up at --profile <path>, $RELAY_PROFILE, $XDG_CONFIG_HOME/relay/profile.yaml,",
    "# ~/.config/relay/profile.yaml (the first that is set wins).",
    "",
    "roles:",
    "  # Writes the code on branch task-<n>, in its own worktree.",
    "  executor:",
    row("    vendor: claude", "claude | codex | command | demo"),
    row(`    model: ${DEFAULT_MODELS.claude}`),
    row(`    timeout: ${t("executor")}`, "wall-clock limit per turn: 90s, 45m, 2h, 1h30m"),
    row("    env: {}", 'extra environment; as root, { IS_SANDBOX: "1" } lets claude'),
    row("", "skip permission checks instead of pre-approving tools"),
    "  # Checks the report and relay's evidence; never edits.",
    "  reviewer:",
    row("    vendor: codex"),
    row(`    model: ${DEFAULT_MODELS.codex}`),
    row(`    timeout: ${t("reviewer")}`),
    "",
    "# Any other program: replace a role with vendor: command and an argv, run",
    '# as is (no shell) with every "{prompt}" replaced by the prompt. The first',
    "# item is an absolute path or a program name on PATH:",
    "#   executor:",
    "#     vendor: command",
    '#     argv: ["/usr/local/bin/my-agent", "--prompt", "{prompt}"]',
    "",
    "# The adversarial security reviewer (also accepted as gate:). Default: the",
    "# executor's vendor and model, run read-only (for a vendor: command executor,",
    "# which relay cannot make read-only, the reviewer's program).",
    "#   security:",
    "#     vendor: claude",
    "",
    "# Notifiers: each an argv (no shell), run with every state change (HOLD,",
    "# BLOCKED, DONE awaiting acceptance, sent back, human path, merge) as JSON on",
    "# stdin, once per change. A failing or slow one is logged, never fatal.",
    "# notify:",
    '#   - ["curl", "-fsS", "-X", "POST", "-H", "Content-Type: application/json", "--data-binary", "@-", "https://hooks.example/relay"]',
    '#   - ["xargs", "-0", "notify-send", "relay"]',
    "",
    "# Browser tools for reviewer-side claude turns (review, polish, docs, security),",
    "# to check the deploy preview .relay/config.yaml names: an MCP server config",
    "# (only its servers are loaded) and the tools they may call.",
    "# browser:",
    "#   mcp_config: /home/me/.config/relay/browser-mcp.json",
    "#   tools: [mcp__playwright__browser_navigate, mcp__playwright__browser_snapshot]",
    "",
    "# Where task worktrees go (absolute path). Default: a folder beside the repo.",
    "# worktree_root: /srv/relay-worktrees",
    "",
    "# The project's tests, run by relay on the head: one exact command (no $(, `, |,",
    "# ;, &&, redirection, loops or VAR=), or /bin/bash /absolute/path/script.sh.",
    "# test_command: npm test",
    "",
    row("# safety_mode: efficient", "efficient | strict"),
    row("# merge_policy: auto", "auto: relay merges through the gate; human: a person accepts"),
    row("# handsfree: false", "true: every question for a person is a HOLD instead"),
    "# The most .relay/config.yaml may ask for:",
    "# limits: { attempts: 10, fix_rounds: 20, plan_rounds: 5 }",
    "",
  ].join("\n");
}
