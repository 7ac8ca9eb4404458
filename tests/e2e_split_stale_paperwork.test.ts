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
import {
  briefs,
  expire,
  launched,
  originBrief,
  shippedThenKilled,
  tick,
} from "./helpers/split_machines.ts";

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
  const brief = () => originBrief(scene);
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
  // The origin changed the brief since B's main last matched it, and so did B: B's promotion
  // is set aside, not replayed, and nothing more lands.
  assert.match(
    back.stderr,
    /set aside this machine's paperwork that never reached origin/,
    all(back),
  );
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

for (
  const [failpoint, left] of [
    ["reviewer-paperwork-committed", "committed"],
    ["reviewer-paperwork-written", "not even committed"],
  ] as const
) {
  Deno.test(`split machines: a promotion a killed tick left ${left} is set aside when the origin's brief moved on, though a third brief makes it differ from the other machine's: task 2 is not reopened after it shipped, and the loop goes on to task 3`, async () => {
    await using scene = await makeScene({ config: "machines: split\n" });
    const { a, b, c, launches } = await briefs(scene, ["First", "Second", "Third"]);
    assert.match((await tick(scene, a, "poll")).stdout, /task 1 shipped/);
    const killed = await tick(scene, b, "review", { RELAY_FAILPOINT: failpoint });
    assert.equal(killed.code, 137, all(killed));
    await expire(scene, "reviewer");
    assert.equal((await tick(scene, c, "review")).code, 0);
    const second = await tick(scene, a, "poll");
    assert.match(second.stdout, /task 2 shipped/, all(second));

    const back = await tick(scene, b, "review");
    assert.equal(back.code, 0, all(back));
    assert.match(back.stderr, /set aside this machine's paperwork/, all(back));
    assert.match(back.stdout, /task 2 merged/, all(back));
    const brief = await originBrief(scene);
    assert.match(brief, /^Status: OPEN\nTask: 3\n/, brief);
    const third = await tick(scene, a, "poll");
    assert.match(third.stdout, /task 3 shipped/, all(third));
    assert.deepEqual(await launched(launches), ["task 1 A", "task 2 A", "task 3 A"]);
    // What B set aside was kept: its commits under an anchor, its files under .git/relay.
    const anchors = await scene.out(
      ["for-each-ref", "--format=%(refname)", "refs/relay/anchors/paperwork/"],
      b.dir,
    );
    assert.equal(anchors.split("\n").filter((l) => l !== "").length, left === "committed" ? 1 : 0);
    if (left !== "committed") {
      const aside = join(b.dir, ".git", "relay", "paperwork-aside");
      const kept = [];
      for await (const e of Deno.readDir(aside)) {
        kept.push(await Deno.readTextFile(join(aside, e.name, "NEXT-STEPS.md")).catch(() => ""));
      }
      assert.ok(kept.some((t) => /^Status: OPEN\nTask: 2\n/.test(t)), kept.join("\n---\n"));
    }
  });
}

Deno.test("split machines: a fix brief left unpushed by a killed tick never replaces the brief another machine promoted meanwhile: task 2 stays OPEN and is done, the fix brief never reaches the origin", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  await scene.git(scene.origin, ["config", "core.logAllRefUpdates", "always"]);
  const { a, b, c, launches } = await briefs(scene, ["First", "Second"]);
  await shippedThenKilled(scene, a, b, { fail: true });
  const unpushed = await scene.out(["show", "HEAD:NEXT-STEPS.md"], b.dir);
  assert.match(unpushed, /^Status: OPEN\nTask: 3\n/, "B's fix brief waits on B's main");

  // C PASSes task 1 afresh, merges it and promotes brief 2.
  await expire(scene, "reviewer");
  const merged = await tick(scene, c, "review");
  assert.match(merged.stdout, /task 1 merged/, all(merged));
  const brief = () => originBrief(scene);
  assert.match(await brief(), /^Status: OPEN\nTask: 2\n/);

  const back = await tick(scene, b, "review");
  assert.equal(back.code, 0, all(back));
  assert.match(back.stderr, /set aside this machine's paperwork/, all(back));
  assert.match(await brief(), /^Status: OPEN\nTask: 2\n/, all(back));
  for (const tip of await mainTips(scene)) {
    const text = await scene.out(["show", `${tip}:NEXT-STEPS.md`], scene.origin);
    assert.doesNotMatch(text, /^Task: 3$/m, `main was at ${tip} with:\n${text}`);
  }
  const second = await tick(scene, a, "poll");
  assert.match(second.stdout, /task 2 shipped/, all(second));
  const done = await tick(scene, b, "review");
  assert.match(done.stdout, /task 2 merged/, all(done));
  assert.deepEqual(await launched(launches), ["task 1 A", "task 2 A"]);
});

/**
 * A `git` in front of the real one on PATH that cannot reach the remote for one kind of push:
 * the reviewer's paperwork (`HEAD:refs/heads/main`). Every other command goes through.
 */
async function paperworkPushFails(scene: Scene): Promise<Record<string, string>> {
  const bin = join(scene.dir, "paperwork-push-fails");
  await Deno.mkdir(bin);
  const real = (await new Deno.Command("sh", { args: ["-c", "command -v git"] }).output()).stdout;
  await Deno.writeTextFile(
    join(bin, "git"),
    `#!/usr/bin/env bash\nfor a in "$@"; do if [ "$a" = HEAD:refs/heads/main ]; then\n` +
      `  echo "fatal: unable to access 'https://example.invalid/': Could not resolve host: example.invalid" >&2; exit 128\n` +
      `fi; done\nexec ${new TextDecoder().decode(real).trim()} "$@"\n`,
  );
  await Deno.chmod(join(bin, "git"), 0o755);
  return { PATH: `${bin}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}` };
}

Deno.test("split machines: a review tick whose merge landed but whose paperwork push could not reach the remote says the merge (exit 0) and that its paperwork waits; a tick with nothing else to do says 'not yet' while it still waits; the next one that reaches the remote pushes it", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b } = await briefs(scene, ["First", "Second"]);
  const shipped = await tick(scene, a, "poll");
  assert.match(shipped.stdout, /task 1 shipped/, all(shipped));

  const away = await paperworkPushFails(scene);
  const merged = await tick(scene, b, "review", away);
  assert.equal(merged.code, 0, all(merged));
  assert.match(
    merged.stdout,
    /task 1 merged \([0-9a-f]+\); promoted task 2 into NEXT-STEPS\.md$/m,
    all(merged),
  );
  assert.match(
    all(merged),
    /the reviewer's paperwork waits on local main \(Cannot push the paperwork commit to "origin\/main" yet: the remote could not be reached: .*\): the next relay review on this machine pushes it/,
  );
  assert.doesNotMatch(merged.stderr, /not yet/, all(merged));
  const originMain = () => scene.out(["log", "-1", "--format=%s", "main"], scene.origin);
  assert.match(await originMain(), /^Merge task-1: First/);

  // Nothing else done: the wait is the news, as before (cron's --quiet shows it).
  const still = await tick(scene, b, "review", away, ["--quiet"]);
  assert.equal(still.code, 1, all(still));
  assert.match(still.stderr, /relay: not yet: Cannot push the paperwork commit/, all(still));

  const next = await tick(scene, b, "review");
  assert.equal(next.code, 0, all(next));
  assert.match(await originMain(), /^Task #2: brief — OPEN/);
  const polled = await tick(scene, a, "poll");
  assert.match(polled.stdout, /task 2 shipped/, all(polled));
});
