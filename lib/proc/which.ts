/** Where a program is: a file that can be run, looked up on a PATH as a start would. */
import { isAbsolute, join } from "../path.ts";

const WINDOWS = Deno.build.os === "windows";

/** A file (not a folder) with an executable bit (any file on Windows). */
export function isExecutable(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.isFile && (WINDOWS || info.mode === null || (info.mode & 0o111) !== 0);
  } catch {
    return false;
  }
}

/**
 * The full path of `program` on `pathEnv` (a bare name; on Windows with .exe, .cmd, .bat
 * tried too), or null. An absolute path is itself when it is executable.
 */
export function onPath(program: string, pathEnv: string): string | null {
  if (isAbsolute(program)) return isExecutable(program) ? program : null;
  const exts = WINDOWS ? ["", ".exe", ".cmd", ".bat"] : [""];
  for (const dir of pathEnv.split(WINDOWS ? ";" : ":")) {
    if (dir === "") continue;
    for (const ext of exts) {
      const candidate = join(dir, program + ext);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return null;
}
