/**
 * The program a role would start, as found now: its absolute path, the
 * sha256 of the file, and (for the agent CLIs, which are known to answer it)
 * the first line of `--version`. Recorded when a task starts and by `relay
 * probe`; strict mode compares the file's hash with the probe's.
 */
import { isAbsolute } from "../path.ts";
import type { ProgramSeen } from "../config/task_config.ts";
import type { RoleName, RoleSpec } from "../config/profile_load.ts";
import { largeFileHash } from "../proc/hash.ts";
import { run } from "../proc/run.ts";
import { buildInvocation } from "./presets.ts";
import { findProgram } from "./which.ts";

/**
 * What looks at programs found, for the roles a task starts with: the executor, the reviewer
 * and the security reviewer often start the same program, which is then read and hashed, and
 * asked its `--version`, once (an agent CLI's file can be a 100 MB binary; its --version a
 * node start). Kept for one look at the roles, not across a tick: a program can change.
 */
export interface ProgramLooks {
  hashes: Map<string, Promise<string>>;
  versions: Map<string, Promise<string | undefined>>;
}

export function programLooks(): ProgramLooks {
  return { hashes: new Map(), versions: new Map() };
}

/** Path and hash only (no process started); null when the program is not found. */
export async function programFile(
  preset: RoleName,
  spec: RoleSpec,
  looks: ProgramLooks = programLooks(),
): Promise<ProgramSeen | null> {
  const inv = buildInvocation(preset, spec, "relay", { isRoot: false });
  if (inv.kind === "demo") return { path: "built-in" };
  const found = await findProgram(inv.argv[0] ?? "", inv.env.PATH ?? Deno.env.get("PATH") ?? "");
  if (found === null) return null;
  if (!isAbsolute(found)) return { path: found };
  return { path: found, sha256: await once(looks.hashes, found, () => largeFileHash(found)) };
}

/** As programFile, and the agent CLIs' `--version` (15 s at most). */
export async function programSeen(
  preset: RoleName,
  spec: RoleSpec,
  cwd: string,
  looks: ProgramLooks = programLooks(),
): Promise<ProgramSeen | null> {
  const seen = await programFile(preset, spec, looks);
  if (!seen?.sha256) return seen;
  // Only the agent CLIs are known to answer --version: an arbitrary command might act on it.
  if (spec.vendor === "claude" || spec.vendor === "codex") {
    const inv = buildInvocation(preset, spec, "relay", { isRoot: false });
    const env = inv.kind === "process" ? inv.env : {};
    const key = JSON.stringify([seen.path, env]);
    const line = await once(looks.versions, key, async () => {
      const res = await run([seen.path, "--version"], {
        cwd,
        env,
        timeoutMs: 15_000,
        allowFail: true,
      }).catch(() => null);
      return res?.code === 0 ? res.stdout.trim().split("\n")[0] : undefined;
    });
    if (line) seen.version = line;
  }
  return seen;
}

function once<T>(memo: Map<string, Promise<T>>, key: string, look: () => Promise<T>): Promise<T> {
  let found = memo.get(key);
  if (found === undefined) memo.set(key, found = look());
  return found;
}
