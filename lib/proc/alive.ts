/**
 * Whether a process is still there: a later tick asks it of an agent or a
 * reviewer that a tick which died left behind.
 */
import { run } from "./run.ts";

/**
 * Whether a process with this pid exists and is not a zombie. Used on a later
 * tick to see whether an agent started by a tick that died is still running.
 */
export async function isAlive(pid: number): Promise<boolean> {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  if (Deno.build.os === "linux") return await procAlive(pid);
  return await psAlive(pid);
}

/** The non-Linux check: `ps -p <pid> -o stat=`. Exported for tests. */
export async function psAlive(pid: number): Promise<boolean> {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  const out = await run(["ps", "-p", String(pid), "-o", "stat="], { cwd: "/", allowFail: true });
  const state = out.stdout.trim();
  return out.code === 0 && state !== "" && !state.startsWith("Z");
}

async function procAlive(pid: number): Promise<boolean> {
  const path = `/proc/${pid}/stat`;
  let stat: string;
  try {
    stat = await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    if (!(err instanceof Deno.errors.NotCapable)) throw err;
    // Deno reads /proc only with --allow-all; `cat` may read it under --allow-run.
    const out = await run(["cat", "--", path], { cwd: "/", allowFail: true });
    if (out.code !== 0) return false;
    stat = out.stdout;
  }
  return procState(stat) !== "Z";
}

/** The state letter of a /proc/<pid>/stat line (the field after the parenthesised name). */
export function procState(stat: string): string | undefined {
  const close = stat.lastIndexOf(")");
  if (close < 0) return undefined;
  return stat.slice(close + 1).trim().split(/\s+/)[0];
}
