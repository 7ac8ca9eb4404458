/** End to end: brief → inbox → promote → poll, through the real CLI, on a plain git remote. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { brief, makeScene } from "./helpers/scene.ts";

Deno.test("relay inbox add, promote and poll ship one product-only branch and one paperwork commit", async () => {
  await using scene = await makeScene();
  await scene.write(
    "brief.md",
    brief({ title: "Add the feature", bar: ["git ls-files src", "cat src/feature-1.txt"] }),
  );
  const add = await scene.relay(["inbox", "add", "brief.md"]);
  assert.equal(add.code, 0, add.stderr);
  assert.match(add.stdout, /queued task 1: Add the feature/);
  await Deno.remove(join(scene.work, "brief.md"));

  const promote = await scene.relay(["promote"]);
  assert.equal(promote.code, 0, promote.stderr);
  assert.match(await scene.read("NEXT-STEPS.md"), /^Status: OPEN\nTask: 1\n/);

  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, poll.stdout + poll.stderr);
  assert.match(poll.stdout, /task 1 shipped/);

  await scene.git(scene.work, ["fetch", "--quiet", "origin"]);
  const branchFiles = await scene.out(["diff", "--name-only", "origin/main...origin/task-1"]);
  assert.deepEqual(branchFiles.split("\n"), ["src/feature-1.txt"]);

  const subjects = (await scene.out(["log", "--format=%s", "origin/main"])).split("\n");
  assert.equal(subjects[0], "Task #1: status — SHIPPED (task-1)");
  const paperwork = (await scene.out(["show", "--name-only", "--format=", "origin/main"])).split(
    "\n",
  ).sort();
  // The inbox entry was queued and promoted without ever being committed: no trace of it.
  assert.deepEqual(paperwork, ["COWORK-STATUS.md", "NEXT-STEPS.md"]);

  const next = await scene.out(["show", "origin/main:NEXT-STEPS.md"]);
  assert.match(next, /^Status: DONE\nTask: 1\n/);
  const report = await scene.out(["show", "origin/main:COWORK-STATUS.md"]);
  const head = await scene.out(["rev-parse", "origin/task-1"]);
  assert.match(report, new RegExp(`^Head: ${head}$`, "m"));
  assert.match(report, /^PR: task-1$/m);
  assert.match(report, /## Relay evidence/);
  assert.match(report, /### `cat src\/feature-1.txt`\n\nExit: 0 · tree [0-9a-f]{40}/);
  assert.doesNotMatch(report, /DISAGREEMENT/);

  // The primary tree is on main, clean, and the worktree lives outside it.
  assert.equal(await scene.out(["branch", "--show-current"]), "main");
  assert.equal(await scene.out(["status", "--porcelain"]), "");
  const worktrees = await scene.out(["worktree", "list", "--porcelain"]);
  assert.match(worktrees, new RegExp(`worktree ${scene.worktrees}/task-1`));

  // A second poll is idle and changes nothing.
  const before = await scene.snapshot();
  const idle = await scene.relay(["poll"]);
  assert.equal(idle.code, 0);
  assert.equal(await scene.snapshot(), before);
});

Deno.test("a huge pasted output is cut to evidence_max_bytes in the report on main, like relay's own", async () => {
  await using scene = await makeScene({ config: "evidence_max_bytes: 4096\n" });
  await scene.relay(["inbox", "add", "-"], {
    stdin: brief({ title: "Loud", bar: ["seq 1 60000"] }),
  });
  await scene.relay(["promote"]);
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, poll.stdout + poll.stderr);
  await scene.git(scene.work, ["fetch", "--quiet", "origin"]);
  const report = await scene.out(["show", "origin/main:COWORK-STATUS.md"]);
  assert.ok(report.length < 20_000, `the report is ${report.length} bytes`);
  assert.equal(
    report.match(/\[\.\.\. relay cut \d+ bytes \.\.\.\]/g)?.length,
    2,
    "both the pasted and relay's output",
  );
  assert.match(report, /^60000$/m);
});
