/**
 * The tick lock: cron starts `relay poll` every minute, and a long run must
 * not stack a second one on top of it.
 *
 * The lock is a kernel lock (flock) on a lock file, so it disappears with the
 * process that holds it, however that process dies. The lock file itself is
 * never deleted: deleting it would let two processes lock two different
 * inodes under the same name. Beside it, `<lockfile>.json` records the
 * holder for `relay status`; it is left behind on release and then describes
 * the last holder.
 *
 * Deno opens files with O_CLOEXEC, so child processes never inherit the lock.
 */
import { dirname } from "../path.ts";
import { sleep } from "../proc/timer.ts";

export interface LockInfo {
  pid: number;
  host: string;
  started: string;
  command: string;
}

/**
 * How long a tick waits for the other tick's lock. Under a minute, so a tick
 * that gives up still leaves its place to the next cron minute.
 */
export const LOCK_WAIT_MS = 45_000;

export interface HeldLock extends AsyncDisposable {
  path: string;
  release(): Promise<void>;
}

/** Path of the holder record written beside the lock file. */
export function lockInfoPath(path: string): string {
  return `${path}.json`;
}

/**
 * Takes the lock at `path` without waiting, creating the file and its parent
 * folders if needed. Returns null when another holder has it (another process,
 * or another tryLock in this one).
 */
export async function tryLock(path: string, command: string): Promise<HeldLock | null> {
  await Deno.mkdir(dirname(path), { recursive: true });
  const file = await Deno.open(path, { read: true, write: true, create: true });
  let locked = false;
  try {
    locked = await file.tryLock(true);
  } finally {
    if (!locked) file.close();
  }
  if (!locked) return null;

  let released = false;
  const release = async (): Promise<void> => {
    if (released) return;
    released = true;
    try {
      await file.unlock();
    } finally {
      file.close();
    }
  };
  try {
    await writeInfo(path, {
      pid: Deno.pid,
      host: hostname(),
      started: new Date().toISOString(),
      command,
    });
  } catch (err) {
    await release();
    throw err;
  }
  return { path, release, [Symbol.asyncDispose]: release };
}

/**
 * Takes the lock at `path`, waiting up to `waitMs` for a holder that is only
 * passing through. Both cron lines fire at the same second: a tick that finds
 * the other one fetching, or deciding it has nothing to do, waits the moment
 * that takes instead of giving up its minute. `waitFor` sees the current
 * holder's record and says whether it is worth waiting for (a holder that runs
 * an agent for an hour is not); without a record (the holder is still writing
 * it), it is asked again on the next try. Returns null when the wait ran out
 * or the holder is not worth waiting for.
 */
export async function waitLock(
  path: string,
  command: string,
  opts: { waitMs: number; waitFor?: (holder: LockInfo) => boolean; everyMs?: number },
): Promise<HeldLock | null> {
  const deadline = Date.now() + opts.waitMs;
  const every = opts.everyMs ?? 100;
  for (;;) {
    const lock = await tryLock(path, command);
    if (lock) return lock;
    if (Date.now() >= deadline) return null;
    const holder = await readInfo(path);
    if (holder && opts.waitFor && !opts.waitFor(holder)) return null;
    await sleep(every);
  }
}

/** The last holder record written beside the lock (null when none or unreadable). */
export function lockHolder(path: string): Promise<LockInfo | null> {
  return readInfo(path);
}

/**
 * Whether someone holds the lock now, and the last holder record. Probes by
 * taking and dropping the lock; never creates or deletes the lock file. A poll
 * that starts during the probe's instant may find the lock busy and skip one
 * tick.
 */
export async function lockState(
  path: string,
): Promise<{ held: boolean; info: LockInfo | null }> {
  const info = await readInfo(path);
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { held: false, info };
    throw err;
  }
  try {
    const free = await file.tryLock(true);
    if (free) await file.unlock();
    return { held: !free, info };
  } finally {
    file.close();
  }
}

/** This machine's name, or "unknown" where Deno cannot tell. */
export function hostname(): string {
  try {
    return Deno.hostname();
  } catch {
    return "unknown";
  }
}

/** Writes the holder record atomically (temp file + rename), so status never reads half of it. */
async function writeInfo(path: string, info: LockInfo): Promise<void> {
  const target = lockInfoPath(path);
  const temp = `${target}.${Deno.pid}.tmp`;
  await Deno.writeTextFile(temp, JSON.stringify(info, null, 2) + "\n");
  await Deno.rename(temp, target);
}

async function readInfo(path: string): Promise<LockInfo | null> {
  let text: string;
  try {
    text = await Deno.readTextFile(lockInfoPath(path));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof data !== "object" || data === null) return null;
  const { pid, host, started, command } = data as Record<string, unknown>;
  if (
    typeof pid !== "number" || typeof host !== "string" || typeof started !== "string" ||
    typeof command !== "string"
  ) {
    return null;
  }
  return { pid, host, started, command };
}

/**
 * Runs `fn` while neither tick runs: both ticks' locks, taken without waiting (so
 * in either order: a holder that waits, a poll or a split-mode review, takes the
 * poll lock first and then waits for the review lock). A person's command
 * that writes a record a running turn's guard watches goes through here.
 * Returns null, having run nothing, when a tick holds either lock.
 */
export async function whileNoTickRuns<T>(
  locks: { reviewLock: string; pollLock: string },
  command: string,
  fn: () => Promise<T>,
): Promise<{ value: T } | null> {
  await using review = await tryLock(locks.reviewLock, command);
  await using poll = review ? await tryLock(locks.pollLock, command) : null;
  if (!review || !poll) return null;
  return { value: await fn() };
}
