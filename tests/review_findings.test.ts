/**
 * Findings of an independent review of the split-machine set-aside (lib/loop/supersede.ts)
 * and the stale reviewer turn (lib/loop/review_stale.ts). Each test fails on the code it
 * names, and passes once the finding is fixed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { AGENTS, all, exists, makeScene } from "./helpers/scene.ts";
import { briefs, launched, tick } from "./helpers/split_machines.ts";

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
