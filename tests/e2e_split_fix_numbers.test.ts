/**
 * `machines: split`, forge plain: numbers and rounds when a reviewer machine's paperwork never
 * reached the origin and clones number briefs on their own meanwhile. A fix brief written
 * again (the planner's fix-lost) takes a fresh number when its own went to another brief; a
 * round another reviewer machine wrote later is reviewed, not answered with the old fix; and
 * a brief queued on the returning machine whose number the origin gave to another brief is
 * queued under a free one. Real CLI, real git, a bare file:// origin.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { AGENTS, all, brief, makeScene } from "./helpers/scene.ts";
import {
  briefs,
  expire,
  launched,
  originBrief,
  personPromotes,
  queueOn,
  rounds,
  shippedThenKilled,
  takesOver,
  tick,
} from "./helpers/split_machines.ts";

Deno.test("split machines: a fix brief written again does not take the number another clone gave a person's brief meanwhile; that brief still runs", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, c, launches } = await briefs(scene, ["First"]);
  await shippedThenKilled(scene, a, b, { fail: true });
  // On C a person queues a brief (C counts it task 2: it knows nothing of B's fix brief 2),
  // promotes it and pushes.
  await personPromotes(scene, c, ["Second"]);
  assert.match(
    await originBrief(scene),
    /^Status: OPEN\nTask: 2\nTitle: Second\n/,
  );

  const back = await tick(scene, b, "review");
  assert.equal(back.code, 0, all(back));
  assert.match(
    back.stderr,
    /the fix brief \(task 2\) for task-1 is not in NEXT-STEPS\.md \(it holds task 2, OPEN\): writing it again as task 3 \(task 2 is another brief's now\)/,
    all(back),
  );
  await rounds(scene, a, b, 4);
  // The fix (3), then the person's brief "Second" (2): each once.
  assert.deepEqual(await launched(launches), ["task 1 A", "task 3 A", "task 2 A"]);
});

Deno.test("split machines: a reviewer machine whose last fix round was superseded by another reviewer machine's does not write its old fix brief again", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  // Task 1 ships a change; every fix is answered without a new commit (a push-back).
  const agent = `if [ "$RELAY_TASK" = 1 ]; then exec bash "${join(AGENTS, "good.sh")}" "$@"; ` +
    `else exec bash "${join(AGENTS, "pushback.sh")}" "$@"; fi`;
  const { a, b, c, launches } = await briefs(scene, ["First"], agent);
  assert.match((await tick(scene, a, "poll")).stdout, /task 1 shipped/);

  // B FAILs task 1: fix brief 2 (B's record: FAIL, fix 2).
  const b1 = await tick(scene, b, "review", { FAKE_FAIL_ONCE: join(scene.dir, "fail-b") });
  assert.equal(b1.code, 0, all(b1));
  assert.match(await originBrief(scene), /^Status: OPEN\nTask: 2\n/);
  assert.match((await tick(scene, a, "poll")).stdout, /task 2/);

  // C takes the reviewer role (B let go at its tick's end), reviews the answer, FAILs: fix 3.
  const c1 = await tick(scene, c, "review", { FAKE_FAIL_ONCE: join(scene.dir, "fail-c") });
  assert.equal(c1.code, 0, all(c1));
  assert.match(await originBrief(scene), /^Status: OPEN\nTask: 3\n/, all(c1));
  assert.match((await tick(scene, a, "poll")).stdout, /task 3/);
  assert.match(await originBrief(scene), /^Status: DONE\nTask: 3\n/);

  // B reviews again. Its record's last fix (2) is not the report's task (3), and no brief is
  // open: fix-lost writes fix brief 2 again, though the executor answered it and fix 3 since.
  const b2 = await tick(scene, b, "review");
  assert.equal(b2.code, 0, all(b2));
  assert.doesNotMatch(b2.stderr, /the fix brief \(task 2\) for task-1 is not in NEXT-STEPS\.md/);
  assert.doesNotMatch(await originBrief(scene), /^Status: OPEN\nTask: 2\n/);
  await tick(scene, a, "poll");
  assert.deepEqual(await launched(launches), ["task 1 A", "task 2 A", "task 3 A"]);
});

Deno.test("split machines: a brief a person queued on B is queued again though another clone gave its number to another brief", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, c } = await briefs(scene, ["First"]);
  await shippedThenKilled(scene, a, b, { fail: true });
  // A person queues "Extra" on B: task 3 there (fix brief 2 is B's).
  const extra = await scene.relay(["-C", b.dir, "inbox", "add", "-"], {
    stdin: brief({ title: "Extra" }),
  });
  assert.equal(extra.code, 0, all(extra));
  // On C a person queues "Second" (2) and "Third" (3), promotes 2 and pushes.
  await personPromotes(scene, c, ["Second", "Third"]);

  const back = await tick(scene, b, "review");
  assert.equal(back.code, 0, all(back));
  assert.match(
    back.stderr,
    /queued again: \.relay\/inbox\/0004-extra\.md \(was \.relay\/inbox\/0003-extra\.md: origin gave task 3 to another brief\)/,
    all(back),
  );
  const inbox = await scene.out(
    ["ls-tree", "-r", "--name-only", "refs/heads/main", "--", ".relay/inbox/"],
    scene.origin,
  );
  assert.match(inbox, /-extra\.md/, `"Extra" is not queued on the origin:\n${inbox}`);
});

Deno.test("split machines: a brief queued on B is queued again though another clone gave its number to another brief that has run since", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, c, launches } = await briefs(scene, ["First"]);
  await shippedThenKilled(scene, a, b, { fail: true });
  // A person queues "Extra" on B: task 3 there (fix brief 2 is B's).
  const extra = await scene.relay(["-C", b.dir, "inbox", "add", "-"], {
    stdin: brief({ title: "Extra" }),
  });
  assert.equal(extra.code, 0, all(extra));
  // On C a person queues "Second" (2) and "Third" (3), promotes 2 and pushes.
  await personPromotes(scene, c, ["Second", "Third"]);
  // The loop goes on without B: A runs 2, C (B's lease expired) reviews and promotes 3, A runs 3.
  await expire(scene, "reviewer");
  for (let i = 0; i < 4 && !(await launched(launches)).includes("task 3 A"); i++) {
    const p = await tick(scene, a, "poll");
    assert.ok([0, 1].includes(p.code), all(p));
    const r = await tick(scene, c, "review");
    assert.ok([0, 1].includes(r.code), all(r));
  }
  assert.ok((await launched(launches)).includes("task 3 A"), await Deno.readTextFile(launches));

  const back = await tick(scene, b, "review");
  assert.equal(back.code, 0, all(back));
  const inbox = await scene.out(
    ["ls-tree", "-r", "--name-only", "refs/heads/main", "--", ".relay/inbox/"],
    scene.origin,
  );
  const open = await originBrief(scene);
  assert.match(
    back.stderr,
    /queued again: \.relay\/inbox\/0004-extra\.md \(was \.relay\/inbox\/0003-extra\.md: origin gave task 3 to another brief\)/,
    all(back),
  );
  assert.ok(
    /0004-extra\.md/.test(inbox) || /^Task: 4\nTitle: Extra$/m.test(open),
    `"Extra" is neither queued nor open on the origin:\n${inbox}\n${all(back)}`,
  );
  await rounds(scene, a, b, 2);
  assert.deepEqual(await launched(launches), ["task 1 A", "task 2 A", "task 3 A", "task 4 A"]);
});

Deno.test("split machines: a brief queued on B and another queued on another clone under the same file name (titles that differ only in punctuation) both run: B's takes a free number", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, c, launches } = await briefs(scene, ["First", "Second"]);
  await shippedThenKilled(scene, a, b);
  await queueOn(scene, b, { title: "Urgent" });
  // On C a person queues "Urgent!" (task 3 there too: .relay/inbox/0003-urgent.md), and C's
  // review tick, B's lease run out, promotes task 2 and pushes both.
  await scene.git(c.dir, ["pull", "--quiet", "--ff-only", "origin", "main"]);
  await queueOn(scene, c, { title: "Urgent!" });
  await takesOver(scene, c, /promoted task 2/);

  const back = await tick(scene, b, "review");
  assert.equal(back.code, 0, all(back));
  assert.match(
    back.stderr,
    /queued again: \.relay\/inbox\/0004-urgent\.md \(was \.relay\/inbox\/0003-urgent\.md: origin queued another brief under this name\)/,
    all(back),
  );
  await rounds(scene, a, b, 4);
  assert.deepEqual(await launched(launches), ["task 1 A", "task 2 A", "task 3 A", "task 4 A"]);
});
