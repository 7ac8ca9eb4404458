/**
 * `machines: split`, forge plain: what setting a reviewer machine's stale paperwork aside
 * (lib/loop/stale_paperwork.ts) must keep. B's review tick dies before its paperwork reaches
 * the origin; meanwhile the origin's brief changes (another machine took the role, or a
 * person promoted on another clone). When B comes back, a decision of B's that still stands
 * is made again (a FAIL's fix brief), a brief the origin already ran is not queued twice, a
 * person's work on B is never moved out of the way, and the executor tick, which may fire
 * first, never starts on B's stale brief. Real CLI, real git, a bare file:// origin.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, brief, exists, makeScene, type Scene } from "./helpers/scene.ts";
import {
  briefs,
  expire,
  launched,
  type Machine,
  originBrief,
  personPromotes,
  queueOn,
  rounds,
  shippedThenKilled,
  takesOver,
  tick,
} from "./helpers/split_machines.ts";

const originInbox = (scene: Scene) =>
  scene.out(
    ["ls-tree", "-r", "--name-only", "refs/heads/main", "--", ".relay/inbox/"],
    scene.origin,
  );

Deno.test("split machines: a FAIL whose fix brief never reached the origin, where a person promoted the next brief meanwhile, gets its fix brief written again; the promoted brief goes back to the queue and runs after", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, c, launches } = await briefs(scene, ["First", "Second"]);
  await shippedThenKilled(scene, a, b, { fail: true });
  await personPromotes(scene, c);
  assert.match(await originBrief(scene), /^Status: OPEN\nTask: 2\n/);

  const back = await tick(scene, b, "review");
  assert.equal(back.code, 0, all(back));
  assert.match(
    back.stderr,
    /set aside this machine's paperwork that never reached origin \(its brief: task 3, OPEN\)/,
  );
  assert.match(
    back.stderr,
    /the fix brief \(task 3\) for task-1 is not in NEXT-STEPS\.md \(it holds task 2, OPEN\): writing it again/,
    all(back),
  );
  assert.match(back.stderr, /moved the open brief back to \.relay\/inbox\/0002-second\.md/);
  assert.match(await originBrief(scene), /^Status: OPEN\nTask: 3\nTitle: Fix task 1: First\n/);
  assert.match(await originInbox(scene), /0002-second\.md/);
  // The same round, not a new one.
  assert.match(back.stdout, /fix brief 3 is open in NEXT-STEPS\.md \(round 1\/3\)/, all(back));

  await rounds(scene, a, b, 3);
  assert.deepEqual(await launched(launches), ["task 1 A", "task 3 A", "task 2 A"]);
  assert.equal(
    (await scene.out(["log", "--merges", "--format=%s", "main"], scene.origin)).split(
      "\n",
    ).length,
    2,
  );
});

Deno.test("split machines: a brief B's FAIL moved back to the queue, which the origin ran meanwhile, is not queued again when B comes back: every task runs once", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, c, launches } = await briefs(scene, ["First", "Second", "Third"]);
  assert.match((await tick(scene, a, "poll")).stdout, /task 1 shipped/);
  await personPromotes(scene, c);
  // B FAILs task 1: brief 2 goes back to the queue, fix brief 4 is written; B dies unpushed.
  const killed = await tick(scene, b, "review", {
    RELAY_FAILPOINT: "reviewer-paperwork-committed",
    FAKE_FAIL_ONCE: join(scene.dir, "failed"),
  });
  assert.equal(killed.code, 137, all(killed));
  // C takes the role and merges task 1; A does task 2; C merges it and promotes task 3.
  await expire(scene, "reviewer");
  assert.match((await tick(scene, c, "review")).stdout, /task 1 merged/);
  assert.match((await tick(scene, a, "poll")).stdout, /task 2 shipped/);
  assert.match((await tick(scene, c, "review")).stdout, /promoted task 3/);

  const back = await tick(scene, b, "review");
  assert.equal(back.code, 0, all(back));
  assert.match(
    back.stderr,
    /not queued again: \.relay\/inbox\/0002-second\.md \(origin has task 2 already\)/,
    all(back),
  );
  assert.doesNotMatch(await originInbox(scene), /0002/);
  await rounds(scene, a, b, 3);
  assert.deepEqual(await launched(launches), ["task 1 A", "task 2 A", "task 3 A"]);
});

Deno.test("split machines: a person's edit of another file and a brief they queued on B survive B's set-aside; a file in the way is a HOLD that puts everything back, once, with one anchor", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, c } = await briefs(scene, ["First", "Second"]);
  await shippedThenKilled(scene, a, b);
  // On B a person queues a brief (B's next tick commits and pushes it), edits README.md, and
  // leaves an untracked draft at the path task 2 adds.
  const add = await scene.relay(["-C", b.dir, "inbox", "add", "-"], {
    stdin: brief({ title: "Urgent" }),
  });
  assert.equal(add.code, 0, all(add));
  const queued = join(b.dir, ".relay", "inbox", "0003-urgent.md");
  assert.ok(await exists(queued));
  await Deno.writeTextFile(join(b.dir, "README.md"), "# product, edited by a person\n");
  const draft = join(b.dir, "src", "feature-2.txt");
  await Deno.writeTextFile(draft, "a person's draft\n");
  await expire(scene, "reviewer");
  assert.equal((await tick(scene, c, "review")).code, 0);
  assert.match((await tick(scene, a, "poll")).stdout, /task 2 shipped/);
  assert.match((await tick(scene, c, "review")).stdout, /task 2 merged/);
  await expire(scene, "reviewer");
  const head = await scene.out(["rev-parse", "HEAD"], b.dir);

  for (let i = 0; i < 2; i++) {
    const held = await tick(scene, b, "review");
    assert.equal(held.code, 3, all(held));
    assert.match(
      held.stderr,
      /HOLD: Cannot bring "main" to origin\/main: changes in the primary tree are in the way \(src\/feature-2\.txt\)/,
      all(held),
    );
    assert.match(held.stderr, /git stash push --include-untracked -- src\/feature-2\.txt/);
    // Nothing moved: main, the queued brief, the person's files.
    assert.equal(await scene.out(["rev-parse", "HEAD"], b.dir), head);
    assert.ok(await exists(queued), "the brief queued on B left the inbox");
    assert.equal(await Deno.readTextFile(draft), "a person's draft\n");
    const resumed = await scene.relay(["-C", b.dir, "resume"]);
    assert.equal(resumed.code, 0, all(resumed));
  }
  const anchors = await scene.out([
    "for-each-ref",
    "--format=%(refname)",
    "refs/relay/anchors/paperwork/",
  ], b.dir);
  assert.equal(anchors.split("\n").filter((l) => l).length, 1, anchors);

  // The person moves the draft; B's next tick sets its paperwork aside and keeps the rest.
  await Deno.remove(draft);
  const back = await tick(scene, b, "review");
  assert.equal(back.code, 0, all(back));
  assert.match(back.stderr, /queued again: \.relay\/inbox\/0003-urgent\.md/, all(back));
  assert.equal(
    await Deno.readTextFile(join(b.dir, "README.md")),
    "# product, edited by a person\n",
  );
  assert.match(await originBrief(scene), /^Status: OPEN\nTask: 3\nTitle: Urgent\n/);
});

Deno.test("split machines: a person's unpushed commit of .relay/config.yaml on B is not set aside with relay's paperwork: it reaches the origin", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, c } = await briefs(scene, ["First", "Second"]);
  await shippedThenKilled(scene, a, b);
  const config = join(b.dir, ".relay", "config.yaml");
  await Deno.writeTextFile(config, (await Deno.readTextFile(config)) + "# a person's setting\n");
  await scene.git(b.dir, [
    "commit",
    "--quiet",
    "-m",
    "person: tune config",
    "--",
    ".relay/config.yaml",
  ]);
  await expire(scene, "reviewer");
  assert.equal((await tick(scene, c, "review")).code, 0);
  assert.match((await tick(scene, a, "poll")).stdout, /task 2 shipped/);

  const back = await tick(scene, b, "review");
  assert.equal(back.code, 0, all(back));
  assert.doesNotMatch(back.stderr, /set aside this machine's paperwork/, all(back));
  assert.match(
    await scene.out(["show", "refs/heads/main:.relay/config.yaml"], scene.origin),
    /# a person's setting/,
  );
  assert.match(
    await scene.out(["log", "--format=%s", "refs/heads/main"], scene.origin),
    /^person: tune config$/m,
  );
});

Deno.test("split machines: B comes back and its executor tick fires before its review tick: the stale promotion is set aside there too, and no task runs twice", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, c, launches } = await briefs(scene, ["First", "Second"]);
  await shippedThenKilled(scene, a, b);
  await expire(scene, "reviewer");
  assert.equal((await tick(scene, c, "review")).code, 0);
  assert.match((await tick(scene, a, "poll")).stdout, /task 2 shipped/);
  assert.match((await tick(scene, c, "review")).stdout, /task 2 merged/);

  const poll = await tick(scene, b, "poll");
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stderr, /set aside this machine's paperwork that never reached origin/);
  assert.doesNotMatch(poll.stdout, /starts|shipped/, all(poll));
  const review = await tick(scene, b, "review");
  assert.equal(review.code, 0, all(review));
  assert.deepEqual(await launched(launches), ["task 1 A", "task 2 A"]);
});

/** Two ways a person edits queued brief 3 on B: in place, or the relay way (drop, add again). */
const EDITS: { how: string; edit: (scene: Scene, b: Machine) => Promise<void>; said: RegExp }[] = [
  {
    how: "retitled in place",
    edit: async (_scene, b) => {
      const third = join(b.dir, ".relay", "inbox", "0003-third.md");
      const text = await Deno.readTextFile(third);
      await Deno.writeTextFile(third, text.replace("Title: Third", "Title: Third, edited"));
    },
    said: /not queued again: \.relay\/inbox\/0003-third\.md \(origin took it from the queue\)/,
  },
  {
    how: "re-added under a new name (inbox drop, then add with its Task line)",
    edit: async (scene, b) => {
      const drop = await scene.relay(["-C", b.dir, "inbox", "drop", "3"]);
      assert.equal(drop.code, 0, all(drop));
      const add = await scene.relay(["-C", b.dir, "inbox", "add", "-"], {
        stdin: brief({ task: 3, title: "Third, edited" }),
      });
      assert.equal(add.code, 0, all(add));
      assert.ok(await exists(join(b.dir, ".relay", "inbox", "0003-third-edited.md")));
    },
    said:
      /not queued again: \.relay\/inbox\/0003-third-edited\.md \(origin took task 3 from the queue: it was \.relay\/inbox\/0003-third\.md\)/,
  },
];

