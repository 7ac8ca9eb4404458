/**
 * End to end, build output (issue 6, item 7): relay never sweeps what a test
 * run or an install leaves behind into a PR, says what it commits for the
 * agent, and a reviewer turn voided by build output the branch tracks names
 * that cause and its fix. Real CLI, real git, fake agents and reviewers.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  all,
  brief,
  countLines,
  exists,
  makeScene,
  type Scene,
  stateDir,
} from "./helpers/scene.ts";

async function openBrief(scene: Scene): Promise<void> {
  await scene.write(
    "NEXT-STEPS.md",
    brief({ status: "OPEN", task: 1, kind: "feature", extraHeader: "Branch: task-1" }),
  );
}

/** Every file in the tree of `rev` on the origin. */
async function filesAt(scene: Scene, rev: string): Promise<string[]> {
  return (await scene.out(["ls-tree", "-r", "--name-only", rev], scene.origin)).split("\n")
    .filter((s) => s !== "").sort();
}

Deno.test("build output an agent leaves behind is never committed; relay names what it commits and what it leaves", async () => {
  await using scene = await makeScene({ agent: "leaves-build-output.sh" });
  await openBrief(scene);

  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 1 shipped/);

  // The branch carries the product file only: no __pycache__, no node_modules.
  assert.deepEqual(await filesAt(scene, "task-1"), [
    ".relay/config.yaml",
    ".relay/inbox/.gitkeep",
    "README.md",
    "src/app.txt",
    "src/feature-1.txt",
  ]);
  assert.match(
    poll.stderr,
    /committing what the agent left uncommitted \(1 file\(s\)\): src\/feature-1\.txt\n/,
  );
  assert.match(
    poll.stderr,
    /left out build output \(relay never commits it for the agent\): __pycache__\/x\.pyc, node_modules\/a\/index\.js\n/,
  );
  // Left in the worktree while the task runs: they are the agent's files.
  const wt = join(scene.worktrees, "task-1");
  assert.equal(
    await Deno.readTextFile(join(wt, "node_modules/a/index.js")),
    "module.exports = 1;\n",
  );

  // Once merged, the worktree holds nothing but that build output: it goes, without --force,
  // and the clean worktree is parked as the spare the next task switches to.
  const review = await scene.relay(["review"]);
  assert.equal(review.code, 0, all(review));
  assert.match(
    review.stderr,
    /parked the worktree of task-1 for the next task \(the branch stays\)/,
  );
  assert.equal(await exists(wt), false);
  const spare = join(scene.worktrees, "spare");
  assert.equal(await exists(join(spare, "node_modules")), false);
  assert.equal(await exists(join(spare, "__pycache__")), false);
  assert.ok(await exists(join(spare, "src/feature-1.txt")));
});

Deno.test("a finished task's worktree with anything besides build output in it stays for a person", async () => {
  await using scene = await makeScene({ agent: "leaves-build-output.sh" });
  await openBrief(scene);
  assert.equal((await scene.relay(["poll"])).code, 0);
  const wt = join(scene.worktrees, "task-1");
  await Deno.writeTextFile(join(wt, "notes.txt"), "a person's notes\n");
  const review = await scene.relay(["review"]);
  assert.equal(review.code, 0, all(review));
  assert.doesNotMatch(review.stderr, /removed the worktree|parked the worktree/);
  assert.equal(await Deno.readTextFile(join(wt, "notes.txt")), "a person's notes\n");
  assert.ok(await exists(join(wt, "node_modules/a/index.js")));
});

Deno.test("never_commit in .relay/config.yaml extends the built-in list", async () => {
  await using scene = await makeScene({
    agent: "leaves-build-output.sh",
    config: 'never_commit: ["*.log"]\n',
  });
  await openBrief(scene);
  const poll = await scene.relay(["poll"], { env: { FAKE_LOG: "1" } });
  assert.equal(poll.code, 0, all(poll));
  const files = await filesAt(scene, "task-1");
  assert.ok(files.includes("src/feature-1.txt"), files.join(" "));
  assert.ok(!files.includes("debug.log"), files.join(" "));
  assert.match(poll.stderr, /left out build output [^\n]*debug\.log/);
});

