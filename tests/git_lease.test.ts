/**
 * Leases on the remote (lib/git/lease.ts), with real git and a bare origin:
 * a live lease of another machine is not taken, an expired one is taken over,
 * the holder renews its own, a released one is free, and of two machines that
 * push for the lease at the same moment exactly one wins. The fetch that reads
 * the leases fills its own namespace and leaves this clone's refs/relay alone.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_REPO_CONFIG } from "../lib/config/repo_load.ts";
import { Git } from "../lib/git/git.ts";
import {
  emptyTree,
  leaseRef,
  readLease,
  RELAY_REFSPECS,
  releaseLease,
  renewLease,
  takeLease,
} from "../lib/git/lease.ts";
import { git as sh, GIT_ENV as ENV } from "./helpers/git_env.ts";

const TTL = 10 * 60_000;

function holder(machine: string) {
  return { machine, host: `host-${machine}`, pid: 100, run: `run-${machine}` };
}

/** A bare origin with one commit and `names` clones of it; cleaned up by the caller's finally. */
async function world<N extends string>(dir: string, names: readonly N[]): Promise<Record<N, Git>> {
  await sh(dir, "init", "--quiet", "--bare", "--initial-branch=main", "origin.git");
  const seed = join(dir, "seed");
  await sh(dir, "clone", "--quiet", `file://${join(dir, "origin.git")}`, "seed");
  await Deno.writeTextFile(join(seed, "f"), "1\n");
  await sh(seed, "add", "f");
  await sh(seed, "commit", "--quiet", "-m", "one");
  await sh(seed, "push", "--quiet", "origin", "HEAD:main");
  const gits = {} as Record<N, Git>;
  for (const name of names) {
    await sh(dir, "clone", "--quiet", `file://${join(dir, "origin.git")}`, name);
    gits[name] = new Git(join(dir, name));
  }
  return gits;
}

async function withEnv(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "relay-lease-" });
  const saved = Object.fromEntries(Object.keys(ENV).map((k) => [k, Deno.env.get(k)]));
  for (const [k, v] of Object.entries(ENV)) Deno.env.set(k, v);
  try {
    await fn(dir);
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) Deno.env.delete(k);
      else Deno.env.set(k, v);
    }
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

const fetch = (git: Git) => git.fetch("origin", { refspecs: RELAY_REFSPECS });

Deno.test("lease: a live lease is not taken, an expired one is taken over, the holder renews its own", async () => {
  await withEnv(async (dir) => {
    const { a, b } = await world(dir, ["a", "b"]);
    const t0 = new Date("2026-12-02T10:00:00Z");

    await fetch(a);
    const first = await takeLease(a, "origin", "executor", holder("A"), TTL, t0);
    assert.ok(first.ok, "A takes a free lease");

    // B, five minutes later: A's lease is live, and B pushes nothing.
    await fetch(b);
    const before = await sh(join(dir, "origin.git"), "rev-parse", leaseRef("executor"));
    const live = await takeLease(
      b,
      "origin",
      "executor",
      holder("B"),
      TTL,
      new Date(t0.getTime() + 5 * 60_000),
    );
    assert.equal(live.ok, false);
    assert.equal(!live.ok && live.holder?.holder.machine, "A");
    assert.equal(!live.ok && live.holder?.expiresAt, "2026-12-02T10:10:00.000Z");
    assert.equal(await sh(join(dir, "origin.git"), "rev-parse", leaseRef("executor")), before);

    // A, a minute on: its own lease is renewed, whatever its expiry.
    await fetch(a);
    const again = await takeLease(
      a,
      "origin",
      "executor",
      holder("A"),
      TTL,
      new Date(t0.getTime() + 60_000),
    );
    assert.ok(again.ok);
    assert.equal(again.ok && again.held.lease.takenAt, t0.toISOString(), "taken-at stays");
    assert.equal(again.ok && again.held.lease.expiresAt, "2026-12-02T10:11:00.000Z");

    // Eleven minutes after that, A has gone quiet: its lease expired, and B takes it over.
    await fetch(b);
    const late = new Date(t0.getTime() + 12 * 60_000);
    const takeover = await takeLease(b, "origin", "executor", holder("B"), TTL, late);
    assert.ok(takeover.ok, "an expired lease is taken over");
    await fetch(a);
    const seen = await readLease(a, "executor");
    assert.equal(seen?.lease?.holder.machine, "B");

    // A's renewal of the lease it lost is refused: the remote moved past what A holds.
    assert.ok(again.ok);
    assert.equal(await renewLease(a, "origin", again.held, TTL, late), null);
    assert.equal((await releaseLease(a, "origin", again.held, late)).ok, false);

    // B lets go; A can take it at once, long before B's expiry.
    assert.ok(takeover.ok);
    assert.equal((await releaseLease(b, "origin", takeover.held, late)).ok, true);
    await fetch(a);
    assert.ok((await takeLease(a, "origin", "executor", holder("A"), TTL, late)).ok);
    // The reviewer's lease is another ref: untouched by all of this, and free.
    await fetch(b);
    assert.ok((await takeLease(b, "origin", "reviewer", holder("B"), TTL, late)).ok);
  });
});

