/** `relay promote` through the real CLI. */
import assert from "node:assert/strict";
import { brief, makeScene, type Scene } from "./helpers/scene.ts";

async function queue(scene: Scene, task: number, title: string): Promise<void> {
  await scene.write("brief.md", brief({ task, title }));
  const res = await scene.relay(["inbox", "add", "brief.md"]);
  assert.equal(res.code, 0, res.stderr);
  await Deno.remove(`${scene.work}/brief.md`);
}

function nextSteps(task: number, status: string): string {
  return brief({
    task,
    status,
    title: `Task ${task}`,
    extraHeader: `Branch: task-${task}\nKind: feature`,
  });
}

Deno.test("relay promote with nothing queued says so, exits 0 and writes nothing", async () => {
  await using scene = await makeScene();
  const before = await scene.snapshot();
  const res = await scene.relay(["promote"]);
  assert.equal(res.code, 0, res.stderr);
  assert.equal(res.stdout, "nothing to promote: the inbox is empty\n");
  const json = await scene.relay(["promote", "--json"]);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(JSON.parse(json.stdout), {
    result: "empty",
    message: "nothing to promote: the inbox is empty",
  });
  assert.equal(await scene.snapshot(), before);
});

Deno.test("relay promote refuses while a brief is OPEN and leaves NEXT-STEPS.md and the queue alone", async () => {
  await using scene = await makeScene();
  await queue(scene, 2, "Waiting");
  await scene.write("NEXT-STEPS.md", nextSteps(1, "OPEN"));
  const before = await scene.snapshot();

  const res = await scene.relay(["promote"]);
  assert.equal(res.code, 0, res.stderr);
  assert.equal(res.stdout, "not promoting: task 1 is still open in NEXT-STEPS.md\n");
  const json = await scene.relay(["promote", "--json"]);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(JSON.parse(json.stdout), {
    result: "open",
    task: 1,
    message: "not promoting: task 1 is still open in NEXT-STEPS.md",
  });
  assert.equal(await scene.read("NEXT-STEPS.md"), nextSteps(1, "OPEN"));
  assert.equal(await scene.snapshot(), before);
});

Deno.test("relay promote takes the lowest task number first, one at a time, and commits nothing", async () => {
  await using scene = await makeScene();
  await queue(scene, 5, "Five");
  await queue(scene, 3, "Three");
  const log = await scene.out(["log", "--all", "--format=%H"]);

  const first = await scene.relay(["promote"]);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(
    first.stdout,
    "promoted task 3: Three (from .relay/inbox/0003-three.md) — NEXT-STEPS.md is OPEN\n",
  );
  const promoted = await scene.read("NEXT-STEPS.md");
  assert.match(
    promoted,
    /^Status: OPEN\nTask: 3\nTitle: Three\nBranch: task-3\nKind: feature\n\n## Goal\n/,
  );
  const list = JSON.parse((await scene.relay(["inbox", "list", "--json"])).stdout);
  assert.deepEqual(list.map((e: { task: number }) => e.task), [5]);

  // Task 3 is open now: nothing more moves.
  const refused = await scene.relay(["promote"]);
  assert.equal(refused.code, 0, refused.stderr);
  assert.match(refused.stdout, /^not promoting: task 3 is still open/);
  assert.equal(await scene.read("NEXT-STEPS.md"), promoted);

  // Once it is DONE, the next one follows.
  await scene.write("NEXT-STEPS.md", promoted.replace(/^Status: OPEN/, "Status: DONE"));
  const second = await scene.relay(["promote", "--json"]);
  assert.equal(second.code, 0, second.stderr);
  assert.deepEqual(JSON.parse(second.stdout), {
    result: "promoted",
    task: 5,
    title: "Five",
    from: ".relay/inbox/0005-five.md",
  });
  assert.match(await scene.read("NEXT-STEPS.md"), /^Status: OPEN\nTask: 5\n/);
  assert.deepEqual(JSON.parse((await scene.relay(["inbox", "list", "--json"])).stdout), []);
  assert.equal(await scene.out(["log", "--all", "--format=%H"]), log);
});
