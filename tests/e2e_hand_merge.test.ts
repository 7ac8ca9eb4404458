/**
 * A person merges a PR by hand while relay still has work open on it: the gate
 * refused it (a dependency manifest) and wrote a fix brief, and the owner,
 * who accepts the dependency, merges the branch themselves. relay must notice
 * before it launches anything on that branch or merges it: the fix brief is
 * retired (DONE, with the reason), the next brief is promoted, and the branch
 * is never merged a second time (which, with an agent that appends a line,
 * used to leave the line twice on main).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, brief, makeScene, type Scene, stateDir } from "./helpers/scene.ts";

/** The agent adds a dependency manifest and appends a line to a product file. */
const EXTRA =
  `echo '{"dependencies":{"left-pad":"1"}}' > package.json; echo "one more line" >> src/app.txt`;

/** The executor turns relay started, by task: one run folder each (`…-task<n>-a<k>`). */
async function executorRuns(scene: Scene): Promise<string[]> {
  const runs: string[] = [];
  for await (const e of Deno.readDir(join(stateDir(scene), "runs"))) {
    const m = /-task(\d+)-a\d+$/.exec(e.name);
    if (m) runs.push(`task ${m[1]}`);
  }
  return runs.sort();
}

async function setUp(scene: Scene): Promise<{ env: Record<string, string> }> {
  const env = { FAKE_EXTRA: EXTRA };
  for (const title of ["Needs a dependency", "Next thing"]) {
    const res = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title }) });
    assert.equal(res.code, 0, all(res));
  }
  assert.equal((await scene.relay(["promote"])).code, 0);
  const poll = await scene.relay(["poll"], { env });
  assert.equal(poll.code, 0, all(poll));
  // The gate refuses package.json: a fix brief (task 3) is open for task-1.
  const review = await scene.relay(["review"]);
  assert.equal(review.code, 0, all(review));
  assert.match(review.stdout, /task 1: sent back — fix brief 3/);
  // The owner accepts the dependency and merges task-1 by hand from their own clone.
  const person = join(scene.dir, "person");
  await scene.git(scene.dir, ["clone", "--quiet", `file://${scene.origin}`, person]);
  await scene.git(person, [
    "merge",
    "--quiet",
    "--no-ff",
    "-m",
    "person: merge task-1",
    "origin/task-1",
  ]);
  await scene.git(person, ["push", "--quiet", "origin", "HEAD:main"]);
  return { env };
}

async function assertMergedOnce(scene: Scene): Promise<void> {
  const subjects = (await scene.out(["log", "--format=%s", "main"], scene.origin)).split("\n");
  const merges = subjects.filter((s) => /merge task-1/i.test(s));
  assert.deepEqual(merges, ["person: merge task-1"], subjects.join("\n"));
  const app = await scene.out(["show", "main:src/app.txt"], scene.origin);
  assert.equal(app.split("\n").filter((l) => l === "one more line").length, 1, app);
}

Deno.test("a PR merged by hand while its fix brief is open: the poll launches nothing, retires the fix and promotes the next brief", async () => {
  await using scene = await makeScene({ agent: "custom.sh" });
  const { env } = await setUp(scene);
  assert.deepEqual(await executorRuns(scene), ["task 1"]);

  const poll = await scene.relay(["poll"], { env });
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 3 retired: task-1 at [0-9a-f]{12} is already in origin\/main/);
  assert.match(poll.stdout, /promoted task 2/);
  assert.deepEqual(await executorRuns(scene), ["task 1"], "the executor ran on a merged branch");
  assert.match(await scene.read("NEXT-STEPS.md"), /^Status: OPEN\nTask: 2\n/);

  // The rest of the loop: the review records the hand merge and never merges task-1 again;
  // task 2 runs and merges.
  const review = await scene.relay(["review"]);
  assert.equal(review.code, 0, all(review));
  assert.match(review.stderr + review.stdout, /merged outside relay/);
  const next = await scene.relay(["poll"]);
  assert.equal(next.code, 0, all(next));
  assert.match(next.stdout, /task 2 shipped/);
  await assertMergedOnce(scene);
  const log = await scene.out(["log", "--format=%s", "main"], scene.origin);
  console.log(`git log of main:\n${log}`);
});

