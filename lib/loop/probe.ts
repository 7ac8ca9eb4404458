/**
 * `relay probe`: does each role's program work the way relay relies on? For
 * each role the program is resolved (absolute path, sha256, `--version` for
 * the agent CLIs), then one disposable turn runs in a scratch repository in a
 * temporary folder (nothing of the user's repository is touched): the author
 * must be able to write a file; a reviewer-side role must not change its
 * checkout. This catches the agent CLI that exits 0 with every write denied
 * before it burns attempts.
 *
 * PASS, PASS_RESIDUAL_RISK (it works, but e.g. runs unsandboxed or as root),
 * or FAIL with the reason; recorded in `.git/relay/probes.json` with the
 * program it saw. Under `safety_mode: strict` the ticks refuse a role whose
 * program has no passing probe or changed since (requireProbe).
 */
import { isAbsolute, join } from "../path.ts";
import { ProbeError } from "../errors.ts";
import type { RoleName, RoleSpec } from "../config/profile_load.ts";
import type { ProgramSeen } from "../config/task_config.ts";
import { Git, NO_SUBMODULE_STATUS } from "../git/git.ts";
import { programFile, programSeen } from "../agents/program_seen.ts";
import { runsAsRoot, startTurn } from "../agents/turn.ts";
import { buildInvocation } from "../agents/presets.ts";
import { fileHash, sha256 } from "../proc/hash.ts";
import { readJson, writeJson } from "../state/json_file.ts";
import type { StatePaths } from "../state/paths.ts";
import type { ProgressStyle } from "../agents/progress.ts";

export type ProbeRole = "executor" | "reviewer" | "security";
export const PROBE_ROLES: readonly ProbeRole[] = ["executor", "reviewer", "security"];

export type ProbeResult = "PASS" | "PASS_RESIDUAL_RISK" | "FAIL";

export interface ProbeRecord {
  role: ProbeRole;
  result: ProbeResult;
  /** Why it failed, or the residual risks; empty on a clean PASS. */
  reasons: string[];
  at: string;
  vendor: string;
  model?: string;
  program: ProgramSeen | null;
  /**
   * sha256 of the whole invocation (vendor, model, preset argv, env) and of every
   * argument that names a file (a script run by an interpreter): strict mode runs
   * the role only while this is unchanged.
   */
  invocation?: string;
  durationMs?: number;
}

/** What strict mode pins besides the program file: the invocation and the files it names. */
export async function invocationDigest(role: ProbeRole, spec: RoleSpec): Promise<string> {
  const inv = buildInvocation(presetOf(role), spec, "{prompt}", { isRoot: runsAsRoot() });
  const parts: unknown[] = [spec.vendor, spec.model ?? null];
  if (inv.kind === "process") {
    parts.push(inv.argv, Object.entries(inv.env).sort());
    for (const arg of inv.argv.slice(1)) {
      if (!isAbsolute(arg)) continue;
      const hash = await fileHash(arg).catch(() => "");
      if (hash) parts.push([arg, hash]);
    }
  }
  return await sha256(JSON.stringify(parts));
}

export interface ProbesFile {
  version: 1;
  roles: Partial<Record<ProbeRole, ProbeRecord>>;
}

export function probesPath(state: StatePaths): string {
  return join(state.dir, "probes.json");
}

export async function readProbes(state: StatePaths): Promise<ProbesFile> {
  const file = await readJson<ProbesFile>(probesPath(state)).catch(() => null);
  return file?.version === 1 && file.roles ? file : { version: 1, roles: {} };
}

/** The preset a role's turn runs with: only the author writes. */
export function presetOf(role: ProbeRole): RoleName {
  return role === "executor" ? "executor" : "reviewer";
}

