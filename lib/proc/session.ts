/**
 * Starting a command in a session (and so a process group) of its own, cheaply.
 * Deno's `detached: true` calls setsid() between fork and exec, which rules out
 * posix_spawn: a fork of a process as large as relay costs the main thread
 * ~7–9 ms here, against ~2 ms for posix_spawn — and a tick starts a dozen such
 * commands (fetches, pushes, agents, bar commands). On Linux setsid(1) does the
 * same from inside the child: started by posix_spawn it is no group leader, so
 * it calls setsid() and execs the command in place. The pid relay holds is the
 * command's, and its process group and session are that same number, as with
 * `detached: true`. Elsewhere (no setsid(1) at a system path) `detached: true`.
 */
import { join } from "../path.ts";
import { isExecutable, onPath } from "./which.ts";

/** How to start `program args` so that it leads a session of its own. */
export interface SessionStart {
  program: string;
  args: string[];
  /** true: Deno's own `detached` (fork, setsid, exec). */
  detached: boolean;
}

let setsid: string | null | undefined;

/** setsid(1) at a system path (never looked up on PATH), or null. */
function setsidProgram(): string | null {
  if (setsid === undefined) {
    setsid = Deno.build.os !== "linux"
      ? null
      : ["/usr/bin/setsid", "/bin/setsid"].find((path) => isExecutable(path)) ?? null;
  }
  return setsid;
}

/**
 * The program's path as its start would find it: a name on the child's PATH, a path with a
 * slash from the child's folder. Done here because setsid(1) cannot tell relay that it
 * found nothing to run (it exits 127): what Deno's own start throws is thrown instead.
 */
export function locate(program: string, pathEnv: string | undefined, cwd: string): string {
  if (program.includes("/")) {
    const path = program.startsWith("/") ? program : join(cwd, program);
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(path);
    } catch {
      throw new Deno.errors.NotFound(`"${program}": no such file`);
    }
    if (!info.isFile || (info.mode !== null && (info.mode & 0o111) === 0)) {
      throw new Deno.errors.PermissionDenied(`"${program}" is not an executable file`);
    }
    return path;
  }
  const found = onPath(program, pathEnv ?? "");
  if (found === null) throw new Deno.errors.NotFound(`"${program}" is not on PATH`);
  return found;
}

/**
 * How to start `program` with `args` in `cwd` in a session of its own, given the child's
 * environment. Throws Deno.errors.NotFound (or PermissionDenied) for a program that cannot
 * be started, as a start of it would.
 */
export function sessionStart(
  program: string,
  args: readonly string[],
  env: Record<string, string>,
  cwd: string,
): SessionStart {
  const wrapper = setsidProgram();
  if (wrapper === null) return { program, args: [...args], detached: true };
  return {
    program: wrapper,
    args: ["--", locate(program, env.PATH, cwd), ...args],
    detached: false,
  };
}
