/** A typo in the operator profile's program is a HOLD that costs nothing: no attempt, no BLOCKED report. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { AGENTS, brief, makeScene, type Scene, taskRecord } from "./helpers/scene.ts";

/** The brief is still OPEN, and no attempt was started or recorded. */
async function noAttempt(scene: Scene): Promise<void> {
  assert.match(await scene.read("NEXT-STEPS.md"), /^Status: OPEN/);
  const state = await Array.fromAsync(Deno.readDir(join(scene.work, ".git/relay"))).then((es) =>
    es.map((e) => e.name)
  );
  assert.ok(!state.includes("journal.json"), "no attempt was started");
  assert.ok(!state.includes("tasks"), "no attempt was recorded");
}

Deno.test("an executor program that does not exist holds the loop without using an attempt", async () => {
  await using scene = await makeScene();
  await scene.relay(["inbox", "add", "-"], { stdin: brief({ title: "Typo" }) });
  await scene.relay(["promote"]);
  await scene.setAgent([join(AGENTS, "good-typo.sh"), "{prompt}"]);
  for (let i = 0; i < 3; i++) {
    const res = await scene.relay(["poll"]);
    assert.equal(res.code, 3, res.stdout + res.stderr);
    assert.match(
      res.stderr,
      /Cannot start the executor: ".*good-typo\.sh" is not an executable file/,
    );
    assert.match(res.stderr, /No attempt was used/);
  }
  await noAttempt(scene);

  await scene.setAgent("good.sh");
  const ok = await scene.relay(["poll"]);
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  assert.match(ok.stdout, /task 1 shipped/);
});

Deno.test("an executor script whose #!/usr/bin/env interpreter is not on PATH holds without using an attempt, as cron's PATH would", async () => {
  await using scene = await makeScene();
  await scene.relay(["inbox", "add", "-"], { stdin: brief({ title: "No node" }) });
  await scene.relay(["promote"]);
  // An npm-installed CLI: found by its path, but its node lives in a folder cron leaves out.
  const bin = join(scene.dir, "node-bin");
  await Deno.mkdir(bin);
  const cli = join(scene.dir, "agent-cli");
  await Deno.writeTextFile(cli, "#!/usr/bin/env relay-fake-node\n");
  await Deno.chmod(cli, 0o755);
  const node = join(bin, "relay-fake-node");
  // The "interpreter" runs the honest fake agent with the prompt, as node would run the CLI.
  await Deno.writeTextFile(node, `#!/bin/sh\nshift\nexec bash ${join(AGENTS, "good.sh")} "$@"\n`);
  await Deno.chmod(node, 0o755);
  await scene.setAgent([cli, "{prompt}"]);
  for (let i = 0; i < 2; i++) {
    const res = await scene.relay(["poll"]);
    assert.equal(res.code, 3, res.stdout + res.stderr);
    assert.match(
      res.stderr,
      /Cannot start the executor: ".*agent-cli" is there, but its first line \(#!\/usr\/bin\/env relay-fake-node\) starts "relay-fake-node", which is not on PATH/,
    );
    assert.match(res.stderr, /set PATH in roles\.executor\.env of the operator profile/);
    assert.match(res.stderr, /No attempt was used/);
  }
  await noAttempt(scene);

  // The fix the HOLD names: the interpreter's folder on the role's PATH.
  const profile = await Deno.readTextFile(scene.profile);
  await Deno.writeTextFile(
    scene.profile,
    profile.replace(
      "    timeout: 60s\n  reviewer:",
      `    timeout: 60s\n    env:\n      PATH: ${
        JSON.stringify(`${bin}:${Deno.env.get("PATH")}`)
      }\n  reviewer:`,
    ),
  );
  const ok = await scene.relay(["poll"]);
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  assert.match(ok.stdout, /task 1 shipped/);
});

Deno.test("a reviewer program not on PATH holds the review without voiding a turn; a fixed profile reaches the task through relay resume", async () => {
  await using scene = await makeScene();
  await scene.relay(["inbox", "add", "-"], { stdin: brief({ title: "Reviewer typo" }) });
  await scene.relay(["promote"]);
  const good = await Deno.readTextFile(scene.profile);
  await Deno.writeTextFile(
    scene.profile,
    good.replace(
      /reviewer:\n {4}vendor: command\n {4}argv: \[[^\]]*\]/,
      'reviewer:\n    vendor: command\n    argv: ["no-such-reviewer-xyz", "{prompt}"]',
    ),
  );
  // The task starts, and freezes the profile with the typo in it.
  assert.equal((await scene.relay(["poll"])).code, 0);
  const res = await scene.relay(["review"]);
  assert.equal(res.code, 3, res.stdout + res.stderr);
  assert.match(res.stderr, /Cannot start the reviewer: "no-such-reviewer-xyz" is not on PATH/);
  assert.match(res.stderr, /task 1 froze its configuration when it started/);
  assert.match(res.stderr, /then run "relay resume": task 1 then takes up the profile as it is/);
  const record = await taskRecord(scene).catch(() => null);
  assert.equal(record?.review?.voids.length ?? 0, 0, "no reviewer turn was spent");

  // Fixing the profile is not enough by itself: the task runs with what it started with.
  await Deno.writeTextFile(scene.profile, good);
  const still = await scene.relay(["review"]);
  assert.equal(still.code, 3, still.stdout + still.stderr);
  const resume = await scene.relay(["resume"]);
  assert.equal(resume.code, 0, resume.stdout + resume.stderr);
  assert.match(
    resume.stdout,
    /task 1 takes up the operator profile and repo config as they are now/,
  );
  assert.equal((await taskRecord(scene)).config, undefined);
  const merged = await scene.relay(["review"]);
  assert.equal(merged.code, 0, merged.stdout + merged.stderr);
  assert.match(merged.stdout, /merged/);
});

Deno.test("a worktree deleted during the turn is a HOLD that says so and how to go on; nothing is lost", async () => {
  await using scene = await makeScene({ agent: "vanishes.sh" });
  await scene.relay(["inbox", "add", "-"], { stdin: brief({ title: "Vanish" }) });
  await scene.relay(["promote"]);
  const res = await scene.relay(["poll"]);
  assert.equal(res.code, 3, res.stdout + res.stderr);
  assert.match(res.stderr, /HOLD: the task worktree .*task-1 was deleted during run /);
  assert.match(res.stderr, /git worktree prune/);
  // The commit of the turn survives on the branch.
  assert.match(
    await scene.out(["log", "--format=%s", "-1", "task-1"]),
    /^Task #1: add the feature$/,
  );
  await scene.git(scene.work, ["worktree", "prune"]);
  assert.equal((await scene.relay(["resume"])).code, 0);
  // The next attempt starts in a fresh worktree on the same branch, the first commit included.
  await scene.setAgent("uncommitted.sh");
  const again = await scene.relay(["poll"]);
  assert.equal(again.code, 0, again.stdout + again.stderr);
  assert.match(again.stdout, /task 1 shipped/);
  assert.match(
    await scene.out(["log", "--format=%s", "origin/task-1"]),
    /Task #1: add the feature/,
  );
});
