/**
 * `relay lease` and `relay lease release <role> <run>` (machines: split): the roles' leases as
 * the remote has them, and a person's release of one whose machine is gone — only the run it
 * names, only if the remote still has that lease, by relay's own compare-and-swap push. Machine
 * A is killed mid-run (its lease stays on the remote, as a crashed machine's does), C polls.
 */
import assert from "node:assert/strict";
import { all, makeScene, type Scene } from "./helpers/scene.ts";
import { briefs, lease, type Machine, tick } from "./helpers/split_machines.ts";

const LEASE_REF = "refs/relay/leases/executor";

/** `relay lease …` on machine m. */
function relayLease(scene: Scene, m: Machine, args: string[] = []) {
  return scene.relay(["-C", m.dir, "--profile", m.profile, "lease", ...args]);
}

/** The origin's executor lease commit. */
function leaseCommit(scene: Scene): Promise<string> {
  return scene.out(["rev-parse", LEASE_REF], scene.origin);
}

/** A is killed after preparing its run of task 1: its executor lease stays on the origin. */
async function crashedHolder(scene: Scene) {
  const machines = await briefs(scene, ["Crash"]);
  const killed = await tick(scene, machines.a, "poll", { RELAY_FAILPOINT: "after-prepared" });
  assert.equal(killed.code, 137, all(killed));
  return { ...machines, run: (await lease(scene, "executor")).holder.run };
}

Deno.test("relay lease names the holder of a crashed machine's lease and how to release it; releasing it by its run frees the role at once", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, c, run } = await crashedHolder(scene);
  const busy = await tick(scene, c, "poll");
  assert.equal(busy.code, 0, all(busy));
  assert.match(
    busy.stdout + busy.stderr,
    new RegExp(`busy: executor lease held by .* \\(run ${run}\\)`),
  );

  const shown = await relayLease(scene, c);
  assert.equal(shown.code, 0, all(shown));
  assert.match(
    shown.stdout,
    new RegExp(
      `^executor: held by \\S+ pid \\d+ \\(run ${run}\\) since \\S+, until \\S+ \\(in (9m\\d*s|10m)\\); ` +
        `if that machine is gone, relay lease release executor ${run}$`,
      "m",
    ),
  );
  assert.match(shown.stdout, /^reviewer: free: released by /m);
  const json = JSON.parse((await relayLease(scene, c, ["--json"])).stdout);
  assert.equal(json.executor.state, "held");
  assert.equal(json.executor.holder.run, run);
  assert.equal(json.executor.commit, await leaseCommit(scene));

  // A run that is not the holder's changes nothing.
  const before = await leaseCommit(scene);
  const wrong = await relayLease(scene, c, ["release", "executor", "some-other-run"]);
  assert.equal(wrong.code, 1, all(wrong));
  assert.match(
    wrong.stdout,
    new RegExp(`^not released: the executor lease is run ${run}'s, not some-other-run's`),
  );
  assert.equal(await leaseCommit(scene), before);

  const released = await relayLease(scene, c, ["release", "executor", run]);
  assert.equal(released.code, 0, all(released));
  assert.match(
    released.stdout,
    /^released the executor lease of \S+ pid \d+ \(run .*\) on origin: /,
  );
  const now = await lease(scene, "executor");
  assert.ok(now.released, JSON.stringify(now));
  assert.equal(now.holder.run, run, "the released lease still names whose it was");
  assert.match(now.releasedBy ?? "", /^relay lease release by \S+@\S+$/);
  // Once more: nothing left to release, and who released it.
  const again = await relayLease(scene, c, ["release", "executor", run]);
  assert.equal(again.code, 0, all(again));
  assert.match(
    again.stdout,
    new RegExp(
      `^nothing to release: executor: free: relay lease release by \\S+ at \\S+, held by \\S+ pid \\d+ \\(run ${run}\\) until then$`,
      "m",
    ),
  );

  // C takes the role at its next tick and ships the task; A, back, sets its run aside.
  const shipped = await tick(scene, c, "poll");
  assert.equal(shipped.code, 0, all(shipped));
  assert.match(shipped.stdout, /task 1 shipped/);
  assert.equal((await tick(scene, a, "poll")).code, 0);
});

Deno.test("relay lease says when a lease runs more than a whole lease ahead of this machine's clock", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { c, run } = await crashedHolder(scene);
  // The holder's clock was a day ahead: a lease commit like its own, with that expires-at.
  const old = await leaseCommit(scene);
  const body = JSON.parse(await scene.out(["log", "-1", "--format=%B", LEASE_REF], scene.origin));
  body.expiresAt = new Date(Date.now() + 86_400_000).toISOString();
  const tree = await scene.out(["rev-parse", `${old}^{tree}`], scene.origin);
  const sha = await scene.out(["commit-tree", tree, "-m", JSON.stringify(body)], scene.origin);
  await scene.git(scene.origin, ["update-ref", LEASE_REF, sha, old]);
  const shown = await relayLease(scene, c);
  assert.equal(shown.code, 0, all(shown));
  assert.match(
    shown.stdout,
    new RegExp(
      `^executor: held by .* \\(in (23h59m\\d*s|24h)\\); that is more than a whole lease \\(10m\\) from now ` +
        `by this machine's clock: the holder's clock is ahead of this one's, or its lease is longer; ` +
        `if that machine is gone, relay lease release executor ${run}$`,
      "m",
    ),
  );
});

Deno.test("relay lease release says what the remote said when it refuses the push, and that the lease is as it was", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { c, run } = await crashedHolder(scene);
  const before = await leaseCommit(scene);
  const hook = `${scene.origin}/hooks/pre-receive`;
  await Deno.writeTextFile(hook, "#!/bin/sh\necho 'disk quota exceeded' >&2\nexit 1\n");
  await Deno.chmod(hook, 0o755);
  const refused = await relayLease(scene, c, ["release", "executor", run]);
  assert.equal(refused.code, 1, all(refused));
  assert.match(
    refused.stdout,
    /^not released: origin refused the push \(the lease is as it was\):\n/,
  );
  assert.match(refused.stdout, /disk quota exceeded/);
  assert.equal(await leaseCommit(scene), before);
});

Deno.test("relay lease refuses bad input and machines: one with exit 2, changing nothing", async () => {
  await using split = await makeScene({ config: "machines: split\n" });
  const { c } = await crashedHolder(split);
  const before = await leaseCommit(split);
  for (
    const [args, said] of [
      [["release"], /missing role: name executor or reviewer/],
      [["release", "planner", "r"], /"planner" is not a role: name executor or reviewer/],
      [["release", "executor"], /missing run: name the run that holds the lease/],
      [["drop"], /unknown subcommand "drop"/],
      [["--force"], /--force/],
      [["release", "executor", "r", "--json"], /--json is for the listing/],
    ] as const
  ) {
    const res = await relayLease(split, c, [...args]);
    assert.equal(res.code, 2, `${args.join(" ")}: ${all(res)}`);
    assert.match(res.stderr, said, `${args.join(" ")}: ${all(res)}`);
  }
  assert.equal(await leaseCommit(split), before);

  await using one = await makeScene();
  const res = await one.relay(["lease"]);
  assert.equal(res.code, 2, all(res));
  assert.match(
    res.stderr,
    /machines: one in \.relay\/config\.yaml\): its ticks take a lock in \.git\/relay/,
  );
});
