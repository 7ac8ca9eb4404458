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
  const stat = await readProc([`/proc/${pid}/stat`]);
  return stat !== "" && procState(stat) !== "Z";
}

/**
 * What of `files` (under /proc) can be read, in their order, joined: a file that is not there
 * (a pid gone, even between open and read) is left out. Deno reads /proc only with
 * --allow-all; `cat` may read it under --allow-run, and prints what it can in order too.
 */
export async function readProc(files: readonly string[]): Promise<string> {
  const read = await Promise.allSettled(files.map((file) => Deno.readTextFile(file)));
  if (read.some((r) => r.status === "rejected" && r.reason instanceof Deno.errors.NotCapable)) {
    const out = await run(["cat", "--", ...files], { cwd: "/", allowFail: true }).catch(() => null);
    return out?.stdout ?? "";
  }
  return read.map((r) => r.status === "fulfilled" ? r.value : "").join("");
}

/**
 * The fields of a /proc/<pid>/stat line from the third on (the state letter first): those after
 * the parenthesised name, which may hold anything, spaces and ")" included. Null when there is
 * no name.
 */
export function statFields(stat: string): string[] | null {
  const close = stat.lastIndexOf(")");
  return close < 0 ? null : stat.slice(close + 1).trim().split(/\s+/);
}

/** The state letter of a /proc/<pid>/stat line (the field after the parenthesised name). */
export function procState(stat: string): string | undefined {
  return statFields(stat)?.[0];
}
