/**
 * A person works around the loop: edits the brief on main from their own
 * clone while a PR waits, or leaves a change in the loop's clone. relay's own
 * uncommitted paperwork must never stop it from bringing main up to date, and
 * every HOLD's advice, followed word for word, must lead back to a running loop.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, brief, exists, makeScene, type Scene, stateDir } from "./helpers/scene.ts";

async function queue(scene: Scene, title: string): Promise<void> {
  const res = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title }) });
  assert.equal(res.code, 0, all(res));
}

/** A person's own clone of the origin, to push from. */
async function personClone(scene: Scene): Promise<string> {
  const dir = join(scene.dir, "person");
  await scene.git(scene.dir, ["clone", "--quiet", `file://${scene.origin}`, dir]);
  return dir;
}

async function personPush(scene: Scene, dir: string, edit: () => Promise<void>, msg: string) {
  await scene.git(dir, ["pull", "--quiet", "--ff-only"]);
  await edit();
  await scene.git(dir, ["commit", "--quiet", "-am", msg]);
  await scene.git(dir, ["push", "--quiet", "origin", "HEAD:main"]);
}

/** Main's NEXT-STEPS.md as a person writes it there by hand: task 9, open, every header line. */
const HOTFIX_9 = brief({
  task: 9,
  title: "Hotfix by a person",
  status: "OPEN",
  kind: "feature",
  extraHeader: "Branch: task-9",
});

/** Task 1 ("First") queued, promoted and shipped: its report waits for review on main. */
async function firstShipped(scene: Scene): Promise<void> {
  await queue(scene, "First");
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.equal((await scene.relay(["poll"])).code, 0);
}