Deno.test("without never_commit the same log file is committed (the built-in list leaves it alone)", async () => {
  await using scene = await makeScene({ agent: "leaves-build-output.sh" });
  await openBrief(scene);
  const poll = await scene.relay(["poll"], { env: { FAKE_LOG: "1" } });
  assert.equal(poll.code, 0, all(poll));
  assert.ok((await filesAt(scene, "task-1")).includes("debug.log"));
  assert.match(
    poll.stderr,
    /committing what the agent left uncommitted \(2 file\(s\)\): debug\.log, src\/feature-1\.txt/,
  );
});

Deno.test("an agent that commits build output itself is sent back by the gate before any review, with the fix", async () => {
  await using scene = await makeScene({ agent: "commits-pyc.sh", reviewer: "rewrites-pyc.sh" });
  await openBrief(scene);
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  assert.ok((await filesAt(scene, "task-1")).includes("src/__pycache__/app.cpython-311.pyc"));

  const count = join(scene.dir, "reviews.count");
  const res = await scene.relay(["review"], { env: { FAKE_REVIEW_COUNT: count } });
  assert.equal(res.code, 0, all(res));
  assert.match(res.stdout, /task 1: sent back — fix brief 2/);
  assert.equal(await countLines(count, "review"), 0, "a paid review of a branch the gate refuses");
  assert.match(
    await scene.read("NEXT-STEPS.md"),
    /src\/__pycache__\/app\.cpython-311\.pyc \(build output: remove it from the branch \(git rm --cached\) and list it in \.gitignore\)/,
  );
});

Deno.test("a reviewer whose run rewrites build output main already tracks: HOLD naming the files and the fix, after one turn", async () => {
  await using scene = await makeScene({ reviewer: "rewrites-pyc.sh" });
  // Build output that reached main before relay ran (no .gitignore): the branch does not touch it.
  await scene.write("src/__pycache__/app.cpython-311.pyc", "compiled v1\n");
  await scene.git(scene.work, ["add", "src/__pycache__"]);
  await scene.git(scene.work, ["commit", "--quiet", "-m", "compiled files"]);
  await scene.git(scene.work, ["push", "--quiet", "origin", "HEAD:main"]);
  await openBrief(scene);
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));

  const count = join(scene.dir, "reviews.count");
  const res = await scene.relay(["review"], { env: { FAKE_REVIEW_COUNT: count } });
  assert.equal(res.code, 3, all(res));
  assert.match(
    res.stderr,
    /review turn \S+ is void: the reviewer's run rewrote tracked build output: src\/__pycache__\/app\.cpython-311\.pyc/,
  );
  assert.match(
    res.stderr,
    /HOLD: review of task 1: the reviewer's run rewrote tracked build output/,
  );
  assert.match(res.stderr, /Remove it from the branch and add it to \.gitignore/);
  assert.match(res.stderr, /git rm -r --cached -- src\/__pycache__\//);
  assert.match(res.stderr, /"__pycache__\/" in \.gitignore/);
  assert.doesNotMatch(res.stderr, /Fix the reviewer's profile or REVIEWER\.md/);
  // The cause is the branch, so a second (paid) turn would only be void again.
  assert.equal(await countLines(count, "review"), 1);
  const hold = JSON.parse(await Deno.readTextFile(join(stateDir(scene), "hold.json")));
  assert.match(
    hold.next,
    /add it to \.gitignore \(relay never commits these on the agent's behalf\)/,
  );
});

Deno.test("a reviewer whose run leaves untracked caches behind is not void: its verdict counts and the PR merges", async () => {
  await using scene = await makeScene({ reviewer: "makes-cache.sh" });
  await openBrief(scene);
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  const res = await scene.relay(["review"]);
  assert.equal(res.code, 0, all(res));
  assert.doesNotMatch(res.stderr, /is void/);
  assert.match(res.stderr, /verdict PASS/);
  assert.match(
    await scene.out(["log", "-1", "--format=%s", "main"], scene.origin),
    /^Merge task-1: /,
  );
});