/** What works but is worth knowing: how the role runs unsandboxed or as root. */
function residualRisks(role: ProbeRole, spec: RoleSpec, root: boolean): string[] {
  const risks: string[] = [];
  if (root) {
    risks.push(
      spec.env.IS_SANDBOX === "1"
        ? "runs as root with IS_SANDBOX=1 (claude's own permission checks are off)"
        : "runs as root",
    );
  }
  if (spec.vendor === "command") {
    risks.push("a command agent: relay cannot tell how it is sandboxed");
  } else if (spec.vendor === "claude" && role === "executor" && !root) {
    risks.push(
      "--dangerously-skip-permissions: the executor runs unsandboxed, with every permission",
    );
  }
  return risks;
}

async function scratchRepo(dir: string): Promise<Git> {
  const git = new Git(dir);
  await Deno.mkdir(dir, { recursive: true });
  await git.run(["init", "--quiet", "--initial-branch=relay-probe"]);
  await Deno.writeTextFile(join(dir, "README.md"), "relay probe: a scratch repository.\n");
  await git.run(["add", "README.md"]);
  await git.run([
    "-c",
    "user.name=relay probe",
    "-c",
    "user.email=relay-probe@localhost.invalid",
    "-c",
    "commit.gpgsign=false",
    "commit",
    "--quiet",
    "--no-verify",
    "-m",
    "relay probe",
  ]);
  return git;
}

async function checkout(git: Git): Promise<string> {
  return [
    await git.out(["rev-parse", "HEAD"]),
    await git.out(["status", "--porcelain=v1", "--untracked-files=all", NO_SUBMODULE_STATUS]),
  ].join("\n");
}

const AUTHOR_PROMPT = (token: string) =>
  `This is relay's probe: a check that you can work in this checkout. Create the file relay-probe.txt in the current directory containing exactly the line ${token}, then stop. Change nothing else.`;
const REVIEWER_PROMPT =
  `This is relay's probe: a check that you can read this checkout without changing it. Read README.md, then reply with the line "Verdict: PASS". Do not create, change or delete any file.`;

/** Probes one role with the spec given (the operator profile's). */
export async function probeRole(
  role: ProbeRole,
  spec: RoleSpec,
  opts: { progress: ProgressStyle; cwd: string },
): Promise<ProbeRecord> {
  const at = new Date().toISOString();
  const base = {
    role,
    at,
    vendor: spec.vendor,
    ...(spec.model ? { model: spec.model } : {}),
  };
  const program = await programSeen(presetOf(role), spec, opts.cwd);
  if (!program) {
    return {
      ...base,
      result: "FAIL",
      reasons: [`"${spec.argv?.[0] ?? spec.vendor}" is not found: it is not on PATH`],
      program: null,
    };
  }
  if ((spec.vendor === "claude" || spec.vendor === "codex") && !program.version) {
    return {
      ...base,
      result: "FAIL",
      reasons: [`${program.path} does not answer --version`],
      program,
    };
  }
  const scratch = await Deno.makeTempDir({ prefix: "relay-probe-" });
  try {
    const dir = join(scratch, "checkout");
    const runDir = join(scratch, "run");
    await Deno.mkdir(runDir, { recursive: true });
    const git = await scratchRepo(dir);
    const token = `relay-probe-${crypto.randomUUID()}`;
    const author = role === "executor";
    const briefPath = join(runDir, "brief.md");
    await Deno.writeTextFile(
      briefPath,
      `Status: OPEN\nTask: 0\nTitle: relay probe\n\n## Goal\n${
        author ? AUTHOR_PROMPT(token) : REVIEWER_PROMPT
      }\n`,
    );
    const before = await checkout(git);
    const out = await startTurn({
      role,
      preset: presetOf(role),
      spec,
      prompt: author ? AUTHOR_PROMPT(token) : REVIEWER_PROMPT,
      env: {
        RELAY_ROLE: role,
        RELAY_TASK: "0",
        RELAY_BRANCH: "relay-probe",
        RELAY_BRIEF: briefPath,
        RELAY_REPORT: join(runDir, "report.md"),
        RELAY_VERDICT: join(runDir, "verdict.md"),
        RELAY_PROBE_TOKEN: token,
      },
      cwd: dir,
      logPath: join(runDir, "probe.log"),
      stdoutPath: join(runDir, "probe.stdout"),
      timeoutMs: Math.min(spec.timeoutMs, 10 * 60_000),
      progress: opts.progress,
      label: `probe ${role}`,
      journal: { onStart: () => {} },
      demo: async () => {
        if (author) await Deno.writeTextFile(join(dir, "relay-probe.txt"), `${token}\n`);
        return 0;
      },
    });
    const changed = (await checkout(git)) !== before;
    const reasons: string[] = [];
    if (out.startError) reasons.push(`it could not start: ${out.startError}`);
    else if (out.timedOut) reasons.push("it did not finish within its turn limit");
    else if (out.exitCode !== 0) reasons.push(`it exited ${out.exitCode ?? `by ${out.signal}`}`);
    if (author && !changed && !reasons.length) {
      reasons.push(
        "it exited 0 but wrote nothing: its writes are denied, so every attempt would fail",
      );
    }
    if (!author && changed) {
      reasons.push(
        `it changed its checkout (${
          (await git.out([
            "status",
            "--porcelain=v1",
            "--untracked-files=all",
            NO_SUBMODULE_STATUS,
          ])).split("\n")
            .join("; ") || "moved HEAD"
        }): a ${role} role must not write`,
      );
    }
    if (reasons.length) {
      return { ...base, result: "FAIL", reasons, program, durationMs: out.durationMs };
    }
    const risks = spec.vendor === "demo" ? [] : residualRisks(role, spec, runsAsRoot());
    return {
      ...base,
      result: risks.length ? "PASS_RESIDUAL_RISK" : "PASS",
      reasons: risks,
      program,
      invocation: await invocationDigest(role, spec),
      durationMs: out.durationMs,
    };
  } finally {
    await Deno.remove(scratch, { recursive: true }).catch(() => {});
  }
}

