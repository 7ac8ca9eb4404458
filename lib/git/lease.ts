/**
 * Leases on the remote: with `machines: split` the executor tick and the
 * reviewer tick run on machines that share nothing but the git remote, so
 * "only one of us runs this role now" is a ref there, not a lock file.
 *
 * `refs/relay/leases/<role>` points at a commit (empty tree, no parent) whose
 * message is the lease as JSON: holder (machine id, host, pid, run), taken-at,
 * expires-at. Taking, renewing and releasing it are one push each with
 * `--force-with-lease=<ref>:<the value we read>` ("" when there was none): the
 * remote moves the ref only if nobody moved it since we read it, so of two
 * machines that race, exactly one push lands. Never a plain force. The lease
 * commits have no parent, so the ref's history does not grow a commit a tick.
 *
 * A lease whose expires-at has passed (its machine crashed, or was cut off)
 * may be taken over; one a machine holds itself (same machine id: a tick
 * that left an attempt unfinished keeps it for its next tick) is renewed.
 */
import type { Git } from "./git.ts";

export const LEASE_PREFIX = "refs/relay/leases/";
/**
 * Where a fetch mirrors the remote's `refs/relay/…`: a namespace of its own, so a fetch
 * never overwrites this clone's own refs/relay/anchors or refs/relay/void.
 */
export const MIRROR_PREFIX = "refs/relay-remote/";

/** The two roles of split mode: one executor turn and one reviewer at a time, across machines. */
export type LeaseRole = "executor" | "reviewer";

export interface LeaseHolder {
  /** This clone's id (`.git/relay/machine-id`): two clones on one host are two machines. */
  machine: string;
  host: string;
  pid: number;
  run: string;
}

export interface Lease {
  role: LeaseRole;
  holder: LeaseHolder;
  takenAt: string;
  expiresAt: string;
  /** Set when the holder let go before it expired, or a person released it. */
  released?: string;
  /** Who released it when not its holder: a person's `relay lease release` ("user@host"). */
  releasedBy?: string;
}

/** A lease as read from the mirror: the commit it is and what it says. */
export interface LeaseAt {
  sha: string;
  lease: Lease | null;
}

export type TakeResult =
  | { ok: true; held: LeaseAt & { lease: Lease } }
  | { ok: false; holder: Lease | null; why: string };

export function leaseRef(role: LeaseRole): string {
  return `${LEASE_PREFIX}${role}`;
}

export function mirrorOf(ref: string): string {
  if (!ref.startsWith("refs/relay/")) throw new Error(`relay bug: ${ref} is not under refs/relay/`);
  return MIRROR_PREFIX + ref.slice("refs/relay/".length);
}

/** The refspecs that mirror the remote's leases and PR records (forced: a mirror, not work). */
export const RELAY_REFSPECS: readonly string[] = [
  `+${LEASE_PREFIX}*:${MIRROR_PREFIX}leases/*`,
  `+refs/relay/prs/*:${MIRROR_PREFIX}prs/*`,
];

/** The empty tree's sha per repository this process wrote it into (it never changes). */
const emptyTrees = new Map<string, string>();

/**
 * The empty tree's sha, written into this repository (a lease carries no files): by `git mktree`
 * once a process, as the repository's object format names it (SHA-1 or SHA-256).
 */
export async function emptyTree(git: Git): Promise<string> {
  const known = emptyTrees.get(git.cwd);
  if (known !== undefined) return known;
  const sha = await git.out(["mktree"], { stdin: "" });
  emptyTrees.set(git.cwd, sha);
  return sha;
}

/** Parses a lease commit's message; null when it is not a lease (never trusted further). */
export function parseLease(text: string): Lease | null {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof data !== "object" || data === null) return null;
  const d = data as Record<string, unknown>;
  const h = d.holder as Record<string, unknown> | undefined;
  if (
    (d.role !== "executor" && d.role !== "reviewer") || typeof d.takenAt !== "string" ||
    typeof d.expiresAt !== "string" || typeof h !== "object" || h === null ||
    typeof h.machine !== "string" || typeof h.host !== "string" || typeof h.pid !== "number" ||
    typeof h.run !== "string"
  ) {
    return null;
  }
  return {
    role: d.role,
    holder: { machine: h.machine, host: h.host, pid: h.pid, run: h.run },
    takenAt: d.takenAt,
    expiresAt: d.expiresAt,
    ...(typeof d.released === "string" ? { released: d.released } : {}),
    ...(typeof d.releasedBy === "string" ? { releasedBy: d.releasedBy } : {}),
  };
}

