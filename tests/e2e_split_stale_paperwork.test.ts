/**
 * `machines: split`, forge plain: a reviewer machine (B) whose tick died after it committed
 * its paperwork (a promotion, a fix brief) and before it pushed it. B's reviewer lease ran
 * out, another machine (C) took the role and went on from what the remote showed. When B
 * comes back, its paperwork is stale: it must not land on main over what happened since.
 * Real CLI, real git, a bare file:// origin; B's tick dies at
 * RELAY_FAILPOINT=reviewer-paperwork-committed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, makeScene, type Scene } from "./helpers/scene.ts";
import { briefs, expire, launched, tick } from "./helpers/split_machines.ts";

Deno.test("split machines: a reviewer's paperwork left unpushed by a killed tick, redone meanwhile by another machine, does not land again when the machine comes back: one promotion on main, and the executor does the task once", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, c, launches } = await briefs(scene, ["First", "Second"]);
  const shipped = await tick(scene, a, "poll");
  assert.match(shipped.stdout, /task 1 shipped/, all(shipped));

  // B merges task 1 and promotes brief 2, commits that paperwork and dies before its push.
  const killed = await tick(scene, b, "review", {
    RELAY_FAILPOINT: "reviewer-paperwork-committed",
  });
  assert.equal(killed.code, 137, all(killed));
  const brief = () => scene.out(["show", "refs/heads/main:NEXT-STEPS.md"], scene.origin);
  assert.match(await brief(), /^Status: DONE/, "B's promotion is not on the origin");

  // B's lease runs out; C takes the role and promotes brief 2 itself; A does task 2.
  await expire(scene, "reviewer");
  const promoted = await tick(scene, c, "review");
  assert.equal(promoted.code, 0, all(promoted));
  assert.match(await brief(), /^Status: OPEN/, all(promoted));
  const second = await tick(scene, a, "poll");
  assert.match(second.stdout, /task 2 shipped/, all(second));
  const before = await brief();
  assert.match(before, /^Status: DONE/);

  // B comes back.
  const back = await tick(scene, b, "review");
  assert.equal(back.code, 0, all(back));
  // B's promotion is C's, commit for commit: the rebase drops it, and nothing more lands.
  const subjects = await scene.out(["log", "--format=%s", "refs/heads/main"], scene.origin);
  assert.equal(
    subjects.split("\n").filter((s) => s === "Task #2: brief — OPEN (task-2)").length,
    1,
  );
  assert.equal(await brief(), before, "B's stale promotion landed on main");
  const again = await tick(scene, a, "poll");
  assert.doesNotMatch(again.stdout, /shipped/, all(again));
  assert.deepEqual(await launched(launches), ["task 1 A", "task 2 A"]);
});

/** Every commit the origin's main was set to, oldest first (the origin keeps a reflog). */
async function mainTips(scene: Scene): Promise<string[]> {
  const out = await scene.out(["reflog", "--format=%H", "refs/heads/main"], scene.origin);
  return out.split("\n").filter((l) => l !== "").reverse();
}

Deno.test("split machines: a fix brief left unpushed by a killed tick, for a task another machine merged meanwhile, is retired before it reaches the origin: no executor could start on it", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  await scene.git(scene.origin, ["config", "core.logAllRefUpdates", "always"]);
  const { a, b, c, launches } = await briefs(scene, ["First"]);
  const shipped = await tick(scene, a, "poll");
  assert.match(shipped.stdout, /task 1 shipped/, all(shipped));

  // B's reviewer FAILs task 1; B writes fix brief 2, commits it and dies before its push.
  const killed = await tick(scene, b, "review", {
    RELAY_FAILPOINT: "reviewer-paperwork-committed",
    FAKE_FAIL_ONCE: join(scene.dir, "failed"),
  });
  assert.equal(killed.code, 137, all(killed));
  assert.match(killed.stderr, /task 1: verdict FAIL/, all(killed));
  const unpushed = await scene.out(["show", "HEAD:NEXT-STEPS.md"], b.dir);
  assert.match(unpushed, /^Status: OPEN\nTask: 2\n/, "B's fix brief waits on B's main");

  // B's lease runs out. C reviews task 1 afresh (B's FAIL never reached the origin), PASSes
  // and merges it.
  await expire(scene, "reviewer");
  const merged = await tick(scene, c, "review");
  assert.match(merged.stdout, /task 1 merged/, all(merged));
  const since = (await mainTips(scene)).length;

  // B comes back: the remote shows task 1 merged, so its fix brief is retired, and only then
  // does its paperwork go out. No tip of the origin's main ever had it OPEN.
  const back = await tick(scene, b, "review");
  assert.equal(back.code, 0, all(back));
  assert.match(back.stdout, /fix brief 2 retired/, all(back));
  const pushed = (await mainTips(scene)).slice(since);
  assert.ok(pushed.length > 0, "B's paperwork was not pushed");
  for (const tip of pushed) {
    const brief = await scene.out(["show", `${tip}:NEXT-STEPS.md`], scene.origin);
    assert.doesNotMatch(brief, /^Status: OPEN/, `main was at ${tip} with:\n${brief}`);
  }
  const idle = await tick(scene, a, "poll");
  assert.match(idle.stdout, /idle: NEXT-STEPS.md is not OPEN/, all(idle));
  assert.deepEqual(await launched(launches), ["task 1 A"]);
});
