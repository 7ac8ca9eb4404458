/** `relay resume` through the real CLI. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { appendEvent, readEvents } from "../lib/task/log.ts";
import { brief, exists, makeScene, stateDir } from "./helpers/scene.ts";

Deno.test("relay resume prints the whole reason of a HOLD that spans several lines", async () => {
  await using scene = await makeScene();
  const queued = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title: "Held" }) });
  assert.equal(queued.code, 0, queued.stderr);
  assert.equal((await scene.relay(["promote"])).code, 0);
  const reason = "Cannot push main: the remote refused it\n" +
    "  remote: error: GH006: Protected branch update failed\n" +
    "  remote: error: Changes must be made through a pull request.";
  const hold = {
    task: 1,
    reason,
    next: 'Allow relay to push to main, then run "relay resume".',
    at: "2025-01-01T00:00:00.000Z",
  };
  await Deno.mkdir(stateDir(scene), { recursive: true });
  await Deno.writeTextFile(join(stateDir(scene), "hold.json"), JSON.stringify(hold));

  const res = await scene.relay(["resume"]);
  assert.equal(res.code, 0, res.stderr);
  assert.equal(
    res.stdout,
    `cleared: HOLD on task 1 (since 2025-01-01T00:00:00.000Z): ${reason}\n`,
  );
  assert.equal(await exists(join(stateDir(scene), "hold.json")), false);
  // The task's timeline says a person resumed it, and from what.
  const shown = await scene.relay(["show", "1", "--json"]);
  assert.equal(shown.code, 0, shown.stderr);
  const events = JSON.parse(shown.stdout).events as {
    event: string;
    role: string;
    details: { reason: string };
  }[];
  const resumed = events.find((e) => e.event === "resumed");
  assert.equal(resumed?.role, "person");
  assert.equal(resumed?.details.reason, reason);
});

Deno.test("relay resume puts a fix brief's HOLD in its task's timeline, and a HOLD naming no task in none", async () => {
  await using scene = await makeScene();
  const common = join(scene.work, ".git");
  // Task 1 was sent back as fix brief 2, which has no events of its own yet.
  await appendEvent(common, 1, {
    event: "sent-back",
    role: "planner",
    run: "r1",
    brief: 1,
    round: 1,
    details: { fix: 2, round: 2, why: "FAIL", findings: [] },
  });
  const hold = (task: number) =>
    Deno.writeTextFile(
      join(stateDir(scene), "hold.json"),
      JSON.stringify({ task, reason: `held ${task}`, next: "x", at: "2026-01-01T00:00:00.000Z" }),
    );
  await hold(0);
  const first = await scene.relay(["resume"]);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /^cleared: HOLD on task 0 /);
  assert.equal(await exists(join(stateDir(scene), "tasks", "0.events.jsonl")), false);

  await hold(2);
  const second = await scene.relay(["resume"]);
  assert.equal(second.code, 0, second.stderr);
  assert.equal(second.stderr, "");
  assert.equal(await exists(join(stateDir(scene), "tasks", "2.events.jsonl")), false);
  const events = await readEvents(common, 1);
  const resumed = events.find((e) => e.event === "resumed");
  assert.deepEqual([resumed?.brief, resumed?.round, resumed?.details.reason], [2, 2, "held 2"]);
  const shown = await scene.relay(["show", "2"]);
  assert.match(shown.stdout, /brief 2 is a fix round of task 1/);
  assert.match(shown.stdout, /resumed by a person: held 2/);
});