Deno.test("a person's edit of the brief on main while a PR waits does not stop the loop: relay's promotion is put back on top", async () => {
  await using scene = await makeScene();
  await queue(scene, "First");
  await queue(scene, "Second");
  assert.equal((await scene.relay(["promote"])).code, 0);
  const first = await scene.relay(["poll"]);
  assert.equal(first.code, 0, all(first));

  // The brief on main is task 1, DONE: a person adds a note to it and pushes.
  const person = await personClone(scene);
  await personPush(scene, person, async () => {
    const path = join(person, "NEXT-STEPS.md");
    await Deno.writeTextFile(
      path,
      (await Deno.readTextFile(path)).replace(
        "Add the feature file.",
        "Add the feature file.\n\nNote from a person.",
      ),
    );
  }, "person: a note on the brief");

  // The review merges task 1 and promotes task 2 into the primary tree, uncommitted.
  const review = await scene.relay(["review"]);
  assert.equal(review.code, 0, all(review));
  assert.match(review.stdout, /promoted task 2/);
  assert.match(await scene.read("NEXT-STEPS.md"), /^Status: OPEN\nTask: 2\n/);

  // Local main is behind (the person's commit and the merge) with the promotion in the way.
  const second = await scene.relay(["poll"]);
  assert.equal(second.code, 0, all(second));
  assert.match(second.stdout, /task 2 shipped/);
  assert.match(second.stderr, /put relay's uncommitted paperwork back on top/);
  assert.equal(await exists(join(stateDir(scene), "hold.json")), false);

  const log = await scene.out(["log", "--format=%s", "main"], scene.origin);
  assert.deepEqual(log.split("\n").slice(0, 3), [
    "Task #2: status — SHIPPED (task-2)",
    "Merge task-1: First (task 1, reviewed by relay)",
    "person: a note on the brief",
  ]);
  // The person's edit stays in history; what relay wrote next is the brief on main now.
  const history = await scene.out(
    ["log", "-p", "--format=%s", "--", "NEXT-STEPS.md"],
    scene.origin,
  );
  assert.match(history, /\+Note from a person\./);
  const onMain = await scene.out(["show", "main:NEXT-STEPS.md"], scene.origin);
  assert.match(onMain, /^Status: DONE\nTask: 2\n/);
  // The promotion's removal of the queued file rode along in the paperwork commit.
  const inbox = await scene.out(
    ["ls-tree", "--name-only", "main", "--", ".relay/inbox/"],
    scene.origin,
  );
  assert.deepEqual(inbox.split("\n"), [".relay/inbox/.gitkeep"]);
  // A copy of what was set aside is kept.
  const aside: string[] = [];
  for await (const e of Deno.readDir(join(stateDir(scene), "paperwork-aside"))) aside.push(e.name);
  assert.equal(aside.length, 1);

  // And the loop goes on: the review merges task 2.
  const merge = await scene.relay(["review"]);
  assert.equal(merge.code, 0, all(merge));
  assert.match(
    await scene.out(["log", "-1", "--format=%s", "main"], scene.origin),
    /^Merge task-2: Second/,
  );
});

Deno.test("a person's edit of a queued brief pushed to main and relay's promotion of another both survive the sync", async () => {
  await using scene = await makeScene();
  await queue(scene, "First");
  await queue(scene, "Second");
  await queue(scene, "Third");
  // The inbox is committed on main, as README's quick start does.
  await scene.git(scene.work, ["add", ".relay/inbox"]);
  await scene.git(scene.work, ["commit", "--quiet", "-m", "queue three"]);
  await scene.git(scene.work, ["push", "--quiet", "origin", "HEAD:main"]);
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.equal((await scene.relay(["poll"])).code, 0);

  // A person retitles the third queued brief on main; relay's next promotion deletes the
  // second's queue file in the primary tree. Both must survive the sync.
  const person = await personClone(scene);
  const third = (await scene.out(["ls-files", ".relay/inbox"], person)).split("\n")
    .find((f) => /0003-/.test(f))!;
  await personPush(scene, person, async () => {
    const path = join(person, third);
    await Deno.writeTextFile(
      path,
      (await Deno.readTextFile(path)).replace("Title: Third", "Title: Third, retitled"),
    );
  }, "person: retitle a queued brief");
  assert.equal((await scene.relay(["review"])).code, 0);

  const second = await scene.relay(["poll"]);
  assert.equal(second.code, 0, all(second));
  const files = await scene.out(
    ["ls-tree", "--name-only", "main", "--", ".relay/inbox/"],
    scene.origin,
  );
  assert.deepEqual(files.split("\n"), [".relay/inbox/.gitkeep", third]);
  assert.match(await scene.out(["show", `main:${third}`], scene.origin), /Title: Third, retitled/);
});

Deno.test("a person's own change in the loop's clone that main also changes: the HOLD's advice, followed word for word, gets the loop going", async () => {
  await using scene = await makeScene();
  await queue(scene, "First");
  assert.equal((await scene.relay(["promote"])).code, 0);
  // Someone edits a product file in the loop's clone (not committed)…
  await scene.write("src/app.txt", "app v1, local tweak\n");
  // …and the same file changes on main from elsewhere.
  const person = await personClone(scene);
  await personPush(scene, person, async () => {
    await Deno.writeTextFile(join(person, "src/app.txt"), "app v2\n");
  }, "person: app v2");

  const held = await scene.relay(["poll"]);
  assert.equal(held.code, 3, all(held));
  assert.match(held.stderr, /Cannot fast-forward "main"/);
  const next = /next: (.*)$/m.exec(held.stderr)?.[1] ?? "";
  const stash = /"(git stash push --include-untracked -- [^"]+)"/.exec(next)?.[1];
  assert.ok(stash, next);
  assert.match(next, /relay resume/);
  // Word for word: the stash command it names, then relay resume.
  await scene.git(scene.work, stash.split(" ").slice(1));
  const resume = await scene.relay(["resume"]);
  assert.equal(resume.code, 0, all(resume));
  const done = await scene.relay(["poll"]);
  assert.equal(done.code, 0, all(done));
  assert.match(done.stdout, /task 1 shipped/);
  assert.equal(
    await scene.out(["log", "-1", "--format=%s", "main"], scene.origin),
    "Task #1: status — SHIPPED (task-1)",
  );
  // The person's tweak is kept in the stash, not lost.
  assert.match(await scene.out(["stash", "show", "-p"]), /local tweak/);
});

