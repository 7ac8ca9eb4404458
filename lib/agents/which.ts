/**
 * Is the agent program there? Checked before an attempt starts, so a typo in
 * the operator profile is a HOLD that names the program — not two failed
 * attempts, a BLOCKED report on main and a brief to queue again.
 */
import { HoldError } from "../errors.ts";
import { isAbsolute } from "../path.ts";
import { onPath, startProblem } from "../proc/which.ts";

/** The program's full path, or null when it is not found. */
export function findProgram(program: string, pathEnv: string): Promise<string | null> {
  // Relative to the folder the agent starts in, which this check does not know: let it be.
  if (!isAbsolute(program) && program.includes("/")) return Promise.resolve(program);
  return Promise.resolve(onPath(program, pathEnv));
}

/** HOLD (before any attempt is spent) when the role's program cannot be found. */
export async function requireProgram(
  role: string,
  argv: readonly string[],
  env: Record<string, string>,
  profilePath: string,
): Promise<void> {
  const program = argv[0] ?? "";
  const path = env.PATH ?? Deno.env.get("PATH") ?? "";
  const found = await findProgram(program, path);
  // There, but its `#!/usr/bin/env node` finds no node (cron's PATH, most often): as much
  // the operator's to fix as a typo, and the same HOLD before any attempt is spent.
  const problem = found !== null && isAbsolute(found) ? startProblem(found, path) : null;
  if (problem !== null) {
    throw new HoldError(
      `Cannot start the ${role}: "${program}"${
        found === program ? "" : ` (${found})`
      } is there, but ${problem}`,
      `Install what it needs, or set PATH in roles.${role}.env of the operator profile ` +
        `(${profilePath}) or in the crontab (PATH is ${path || "empty"}). ` +
        "No attempt was used; the next tick tries again.",
      { recheck: true },
    );
  }
  if (found !== null) return;
  throw new HoldError(
    `Cannot start the ${role}: "${program}" is not ${
      program.includes("/") ? "an executable file" : "on PATH"
    }`,
    `Fix roles.${role} in the operator profile (${profilePath}) or install the program${
      program.includes("/")
        ? ""
        : ` (PATH is ${path || "empty"}; under cron, set PATH in the crontab)`
    }. No attempt was used; the next tick tries again.`,
    { recheck: true },
  );
}
