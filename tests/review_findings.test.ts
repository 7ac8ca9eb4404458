/**
 * Findings of an independent review of the split-machine set-aside (lib/loop/supersede.ts)
 * and the stale reviewer turn (lib/loop/review_stale.ts). Each test fails on the code it
 * names, and passes once the finding is fixed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { AGENTS, all, exists, makeScene } from "./helpers/scene.ts";
import { briefs, expire, launched, tick } from "./helpers/split_machines.ts";

Deno.test("review finding 1: an agent that pushed its own task branch (allowed) before its tick was killed is not set aside as 'another machine's work': its run is resumed, no second agent turn", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, launches } = await briefs(
    scene,
    ["Pushes its own branch"],
    `exec bash "${join(AGENTS, "pushes-upstream.sh")}" "$@"`,
  );
  // A's agent pushes task-1 itself (as agents often do) and exits; A's tick is killed
  // before relay looked at the turn. Nobody else touches the task.
  const killed = await tick(scene, a, "poll", { RELAY_FAILPOINT: "after-agent-finished" });
  assert.equal(killed.code, 137, all(killed));
  const back = await tick(scene, a, "poll");
  assert.equal(back.code, 0, all(back));
  assert.doesNotMatch(all(back), /set aside/, all(back));
  assert.match(back.stdout, /task 1 shipped/, all(back));
  assert.deepEqual(await launched(launches), ["task 1 A"], "one agent turn, not two");
  const review = await tick(scene, b, "review");
  assert.match(review.stdout, /task 1 merged/, all(review));
  assert.equal(await exists(join(a.dir, ".git", "relay", "set-aside.json")), false);
});

Deno.test('review finding 2: split with the plain forge journals "pushed" before anything is on the remote (the branch goes with the PR record at pr-opened): a run killed there, whose task another machine then did and merged, is set aside, not held on a rejected push', async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, c, launches } = await briefs(scene, ["Killed at pushed"]);
  const killed = await tick(scene, a, "poll", { RELAY_FAILPOINT: "after-pushed" });
  assert.equal(killed.code, 137, all(killed));
  // Nothing of A's is on the remote: "pushed" is journaled, the push is openPr's.
  assert.equal(
    (await scene.git(scene.origin, ["rev-parse", "--verify", "--quiet", "task-1"], true)).code,
    1,
  );
  await expire(scene, "executor");
  const shipped = await tick(scene, c, "poll");
  assert.match(shipped.stdout, /task 1 shipped/, all(shipped));
  const merged = await tick(scene, b, "review");
  assert.match(merged.stdout, /task 1 merged/, all(merged));
  const back = await tick(scene, a, "poll");
  assert.equal(back.code, 0, all(back));
  assert.match(
    back.stdout,
    /set aside this machine's run \S+ \(stopped after step "pushed"\)/,
    all(back),
  );
  assert.deepEqual(await launched(launches), ["task 1 A", "task 1 C"]);
});

Deno.test('review finding 2 (the other side): a run killed at "pushed" (plain forge, split) that nobody else touched is resumed and ships', async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, launches } = await briefs(scene, ["Killed at pushed, alone"]);
  const killed = await tick(scene, a, "poll", { RELAY_FAILPOINT: "after-pushed" });
  assert.equal(killed.code, 137, all(killed));
  await expire(scene, "executor");
  const back = await tick(scene, a, "poll");
  assert.equal(back.code, 0, all(back));
  assert.doesNotMatch(all(back), /set aside/, all(back));
  assert.match(back.stdout, /task 1 shipped/, all(back));
  const merged = await tick(scene, b, "review");
  assert.match(merged.stdout, /task 1 merged/, all(merged));
  assert.deepEqual(await launched(launches), ["task 1 A"]);
});