Deno.test("a paperwork push that lost a race while a person's change sits in the loop's clone: a HOLD with advice, never conflict markers", async () => {
  await using scene = await makeScene();
  await queue(scene, "First");
  assert.equal((await scene.relay(["promote"])).code, 0);
  await scene.write("src/app.txt", "app v1, local tweak\n");
  // The tick dies right after its paperwork commit; meanwhile main changes the same file.
  const killed = await scene.relay(["poll"], {
    env: { RELAY_FAILPOINT: "after-paperwork-committed" },
  });
  assert.notEqual(killed.code, 0);
  const person = await personClone(scene);
  await personPush(scene, person, async () => {
    await Deno.writeTextFile(join(person, "src/app.txt"), "app v2\n");
  }, "person: app v2");

  const held = await scene.relay(["poll"]);
  assert.equal(held.code, 3, all(held));
  assert.match(held.stderr, /the primary tree has changes that are not relay's \(src\/app\.txt\)/);
  assert.doesNotMatch(await scene.read("src/app.txt"), /<<<<<<<|>>>>>>>/);
  assert.equal(await scene.read("src/app.txt"), "app v1, local tweak\n");
  const next = /next: (.*)$/m.exec(held.stderr)?.[1] ?? "";
  const stash = /"(git stash push --include-untracked -- [^"]+)"/.exec(next)?.[1];
  assert.ok(stash, next);
  await scene.git(scene.work, stash.split(" ").slice(1));
  assert.equal((await scene.relay(["resume"])).code, 0);
  const done = await scene.relay(["poll"]);
  assert.equal(done.code, 0, all(done));
  assert.match(done.stdout, /task 1 shipped/);
  const log = await scene.out(["log", "--format=%s", "main"], scene.origin);
  assert.deepEqual(log.split("\n").slice(0, 2), [
    "Task #1: status — SHIPPED (task-1)",
    "person: app v2",
  ]);
  assert.match(await scene.out(["stash", "show", "-p"]), /local tweak/);
});

Deno.test("a person's open brief for another task pushed to main while relay's promotion waits uncommitted goes to the queue whole, never merged into relay's", async () => {
  await using scene = await makeScene();
  await queue(scene, "First");
  await queue(scene, "Second");
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.equal((await scene.relay(["poll"])).code, 0);
  const review = await scene.relay(["review"]);
  assert.match(review.stdout, /promoted task 2/, all(review));

  // A person writes their own brief into NEXT-STEPS.md on main, not with `relay inbox add`.
  const person = await personClone(scene);
  const hotfix = brief({ task: 9, title: "Hotfix by a person", status: "OPEN" })
    .replace("Add the feature file.", "Fix the outage.");
  await personPush(scene, person, async () => {
    await Deno.writeTextFile(join(person, "NEXT-STEPS.md"), hotfix);
  }, "person: brief 9");

  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 2 shipped/);
  assert.match(
    poll.stderr,
    /NEXT-STEPS\.md as relay wrote it \(task 2\); the open brief in main's NEXT-STEPS\.md \(task 9\) went to the queue as \.relay\/inbox\/0009-hotfix-by-a-person\.md/,
  );
  // Task 2's brief ran as relay promoted it, with nothing of the person's in it.
  const shipped = await scene.out(["show", "main:NEXT-STEPS.md"], scene.origin);
  assert.match(shipped, /^Status: DONE\nTask: 2\nTitle: Second\n/);
  assert.doesNotMatch(shipped, /outage|Hotfix/);
  // The person's brief waits in the queue as they wrote it, and runs after task 2.
  const queued = await scene.read(".relay/inbox/0009-hotfix-by-a-person.md");
  assert.match(queued, /^Status: QUEUED\nTask: 9\nTitle: Hotfix by a person\n/);
  assert.match(queued, /Fix the outage\./);
  const merge = await scene.relay(["review"]);
  assert.equal(merge.code, 0, all(merge));
  assert.match(merge.stdout, /task 2 merged .*promoted task 9/);
  const third = await scene.relay(["poll"]);
  assert.match(third.stdout, /task 9 shipped/, all(third));
});

