/**
 * `relay lease [--json]` and `relay lease release <role> <run>`: the roles' leases of split
 * mode as the remote has them, and a person's way to end one whose machine is gone. A crashed
 * machine frees its role only when its lease runs out: up to `timeouts.lease` (24h at most) and
 * longer when its clock was ahead. Releasing is the push relay's own release makes (a released
 * copy of the lease, only if the remote still has the commit read): never a force, never a
 * deleted ref, and naming the run makes a release typed after a new tick took the lease a no-op.
 */
import { UsageError } from "../errors.ts";
import { Git } from "../git/git.ts";
import type { Lease, LeaseAt, LeaseRole } from "../git/lease.ts";
import { type Context, parseCommand, printJson, requireRepo } from "./args.ts";

const ROLES: readonly LeaseRole[] = ["executor", "reviewer"];

export async function lease(args: string[], ctx: Context): Promise<number> {
  const { values, positionals } = parseCommand("lease", args, { json: { type: "boolean" } }, {
    min: 0,
    max: 3,
    names: "release <executor|reviewer> <run>",
  });
  const [verb, role, run] = positionals;
  if (verb !== undefined && verb !== "release") {
    throw new UsageError(
      `unknown subcommand "${verb}": use relay lease, or relay lease release <role> <run>`,
      "lease",
    );
  }
  if (verb === "release") {
    if (role !== "executor" && role !== "reviewer") {
      throw new UsageError(
        `${
          role === undefined ? "missing role" : `"${role}" is not a role`
        }: name executor or reviewer`,
        "lease",
      );
    }
    if (run === undefined) {
      throw new UsageError(
        "missing run: name the run that holds the lease (relay lease, or the busy line, shows it)",
        "lease",
      );
    }
    if (values.json) throw new UsageError("--json is for the listing, not for release", "lease");
  }
  const repo = requireRepo(ctx);
  const { loadRepoConfig } = await import("../config/repo_load.ts");
  const config = await loadRepoConfig(repo.root);
  if (config.machines !== "split") {
    throw new UsageError(
      "this repository runs both ticks in one clone (machines: one in .relay/config.yaml): its " +
        "ticks take a lock in .git/relay, not a lease on the remote; relay status shows them",
      "lease",
    );
  }
  const { readLease, RELAY_REFSPECS } = await import("../git/lease.ts");
  const { formatDuration } = await import("../config/duration.ts");
  const git = new Git(repo.root, config.timeouts.networkMs);
  await git.fetch(config.remote, { refspecs: RELAY_REFSPECS, maintenance: false });
  const now = Date.now();
  const line = (at: LeaseAt | null) => describe(at, now, config.timeouts.leaseMs, formatDuration);
  if (verb === undefined) {
    const leases = await Promise.all(ROLES.map((r) => readLease(git, r)));
    if (values.json) {
      printJson(Object.fromEntries(ROLES.map((r, i) => [r, leaseJson(leases[i] ?? null, now)])));
    } else ROLES.forEach((r, i) => console.log(`${r}: ${line(leases[i] ?? null)}`));
    return 0;
  }
  const at = await readLease(git, role as LeaseRole);
  const held = at?.lease;
  if (!at || !held || held.released) {
    console.log(`nothing to release: ${role}: ${line(at)}`);
    return 0;
  }
  if (held.holder.run !== run) {
    console.log(
      `not released: the ${role} lease is run ${held.holder.run}'s, not ${run}'s: ${line(at)}`,
    );
    return 1;
  }
  const { releaseLease } = await import("../git/lease.ts");
  const { whoAmI } = await import("./pause.ts");
  const by = `relay lease release by ${await whoAmI()}`;
  const released = await releaseLease(
    git,
    config.remote,
    { sha: at.sha, lease: held },
    new Date(now),
    by,
  );
  if (!released.ok) {
    // Moved, or refused for another reason (a hook, a full disk, the network): read it again.
    await git.fetch(config.remote, { refspecs: RELAY_REFSPECS, maintenance: false })
      .catch(() => {});
    const again = await readLease(git, role as LeaseRole);
    if (again?.sha !== at.sha) {
      console.log(
        `not released: the ${role} lease moved on ${config.remote} while relay released it ` +
          `(its holder renewed it, or another machine took it): ${line(again)}`,
      );
    } else {
      console.log(
        `not released: ${config.remote} refused the push (the lease is as it was):\n` +
          released.stderr,
      );
    }
    return 1;
  }
  console.log(
    `released the ${role} lease of ${holderOf(held)} on ${config.remote}: the next tick of any ` +
      "machine may take the role. If that machine is still at work, it stops at its next " +
      "renewal (within a fifth of its lease) and may act until then: release only a lease " +
      "whose machine is gone.",
  );
  return 0;
}

function holderOf(lease: Lease): string {
  return `${lease.holder.host} pid ${lease.holder.pid} (run ${lease.holder.run})`;
}

/** One role's lease in a line, judged by this machine's clock. */
function describe(
  at: LeaseAt | null,
  now: number,
  ttlMs: number,
  duration: (ms: number) => string,
): string {
  if (!at) return "none on the remote";
  const lease = at.lease;
  if (!lease) return `not a lease (commit ${at.sha.slice(0, 12)}): the next tick replaces it`;
  if (lease.released) {
    return `free: ${lease.releasedBy ?? `released by ${holderOf(lease)}`} at ${lease.released}` +
      (lease.releasedBy ? `, held by ${holderOf(lease)} until then` : "");
  }
  const until = Date.parse(lease.expiresAt);
  const left = until - now;
  if (!(left > 0)) {
    return `free: held by ${holderOf(lease)} until ${lease.expiresAt}, ${duration(-left)} ago`;
  }
  const ahead = left > ttlMs
    ? `; that is more than a whole lease (${duration(ttlMs)}) from now by this machine's clock: ` +
      "the holder's clock is ahead of this one's, or its lease is longer"
    : "";
  return `held by ${holderOf(lease)} since ${lease.takenAt}, until ${lease.expiresAt} (in ${
    duration(left)
  })${ahead}; if that machine is gone, relay lease release ${lease.role} ${lease.holder.run}`;
}

function leaseJson(at: LeaseAt | null, now: number): unknown {
  if (!at) return { state: "none" };
  const lease = at.lease;
  if (!lease) return { state: "not-a-lease", commit: at.sha };
  const live = !lease.released && Date.parse(lease.expiresAt) > now;
  return {
    state: lease.released ? "released" : live ? "held" : "expired",
    commit: at.sha,
    ...lease,
  };
}
