/**
 * `relay status` runs the cheap checks every poll runs first (repo config,
 * operator profile, primary tree on main, no merge in progress, the
 * interrupted run's worktree still there), so a loop whose every poll fails
 * does not look like one about to start the executor. Real CLI, real git.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, brief, makeScene, type Scene } from "./helpers/scene.ts";

/** Queues one brief and promotes it: task 1 is OPEN in the primary tree. */
async function openTask(scene: Scene, title = "Open me"): Promise<void> {
  const queued = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title }) });
  assert.equal(queued.code, 0, all(queued));
  const promoted = await scene.relay(["promote"]);
  assert.equal(promoted.code, 0, all(promoted));
}

Deno.test("relay status with a typo'd key in .relay/config.yaml names it as a problem, says polls stop, and exits 2 as poll does", async () => {
  await using scene = await makeScene();
  await openTask(scene);
  // The typo lands on main after the brief was promoted (relay promote reads the config too).
  await scene.write(".relay/config.yaml", "version: 1\nmian: main\n");
  await scene.git(scene.work, ["commit", "--quiet", "-m", "typo", "--", ".relay/config.yaml"]);
  await scene.git(scene.work, ["push", "--quiet", "origin", "HEAD:main"]);

  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 2, all(poll));

  const res = await scene.relay(["status"]);
  assert.equal(res.code, 2, all(res));
  assert.match(
    res.stdout,
    /^blocked: task 1 is open, but every poll stops: \.relay\/config\.yaml is invalid$/m,
  );
  assert.doesNotMatch(res.stdout, /the next poll starts the executor/);
  assert.match(res.stdout, /^problem: .*\.relay\/config\.yaml.*mian/m);
  // The last poll is on record with its exit code and the error it printed.
  assert.match(
    res.stdout,
    /^last poll: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z exit 2, task 1 — error: .*\.relay\/config\.yaml/m,
  );
  assert.match(res.stdout, /^last review: none recorded$/m);

  const json = await scene.relay(["status", "--json"]);
  assert.equal(json.code, 2, all(json));
  const data = JSON.parse(json.stdout);
  assert.equal(data.problems.length, 1);
  assert.match(data.problems[0], /mian/);
  assert.match(data.waiting, /^blocked: task 1 is open, but every poll stops: /);
  assert.equal(data.lastPoll.command, "poll");
  assert.equal(data.lastPoll.exit, 2);
  assert.equal(data.lastPoll.result, "input");
  assert.equal(data.lastReview, null);
});

Deno.test("relay status with a broken operator profile reports it and exits 2", async () => {
  await using scene = await makeScene();
  await openTask(scene);
  await Deno.writeTextFile(scene.profile, "roles:\n  executor: { vendor: nobody }\n");
  const res = await scene.relay(["status"]);
  assert.equal(res.code, 2, all(res));
  assert.match(
    res.stdout,
    /^blocked: task 1 is open, but every poll stops: the operator profile cannot be loaded$/m,
  );
  assert.ok(res.stdout.includes(`problem: ${scene.profile}`), res.stdout);
});

Deno.test("relay status with the primary tree on another branch says polls stop there and exits 3", async () => {
  await using scene = await makeScene();
  await openTask(scene);
  await scene.git(scene.work, ["switch", "--quiet", "-c", "feature"]);

  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 3, all(poll));
  assert.match(poll.stderr, /The primary tree is on "feature", not "main"/);

  const res = await scene.relay(["status"]);
  assert.equal(res.code, 3, all(res));
  assert.match(
    res.stdout,
    /^blocked: task 1 is open, but every poll stops: the primary tree is on "feature", not "main"$/m,
  );
  assert.match(res.stdout, /^ {2}fix: run "git switch main" in /m);
  assert.match(
    res.stdout,
    /^last poll: \S+ exit 3, task 1 — HOLD: The primary tree is on "feature"/m,
  );

  await scene.git(scene.work, ["switch", "--quiet", "main"]);
  const back = await scene.relay(["status"]);
  assert.equal(back.code, 0, all(back));
  assert.match(back.stdout, /^task 1 is open: the next poll starts the executor$/m);
});

