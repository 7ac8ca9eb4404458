/**
 * Operating the loop without touching the crontab: `relay pause` stops both
 * ticks from starting anything (a turn already running finishes), `relay
 * status` says who paused it and why, `relay unpause` lets them run again.
 * And paperwork commits carry `paperwork.commit_suffix` for hosts that build
 * on every push. Real CLI, real git, fake agents.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, brief, exists, makeScene, originLog, queue, stateDir } from "./helpers/scene.ts";

Deno.test("relay pause: both ticks start nothing, status says who and why; relay unpause lets them run", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "Greet" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  const empty = await scene.relay(["pause", "--reason", ""]);
  assert.equal(empty.code, 2, all(empty));
  const paused = await scene.relay(["pause", "--reason", "deploy freeze until Monday"], {
    env: { USER: "dana" },
  });
  assert.equal(paused.code, 0, all(paused));
  assert.match(
    paused.stdout,
    /^paused by dana@\S+ at \S+: deploy freeze until Monday; no tick starts anything until relay unpause$/m,
  );
  assert.match((await scene.relay(["pause"])).stdout, /^already paused by dana@/);

  const before = await scene.snapshot();
  for (const tick of ["poll", "review"]) {
    const res = await scene.relay([tick]);
    assert.equal(res.code, 0, all(res));
    assert.match(res.stdout, /paused by dana@\S+ at \S+: deploy freeze until Monday/);
  }
  assert.equal(await scene.snapshot(), before);
  assert.ok(!(await exists(join(stateDir(scene), "journal.json"))), "a paused poll started a run");
  assert.ok(!(await exists(scene.worktrees)), "a paused poll made a worktree");

  const status = await scene.relay(["status"]);
  assert.match(status.stdout, /^PAUSED: paused by dana@\S+ at \S+: deploy freeze until Monday/m);
  assert.match(
    status.stdout,
    /^next poll: {3}starts nothing: the loop is paused \(relay unpause\)$/m,
  );
  assert.match((await scene.relay(["status", "--brief"])).stdout, /^PAUSED: paused by dana@/m);

  const unpaused = await scene.relay(["unpause"]);
  assert.equal(unpaused.code, 0, all(unpaused));
  assert.match(unpaused.stdout, /unpaused: the next ticks run as usual/);
  assert.match((await scene.relay(["unpause"])).stdout, /not paused: nothing to do/);
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 1 shipped/);
});

Deno.test("relay pause during a turn: the running turn finishes and ships; the next tick starts nothing", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "Slow" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  const running = scene.relay(["poll"], { env: { FAKE_SLEEP: "3" } });
  const journal = join(stateDir(scene), "journal.json");
  for (let i = 0; i < 100 && !(await exists(journal)); i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(await exists(journal), "the poll never started its attempt");
  assert.equal((await scene.relay(["pause", "--reason", "look at it"])).code, 0);
  const done = await running;
  assert.equal(done.code, 0, all(done));
  assert.match(done.stdout, /task 1 shipped/);
  const review = await scene.relay(["review"]);
  assert.equal(review.code, 0, all(review));
  assert.match(review.stdout, /paused by \S+ at \S+: look at it/);
  assert.doesNotMatch(await originLog(scene), /Merge task-1/);
});

Deno.test("paperwork.commit_suffix rides on relay's paperwork commits only, not on merges of task branches", async () => {
  await using scene = await makeScene({ config: 'paperwork:\n  commit_suffix: "[skip ci]"\n' });
  await queue(scene, brief({ title: "Greet" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.equal((await scene.relay(["poll"])).code, 0);
  assert.equal((await scene.relay(["review"])).code, 0);
  const log = (await originLog(scene)).split("\n");
  assert.ok(log.includes("Task #1: status — SHIPPED (task-1) [skip ci]"), log.join("\n"));
  const merge = log.find((l) => l.startsWith("Merge task-1"));
  assert.ok(merge && !merge.includes("[skip ci]"), log.join("\n"));
});
