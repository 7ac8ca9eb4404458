/**
 * The exact command line for each agent vendor and role. The runner adds
 * stdin /dev/null, the cwd (the task worktree) and the wall-clock timeout
 * (spec.timeoutMs); this module only decides argv and extra environment.
 *
 * Checked with @anthropic-ai/claude-code 2.1.197 and @openai/codex 0.171.0:
 * every flag against the CLI's own --help; the claude argv also against a
 * local stand-in of the Messages API (which tools are offered, which tool
 * calls run or are denied, as root and not). Re-check when versions move.
 *
 * Claude:
 * - The prompt goes straight after -p: --allowedTools / --disallowedTools /
 *   --tools take several values and would swallow a prompt placed after them.
 * - Executor: --dangerously-skip-permissions; as root that flag exits 1 unless
 *   IS_SANDBOX=1, so as root (without IS_SANDBOX=1 in the profile's env) it is
 *   --permission-mode acceptEdits with Bash/Write/Edit/Read pre-approved.
 * - Reviewer: --tools limits the tools the model is offered to Read, Grep,
 *   Glob and Bash (no Edit/Write at all); --permission-mode dontAsk denies
 *   anything not pre-approved; Bash is pre-approved only for read-only git
 *   verbs (compound commands, `;`, `&&`, `$(…)` and redirections are denied);
 *   `--output` (git's write-to-file option) is denied; --setting-sources user
 *   ignores the repo's .claude/settings*.json, which the executor can write
 *   and which could otherwise pre-approve Bash or add hooks for the reviewer.
 *   plan mode was rejected: it still offers Edit/Write to the model and is
 *   meant to end in a plan for a person to approve.
 * Codex:
 * - `--` before the prompt, or a prompt such as "review" is read as a subcommand.
 * - Executor --sandbox workspace-write (without it every write fails); the
 *   sandbox keeps .git read-only, so relay commits for a codex executor.
 * - Reviewer --sandbox read-only.
 */
import {
  DEFAULT_MODELS,
  PROMPT_PLACEHOLDER,
  type RoleName,
  type RoleSpec,
} from "../config/profile_load.ts";

export type Invocation =
  | { kind: "process"; argv: string[]; env: Record<string, string> }
  | { kind: "demo" };

export interface InvocationContext {
  /** relay runs as uid 0 (containers, root crontabs). */
  isRoot: boolean;
  /**
   * Browser tools a claude reviewer-side turn gets (the operator profile's
   * `browser`): its MCP config only (--strict-mcp-config), and those tools allowed.
   */
  browser?: { mcpConfig: string; tools: readonly string[] };
  /**
   * Directories outside the worktree the executor must write (e.g. where the
   * report goes). Codex's workspace-write sandbox needs them named (--add-dir);
   * claude's pre-approved Write/Bash already reach them.
   */
  writableDirs?: readonly string[];
  /**
   * Exact commands a claude reviewer may run besides read-only git: the brief's
   * verification bar (already checked to hold no shell syntax). A command with
   * a parenthesis cannot be written as a permission rule and is left out; the
   * reviewer still has relay's own evidence for it.
   */
  allowCommands?: readonly string[];
}

/** Tools a root claude executor gets pre-approved (acceptEdits mode). */
export const CLAUDE_ROOT_EXECUTOR_TOOLS = "Bash Write Edit Read";
/** The only tools offered to a claude reviewer. */
export const CLAUDE_REVIEWER_TOOLS = "Read,Grep,Glob,Bash";
/** What a claude reviewer may use without asking (dontAsk denies the rest). */
export const CLAUDE_REVIEWER_ALLOWED =
  "Read Grep Glob Bash(git diff *) Bash(git log *) Bash(git show *) Bash(git status *)";
export const CLAUDE_REVIEWER_DENIED = "Bash(*--output*)";

/** Builds the process invocation for `role` as described by `spec`. */
export function buildInvocation(
  role: RoleName,
  spec: RoleSpec,
  prompt: string,
  ctx: InvocationContext,
): Invocation {
  const env = { ...spec.env };
  switch (spec.vendor) {
    case "demo":
      return { kind: "demo" };
    case "command":
      return { kind: "process", argv: commandArgv(spec, prompt), env };
    case "claude":
      return { kind: "process", argv: claudeArgv(role, spec, checkPrompt(prompt), ctx), env };
    case "codex":
      return { kind: "process", argv: codexArgv(role, spec, checkPrompt(prompt), ctx), env };
  }
}

function claudeArgv(
  role: RoleName,
  spec: RoleSpec,
  prompt: string,
  ctx: InvocationContext,
): string[] {
  const tail = ["--model", spec.model ?? DEFAULT_MODELS.claude, "--output-format", "json"];
  if (role === "reviewer") {
    return [
      "claude",
      "-p",
      prompt,
      "--permission-mode",
      "dontAsk",
      "--tools",
      CLAUDE_REVIEWER_TOOLS,
      "--allowedTools",
      [
        CLAUDE_REVIEWER_ALLOWED,
        ...(ctx.allowCommands ?? []).filter((c) => !/[()]/.test(c)).map((c) => `Bash(${c.trim()})`),
        ...(ctx.browser?.tools ?? []),
      ].join(" "),
      "--disallowedTools",
      CLAUDE_REVIEWER_DENIED,
      ...(ctx.browser ? ["--mcp-config", ctx.browser.mcpConfig, "--strict-mcp-config"] : []),
      "--setting-sources",
      "user",
      ...tail,
    ];
  }
  if (ctx.isRoot && spec.env["IS_SANDBOX"] !== "1") {
    return [
      "claude",
      "-p",
      prompt,
      "--permission-mode",
      "acceptEdits",
      "--allowedTools",
      CLAUDE_ROOT_EXECUTOR_TOOLS,
      ...tail,
    ];
  }
  return ["claude", "-p", prompt, "--dangerously-skip-permissions", ...tail];
}

function codexArgv(
  role: RoleName,
  spec: RoleSpec,
  prompt: string,
  ctx: InvocationContext,
): string[] {
  const sandbox = role === "reviewer" ? "read-only" : "workspace-write";
  const dirs = role === "reviewer" ? [] : (ctx.writableDirs ?? []).flatMap((d) => ["--add-dir", d]);
  return [
    "codex",
    "exec",
    "--sandbox",
    sandbox,
    "-m",
    spec.model ?? DEFAULT_MODELS.codex,
    ...dirs,
    "--",
    prompt,
  ];
}

/** spec.argv with every "{prompt}" (whole element or inside one) replaced, literally. */
function commandArgv(spec: RoleSpec, prompt: string): string[] {
  const argv = spec.argv ?? [];
  const program = argv[0];
  if (program === undefined || program.trim() === "") {
    throw new Error('Cannot build a "command" invocation: argv is empty or its program is ""');
  }
  // split/join rather than replaceAll: a prompt containing "$&" must stay as written.
  return argv.map((a) => a.split(PROMPT_PLACEHOLDER).join(prompt));
}

function checkPrompt(prompt: string): string {
  if (prompt.trim() === "") throw new Error("Cannot start an agent: the prompt is empty");
  if (prompt.startsWith("-")) {
    throw new Error(
      `Cannot start an agent: the prompt starts with "-" and would be read as a flag`,
    );
  }
  return prompt;
}