Deno.test("relay status during a merge in the primary tree says so and exits 3", async () => {
  await using scene = await makeScene();
  await openTask(scene);
  // A real conflicting merge leaves MERGE_HEAD behind.
  await scene.git(scene.work, ["switch", "--quiet", "-c", "other"]);
  await scene.write("src/app.txt", "app v2 on other\n");
  await scene.git(scene.work, ["commit", "--quiet", "-am", "other side"]);
  await scene.git(scene.work, ["switch", "--quiet", "main"]);
  await scene.write("src/app.txt", "app v2 on main\n");
  await scene.git(scene.work, ["commit", "--quiet", "-m", "main side", "--", "src/app.txt"]);
  const merge = await scene.git(scene.work, ["merge", "--quiet", "other"], true);
  assert.notEqual(merge.code, 0, "the merge should stop on a conflict");

  const res = await scene.relay(["status"]);
  assert.equal(res.code, 3, all(res));
  assert.match(
    res.stdout,
    /^blocked: task 1 is open, but every poll stops: the primary tree is in the middle of a merge$/m,
  );
  assert.match(res.stdout, /^ {2}fix: finish or abort it in /m);
  const data = JSON.parse((await scene.relay(["status", "--json"])).stdout);
  assert.equal(data.problems.length, 1);
  assert.match(data.problems[0], /^The primary tree is in the middle of a merge/);
});

Deno.test("relay status names an interrupted run whose worktree folder was deleted and exits 3", async () => {
  await using scene = await makeScene();
  await openTask(scene);
  const killed = await scene.relay(["poll"], { env: { RELAY_FAILPOINT: "after-prepared" } });
  assert.equal(killed.code, 137, all(killed));
  const journal = JSON.parse(
    await Deno.readTextFile(join(scene.work, ".git", "relay", "journal.json")),
  );
  // A tick killed without a trace of its end leaves no record of itself.
  const before = await scene.relay(["status"]);
  assert.equal(before.code, 0, all(before));
  assert.match(before.stdout, /^an interrupted tick will be finished by the next poll \(run /m);
  assert.match(before.stdout, /^last poll: none recorded$/m);

  await Deno.remove(journal.worktree, { recursive: true });
  const res = await scene.relay(["status"]);
  assert.equal(res.code, 3, all(res));
  assert.match(
    res.stdout,
    new RegExp(
      `^blocked: an interrupted tick waits to be finished \\(run ${journal.runId}, after "prepared"\\), but every poll stops: the worktree of run ${journal.runId} is gone$`,
      "m",
    ),
  );
  assert.ok(
    res.stdout.includes(
      `problem: Cannot finish run ${journal.runId}: its worktree "${journal.worktree}" does not exist.`,
    ),
    res.stdout,
  );
  // Its turn is not committed yet: a prune now could lose a commit on no branch; the poll
  // anchors the turn's commits first and HOLDs with what to do.
  assert.match(
    res.stdout,
    /fix: run "relay poll" before anything else \(no "git worktree prune" yet\)/,
  );
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 3, all(poll));
  assert.match(
    poll.stderr,
    /was deleted during run .*\n {2}next: relay pushed nothing\. .*git worktree prune/,
  );
});

Deno.test("relay status after polls that fail on an unreachable origin shows the last poll's error in the waiting line", async () => {
  await using scene = await makeScene();
  await openTask(scene);
  await scene.git(scene.work, ["remote", "set-url", "origin", `file://${scene.dir}/gone.git`]);

  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 1, all(poll));

  const res = await scene.relay(["status"]);
  assert.equal(res.code, 0, all(res));
  // A remote that cannot be reached is retried, not an error: git's own words are quoted.
  const last =
    /^last poll: (\S+) exit 1, task 1 — not yet: Cannot fetch from "origin" yet: the remote could not be reached: ".*gone\.git/m
      .exec(res.stdout);
  assert.ok(last, res.stdout);
  assert.match(
    res.stdout,
    new RegExp(
      `^task 1 is open, but the last poll failed \\(exit 1 at ${
        last[1]!.replace(/\./g, "\\.")
      }; see "last poll" above\\): the next poll tries again$`,
      "m",
    ),
  );
  const data = JSON.parse((await scene.relay(["status", "--json"])).stdout);
  assert.equal(data.lastPoll.exit, 1);
  assert.equal(data.lastPoll.result, "retry");
  assert.match(data.lastPoll.message, /gone\.git/);
  assert.ok(data.lastPoll.message.length <= 500);
});

Deno.test("relay status with an invalid config after a merge says the task is merged, and that every review stops", async () => {
  await using scene = await makeScene();
  await openTask(scene);
  assert.equal((await scene.relay(["poll"])).code, 0);
  const review = await scene.relay(["review"]);
  assert.match(review.stdout, /task 1 merged/, all(review));
  await scene.write(".relay/config.yaml", "version: 1\nattempts: banana\n");

  const res = await scene.relay(["status"]);
  assert.equal(res.code, 2, all(res));
  assert.match(
    res.stdout,
    /^blocked: task 1 is merged \([0-9a-f]{12}, by relay\); nothing queued, but every review stops: \.relay\/config\.yaml is invalid$/m,
  );
  assert.doesNotMatch(res.stdout, /reported SHIPPED, but/);
});
