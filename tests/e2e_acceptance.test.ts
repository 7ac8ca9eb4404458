/**
 * Acceptance by digest, end to end: with `merge_policy: human` a task that
 * passed review and the gate stops at DONE awaiting acceptance; ticks never
 * accept; a person's `relay reject` sends it back with the note; a digest
 * taken before the new head is refused with what changed; `relay accept
 * --expect` with the current digest merges and promotes the next brief.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, brief, makeScene, originLog, queue, taskRecord } from "./helpers/scene.ts";

function digestOf(out: string): string {
  const m = /^intent: ([0-9a-f]{24})$/m.exec(out);
  assert.ok(m, out);
  return m[1]!;
}

Deno.test("merge_policy human: DONE awaiting acceptance; reject by digest; a stale digest is refused; accept by digest merges", async () => {
  await using scene = await makeScene();
  await scene.setAgent("good.sh", "merge_policy: human\n");
  await queue(scene, brief({ title: "First" }));
  await queue(scene, brief({ title: "Second" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  const poll = await scene.relay(["poll"]);
  assert.match(poll.stdout, /task 1 starts: .*merge human, efficient/);

  // The tick stops at DONE awaiting acceptance, every minute, and merges nothing.
  for (let minute = 0; minute < 2; minute++) {
    const review = await scene.relay(["review"]);
    assert.equal(review.code, 3, all(review));
    assert.match(
      review.stdout,
      /DONE awaiting acceptance: task 1 \(task-1 at [0-9a-f]{12}\) passed review and the gate; merge policy is "human": relay accept 1 --intent-only/,
    );
  }
  assert.doesNotMatch(await originLog(scene), /Merge task-1/);
  // Waiting for a person, the tick decides the same every minute: the history says it once.
  const waited = (await scene.relay(["show", "1"])).stdout;
  assert.equal(waited.match(/gate: MERGE/g)?.length, 1, waited);
  // relay merge does not stand in for the acceptance.
  const merge = await scene.relay(["merge"]);
  assert.equal(merge.code, 1, all(merge));
  assert.match(
    merge.stdout,
    /not merging task-1: task 1's merge policy is "human", so a person accepts it by digest/,
  );
  assert.doesNotMatch(await originLog(scene), /Merge task-1/);
  const status = await scene.relay(["status"]);
  assert.match(status.stdout, /task 1 is DONE awaiting acceptance \(task-1 at [0-9a-f]{12}\)/);
  assert.match(status.stdout, /receipt review: PASS/);
  assert.match(status.stdout, /open finding: \[minor\] looks fine/);
  assert.match(status.stdout, /accepting merges task-1 through the gate/);
  assert.match(
    status.stdout,
    /next review: runs the merge gate on task-1 \(task 1 passed review\); on MERGE it stops at DONE awaiting acceptance/,
  );
  const one = await scene.relay(["status", "1"]);
  assert.equal(one.code, 0, all(one));
  assert.match(
    one.stdout,
    /^task 1 is DONE awaiting acceptance \(task-1 at [0-9a-f]{12}\)\n {2}receipt implementation: SHIPPED/,
  );
  const shown = await scene.relay(["show", "1"]);
  assert.match(
    shown.stdout,
    /\n\ntask 1 is DONE awaiting acceptance[^]*accepting merges task-1 through the gate[^\n]*\n$/,
  );
  const brief1 = await scene.relay(["status", "--brief"]);
  assert.match(brief1.stdout, /^review .*DONE awaiting acceptance: task 1/m);

  // A person's verification of this tree: listed at DONE, part of what is accepted.
  await Deno.writeTextFile(join(scene.dir, "shot.png"), "not really a png");
  const attached = await scene.relay([
    "attach-verification",
    "1",
    "--file",
    join(scene.dir, "shot.png"),
    "--text",
    "checked at 375px",
  ]);
  assert.equal(attached.code, 0, all(attached));
  assert.match(
    attached.stdout,
    /attached to task 1: shot\.png \(sha256 [0-9a-f]{12}\) for task-1 at/,
  );
  assert.match(
    (await scene.relay(["status"])).stdout,
    /verified by a person: shot\.png \(sha256 [0-9a-f]{12}, [^)]+\): checked at 375px/,
  );

  // What accepting would do, and its digest: nothing changes.
  const before = await scene.snapshot();
  const intent = await scene.relay(["accept", "1", "--intent-only", "--reason", "reads well"]);
  assert.equal(intent.code, 0, all(intent));
  const first = digestOf(intent.stdout);
  assert.match(intent.stdout, /task 1: accept task-1 at [0-9a-f]{40} \(tree [0-9a-f]{40}\)/);
  assert.match(intent.stdout, /receipt implementation: /);
  assert.match(intent.stdout, /receipt review: PASS/);
  assert.match(intent.stdout, /open finding: \[minor\] looks fine/);
  assert.match(intent.stdout, /reason: reads well/);
  assert.match(intent.stdout, /verified by a person: shot\.png .*: checked at 375px/);
  assert.match(intent.stdout, new RegExp(`relay accept 1 --expect ${first} --reason "reads well"`));
  assert.equal(await scene.snapshot(), before);
  // The same state yields the same digest; another reason another one.
  const again = await scene.relay(["accept", "1", "--intent-only", "--reason", "reads well"]);
  assert.equal(digestOf(again.stdout), first);
  const other = await scene.relay(["accept", "1", "--intent-only", "--reason", "fine"]);
  assert.notEqual(digestOf(other.stdout), first);

  // A person rejects it by digest: a fix round that carries the note.
  const rejectIntent = await scene.relay([
    "reject",
    "1",
    "--intent-only",
    "--text",
    "make it blue",
  ]);
  assert.equal(rejectIntent.code, 0, all(rejectIntent));
  const rejectDigest = digestOf(rejectIntent.stdout);
  const rejected = await scene.relay([
    "reject",
    "1",
    "--expect",
    rejectDigest,
    "--text",
    "make it blue",
  ]);
  assert.equal(rejected.code, 0, all(rejected));
  const fixBrief = await scene.read("NEXT-STEPS.md");
  assert.match(fixBrief, /^Status: OPEN\nTask: 3\n/);
  assert.match(fixBrief, /a person rejected this at acceptance: make it blue/);

  // The fix round ships a new head and comes back to acceptance.
  const fix = await scene.relay(["poll"]);
  assert.equal(fix.code, 0, all(fix));
  const back = await scene.relay(["review"]);
  assert.equal(back.code, 3, all(back));
  assert.match(back.stdout, /DONE awaiting acceptance: task 1/);

  // The digest taken before the new head is refused, with both digests and what changed.
  const stale = await scene.relay(["accept", "1", "--expect", first, "--reason", "reads well"]);
  assert.equal(stale.code, 1, all(stale));
  assert.match(
    stale.stdout,
    new RegExp(`refused: task 1 no longer yields digest ${first}; it yields [0-9a-f]{24}`),
  );
  assert.match(stale.stdout, /changed: head: "[0-9a-f]{40}" → "[0-9a-f]{40}"/);
  assert.match(stale.stdout, /nothing was merged/);
  // The verification was of the old tree: it no longer counts.
  assert.match(stale.stdout, /changed: verification gone: shot\.png/);
  assert.doesNotMatch(await originLog(scene), /Merge task-1/);

  // Looked at again, accepted by the digest of what is there now: merged, next brief promoted.
  const now = digestOf(
    (await scene.relay(["accept", "1", "--intent-only", "--reason", "reads well"])).stdout,
  );
  const nowIntent = await scene.relay(["accept", "1", "--intent-only", "--reason", "reads well"]);
  assert.doesNotMatch(nowIntent.stdout, /verified by a person/);
  const accepted = await scene.relay(["accept", "1", "--expect", now, "--reason", "reads well"]);
  assert.equal(accepted.code, 0, all(accepted));
  assert.match(accepted.stdout, /merged task-1 as [0-9a-f]{12}/);
  assert.match(await originLog(scene), /^Merge task-1: First/);
  assert.match(await scene.read("NEXT-STEPS.md"), /^Status: OPEN\nTask: 2\n/);

  assert.match(
    (await scene.relay(["status", "1"])).stdout,
    /^task 1 is merged \([0-9a-f]{12}, by relay\)/,
  );
  assert.doesNotMatch((await scene.relay(["show", "1"])).stdout, /DONE awaiting acceptance \(/);

  // On record: both decisions as receipts and in the timeline.
  const receipts = (await taskRecord(scene)).rounds.flatMap((r) => r.receipts)
    .filter((r) => r.stage === "acceptance").map((r) => r.result);
  assert.deepEqual(receipts, ["REJECTED", "ACCEPTED"]);
  const show = await scene.relay(["show", "1"]);
  assert.match(
    show.stdout,
    /rejected by a person at [0-9a-f]{12} \(digest [0-9a-f]{24}\): make it blue/,
  );
  assert.match(
    show.stdout,
    new RegExp(`accepted by a person at [0-9a-f]{12} \\(digest ${now}\\): reads well`),
  );
});

Deno.test("handsfree: DONE awaiting acceptance is a HOLD with the question in it", async () => {
  await using scene = await makeScene();
  await scene.setAgent("good.sh", "merge_policy: human\nhandsfree: true\n");
  await queue(scene, brief({ title: "First" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.equal((await scene.relay(["poll"])).code, 0);
  const review = await scene.relay(["review"]);
  assert.equal(review.code, 3, all(review));
  assert.match(
    review.stderr,
    /HOLD: task 1 is DONE awaiting acceptance: accept task-1 at [0-9a-f]{12} into main, or send it back\?/,
  );
  assert.match(review.stderr, /relay accept 1 --intent-only/);
  const status = await scene.relay(["status"]);
  assert.match(status.stdout, /DONE awaiting acceptance/);
});

Deno.test("accept and reject refuse bad input with exit 2 and change nothing", async () => {
  await using scene = await makeScene();
  const before = await scene.snapshot();
  for (
    const [args, message] of [
      [["accept", "1"], /exactly one of --intent-only .* or --expect <digest>/],
      [["accept", "1", "--intent-only", "--expect", "abcdef12"], /exactly one of/],
      [["accept", "x", "--intent-only"], /"x" is not a task number/],
      [["accept", "1", "--expect", "nope"], /--expect "nope" is not a digest/],
      [["reject", "1", "--intent-only"], /--text NOTE is required/],
      [["attach-verification", "1"], /--file F is required/],
      [["status", "x"], /<task> must be a task number/],
      [["status", "9"], /relay has no record of task 9/],
      [["attach-verification", "1", "--file", "/nonexistent/x.png"], /cannot read --file/],
      [["accept", "1", "--intent-only", "--bogus"], /bogus/],
    ] as const
  ) {
    const res = await scene.relay([...args]);
    assert.equal(res.code, 2, `${args.join(" ")}: ${all(res)}`);
    assert.match(res.stderr, message, args.join(" "));
  }
  assert.equal(await scene.snapshot(), before);
});