Deno.test("a person's open brief pushed to main while a report waits for review does not stop the review: the report's own brief is the one beside it", async () => {
  await using scene = await makeScene();
  await firstShipped(scene);

  const person = await personClone(scene);
  await personPush(scene, person, async () => {
    await Deno.writeTextFile(
      join(person, "NEXT-STEPS.md"),
      HOTFIX_9,
    );
  }, "person: brief 9");

  // Main's report is task 1's, main's brief task 9's: the review and the gate read task 1's
  // brief where it was committed with its report, and merge task 1.
  const review = await scene.relay(["review"]);
  assert.equal(review.code, 0, all(review));
  assert.match(review.stdout, /task 1 merged/);
  assert.match(
    await scene.out(["log", "-1", "--format=%s", "main"], scene.origin),
    /^Merge task-1: First/,
  );
  // The person's brief is not lost on main: queued, then promoted as any other, and it runs.
  assert.match(
    review.stderr,
    /the open brief in origin\/main:NEXT-STEPS\.md went to the queue as \.relay\/inbox\/0009-hotfix-by-a-person\.md \(a person wrote it there by hand\)/,
  );
  assert.match(review.stdout, /promoted task 9/);
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 9 shipped/);
});

Deno.test("a person's open brief pushed to main while the loop is idle is taken up by the next review tick, and runs", async () => {
  await using scene = await makeScene();
  await firstShipped(scene);
  assert.match((await scene.relay(["review"])).stdout, /task 1 merged/);
  const idle = await scene.relay(["review"]);
  assert.match(idle.stdout, /nothing to promote: the inbox is empty/, all(idle));

  const person = await personClone(scene);
  await personPush(scene, person, async () => {
    await Deno.writeTextFile(
      join(person, "NEXT-STEPS.md"),
      brief({ task: 7, title: "Written on main", status: "OPEN" }),
    );
  }, "person: brief 7");
  // The loop's clone still reads task 1's DONE brief: its poll is idle until the review looks.
  const before = await scene.relay(["poll"]);
  assert.equal(before.code, 0, all(before));
  assert.doesNotMatch(before.stdout, /shipped/);
  const review = await scene.relay(["review"]);
  assert.equal(review.code, 0, all(review));
  assert.match(review.stdout, /promoted task 7/);
  // Said once: the next review finds it open in the loop's clone.
  const again = await scene.relay(["review"]);
  assert.doesNotMatch(again.stderr, /went to the queue/, all(again));
  const poll = await scene.relay(["poll"]);
  assert.match(poll.stdout, /task 7 shipped/, all(poll));
  const merged = await scene.relay(["review"]);
  assert.match(merged.stdout, /task 7 merged/, all(merged));
});