for (const { how, edit, said } of EDITS) {
  Deno.test(`split machines: a queued brief a person ${how} on B, which the origin promoted and ran meanwhile, does not run twice`, async () => {
    await using scene = await makeScene({ config: "machines: split\n" });
    const { a, b, c, launches } = await briefs(scene, ["First", "Second", "Third"]);
    await shippedThenKilled(scene, a, b);
    await edit(scene, b);
    await expire(scene, "reviewer");
    assert.match((await tick(scene, c, "review")).stdout, /promoted task 2/);
    assert.match((await tick(scene, a, "poll")).stdout, /task 2 shipped/);
    assert.match((await tick(scene, c, "review")).stdout, /promoted task 3/);
    assert.match((await tick(scene, a, "poll")).stdout, /task 3 shipped/);
    await expire(scene, "reviewer");

    const back = await tick(scene, b, "review");
    assert.equal(back.code, 0, all(back));
    assert.match(back.stderr, said, all(back));
    await rounds(scene, a, b, 2);
    assert.deepEqual(await launched(launches), ["task 1 A", "task 2 A", "task 3 A"]);
  });
}

Deno.test("split machines: a queued brief a person dropped on B, still queued on the origin as it was, is dropped again; a promotion B made is not taken for a drop", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, c, launches } = await briefs(scene, ["First", "Second", "Third"]);
  // B merged task 1 and promoted task 2 (taking 0002 from its queue), then died unpushed.
  await shippedThenKilled(scene, a, b);
  const drop = await scene.relay(["-C", b.dir, "inbox", "drop", "3"]);
  assert.equal(drop.code, 0, all(drop));
  await takesOver(scene, c, /promoted task 2/);

  const back = await tick(scene, b, "review");
  assert.equal(back.code, 0, all(back));
  assert.match(back.stderr, /dropped again: \.relay\/inbox\/0003-third\.md/, all(back));
  assert.doesNotMatch(back.stderr, /dropped again: \.relay\/inbox\/0002/, all(back));
  await rounds(scene, a, b, 3);
  assert.deepEqual(await launched(launches), ["task 1 A", "task 2 A"]);
  assert.doesNotMatch(await originInbox(scene), /0003-third/);
});

