/** `relay status` through the real CLI: the brief, the queue, a HOLD, and the JSON form. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { brief, makeScene, type Scene } from "./helpers/scene.ts";

async function queue(scene: Scene, title: string): Promise<void> {
  const res = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title }) });
  assert.equal(res.code, 0, res.stderr);
}

Deno.test("relay status in a fresh repository says idle and exits 0", async () => {
  await using scene = await makeScene();
  const res = await scene.relay(["status"]);
  assert.equal(res.code, 0, res.stderr);
  assert.match(res.stdout, new RegExp(`^repo +${scene.work} \\(on main\\)$`, "m"));
  assert.match(res.stdout, /^brief +none$/m);
  assert.match(res.stdout, /^inbox +empty$/m);
  assert.match(res.stdout, /^tick +not running$/m);
  assert.match(res.stdout, /^idle: nothing open and nothing queued$/m);
});

Deno.test("relay status shows the open brief and the queue, and --json parses to the same", async () => {
  await using scene = await makeScene();
  await queue(scene, "Open me");
  await queue(scene, "Later");
  await queue(scene, "Much later");
  assert.equal((await scene.relay(["promote"])).code, 0);

  const res = await scene.relay(["status"]);
  assert.equal(res.code, 0, res.stderr);
  assert.match(res.stdout, /^brief +task 1 OPEN — Open me \[task-1\]$/m);
  assert.match(res.stdout, /^attempts 0 failed for this brief$/m);
  assert.match(res.stdout, /^inbox +2 Later; 3 Much later$/m);
  assert.match(res.stdout, /^task 1 is open: the next poll starts the executor$/m);

  const json = await scene.relay(["status", "--json"]);
  assert.equal(json.code, 0, json.stderr);
  const data = JSON.parse(json.stdout);
  assert.equal(data.repo, scene.work);
  assert.equal(data.branch, "main");
  assert.deepEqual(data.brief, { task: 1, title: "Open me", status: "OPEN", branch: "task-1" });
  assert.deepEqual(data.inbox, [{ task: 2, title: "Later" }, { task: 3, title: "Much later" }]);
  assert.deepEqual(data.attempts, { failed: 0, total: 0 });
  assert.equal(data.hold, null);
  assert.equal(data.report, null);
  assert.equal(data.tick.locked, false);
  assert.equal(data.tick.journal, null);
  assert.deepEqual(data.problems, []);
  assert.equal(data.waiting, "task 1 is open: the next poll starts the executor");
});

Deno.test("relay status shows a HOLD with what to do next and exits 3, as text and as JSON", async () => {
  await using scene = await makeScene();
  await queue(scene, "Held");
  assert.equal((await scene.relay(["promote"])).code, 0);
  const hold = {
    task: 1,
    reason: "the agent of run r1 left its worktree: main moved",
    next: 'Inspect and repair by hand, then run "relay resume".',
    at: "2025-01-01T00:00:00.000Z",
    runId: "r1",
  };
  await Deno.mkdir(join(scene.work, ".git", "relay"), { recursive: true });
  await Deno.writeTextFile(join(scene.work, ".git", "relay", "hold.json"), JSON.stringify(hold));

  const res = await scene.relay(["status"]);
  assert.equal(res.code, 3, res.stderr);
  assert.match(res.stdout, /^HOLD: the agent of run r1 left its worktree: main moved$/m);
  assert.match(res.stdout, /^ {2}next: Inspect and repair by hand, then run "relay resume"\.$/m);
  assert.match(res.stdout, /^brief +task 1 OPEN — Held \[task-1\]$/m);

  const json = await scene.relay(["status", "--json"]);
  assert.equal(json.code, 3, json.stderr);
  assert.deepEqual(JSON.parse(json.stdout).hold, hold);

  // relay resume clears it; status is back to the open brief.
  const resume = await scene.relay(["resume"]);
  assert.equal(resume.code, 0, resume.stderr);
  assert.match(resume.stdout, /^cleared: HOLD on task 1/);
  const after = await scene.relay(["status"]);
  assert.equal(after.code, 0, after.stderr);
  assert.match(after.stdout, /^task 1 is open: the next poll starts the executor$/m);
});

Deno.test("relay status names an unreadable brief as a problem and exits 2", async () => {
  await using scene = await makeScene();
  await scene.write("NEXT-STEPS.md", "Status: OPEN\nTitle: no task number\n");
  const res = await scene.relay(["status"]);
  assert.equal(res.code, 2, res.stderr);
  assert.match(res.stdout, /^brief +unreadable$/m);
  assert.match(res.stdout, /^problem: NEXT-STEPS\.md:1: Cannot read the brief: /m);
  const json = await scene.relay(["status", "--json"]);
  assert.equal(json.code, 2, "the JSON form exits as the text form does");
  const data = JSON.parse(json.stdout);
  assert.equal(data.brief, null);
  assert.equal(data.problems.length, 1);
  assert.match(data.problems[0], /^NEXT-STEPS\.md:1: /);
});

Deno.test("relay status with a brief whose Status line was deleted by hand says the loop is stopped, not idle", async () => {
  await using scene = await makeScene();
  await scene.write("NEXT-STEPS.md", brief({ task: 1, status: "OPEN" }).replace(/^.*\n/, ""));
  const res = await scene.relay(["status"]);
  assert.equal(res.code, 2, res.stderr);
  assert.match(
    res.stdout,
    /^stopped: NEXT-STEPS\.md cannot be read \(the problem below\): every poll exits 2 until it is fixed$/m,
  );
  assert.doesNotMatch(res.stdout, /^idle|^next poll: +idle/m);
  assert.match(res.stdout, /^next poll: +stops \(exit 2\): NEXT-STEPS\.md has no Status line/m);
  assert.match(res.stdout, /^problem: NEXT-STEPS\.md:1: Cannot read the brief: the first line/m);
  // relay doctor lists it too, with the parser's fix.
  const doctor = await scene.relay(["doctor"]);
  assert.equal(doctor.code, 1, doctor.stdout);
  assert.match(
    doctor.stdout,
    /^problem: NEXT-STEPS\.md:1: Cannot read the brief: the first line is not a "Status:" line\n {2}(why: .*\n {2})?fix: make line 1 "Status: OPEN"/m,
  );
});

Deno.test("relay status --brief reads relay's files while a tick runs, and the tick goes on", async () => {
  await using scene = await makeScene({ agent: "waits.sh" });
  await queue(scene, "Slow");
  assert.equal((await scene.relay(["promote"])).code, 0);
  const go = join(scene.dir, "go");
  const poll = scene.relay(["poll"], { env: { FAKE_GO: go } });
  try {
    // Until the agent's turn is on record.
    let seen = "";
    for (let i = 0; i < 200 && !/after "agent-started"/.test(seen); i++) {
      await new Promise((r) => setTimeout(r, 100));
      const res = await scene.relay(["status", "--brief"]);
      assert.equal(res.code, 0, res.stdout + res.stderr);
      seen = res.stdout;
    }
    assert.match(seen, /^brief {4}task 1 OPEN — Slow$/m);
    assert.match(seen, /^run {6}task 1, run \S+ after "agent-started"$/m);
    const json = JSON.parse((await scene.relay(["status", "--brief", "--json"])).stdout);
    assert.equal(json.run.step, "agent-started");
    assert.equal(json.hold, null);
  } finally {
    await Deno.writeTextFile(go, "");
  }
  const done = await poll;
  assert.equal(done.code, 0, done.stdout + done.stderr);
  assert.match(done.stdout, /task 1 shipped/);
});
