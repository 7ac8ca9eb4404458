/**
 * A task's configuration is frozen when it starts: the start line is printed
 * and logged, the record keeps every value with where it came from and the
 * programs as found, a profile edit mid-task reaches the next task and not
 * this one, and `relay resume` hands a held task the profile as it is then.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { AGENTS, all, brief, makeScene, type Scene, taskRecord } from "./helpers/scene.ts";
import type { TaskConfig } from "../lib/config/task_config.ts";

async function queue(scene: Scene, text: string): Promise<void> {
  const res = await scene.relay(["inbox", "add", "-"], { stdin: text });
  assert.equal(res.code, 0, all(res));
}

async function frozen(scene: Scene, task = 1): Promise<TaskConfig | undefined> {
  return (await taskRecord(scene, task)).config as TaskConfig | undefined;
}

Deno.test("the first attempt prints and logs the start line and freezes the configuration with its sources", async () => {
  await using scene = await makeScene({ config: "attempts: 3\ndocs_file: docs/CHANGES.md\n" });
  await scene.write(".review-loop/config.md", "skip_quality_polish: true\nauto_commit: true\n");
  await queue(scene, brief({ title: "First" }));
  assert.equal((await scene.relay(["promote"])).code, 0);

  const poll = await scene.relay(["poll", "--quiet"]);
  assert.equal(poll.code, 0, all(poll));
  const line = poll.stdout.split("\n").find((l) => l.includes("task 1 starts:"));
  assert.ok(line, all(poll));
  for (
    const part of [
      "executor command bash, reviewer command bash, security command bash (the reviewer's);",
      "plan rounds off, exec rounds 4;",
      "attempts 3 per round;",
      "timeout 1m/1m;",
      "docs file docs/CHANGES.md;",
      "skip-quality-polish yes;",
      "merge auto, efficient;",
      "from .review-loop/config.md: skip_quality_polish",
    ]
  ) assert.ok(line.includes(part), `${part}\n in: ${line}`);
  assert.match(
    poll.stderr,
    /warning: auto_commit in \.review-loop\/config\.md is not applied: .*safety_mode/,
  );

  const c = await frozen(scene);
  assert.ok(c, "no frozen configuration in the record");
  assert.deepEqual(c.attempts, { value: 3, from: "repo config" });
  assert.deepEqual(c.docsFile, { value: "docs/CHANGES.md", from: "repo config" });
  assert.deepEqual(c.skipQualityPolish, { value: true, from: "legacy config" });
  assert.equal(c.roles.security.from, "default");
  const program = c.roles.executor.program!;
  assert.ok(program.path.startsWith("/") && program.path.endsWith("/bash"), program.path);
  assert.match(program.sha256!, /^[0-9a-f]{64}$/);

  // relay show has the start line right after the brief opened, with the warning under it.
  const show = await scene.relay(["show", "1"]);
  assert.equal(show.code, 0, all(show));
  const lines = show.stdout.split("\n");
  const opened = lines.findIndex((l) => /brief 1 opened: First/.test(l));
  assert.ok(opened >= 0, show.stdout);
  assert.match(lines[opened + 1]!, /task 1 starts: executor command bash/);
  assert.match(lines[opened + 2]!, /warning: auto_commit/);
});

Deno.test("a profile edit mid-task does not reach the task's fix round; the next task takes it up", async () => {
  await using scene = await makeScene();
  const failOnce = join(scene.dir, "fail-once");
  await queue(scene, brief({ title: "First" }));
  await queue(scene, brief({ title: "Second" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.equal((await scene.relay(["poll"])).code, 0);
  const before = await frozen(scene);

  // The reviewer sends task 1 back; meanwhile the operator points the executor at a
  // program that fails every turn and lowers the attempts.
  const sentBack = await scene.relay(["review"], { env: { FAKE_FAIL_ONCE: failOnce } });
  assert.equal(sentBack.code, 0, all(sentBack));
  assert.match(await scene.read("NEXT-STEPS.md"), /^Status: OPEN\nTask: 3\n/);
  const profile = await Deno.readTextFile(scene.profile);
  await Deno.writeTextFile(
    scene.profile,
    profile.replace(
      /argv: \[[^\n]*dispatch\.sh[^\n]*executor-script[^\n]*\]/,
      `argv: ${JSON.stringify(["bash", join(AGENTS, "exit1.sh"), "{prompt}"])}`,
    ) + "limits:\n  attempts: 1\n",
  );
  assert.notEqual(await Deno.readTextFile(scene.profile), profile);

  // The fix round runs with what task 1 started with, and the record is unchanged.
  const fix = await scene.relay(["poll"]);
  assert.equal(fix.code, 0, all(fix));
  assert.match(fix.stdout, /shipped/, all(fix));
  assert.doesNotMatch(fix.stdout + fix.stderr, /starts:/);
  assert.deepEqual(await frozen(scene), before);
  const merged = await scene.relay(["review"], { env: { FAKE_FAIL_ONCE: failOnce } });
  assert.equal(merged.code, 0, all(merged));
  assert.match(merged.stdout, /promoted task 2/);

  // Task 2 starts with the profile as it is now: the failing executor.
  // (Under --json stdout stays one JSON object: the start line goes to stderr.)
  const second = await scene.relay(["poll", "--json"]);
  assert.match(second.stderr, /task 2 starts: executor command bash/);
  assert.equal(JSON.parse(second.stdout).result, "failed", all(second));
  const c2 = (await frozen(scene, 2))!;
  assert.deepEqual(c2.roles.executor.spec.argv, ["bash", join(AGENTS, "exit1.sh"), "{prompt}"]);
});

Deno.test("flags decide over the profile for one command: frozen as a flag when the task starts, this tick only once it runs; a bad value is exit 2", async () => {
  await using scene = await makeScene();
  await scene.setAgent("good.sh", "merge_policy: auto\n");
  const bad = await scene.relay(["poll", "--merge-policy", "sometimes"]);
  assert.equal(bad.code, 2, all(bad));
  assert.match(bad.stderr, /--merge-policy "sometimes" is not a merge policy: use auto or human/);
  await queue(scene, brief({ title: "Flagged" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  const poll = await scene.relay(["poll", "--merge-policy", "human"]);
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /merge human, efficient/);
  assert.deepEqual((await frozen(scene))?.merge, { value: "human", from: "flag" });
  // The next tick without the flag keeps what the task froze: a person accepts it.
  const review = await scene.relay(["review"]);
  assert.equal(review.code, 3, all(review));
  assert.match(review.stdout, /DONE awaiting acceptance: task 1/);
  // With the flag, for that one tick, it merges; the record still says what it froze.
  const flagged = await scene.relay(["review", "--merge-policy", "auto"]);
  assert.equal(flagged.code, 0, all(flagged));
  assert.match(flagged.stdout, /task 1 merged/);
  assert.deepEqual((await frozen(scene))?.merge, { value: "human", from: "flag" });
});
