/**
 * Notifications, end to end: the operator profile's notifiers get one JSON
 * event on stdin per state change — never one per tick — across a HOLD that
 * every later tick meets again, the person's resume, and the merge. A
 * notifier that fails is a warning; the tick's result is unchanged.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, brief, makeScene, originLog, queue, type Scene } from "./helpers/scene.ts";

async function notifier(scene: Scene): Promise<{ file: string; profile: string }> {
  const file = join(scene.dir, "events.jsonl");
  const script = join(scene.dir, "notifier.sh");
  await Deno.writeTextFile(script, `cat >> ${JSON.stringify(file)}\n`);
  return {
    file,
    profile: `notify:\n  - ["bash", ${JSON.stringify(script)}]\n  - ["false"]\n`,
  };
}

interface Told {
  version: number;
  kind: string;
  task: number | null;
  repo: string;
  reason: string;
  next: string | null;
  links: { show: string | null };
}

async function events(file: string): Promise<Told[]> {
  const text = await Deno.readTextFile(file).catch(() => "");
  return text.split("\n").filter((l) => l).map((l) => JSON.parse(l));
}

Deno.test("a notifier gets exactly one event per state change: HOLD (met again by later ticks), resume, merge", async () => {
  await using scene = await makeScene();
  const n = await notifier(scene);
  await scene.setAgent("good.sh", n.profile);
  await scene.setStage("polish", "edits.sh");
  await queue(scene, brief({ title: "Greet" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.equal((await scene.relay(["poll"])).code, 0);
  assert.deepEqual(await events(n.file), [], "shipping is not a change a person is told of");

  const held = await scene.relay(["review"]);
  assert.equal(held.code, 3, all(held));
  // The failing notifier is a warning, not the tick's result.
  assert.match(held.stderr, /relay: warning: notifier false exited 1 for hold/);
  for (let minute = 0; minute < 2; minute++) {
    assert.equal((await scene.relay(["review"])).code, 3);
    await scene.relay(["poll"]); // idle: its brief is DONE
  }
  await scene.setStage("polish", "passes.sh");
  assert.equal((await scene.relay(["resume"])).code, 0);
  const merged = await scene.relay(["review"]);
  assert.equal(merged.code, 0, all(merged));
  assert.match(merged.stdout, /task 1 merged/);
  assert.equal((await scene.relay(["review"])).code, 0);
  assert.match(await originLog(scene), /Merge task-1/);

  const told = await events(n.file);
  assert.deepEqual(told.map((e) => e.kind), ["hold", "merged"], JSON.stringify(told, null, 2));
  const [hold, merge] = told as [Told, Told];
  assert.equal(hold.version, 1);
  assert.equal(hold.task, 1);
  assert.equal(hold.repo, scene.work);
  assert.match(hold.reason, /polish stage of task 1: .*twice/);
  assert.match(hold.next ?? "", /relay resume/);
  assert.deepEqual(hold.links.show, "relay show 1");
  assert.equal(merge.task, 1);
  assert.match(merge.reason, /task 1 merged \([0-9a-f]{12}\)/);
});

Deno.test("DONE awaiting acceptance is told once, not every minute it waits", async () => {
  await using scene = await makeScene();
  const n = await notifier(scene);
  await scene.setAgent("good.sh", `merge_policy: human\n${n.profile}`);
  await queue(scene, brief({ title: "Greet" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.equal((await scene.relay(["poll"])).code, 0);
  for (let minute = 0; minute < 3; minute++) {
    assert.equal((await scene.relay(["review"])).code, 3);
  }
  const told = await events(n.file);
  assert.deepEqual(told.map((e) => e.kind), ["acceptance"]);
  assert.equal(told[0]!.next, "relay accept 1 --intent-only");
});

Deno.test("a PR the merge gate refuses is told as kind refused, with the gate's reason, once", async () => {
  await using scene = await makeScene({ agent: "commits-pyc.sh" });
  const n = await notifier(scene);
  await scene.setAgent("commits-pyc.sh", n.profile);
  await queue(scene, brief({ title: "Greet" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.equal((await scene.relay(["poll"])).code, 0);
  const refused = await scene.relay(["review"]);
  assert.equal(refused.code, 0, all(refused));
  assert.match(refused.stdout, /task 1: sent back — fix brief 2/);
  assert.equal((await scene.relay(["review"])).code, 0);
  const told = await events(n.file);
  assert.deepEqual(told.map((e) => e.kind), ["refused"], JSON.stringify(told, null, 2));
  assert.match(told[0]!.reason, /sent back — fix brief 2 .*\(The merge gate refused this PR/);
});
