/**
 * The operator profile: which programs play executor and reviewer. It lives
 * outside every repository (agents write files in the repo and must never
 * choose which program runs), at --profile, $RELAY_PROFILE,
 * $XDG_CONFIG_HOME/relay/profile.yaml or ~/.config/relay/profile.yaml.
 *
 * This is the full parser (yaml and zod, with messages naming the line and
 * key); the common profile is read without them by profile_load.ts, which
 * loads this module only when it cannot be sure. The Profile shape, its
 * constants and loadProfile live there, re-exported here.
 */
import { isAbsolute } from "../path.ts";
import { z } from "zod";
import { formatDuration } from "./duration.ts";
import { issuesToInputError } from "./issues.ts";
import { TEST_COMMAND_FIX, testCommandProblem } from "./test_command.ts";
import { parseYamlWithLines } from "./yaml_source.ts";
import { dropNullKeys, DURATION_FIX, durationMs } from "./zod_types.ts";
import {
  DEFAULT_MODELS,
  DEFAULT_ROLE_TIMEOUT_MS,
  ENV_NAME,
  type Profile,
  PROMPT_PLACEHOLDER,
  type RoleName,
  settingsToProfile,
} from "./profile_load.ts";

export {
  type BrowserTools,
  DEFAULT_LIMITS,
  DEFAULT_MODELS,
  DEFAULT_PROFILE_HINT,
  DEFAULT_ROLE_TIMEOUT_MS,
  loadProfile,
  type Profile,
  type ProfileFlags,
  type ProfileLimits,
  profilePath,
  PROMPT_PLACEHOLDER,
  type RoleName,
  type RoleSpec,
  type Vendor,
  withFlags,
} from "./profile_load.ts";

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
  return settingsToProfile(parsed.data, file);
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