Deno.test("a PR merged by hand while its fix brief is open: a review first retires the fix, and nothing is merged twice", async () => {
  await using scene = await makeScene({ agent: "custom.sh" });
  await setUp(scene);

  const review = await scene.relay(["review"]);
  assert.equal(review.code, 0, all(review));
  assert.match(review.stdout, /fix brief 3 retired; promoted task 2/);
  const retired = await Deno.readTextFile(join(scene.work, "NEXT-STEPS.md"));
  assert.match(retired, /^Status: OPEN\nTask: 2\n/);

  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 2 shipped/);
  assert.deepEqual(await executorRuns(scene), ["task 1", "task 2"]);
  await assertMergedOnce(scene);
});

Deno.test("the retired fix brief keeps the reason when nothing is queued after it", async () => {
  await using scene = await makeScene({ agent: "custom.sh" });
  const { env } = await setUp(scene);
  // Drop the queued brief: nothing to promote after the retirement.
  assert.equal((await scene.relay(["inbox", "drop", "2"])).code, 0);
  const poll = await scene.relay(["poll"], { env });
  assert.equal(poll.code, 0, all(poll));
  const text = await scene.read("NEXT-STEPS.md");
  assert.match(text, /^Status: DONE\nTask: 3\n/);
  assert.match(text, /## Retired by relay\n\ntask-1 at [0-9a-f]{12} is already in origin\/main/);
  // An idle loop from here: the next poll starts nothing.
  const again = await scene.relay(["poll"], { env });
  assert.equal(again.code, 0, all(again));
  await assertMergedOnce(scene);
});

Deno.test("a person merges the PR while its fix is running: the fix's newer commits are in no merge — a HOLD that says so, and resume moves on", async () => {
  await using scene = await makeScene();
  const res = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title: "Feature" }) });
  assert.equal(res.code, 0, all(res));
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.equal((await scene.relay(["poll"])).code, 0);
  // The reviewer fails it once: fix brief 2 is open for task-1.
  const failOnce = join(scene.dir, "fail-once");
  const review = await scene.relay(["review"], { env: { FAKE_FAIL_ONCE: failOnce } });
  assert.match(review.stdout, /sent back — fix brief 2/);
  const merged = await scene.out(["rev-parse", "origin/task-1"]);

  // The fix's agent takes a moment; meanwhile the owner merges task-1 as it was.
  const fix = scene.relay(["poll"], { env: { FAKE_SLEEP: "2" } });
  const journal = join(stateDir(scene), "journal.json");
  for (let i = 0; i < 200; i++) {
    const text = await Deno.readTextFile(journal).catch(() => "");
    if (text.includes('"agent-started"')) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const person = join(scene.dir, "person");
  await scene.git(scene.dir, ["clone", "--quiet", `file://${scene.origin}`, person]);
  await scene.git(person, ["merge", "--quiet", "--no-ff", "-m", "person: merge task-1", merged]);
  await scene.git(person, ["push", "--quiet", "origin", "HEAD:main"]);
  const fixed = await fix;
  assert.equal(fixed.code, 0, all(fixed));
  assert.match(fixed.stdout, /task 2 shipped/);

  const held = await scene.relay(["review"]);
  assert.equal(held.code, 3, all(held));
  assert.match(held.stderr, /was merged outside relay at [0-9a-f]{12}, but task-1 has moved on to/);
  assert.match(held.stderr, /relay resume/);
  assert.equal((await scene.relay(["resume"])).code, 0);
  const after = await scene.relay(["review"]);
  assert.equal(after.code, 0, all(after));
  const subjects = (await scene.out(["log", "--format=%s", "main"], scene.origin)).split("\n");
  assert.deepEqual(subjects.filter((s) => /merge task-1/i.test(s)), ["person: merge task-1"]);
});