Deno.test("lease: two machines that push for a free lease at the same moment: exactly one wins", async () => {
  await withEnv(async (dir) => {
    const names = ["a", "b", "c", "d"] as const;
    const gits = await world(dir, names);
    for (let round = 0; round < 3; round++) {
      // Every machine has read the same state (free, or released) before any of them pushes.
      await Promise.all(names.map((n) => fetch(gits[n])));
      const now = new Date(Date.UTC(2026, 11, 2, 10, round * 20));
      const results = await Promise.all(
        names.map((n) => takeLease(gits[n], "origin", "reviewer", holder(n), TTL, now)),
      );
      const winners = results.filter((r) => r.ok);
      assert.equal(winners.length, 1, JSON.stringify(results));
      const winner = names[results.findIndex((r) => r.ok)]!;
      await fetch(gits.a);
      assert.equal((await readLease(gits.a, "reviewer"))?.lease?.holder.machine, winner);
      for (const r of results) {
        if (!r.ok) assert.ok(r.holder === null || r.holder.holder.machine === winner);
      }
      // The winner lets go for the next round.
      const won = winners[0]!;
      assert.ok(won.ok);
      assert.equal((await releaseLease(gits[winner], "origin", won.held, now)).ok, true);
    }
  });
});

Deno.test("lease: the fetch mirrors refs/relay/* under refs/relay-remote/, never over this clone's refs/relay", async () => {
  await withEnv(async (dir) => {
    const { a, b } = await world(dir, ["a", "b"]);
    const head = await a.head();
    // b's own anchor, and a ref of the same name pushed to the origin by someone else.
    await b.updateRef("refs/relay/anchors/task-1/x-before", head, "test");
    await fetch(a);
    assert.ok((await takeLease(a, "origin", "executor", holder("A"), TTL)).ok);
    await sh(
      join(dir, "a"),
      "push",
      "--quiet",
      "origin",
      `${head}:refs/relay/anchors/task-1/x-before`,
    );
    await fetch(b);
    assert.equal(await b.resolve("refs/relay/anchors/task-1/x-before"), head);
    const refs = await sh(join(dir, "b"), "for-each-ref", "--format=%(refname)");
    assert.match(refs, /^refs\/relay-remote\/leases\/executor$/m);
    assert.doesNotMatch(refs, /^refs\/relay\/leases\//m);
    assert.doesNotMatch(
      refs,
      /^refs\/relay-remote\/anchors\//m,
      "only leases and PR records are mirrored",
    );
  });
});

Deno.test("lease: a lease ref that holds no lease (not JSON) stops nobody and is replaced by a compare-and-swap", async () => {
  await withEnv(async (dir) => {
    const { a } = await world(dir, ["a"]);
    const junk = await sh(
      join(dir, "a"),
      "commit-tree",
      "-m",
      "not a lease",
      `${await a.head()}^{tree}`,
    );
    await sh(join(dir, "a"), "push", "--quiet", "origin", `${junk}:${leaseRef("reviewer")}`);
    await fetch(a);
    assert.deepEqual(await readLease(a, "reviewer"), { sha: junk, lease: null });
    const took = await takeLease(a, "origin", "reviewer", holder("A"), TTL);
    assert.ok(took.ok);
    assert.equal(
      await sh(join(dir, "origin.git"), "rev-parse", leaseRef("reviewer")),
      took.ok ? took.held.sha : "",
    );
  });
});

/**
 * The executor's lease taken by `git`'s machine A, held by a HeldRole on a clock the test moves
 * (`t.clock`): a machine suspended for minutes sees it jump, its renewals not run meanwhile.
 * What the role says goes to `said`.
 */
async function heldBy(git: Git) {
  const { HeldRole, leaseTimes } = await import("../lib/loop/split.ts");
  const { ttlMs, renewEveryMs } = leaseTimes(DEFAULT_REPO_CONFIG);
  const said: string[] = [];
  const log = { step: (m: string) => void said.push(m) } as never;
  const t = {
    clock: Date.parse("2026-12-02T10:00:00Z"),
    said,
    times: { ttlMs, renewEveryMs, now: () => t.clock },
    role: undefined as unknown as InstanceType<typeof HeldRole>,
  };
  await fetch(git);
  const taken = await takeLease(git, "origin", "executor", holder("A"), TTL, new Date(t.clock));
  assert.ok(taken.ok);
  t.role = new HeldRole(git, "origin", taken.held, log, t.times);
  return t;
}

Deno.test("lease guard: a tick stopped past its lease's time finds, before its next turn or push, that another machine took the role, and stops (not a HOLD: its next tick settles the run from the remote); an overdue lease nobody took is renewed and the tick goes on", async () => {
  const { HeldRole } = await import("../lib/loop/split.ts");
  const { confirmLease, currentGuard, guardWith } = await import("../lib/git/lease_guard.ts");
  const { HoldError, LeaseLostError, RetryError } = await import("../lib/errors.ts");
  // A failed assertion must not leave this test's guard on the pushes of the tests after it.
  using _guard = { [Symbol.dispose]: () => guardWith(null) };
  await withEnv(async (dir) => {
    const { a, b } = await world(dir, ["a", "b"]);
    const origin = join(dir, "origin.git");
    const t = await heldBy(a);
    const { role, said, times } = t;
    assert.equal(currentGuard(), role, "the tick's pushes ask A's lease");
    await confirmLease();
    const ok = await a.push("origin", "HEAD", "refs/heads/before-the-pause");
    assert.ok(ok.ok, ok.stderr);

    // Suspended past the lease's time: B finds it expired and takes the role.
    t.clock += 11 * 60_000;
    await fetch(b);
    const takeover = await takeLease(b, "origin", "executor", holder("B"), TTL, new Date(t.clock));
    assert.ok(takeover.ok, "B takes the expired lease");

    // A wakes: its next act asks the lease first; the overdue renewal finds it B's.
    const err = await a.push("origin", "HEAD", "refs/heads/after-the-pause").then(
      () => null,
      (e) => e,
    );
    assert.ok(err instanceof RetryError, String(err));
    // Its own kind: never taken for a remote that did not answer (lib/loop/review.ts).
    assert.ok(err instanceof LeaseLostError, String(err));
    assert.ok(!(err instanceof HoldError), "nothing here waits for a person");
    assert.match(err.message, /the executor lease on origin is no longer this machine's/);
    assert.match(err.message, /git log -1 refs\/relay\/leases\/executor on origin says which/);
    assert.match(err.message, /sets its run aside if the remote shows the task went on without it/);
    assert.deepEqual(
      said,
      ["warning: the executor lease on origin is no longer this machine's"],
    );
    // Nothing of A's landed after the pause, and B's lease stands, released by nobody.
    assert.equal(
      await sh(origin, "for-each-ref", "--format=%(refname)", "refs/heads/after-the-pause"),
      "",
    );
    await assert.rejects(confirmLease(), RetryError);
    await role.release();
    assert.equal(currentGuard(), null, "the guard goes with the tick's lease");
    await fetch(b);
    assert.equal((await readLease(b, "executor"))?.lease?.holder.machine, "B");
    assert.equal((await readLease(b, "executor"))?.lease?.released, undefined);
    // Without a tick's lease (mode one, or after it), nothing is asked.
    await confirmLease();

    // B's own pause, with nobody taking over: the overdue lease is renewed and B goes on.
    assert.ok(takeover.ok);
    const mine = new HeldRole(b, "origin", takeover.held, { step: () => {} } as never, times);
    t.clock += 11 * 60_000;
    const pushed = await b.push("origin", "HEAD", "refs/heads/b-after-its-pause");
    assert.ok(pushed.ok, pushed.stderr);
    await fetch(a);
    const renewed = await readLease(a, "executor");
    assert.equal(renewed?.lease?.holder.machine, "B");
    assert.equal(renewed?.lease?.expiresAt, new Date(t.clock + TTL).toISOString());
    await mine.release();
  });
});

Deno.test("lease guard: a renewal that cannot reach the remote decides nothing: the tick is not held, and the next renewal that lands keeps the lease", async () => {
  const { confirmLease } = await import("../lib/git/lease_guard.ts");
  await withEnv(async (dir) => {
    const { a } = await world(dir, ["a"]);
    const origin = join(dir, "origin.git");
    const t = await heldBy(a);
    const { role, said } = t;
    try {
      // Overdue, and the remote is gone for a moment: the renewal fails, and so does the fetch
      // that would tell a lost lease from a remote that did not answer.
      t.clock += 4 * 60_000;
      await Deno.rename(origin, `${origin}.away`);
      await confirmLease();
      const push = await a.push("origin", "HEAD", "refs/heads/during-the-blip");
      assert.equal(push.ok, false, "the push itself fails, as it would anyway");
      assert.deepEqual(said, [], "no lost lease is said");
      await Deno.rename(`${origin}.away`, origin);
      // Back: the next act renews the still-overdue lease, and goes on.
      const after = await a.push("origin", "HEAD", "refs/heads/after-the-blip");
      assert.ok(after.ok, after.stderr);
      await fetch(a);
      assert.equal(
        (await readLease(a, "executor"))?.lease?.expiresAt,
        new Date(t.clock + TTL).toISOString(),
      );
    } finally {
      await role.release();
    }
  });
});

/**
 * Points `git`'s remote "origin" at scripts that stand for the remote's receive-pack and
 * upload-pack: each connection is counted in `<dir>/connections`; the first `failing` fail
 * (after `delay` seconds), the later ones reach the origin.
 */
async function flakyRemote(dir: string, clone: string, failing: number, delay = 0) {
  const count = join(dir, "connections");
  for (const cmd of ["receive-pack", "upload-pack"]) {
    const path = join(dir, `flaky-${cmd}`);
    await Deno.writeTextFile(
      path,
      `#!/bin/sh\nn=$(cat "${count}" 2>/dev/null || echo 0); echo $((n+1)) > "${count}"\n` +
        `sleep ${delay}\n[ "$n" -lt ${failing} ] && exit 1\nexec git ${cmd} "$@"\n`,
    );
    await Deno.chmod(path, 0o755);
    await sh(clone, "config", `remote.origin.${cmd.replace("-", "")}`, path);
  }
  return async () => Number((await Deno.readTextFile(count).catch(() => "0")).trim());
}

Deno.test("lease guard: a tick whose remote did not answer for nearly a whole lease stops before its next act, though the remote answers again for that act: another machine may have the task", async () => {
  const { guardWith } = await import("../lib/git/lease_guard.ts");
  const { LeaseLostError } = await import("../lib/errors.ts");
  using _guard = { [Symbol.dispose]: () => guardWith(null) };
  await withEnv(async (dir) => {
    const { a, b } = await world(dir, ["a", "b"]);
    const origin = join(dir, "origin.git");
    const t = await heldBy(a);
    try {
      // A's remote does not answer for 30 minutes; its renewals meanwhile decide nothing. B,
      // which still reaches it, finds A's lease over and takes the role.
      const connections = await flakyRemote(dir, join(dir, "a"), 2);
      t.clock += 30 * 60_000;
      await fetch(b);
      const took = await takeLease(b, "origin", "executor", holder("B"), TTL, new Date(t.clock));
      assert.ok(took.ok);
      // A's push: the guard's renewal fails, and the fetch that would say who holds the lease
      // fails too (the remote answers only from the next connection on). Stopped all the same.
      const err = await a.push("origin", "HEAD", "refs/heads/after-the-outage").then(
        () => null,
        (e) => e,
      );
      assert.ok(err instanceof LeaseLostError, String(err));
      assert.match(
        err.message,
        /^the executor lease on origin could not be renewed \(renewed last at 2026-12-02T10:00:00\.000Z, and it lasts 10m\): origin did not answer, and by now the lease may be over and the task another machine's\. It stopped before its next agent turn, push or merge; .* sets its run aside if the remote shows the task went on without it/,
      );
      assert.equal(await connections(), 2, "the renewal's push and fetch, and no push of A's");
      assert.equal(
        await sh(origin, "for-each-ref", "--format=%(refname)", "refs/heads/after-the-outage"),
        "",
      );
      assert.deepEqual(t.said, [], "nothing said the lease was lost: nobody knows");
      // The tick ends keeping its lease (its run is journaled): the remote answers again, and
      // its lease is B's: kept by nobody, released by nobody.
      await t.role.keep();
      await fetch(b);
      const lease = await readLease(b, "executor");
      assert.equal(lease?.lease?.holder.machine, "B");
      assert.equal(lease?.sha, took.held.sha);
    } finally {
      await t.role.release();
    }
  });
});

Deno.test("lease guard: with the remote away, the tick goes on until four fifths of its lease have passed unrenewed, and not a moment longer", async () => {
  const { confirmLease, guardWith } = await import("../lib/git/lease_guard.ts");
  const { LeaseLostError } = await import("../lib/errors.ts");
  using _guard = { [Symbol.dispose]: () => guardWith(null) };
  await withEnv(async (dir) => {
    const { a } = await world(dir, ["a"]);
    const origin = join(dir, "origin.git");
    const t = await heldBy(a);
    try {
      await Deno.rename(origin, `${origin}.away`);
      t.clock += 8 * 60_000 - 1; // renewed last 7m59.999s ago: the lease lasts 10m
      await confirmLease();
      t.clock += 1;
      const err = await confirmLease().then(() => null, (e) => e);
      assert.ok(err instanceof LeaseLostError, String(err));
      assert.match(err.message, /could not be renewed/);
    } finally {
      await Deno.rename(`${origin}.away`, origin).catch(() => {});
      await t.role.release();
    }
  });
});

Deno.test("lease guard: renewals run one at a time; a slow remote does not stack them, nor does the guard wait for a queue", async () => {
  const { HeldRole } = await import("../lib/loop/split.ts");
  const { confirmLease, guardWith } = await import("../lib/git/lease_guard.ts");
  using _guard = { [Symbol.dispose]: () => guardWith(null) };
  await withEnv(async (dir) => {
    const { a } = await world(dir, ["a"]);
    await fetch(a);
    const taken = await takeLease(a, "origin", "executor", holder("A"), TTL);
    assert.ok(taken.ok);
    // Every connection takes 0.3 s and fails: a renewal (its push, then the fetch that asks
    // whether the lease moved) takes 0.6 s or more, while one falls due every 50 ms.
    const connections = await flakyRemote(dir, join(dir, "a"), 1000, 0.3);
    const times = { ttlMs: TTL, renewEveryMs: 50, now: () => Date.now() };
    const role = new HeldRole(a, "origin", taken.held, { step: () => {} } as never, times);
    try {
      const start = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 2_000)); // an agent's turn
      const turn = Date.now() - start;
      await confirmLease(); // before the next act: the one under way, then one more
      // A queue would hold a renewal for each 50 ms of the turn (40), and the guard wait for
      // them all; one at a time, the turn had room for at most one per 0.6 s.
      const renewals = (await connections()) / 2;
      assert.ok(renewals <= turn / 600 + 2, `${renewals} renewals in a turn of ${turn} ms`);
      assert.ok(renewals >= 2, `${renewals} renewals`);
    } finally {
      await role.release();
    }
  });
});

