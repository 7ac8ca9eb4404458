/**
 * GitHub Actions as `relay schedule print --github-actions` runs the loop: every run a fresh
 * clone of the remote (a fresh machine), each job's `.git/relay/` restored from the job's last
 * run and saved after it, as the workflow's actions/cache steps do. The limits and HOLDs of a
 * machine of its own must hold from run to run: a PR that never passes runs out of fix rounds
 * in a HOLD, and the HOLD stops the next runs too — not a send-back every five minutes forever.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, brief, makeScene, type Scene } from "./helpers/scene.ts";

async function copyTree(from: string, to: string): Promise<void> {
  const out = await new Deno.Command("cp", { args: ["-a", "--", from, to], stdin: "null" })
    .output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
}

/**
 * One Actions run of a job, as the printed workflow makes it: a fresh clone (the checkout), the
 * job's records from its last run (actions/cache/restore), the tick, the records saved
 * (actions/cache/save, also after a failed run). `env`: the fake agents' switches; a file it
 * names is removed before each run, so a "once" switch fires every run.
 */
async function actionsRunner(scene: Scene, env: Record<string, string>) {
  const profile = await Deno.readTextFile(scene.profile);
  const saved: Record<string, string | undefined> = {};
  let runs = 0;
  return async (tick: "poll" | "review") => {
    const name = `${tick}-${++runs}`;
    const dir = join(scene.dir, `runner-${name}`);
    await scene.git(scene.dir, ["clone", "--quiet", `file://${scene.origin}`, dir]);
    if (saved[tick]) await copyTree(saved[tick]!, join(dir, ".git", "relay"));
    const own = join(scene.dir, `profile-${name}.yaml`);
    await Deno.writeTextFile(
      own,
      profile.replace(/^worktree_root: .*$/m, `worktree_root: ${join(scene.dir, `wt-${name}`)}`),
    );
    for (const file of Object.values(env)) await Deno.remove(file).catch(() => {});
    const res = await scene.relay(["-C", dir, "--profile", own, tick], { env });
    saved[tick] = join(scene.dir, `cache-${name}`);
    await copyTree(join(dir, ".git", "relay"), saved[tick]!);
    return res;
  };
}

Deno.test("on Actions, a fresh clone each run with the job's .git/relay carried over: the fix rounds run out in a HOLD that outlives the runner", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const add = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title: "Never passes" }) });
  assert.equal(add.code, 0, all(add));
  assert.equal((await scene.relay(["promote"])).code, 0);
  // The person's clone publishes the promotion (the open brief) to the remote.
  const published = await scene.relay(["review"]);
  assert.equal(published.code, 0, all(published));

  const actionsRun = await actionsRunner(scene, { FAKE_FAIL_ONCE: join(scene.dir, "failed-once") });

  const said: string[] = [];
  let held = -1;
  for (let minute = 0; minute < 12 && held < 0; minute++) {
    const poll = await actionsRun("poll");
    assert.ok([0, 1].includes(poll.code), all(poll));
    const review = await actionsRun("review");
    said.push(all(review));
    if (review.code === 3) held = minute;
    else assert.equal(review.code, 0, all(review));
  }
  const log = said.join("\n");
  assert.ok(held >= 0, `no HOLD in 12 runs of each job:\n${log}`);
  const rounds = [...log.matchAll(/\(round (\d)\/3\)/g)].map((m) => m[1]);
  assert.deepEqual(rounds, ["1", "2", "3"], log);
  assert.match(said.at(-1)!, /HOLD: task 1 was sent back 3 time\(s\) and still does not pass/);

  // The HOLD is in the review job's records: the next runs, on fresh runners, stop on it too.
  for (let i = 0; i < 2; i++) {
    const again = await actionsRun("review");
    assert.equal(again.code, 3, all(again));
    assert.match(all(again), /sent back 3 time\(s\)/);
    assert.doesNotMatch(all(again), /round \d\/3/);
  }
});

Deno.test("on Actions, the executor's attempts are counted across runs: the second failed attempt, on another runner, ends the task BLOCKED", async () => {
  await using scene = await makeScene({ config: "machines: split\n", agent: "exit1.sh" });
  const add = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title: "Always fails" }) });
  assert.equal(add.code, 0, all(add));
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.equal((await scene.relay(["review"])).code, 0);
  const actionsRun = await actionsRunner(scene, {});
  const first = await actionsRun("poll");
  assert.equal(first.code, 1, all(first));
  assert.match(all(first), /attempt 1\/2 failed/);
  const second = await actionsRun("poll");
  assert.match(all(second), /task 1 BLOCKED: 2 attempt\(s\) failed/, all(second));
  assert.doesNotMatch(all(second), /attempt 1\/2/);
  // The task ends BLOCKED on the remote's main: no third attempt, on this runner or the next.
  assert.match(
    await scene.out(["show", "origin/main:COWORK-STATUS.md"], join(scene.dir, "runner-poll-2")),
    /^Outcome: BLOCKED$/m,
  );
  const third = await actionsRun("poll");
  assert.doesNotMatch(all(third), /attempt \d\/2/, all(third));
});
