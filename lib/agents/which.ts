/**
 * Is the agent program there? Checked before an attempt starts, so a typo in
 * the operator profile is a HOLD that names the program — not two failed
 * attempts, a BLOCKED report on main and a brief to queue again.
 */
import { delimiter, isAbsolute, join } from "node:path";
import { HoldError } from "../errors.ts";

async function isExecutable(path: string): Promise<boolean> {
  try {
    const info = await Deno.stat(path);
    if (!info.isFile) return false;
    return Deno.build.os === "windows" || info.mode === null || (info.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** The program's full path, or null when it is not found. */
export async function findProgram(program: string, pathEnv: string): Promise<string | null> {
  if (isAbsolute(program)) return (await isExecutable(program)) ? program : null;
  // Relative to the folder the agent starts in, which this check does not know: let it be.
  if (program.includes("/")) return program;
  const exts = Deno.build.os === "windows" ? ["", ".exe", ".cmd", ".bat"] : [""];
  for (const dir of pathEnv.split(delimiter).filter((d) => d !== "")) {
    for (const ext of exts) {
      const candidate = join(dir, program + ext);
      if (await isExecutable(candidate)) return candidate;
    }
  }
  return null;
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
  if (await findProgram(program, path)) return;
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