Deno.test("lease: a renewal that landed although its push failed does not keep the lease past the tick: the release takes that commit up and lets go", async () => {
  const { guardWith } = await import("../lib/git/lease_guard.ts");
  using _guard = { [Symbol.dispose]: () => guardWith(null) };
  await withEnv(async (dir) => {
    const { a, b } = await world(dir, ["a", "b"]);
    const t = await heldBy(a);
    // A renewal of this run the tick never heard back from: on the remote, not in the role.
    await fetch(a);
    const held = await readLease(a, "executor");
    assert.ok(held?.lease);
    const landed = await renewLease(a, "origin", { sha: held.sha, lease: held.lease }, TTL);
    assert.ok(landed);
    await t.role.release();
    await fetch(b);
    const after = await readLease(b, "executor");
    assert.equal(after?.lease?.holder.machine, "A");
    assert.ok(after?.lease?.released, "released, not left to run out");
    const next = await takeLease(b, "origin", "executor", holder("B"), TTL);
    assert.ok(next.ok, "B need not wait for A's lease to run out");
  });
});

Deno.test("lease guard: a holder still at work whose lease a person released (relay lease release) stops at its next renewal, before its next act, and never takes the lease back", async () => {
  const { confirmLease, guardWith } = await import("../lib/git/lease_guard.ts");
  const { LeaseLostError } = await import("../lib/errors.ts");
  using _guard = { [Symbol.dispose]: () => guardWith(null) };
  await withEnv(async (dir) => {
    const { a, b } = await world(dir, ["a", "b"]);
    const t = await heldBy(a);
    // A person on B releases A's lease, naming A's run, as relay lease release does.
    await fetch(b);
    const read = await readLease(b, "executor");
    assert.ok(read?.lease);
    assert.ok(
      (await releaseLease(
        b,
        "origin",
        { sha: read.sha, lease: read.lease },
        new Date(t.clock),
        "relay lease release by p@h",
      )).ok,
    );
    await fetch(b);
    const released = (await readLease(b, "executor"))?.sha;
    // Until its next renewal A does not know (the command says so); at it, A finds the lease
    // released, not its own, and stops before its next act.
    t.clock += t.times.renewEveryMs * 1.5;
    const err = await confirmLease().then(() => null, (e) => e);
    assert.ok(err instanceof LeaseLostError, String(err));
    assert.match(err.message, /the executor lease on origin is no longer this machine's/);
    await t.role.release();
    await fetch(b);
    const after = await readLease(b, "executor");
    assert.equal(after?.sha, released, "A's end of the tick moved nothing on the remote");
    assert.equal(after?.lease?.releasedBy, "relay lease release by p@h", "A did not take it back");
  });
});

Deno.test("emptyTree() writes the empty tree into each repository once, in that repository's object format", async () => {
  await withEnv(async (dir) => {
    const sha1 = new Git(join(dir, "sha1"));
    const sha256 = new Git(join(dir, "sha256"));
    await sh(dir, "init", "--quiet", "sha1");
    await sh(dir, "init", "--quiet", "--object-format=sha256", "sha256");
    const one = await emptyTree(sha1);
    assert.equal(one, "4b825dc642cb6eb9a060e54bf8d69288fbee4904");
    assert.equal(await sha1.out(["cat-file", "-t", one]), "tree");
    // Kept for the process: asked again with no repository there, git is not run.
    await Deno.rename(join(dir, "sha1", ".git"), join(dir, "sha1", ".git-away"));
    assert.equal(await emptyTree(sha1), one);
    await assert.rejects(sha1.out(["mktree"], { stdin: "" }), "git itself finds no repository");
    // Per repository: the SHA-256 one is asked of git, not taken from above.
    const two = await emptyTree(sha256);
    assert.equal(two, "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321");
    assert.equal(await sha256.out(["cat-file", "-t", two]), "tree");
  });
});