Deno.test("a person's brief pushed to main under a number queued only in the loop's clone is queued under the next, never merged into the queued one", async () => {
  await using scene = await makeScene();
  await firstShipped(scene);
  // Task 2 waits in the loop's clone's queue, uncommitted: a person's clone cannot see it.
  await queue(scene, "Second");
  const person = await personClone(scene);
  await personPush(scene, person, async () => {
    await Deno.writeTextFile(
      join(person, "NEXT-STEPS.md"),
      brief({ task: 2, title: "Hotfix by a person", status: "OPEN" }).replace(
        "Add the feature file.",
        "Fix the outage.",
      ),
    );
  }, "person: brief 2");

  const review = await scene.relay(["review"]);
  assert.equal(review.code, 0, all(review));
  assert.match(
    review.stderr,
    /went to the queue as \.relay\/inbox\/0003-hotfix-by-a-person\.md \(task 3: 2 was taken\)/,
  );
  assert.match(review.stdout, /task 1 merged .*promoted task 2/);
  const again = await scene.relay(["review"]);
  assert.doesNotMatch(again.stderr, /went to the queue/, all(again));

  const poll = await scene.relay(["poll"]);
  assert.match(poll.stdout, /task 2 shipped/, all(poll));
  const shipped = await scene.out(["show", "main:NEXT-STEPS.md"], scene.origin);
  assert.match(shipped, /^Status: DONE\nTask: 2\nTitle: Second\n/);
  assert.doesNotMatch(shipped, /outage|Hotfix/);
  const merged = await scene.relay(["review"]);
  assert.match(merged.stdout, /task 2 merged .*promoted task 3/, all(merged));
  const third = await scene.relay(["poll"]);
  assert.match(third.stdout, /task 3 shipped/, all(third));
  assert.match(await scene.out(["show", "main:NEXT-STEPS.md"], scene.origin), /Fix the outage/);
});

Deno.test("a person's brief pushed to main under the number of relay's uncommitted promotion, another title, is queued under the next number", async () => {
  await using scene = await makeScene();
  await queue(scene, "First");
  await queue(scene, "Second");
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.equal((await scene.relay(["poll"])).code, 0);
  assert.match((await scene.relay(["review"])).stdout, /promoted task 2/);
  const person = await personClone(scene);
  await personPush(scene, person, async () => {
    await Deno.writeTextFile(
      join(person, "NEXT-STEPS.md"),
      brief({ task: 2, title: "Hotfix by a person", status: "OPEN" }),
    );
  }, "person: brief 2");

  const poll = await scene.relay(["poll"]);
  assert.match(poll.stdout, /task 2 shipped/, all(poll));
  assert.match(
    poll.stderr,
    /the open brief in main's NEXT-STEPS\.md \(task 2\) went to the queue as \.relay\/inbox\/0003-hotfix-by-a-person\.md \(task 3: 2 was taken\)/,
  );
  assert.match(
    await scene.out(["show", "main:NEXT-STEPS.md"], scene.origin),
    /^Status: DONE\nTask: 2\nTitle: Second\n/,
  );
});

Deno.test("a person's commit on main that changes both the brief and the report stops the review with exit 2 and says how to put them back", async () => {
  await using scene = await makeScene();
  await firstShipped(scene);
  const person = await personClone(scene);
  await personPush(scene, person, async () => {
    await Deno.writeTextFile(
      join(person, "NEXT-STEPS.md"),
      HOTFIX_9,
    );
    const report = join(person, "COWORK-STATUS.md");
    const text = await Deno.readTextFile(report);
    assert.match(text, /^## What shipped$/m);
    await Deno.writeTextFile(
      report,
      text.replace(/^## What shipped$/m, "## What shipped\n\nA person was here."),
    );
  }, "person: brief 9, and a line in the report");

  const review = await scene.relay(["review"]);
  assert.equal(review.code, 2, all(review));
  assert.match(
    review.stderr,
    /the report is for task 1 but the brief beside it is task 9\n {2}fix: relay commits the two together, so a commit on main changed one of them by hand \("git log -3 -- COWORK-STATUS\.md NEXT-STEPS\.md" on main shows which\)/,
  );
  // As the fix says: both files back as relay wrote them, the brief queued in the loop's clone.
  await personPush(scene, person, async () => {
    await scene.git(person, ["checkout", "HEAD~1", "--", "COWORK-STATUS.md", "NEXT-STEPS.md"]);
  }, "person: the brief and the report as relay wrote them");
  await queue(scene, "Hotfix by a person");
  const again = await scene.relay(["review"]);
  assert.equal(again.code, 0, all(again));
  assert.match(again.stdout, /task 1 merged .*promoted task 2/);
});