Deno.test("split machines: a queued brief B edited in place, which the origin queues under a new name meanwhile, is not queued twice, and the line names where the origin queues it", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, c, launches } = await briefs(scene, ["First", "Second", "Third"]);
  await shippedThenKilled(scene, a, b);
  const third = join(b.dir, ".relay", "inbox", "0003-third.md");
  await Deno.writeTextFile(third, (await Deno.readTextFile(third)) + "\nEdited on B.\n");
  // On C a person renames brief 3 the relay way, and C's review tick promotes task 2.
  await scene.git(c.dir, ["pull", "--quiet", "--ff-only", "origin", "main"]);
  const drop = await scene.relay(["-C", c.dir, "inbox", "drop", "3"]);
  assert.equal(drop.code, 0, all(drop));
  await queueOn(scene, c, { task: 3, title: "Third, renamed" });
  await takesOver(scene, c, /promoted task 2/);

  const back = await tick(scene, b, "review");
  assert.equal(back.code, 0, all(back));
  assert.match(
    back.stderr,
    /not queued again: \.relay\/inbox\/0003-third\.md \(origin no longer queues it under this name; task 3 is queued there as \.relay\/inbox\/0003-third-renamed\.md/,
    all(back),
  );
  await rounds(scene, a, b, 3);
  assert.deepEqual(await launched(launches), ["task 1 A", "task 2 A", "task 3 A"]);
});
