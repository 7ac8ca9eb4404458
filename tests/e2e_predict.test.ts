/**
 * `relay status` says what the next tick of each kind will do, with the
 * ticks' own machines run dry. Here a task lives its whole life — queued,
 * attempted, sent back, fixed, merged, then a HOLD — and before every tick
 * the prediction is held to what the tick then does: the first effect it
 * performs after looking (last-<tick>.json records them in order).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { brief, makeScene, type Scene, stateDir } from "./helpers/scene.ts";

/** Effects that only look: the prediction does them too, offline. */
const LOOKING = new Set(["get-ready", "look-for-prs-in-flight", "observe"]);

interface Next {
  effect: string;
  says: string;
}

async function predicted(scene: Scene): Promise<{ poll: Next; review: Next }> {
  const res = await scene.relay(["status", "--json"]);
  assert.ok(res.code === 0 || res.code === 3, res.stdout + res.stderr);
  return JSON.parse(res.stdout).next;
}

/** Runs the tick and returns the first effect it performed after looking. */
async function performed(
  scene: Scene,
  tick: "poll" | "review",
  env: Record<string, string> = {},
): Promise<string> {
  const res = await scene.relay([tick], { env });
  assert.ok([0, 1, 3].includes(res.code), res.stdout + res.stderr);
  const record = JSON.parse(
    await Deno.readTextFile(join(stateDir(scene), `last-${tick}.json`)),
  );
  const effects: string[] = record.effects ?? [];
  return effects.find((e) => !LOOKING.has(e)) ?? "(none)";
}

async function holds(
  scene: Scene,
  tick: "poll" | "review",
  env: Record<string, string> = {},
): Promise<Next> {
  const next = (await predicted(scene))[tick];
  assert.equal(await performed(scene, tick, env), next.effect, `${tick}: predicted ${next.says}`);
  return next;
}

Deno.test("status predicts what each tick then does, through a task's whole life", async () => {
  await using scene = await makeScene();
  const failOnce = { FAKE_FAIL_ONCE: join(scene.dir, "fail-once") };
  for (const title of ["Greet", "Wave"]) {
    const res = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title }) });
    assert.equal(res.code, 0, res.stderr);
  }

  // Nothing open: the poll's idle path and the review both have nothing to do.
  let next = await predicted(scene);
  assert.deepEqual(next.poll, { effect: "done", says: "idle: no open brief" });
  assert.equal(next.review.effect, "done");
  assert.match(next.review.says, /^idle: no report on origin\/main/);
  assert.equal(await performed(scene, "review"), "done");

  assert.equal((await scene.relay(["promote"])).code, 0);
  next = await predicted(scene);
  assert.equal(next.poll.says, "starts the executor for task 1, attempt 1 of 2");
  await holds(scene, "poll");

  // Shipped: the review will review it; a brief promoted meanwhile waits for the PR.
  assert.equal((await scene.relay(["promote"])).code, 0);
  next = await predicted(scene);
  assert.equal(next.poll.effect, "wait");
  assert.match(next.poll.says, /^waiting: task-1 is in flight; task 2 starts once/);
  await holds(scene, "poll");
  const review = await holds(scene, "review", failOnce);
  assert.match(review.says, /^reviews task 1's PR task-1 at [0-9a-f]{12}/);

  // Sent back: the fix goes first; the review waits for it.
  next = await predicted(scene);
  assert.match(next.poll.says, /^starts the executor for task 3, attempt 1 of 2$/);
  assert.equal((await holds(scene, "review", failOnce)).effect, "wait");
  await holds(scene, "poll");

  // The fix shipped: reviewed again, passed, merged, and the queued brief promoted.
  await holds(scene, "review", failOnce);
  next = await predicted(scene);
  assert.match(next.poll.says, /^starts the executor for task 2, attempt 1 of 2$/);
  assert.match(next.review.says, /^task 1 is merged/);
  await holds(scene, "review");

  // A HOLD: both ticks stop at it, and status says so for both.
  await scene.setAgent("moves-main.sh");
  const held = await scene.relay(["poll"]);
  assert.equal(held.code, 3, held.stdout + held.stderr);
  next = await predicted(scene);
  assert.equal(next.poll.effect, "stop-on-hold");
  assert.equal(next.review.effect, "stop-on-hold");
  await holds(scene, "poll");
  await holds(scene, "review");
});
