/**
 * The stages after review, end to end with fake agents: finish (relay's own
 * checks and the profile's test_command), polish, docs and security run on
 * the head the review passed, each leaving a receipt; a blocker sends a fix
 * round back and the stages run again from review on the new head; a stage's
 * turn that changes its checkout twice is a HOLD that names the stage.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, brief, exists, makeScene, originLog, queue, type Scene } from "./helpers/scene.ts";

async function lines(file: string): Promise<string[]> {
  return (await Deno.readTextFile(file).catch(() => "")).split("\n").filter((l) => l);
}

/** A test_command in the script form: it records where it ran and exits `code`. */
async function testScript(scene: Scene, code: number): Promise<string> {
  const script = join(scene.dir, "tests.sh");
  await Deno.writeTextFile(
    script,
    `echo "tests ran on $(git rev-parse HEAD)" >> ${join(scene.dir, "tests.log")}\n` +
      `echo "1 test failed: greeting is empty"\nexit ${code}\n`,
  );
  return `/bin/bash ${script}`;
}

Deno.test("all stages pass: finish, polish, docs, security leave receipts; DONE awaiting acceptance; accept by digest merges", async () => {
  await using scene = await makeScene({ config: "docs_file: README.md\n" });
  const test = await testScript(scene, 0);
  await scene.setAgent("good.sh", `merge_policy: human\ntest_command: ${test}\n`);
  const env = { FAKE_STAGE_LOG: join(scene.dir, "stages.log") };
  await queue(scene, brief({ title: "Greet" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  const poll = await scene.relay(["poll"], { env });
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 1 starts: .*docs file README\.md; skip-quality-polish no;/);
  const head = await scene.out(["rev-parse", "origin/task-1"]);

  const review = await scene.relay(["review"], { env });
  assert.equal(review.code, 3, all(review));
  assert.match(review.stdout, /DONE awaiting acceptance: task 1/);
  // Each stage once, in order, on the head the review passed.
  assert.deepEqual(await lines(env.FAKE_STAGE_LOG), [
    `polish ${head}`,
    `docs ${head}`,
    `security ${head}`,
  ]);
  // finish ran the profile's test_command itself, on that head.
  assert.deepEqual(await lines(join(scene.dir, "tests.log")), [`tests ran on ${head}`]);

  const status = await scene.relay(["status", "1"]);
  assert.equal(status.code, 0, all(status));
  assert.match(status.stdout, /receipt review: PASS/);
  assert.match(
    status.stdout,
    /receipt finish: PASS \(bar: 1 command\(s\) passed on this tree \(relay's run\); merges cleanly with main [0-9a-f]{12}; test_command `\/bin\/bash \S+tests\.sh` exit 0/,
  );
  for (const stage of ["polish", "docs", "security"]) {
    assert.match(status.stdout, new RegExp(`receipt ${stage}: PASS \\(1 finding\\(s\\)\\)`));
    assert.match(
      status.stdout,
      new RegExp(`open finding: \\[minor\\] ${stage}: nothing to add \\(${stage} stage\\)`),
    );
  }

  // Another minute: nothing runs again on the same head.
  const again = await scene.relay(["review"], { env });
  assert.equal(again.code, 3, all(again));
  assert.equal((await lines(env.FAKE_STAGE_LOG)).length, 3);

  const intent = await scene.relay(["accept", "1", "--intent-only"]);
  assert.equal(intent.code, 0, all(intent));
  for (const stage of ["finish", "polish", "docs", "security"]) {
    assert.match(intent.stdout, new RegExp(`receipt ${stage}: PASS \\([0-9a-f]{16}\\)`));
  }
  const digest = /^intent: ([0-9a-f]+)$/m.exec(intent.stdout)![1]!;
  const accepted = await scene.relay(["accept", "1", "--expect", digest]);
  assert.equal(accepted.code, 0, all(accepted));
  assert.match(await originLog(scene), /Merge task-1/);
});

Deno.test("a security blocker sends a fix round back; review and the stages run again on the new head, then it merges", async () => {
  await using scene = await makeScene();
  await scene.setStage("security", "blocks-once.sh");
  const env = {
    FAKE_STAGE_LOG: join(scene.dir, "stages.log"),
    FAKE_STAGE_MARK: join(scene.dir, "security-blocked"),
    FAKE_REVIEW_COUNT: join(scene.dir, "reviews.log"),
  };
  await queue(scene, brief({ title: "Greet" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.equal((await scene.relay(["poll"], { env })).code, 0);
  const first = await scene.out(["rev-parse", "origin/task-1"]);

  const sent = await scene.relay(["review"], { env });
  assert.match(sent.stdout, /task 1: sent back — fix brief 2 is open/, all(sent));
  const fix = await scene.read("NEXT-STEPS.md");
  assert.match(fix, /^Status: OPEN\nTask: 2\n/);
  assert.match(fix, /security: the greeting is built from user input without escaping/);
  assert.match(fix, /The security stage sent this PR back/);
  assert.doesNotMatch(await originLog(scene), /Merge task-1/);

  assert.equal((await scene.relay(["poll"], { env })).code, 0);
  const second = await scene.out(["rev-parse", "origin/task-1"]);
  assert.notEqual(second, first);
  const merged = await scene.relay(["review"], { env });
  assert.equal(merged.code, 0, all(merged));
  assert.match(merged.stdout, /task 1 merged/);
  assert.deepEqual(await lines(env.FAKE_STAGE_LOG), [
    `polish ${first}`,
    `security ${first}`,
    `polish ${second}`,
    `security ${second}`,
  ]);
  // The reviewer looked at both heads: the stages run again from review.
  assert.equal((await lines(env.FAKE_REVIEW_COUNT)).length, 2);
  assert.match(await originLog(scene), /Merge task-1/);
});

Deno.test("finish runs the profile's test_command on the head: a failing one sends the PR back with its output", async () => {
  await using scene = await makeScene();
  const test = await testScript(scene, 1);
  await scene.setAgent("good.sh", `test_command: ${test}\n`);
  const env = { FAKE_STAGE_LOG: join(scene.dir, "stages.log") };
  await queue(scene, brief({ title: "Greet" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.equal((await scene.relay(["poll"], { env })).code, 0);
  const res = await scene.relay(["review"], { env });
  assert.match(res.stdout, /sent back — fix brief 2/, all(res));
  assert.match(
    await scene.read("NEXT-STEPS.md"),
    /test_command `\/bin\/bash \S+tests\.sh` exits 1 on [0-9a-f]{12}: 1 test failed: greeting is empty/,
  );
  // finish goes first: no stage's turn was paid for a head that fails its tests.
  assert.deepEqual(await lines(env.FAKE_STAGE_LOG), []);
});

Deno.test("a stage's turn that changes its checkout twice is a HOLD that names the stage; nothing merges", async () => {
  await using scene = await makeScene();
  await scene.setStage("polish", "edits.sh");
  await queue(scene, brief({ title: "Greet" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.equal((await scene.relay(["poll"])).code, 0);
  const res = await scene.relay(["review"]);
  assert.equal(res.code, 3, all(res));
  assert.match(all(res), /HOLD/);
  assert.match(all(res), /polish stage of task 1: the polish stage changed its worktree twice/);
  assert.match(all(res), /\(the polish stage's log and output\)/);
  assert.ok(await exists(join(scene.work, ".git", "relay", "hold.json")));
  assert.doesNotMatch(await originLog(scene), /Merge task-1/);
  // The product tree and the branch are as the executor left them.
  assert.equal(
    await scene.out(["show", "origin/task-1:README.md"]),
    "# product",
  );
});

Deno.test("a brief's Acceptance: human makes a person accept it under merge_policy auto, through its fix rounds", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "Judgment call", extraHeader: "Acceptance: human" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.match(await scene.read("NEXT-STEPS.md"), /^Acceptance: human$/m);
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /merge human \(the brief asks for a person\), efficient/);
  const review = await scene.relay(["review"]);
  assert.equal(review.code, 3, all(review));
  assert.match(review.stdout, /DONE awaiting acceptance: task 1/);
  assert.doesNotMatch(await originLog(scene), /Merge task-1/);
  // A person sends it back: the fix brief still asks for a person.
  const intent = await scene.relay(["reject", "1", "--intent-only", "--text", "not yet"]);
  const digest = /^intent: ([0-9a-f]+)$/m.exec(intent.stdout)![1]!;
  const rejected = await scene.relay(["reject", "1", "--expect", digest, "--text", "not yet"]);
  assert.equal(rejected.code, 0, all(rejected));
  assert.match(await scene.read("NEXT-STEPS.md"), /^Kind: fix\nFixes: 1\nAcceptance: human$/m);
});

Deno.test("a head a stage rejected merges only when a person accepts it over the rejection, with a reason, by digest", async () => {
  await using scene = await makeScene();
  await scene.setStage("polish", "blocks.sh");
  await queue(scene, brief({ title: "Greet" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.equal((await scene.relay(["poll"])).code, 0);
  const sent = await scene.relay(["review"]);
  assert.match(sent.stdout, /task 1: sent back — fix brief 2 is open/, all(sent));

  // Neither relay merge nor a plain accept merges what a stage rejected.
  for (const args of [["merge"], ["accept", "1", "--intent-only"]]) {
    const refused = await scene.relay(args);
    assert.equal(refused.code, 1, all(refused));
    assert.match(
      refused.stdout,
      /not merging task-1: its polish stage rejected [0-9a-f]{12} \(\[blocker\] polish: the token is printed to the log\); to accept it anyway: relay accept 1 --override-rejection --reason "…" --intent-only/,
    );
  }
  // An override needs a reason.
  const bare = await scene.relay(["accept", "1", "--override-rejection", "--intent-only"]);
  assert.equal(bare.code, 2, all(bare));
  assert.match(bare.stderr, /--override-rejection needs --reason/);

  const why = "the token is a test fixture's; tracked in #12";
  const intent = await scene.relay([
    "accept",
    "1",
    "--override-rejection",
    "--reason",
    why,
    "--intent-only",
  ]);
  assert.equal(intent.code, 0, all(intent));
  assert.match(
    intent.stdout,
    /accepted over a rejection: polish stage FAIL: \[blocker\] polish: the token is printed to the log/,
  );
  assert.match(intent.stdout, /receipt polish: FAIL/);
  // The rejection sent the head back before the later stage ran: the intent says so.
  assert.match(
    intent.stdout,
    /never ran on this head \(the rejection sent it back first\): security/,
  );
  const digest = /^intent: ([0-9a-f]+)$/m.exec(intent.stdout)![1]!;
  assert.ok(
    intent.stdout.includes(
      `to do it: relay accept 1 --expect ${digest} --override-rejection --reason ${
        JSON.stringify(why)
      }`,
    ),
    intent.stdout,
  );
  const accepted = await scene.relay([
    "accept",
    "1",
    "--override-rejection",
    "--reason",
    why,
    "--expect",
    digest,
  ]);
  assert.equal(accepted.code, 0, all(accepted));
  assert.match(await originLog(scene), /Merge task-1/);
  // The fix brief written for that head is answered: retired, not run.
  const next = await scene.read("NEXT-STEPS.md");
  assert.match(next, /^Status: DONE\nTask: 2\n/);
  assert.match(
    next,
    /## Retired by relay\n\na person accepted task-1 at [0-9a-f]{12} over its stage's rejection \(reason: the token is a test fixture's; tracked in #12\)/,
  );
  const status = await scene.relay(["status", "1"]);
  assert.match(
    status.stdout,
    /receipt acceptance: ACCEPTED \(digest [0-9a-f]+, over a stage's rejection: the token is a test fixture's; tracked in #12\)/,
  );
});

Deno.test("relay status --brief, while the review tick runs a stage's turn, names the stage; the tick goes on", async () => {
  await using scene = await makeScene();
  await scene.setStage("security", "waits.sh");
  const env = { FAKE_STAGE_GO: join(scene.dir, "go") };
  await queue(scene, brief({ title: "Greet" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.equal((await scene.relay(["poll"])).code, 0);
  const review = scene.relay(["review"], { env });
  let seen = "";
  for (let i = 0; i < 200 && !/security stage/.test(seen); i++) {
    seen = (await scene.relay(["status", "--brief"])).stdout;
    if (!/security stage/.test(seen)) await new Promise((r) => setTimeout(r, 100));
  }
  assert.match(
    seen,
    /^turn {5}task 1: security stage \(run \S+security1-t1, pid \d+, since \S+\)$/m,
  );
  await Deno.writeTextFile(env.FAKE_STAGE_GO, "");
  const done = await review;
  assert.equal(done.code, 0, all(done));
  assert.match(done.stdout, /task 1 merged/);
  assert.match((await scene.relay(["status", "--brief"])).stdout, /^turn {5}none$/m);
});

Deno.test("kill -9 during a stage's turn: the next tick waits for it, then reports it uncertain and launches nothing; resume --retry-uncertain replays it", async () => {
  await using scene = await makeScene();
  await scene.setStage("security", "waits.sh");
  const go = join(scene.dir, "go");
  const env = { FAKE_STAGE_GO: go, FAKE_STAGE_LOG: join(scene.dir, "stages.log") };
  await queue(scene, brief({ title: "Greet" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.equal((await scene.relay(["poll"])).code, 0);
  const killed = await scene.relay(["review"], {
    env: { ...env, RELAY_FAILPOINT: "security-running" },
  });
  assert.equal(killed.code, 137, all(killed));
  const busy = await scene.relay(["review"], { env });
  assert.equal(busy.code, 0, all(busy));
  assert.match(busy.stdout, /busy: the reviewer from an interrupted tick is still running/);

  // It ends while no tick watches it: uncertain, a HOLD naming the stage, nothing launched.
  await Deno.writeTextFile(go, "");
  let held = await scene.relay(["review"], { env });
  for (let i = 0; i < 50 && held.code === 0; i++) {
    await new Promise((r) => setTimeout(r, 200));
    held = await scene.relay(["review"], { env });
  }
  assert.equal(held.code, 3, all(held));
  assert.match(held.stderr, /HOLD: task 1: uncertain security stage turn: run \S+security1-t1/);
  assert.equal((await scene.relay(["review"], { env })).code, 3);
  const retry = await scene.relay(["resume", "--retry-uncertain"]);
  assert.equal(retry.code, 0, all(retry));
  const merged = await scene.relay(["review"], { env });
  assert.equal(merged.code, 0, all(merged));
  assert.match(merged.stdout, /task 1 merged/);
  assert.match(await originLog(scene), /Merge task-1/);
});