/** Records the probes run now over the ones on record for the other roles. */
export async function saveProbes(state: StatePaths, records: ProbeRecord[]): Promise<void> {
  const file = await readProbes(state);
  for (const r of records) file.roles[r.role] = r;
  await writeJson(probesPath(state), file);
}

/**
 * Strict mode: the role may run only with a PASS or PASS_RESIDUAL_RISK probe
 * of the program as it is now (same path, same file hash).
 */
export async function requireProbe(
  state: StatePaths,
  role: ProbeRole,
  spec: RoleSpec,
): Promise<void> {
  const probe = (await readProbes(state)).roles[role];
  const again = `relay probe --role ${role}`;
  if (!probe) {
    throw new ProbeError(
      `safety_mode is strict and the ${role} has not been probed`,
      `Run "${again}"; the next tick runs it once the probe passes.`,
    );
  }
  if (probe.result === "FAIL") {
    throw new ProbeError(
      `safety_mode is strict and the ${role}'s probe failed (${probe.at}): ${
        probe.reasons.join("; ")
      }`,
      `Fix the ${role}'s program or roles.${role} in the operator profile, then run "${again}".`,
    );
  }
  const now = await programFile(presetOf(role), spec);
  const was = probe.program;
  if (!now || !was || now.path !== was.path || now.sha256 !== was.sha256) {
    throw new ProbeError(
      `the ${role} program changed since it was probed: ${describe(was)} then, ${
        describe(now)
      } now`,
      `Re-probe it: "${again}". Strict mode runs only a program whose probe passed.`,
    );
  }
  if (probe.invocation !== await invocationDigest(role, spec)) {
    throw new ProbeError(
      `the ${role}'s invocation changed since it was probed (its arguments, environment, model, or a file it runs)`,
      `Re-probe it: "${again}". Strict mode runs only an invocation whose probe passed.`,
    );
  }
}

function describe(p: ProgramSeen | null): string {
  if (!p) return "not found";
  return p.sha256 ? `${p.path} (sha256 ${p.sha256.slice(0, 12)})` : p.path;
}
