/**
 * End to end: with `relay guard` on the scene's bare origin, a real task goes
 * promote → poll → review → merge, and every push relay makes (its paperwork
 * commits and its merge to main, its notes) passes the hook, while a direct
 * product push from the same clone is refused. The hook is made to note each
 * run, so a pass cannot come from a hook that never ran.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, brief, makeScene, originLog, queue } from "./helpers/scene.ts";

Deno.test("relay's own pushes to main pass the guard through a whole task; a direct push does not", async () => {
  await using scene = await makeScene();
  const installed = await scene.relay(["guard", "install", "--bare", scene.origin]);
  assert.equal(installed.code, 0, all(installed));
  // Test instrumentation only: the hook appends its exit status and its input for each run.
  const hook = join(scene.origin, "hooks", "pre-receive");
  const runs = join(scene.dir, "hook-runs");
  const text = await Deno.readTextFile(hook);
  assert.ok(text.endsWith('exit "$status"\n'));
  await Deno.writeTextFile(
    hook,
    text.replace(/exit "\$status"\n$/, `echo "$status" $updates >> '${runs}'\nexit "$status"\n`),
  );
  const statuses = async () =>
    (await Deno.readTextFile(runs).catch(() => "")).split("\n").filter((l) => l !== "");

  await queue(scene, brief({ title: "Greet" }));
  await queue(scene, brief({ title: "Wave" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  const polled = await scene.relay(["poll"]);
  assert.equal(polled.code, 0, all(polled));
  assert.match(polled.stdout, /shipped/);
  const merged = await scene.relay(["review"]);
  assert.equal(merged.code, 0, all(merged));
  assert.match(merged.stdout, /task 1 merged/);
  // The next executor tick works on task 2: its paperwork lands on top of the merge.
  const after = await scene.relay(["poll"]);
  assert.equal(after.code, 0, all(after));

  const log = await originLog(scene);
  assert.match(log, /^Merge task-1: Greet \(task 1, reviewed by relay\)$/m);
  const ran = await statuses();
  // The task branch, the paperwork and the merge: each push ran the hook, and each passed.
  assert.deepEqual(ran.filter((s) => !s.startsWith("0 ")), [], "a push of relay's was refused");
  const main = await scene.out(["rev-list", "--first-parent", "refs/heads/main"], scene.origin);
  const merge = await scene.out(
    ["rev-list", "--merges", "-n", "1", "refs/heads/main"],
    scene.origin,
  );
  const judged = ran.filter((s) => s.endsWith(" refs/heads/main")).map((s) => s.split(" ")[2]);
  assert.ok(judged.includes(merge), `the merge ${merge} went through the hook:\n${ran.join("\n")}`);
  assert.ok(judged.length >= 3, `paperwork before and after the merge too:\n${ran.join("\n")}`);
  for (const sha of judged) assert.ok(main.includes(sha!), `${sha} is on main`);
  // The reviewer's notes (refs/notes/relay, what relay audit reads) went through the hook too.
  const notes = ran.filter((s) => s.endsWith(" refs/notes/relay"));
  assert.ok(notes.length >= 1, `the notes were pushed through the hook:\n${ran.join("\n")}`);
  assert.equal(
    await scene.out(["rev-parse", "refs/notes/relay"], scene.origin),
    notes.at(-1)!.split(" ")[2],
  );

  const mainBefore = await scene.out(["rev-parse", "refs/heads/main"], scene.origin);
  await scene.git(scene.work, ["stash", "--quiet", "--include-untracked"], true);
  await scene.git(scene.work, ["reset", "--quiet", "--keep", "origin/main"]);
  await scene.write("src/app.txt", "app v2, unreviewed\n");
  await scene.git(scene.work, ["commit", "--quiet", "-am", "Straight to main"]);
  const direct = await scene.git(scene.work, ["push", "origin", "HEAD:main"], true);
  assert.equal(direct.code, 1, all(direct));
  assert.match(direct.stderr, /"Straight to main" changes files that are not paperwork/);
  assert.equal(await scene.out(["rev-parse", "refs/heads/main"], scene.origin), mainBefore);
});