/** The lease as the last fetch mirrored it; null when the remote has none. */
export async function readLease(git: Git, role: LeaseRole): Promise<LeaseAt | null> {
  const ref = mirrorOf(leaseRef(role));
  const at = await git.run(["rev-parse", "--verify", "--quiet", "--end-of-options", ref], {
    allowFail: true,
  });
  if (at.code !== 0) return null;
  const sha = at.stdout.trim();
  // Whatever the ref holds, its value is what a compare-and-swap must name; something that is
  // not a lease commit stops nobody, and is replaced.
  const res = await git.run(["cat-file", "commit", sha], { allowFail: true });
  if (res.code !== 0) return { sha, lease: null };
  const body = res.stdout.split("\n\n").slice(1).join("\n\n");
  return { sha, lease: parseLease(body.trim()) };
}

/** Whether `lease` stops `machine` from taking the role at `now`. */
export function blocks(lease: Lease | null, machine: string, now: Date): boolean {
  if (!lease || lease.released) return false;
  if (lease.holder.machine === machine) return false;
  const until = Date.parse(lease.expiresAt);
  return Number.isFinite(until) && until > now.getTime();
}

/** "<host> pid <pid> (run <run>)": who holds a lease, for a busy line. */
export function describeHolder(lease: Lease): string {
  return `${lease.holder.host} pid ${lease.holder.pid} (run ${lease.holder.run})`;
}

/**
 * Moves the remote's lease ref from `expected` (null: none) to a new lease commit, only if
 * the remote still has `expected`. Returns the new commit, or null when another push won.
 */
async function swap(
  git: Git,
  remote: string,
  role: LeaseRole,
  expected: string | null,
  lease: Lease,
): Promise<{ sha: string } | { sha: null; stderr: string }> {
  const sha = await git.out(["commit-tree", await emptyTree(git), "-F", "-"], {
    stdin: JSON.stringify(lease) + "\n",
  });
  const ref = leaseRef(role);
  const res = await git.pushRefs(remote, [`${sha}:${ref}`], {
    leases: [`${ref}:${expected ?? ""}`],
    unguarded: true,
  });
  if (!res.ok) return { sha: null, stderr: res.stderr.trim() };
  // The mirror follows what we pushed, so a renewal or release compares with the right value.
  // Best effort: the caller keeps the sha itself; a fetch racing this update just refreshes it.
  await git.updateRef(mirrorOf(ref), sha, "relay: lease pushed").catch(() => {});
  return { sha };
}

/**
 * Takes (or renews, when this machine holds it) the role's lease, as the last fetch of
 * RELAY_REFSPECS saw it. Loses, pushing nothing, to a live lease of another machine; a
 * push that loses the race to another machine's is re-read once to name the winner.
 */
export async function takeLease(
  git: Git,
  remote: string,
  role: LeaseRole,
  holder: LeaseHolder,
  ttlMs: number,
  now = new Date(),
): Promise<TakeResult> {
  const current = await readLease(git, role);
  if (blocks(current?.lease ?? null, holder.machine, now)) {
    return { ok: false, holder: current!.lease, why: "held" };
  }
  const lease: Lease = {
    role,
    holder,
    takenAt: current?.lease?.holder.machine === holder.machine && !current.lease.released
      ? current.lease.takenAt
      : now.toISOString(),
    expiresAt: new Date(now.getTime() + ttlMs).toISOString(),
  };
  const { sha } = await swap(git, remote, role, current?.sha ?? null, lease);
  if (sha) return { ok: true, held: { sha, lease } };
  // Someone moved it first: read who, for the busy line.
  await git.fetch(remote, { refspecs: RELAY_REFSPECS }).catch(() => {});
  const winner = await readLease(git, role);
  return { ok: false, holder: winner?.lease ?? null, why: "raced" };
}

/** Pushes the lease again with a later expires-at; null when it is no longer ours on the remote. */
export async function renewLease(
  git: Git,
  remote: string,
  held: LeaseAt & { lease: Lease },
  ttlMs: number,
  now = new Date(),
): Promise<(LeaseAt & { lease: Lease }) | null> {
  const lease = { ...held.lease, expiresAt: new Date(now.getTime() + ttlMs).toISOString() };
  const { sha } = await swap(git, remote, held.lease.role, held.sha, lease);
  return sha ? { sha, lease } : null;
}

/**
 * Lets go of the lease (a released lease commit); false when it was no longer ours. `by`: a
 * person who releases another machine's lease (relay lease release).
 */
export async function releaseLease(
  git: Git,
  remote: string,
  held: LeaseAt & { lease: Lease },
  now = new Date(),
  by?: string,
): Promise<{ ok: true } | { ok: false; stderr: string }> {
  const lease: Lease = {
    ...held.lease,
    expiresAt: now.toISOString(),
    released: now.toISOString(),
    ...(by !== undefined ? { releasedBy: by } : {}),
  };
  const pushed = await swap(git, remote, held.lease.role, held.sha, lease);
  return pushed.sha !== null ? { ok: true } : { ok: false, stderr: pushed.stderr };
}
