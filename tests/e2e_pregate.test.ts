/**
 * End to end: the gate's cheap checks run before the reviewer's paid turn. A PR
 * that touches a path the gate refuses, or changes nothing, goes back with a
 * fix brief and owner-accepted infra goes to a person — with no reviewer
 * launched; a product-only PR is still reviewed. Real CLI, real git, fake
 * agents and a reviewer that counts its launches.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, brief, countLines, makeScene, type Scene } from "./helpers/scene.ts";

async function ship(scene: Scene, env: Record<string, string> = {}): Promise<void> {
  const queued = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title: "Feature" }) });
  assert.equal(queued.code, 0, all(queued));
  assert.equal((await scene.relay(["promote"])).code, 0);
  const poll = await scene.relay(["poll"], { env });
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 1 shipped/);
}

/** One review tick; returns it and how many times the reviewer was launched. */
async function review(scene: Scene) {
  const count = join(scene.dir, "reviews");
  const res = await scene.relay(["review"], { env: { FAKE_REVIEW_COUNT: count } });
  return { res, launches: await countLines(count, "review ") };
}

async function mergesOnMain(scene: Scene): Promise<string[]> {
  await scene.git(scene.work, ["fetch", "--quiet", "origin"]);
  return (await scene.out(["log", "--format=%s", "origin/main"])).split("\n")
    .filter((s) => s.startsWith("Merge "));
}

Deno.test("a PR that adds package.json is sent back with the gate's finding and no reviewer turn", async () => {
  await using scene = await makeScene({ agent: "custom.sh" });
  await ship(scene, { FAKE_EXTRA: `echo '{"dependencies":{"left-pad":"1"}}' > package.json` });

  const { res, launches } = await review(scene);
  assert.equal(res.code, 0, all(res));
  assert.match(res.stdout, /task 1: sent back — fix brief 2/);
  assert.equal(launches, 0, "the reviewer was launched");
  const fix = await scene.read("NEXT-STEPS.md");
  assert.match(fix, /^Fixes: 1$/m);
  assert.match(fix, /scope: not product code: package\.json \(dependency manifest\)/);
  assert.deepEqual(await mergesOnMain(scene), []);
});

Deno.test("a PR that changes nothing (its head already in main) is sent back with no reviewer turn", async () => {
  await using scene = await makeScene({ agent: "pushback.sh" });
  await ship(scene);

  const { res, launches } = await review(scene);
  assert.equal(res.code, 0, all(res));
  assert.match(res.stdout, /task 1: sent back — fix brief 2/);
  assert.equal(launches, 0, "the reviewer was launched");
  assert.match(
    await scene.read("NEXT-STEPS.md"),
    /scope: the branch changes nothing relative to main/,
  );
  assert.deepEqual(await mergesOnMain(scene), []);
});

Deno.test("a PR of owner-accepted infra goes to a person with no reviewer turn, and the gate agrees", async () => {
  await using scene = await makeScene({
    agent: "custom.sh",
    config: "accepted_infra:\n  - netlify.toml\n",
  });
  await ship(scene, { FAKE_EXTRA: "printf '[build]\\n' > netlify.toml" });

  const { res, launches } = await review(scene);
  assert.equal(res.code, 3, all(res));
  assert.match(res.stdout, /human path: task-1 changes owner-accepted infra \(netlify\.toml\)/);
  assert.equal(launches, 0, "the reviewer was launched");
  const gate = await scene.relay(["gate"]);
  assert.equal(gate.code, 11, all(gate));
  assert.match(gate.stdout, /^HUMAN +verdict +not reviewed by relay/m);
  assert.deepEqual(await mergesOnMain(scene), []);
});

Deno.test("a product-only PR is still reviewed, once, and merged", async () => {
  await using scene = await makeScene();
  await ship(scene);

  const { res, launches } = await review(scene);
  assert.equal(res.code, 0, all(res));
  assert.equal(launches, 1);
  assert.equal((await mergesOnMain(scene)).length, 1);
});
