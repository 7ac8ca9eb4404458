/**
 * Each tick records how it last ended (`.git/relay/last-poll.json`,
 * `last-review.json`), also when it throws, and `relay status` shows both.
 * Lines that go to a file (cron.log) carry the time in UTC; a terminal gets
 * them as before. Real CLI through tests/helpers/scene.ts, plus the pure parts.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, brief, exists, makeScene, type Scene } from "./helpers/scene.ts";
import { HoldError, InputError, UsageError } from "../lib/errors.ts";
import { failedTick, lastTick, MESSAGE_MAX } from "../lib/state/last_tick.ts";
import { stamped, utcStamp } from "../lib/proc/log.ts";

const STAMP = String.raw`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`;

function lastPath(scene: Scene, command: "poll" | "review"): string {
  return join(scene.work, ".git", "relay", `last-${command}.json`);
}

async function readLast(scene: Scene, command: "poll" | "review") {
  return JSON.parse(await Deno.readTextFile(lastPath(scene, command)));
}

async function openTask(scene: Scene, title: string): Promise<void> {
  const queued = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title }) });
  assert.equal(queued.code, 0, all(queued));
  assert.equal((await scene.relay(["promote"])).code, 0);
}

Deno.test("utcStamp() is ISO 8601 UTC to the second, and stamped() adds it only off a terminal", () => {
  const at = new Date(Date.UTC(2026, 10, 29, 20, 31, 2, 987));
  assert.equal(utcStamp(at), "2026-11-29T20:31:02Z");
  assert.equal(stamped("relay: hello", false, at), "2026-11-29T20:31:02Z relay: hello");
  assert.equal(stamped("relay: hello", true, at), "relay: hello");
});

Deno.test("lastTick() cuts the message to 500 characters and failedTick() uses main.ts's exit codes", () => {
  const at = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
  const long = lastTick("poll", 1, "failed", "x".repeat(MESSAGE_MAX + 20), at);
  assert.equal(MESSAGE_MAX, 500);
  assert.equal(long.message.length, 500);
  assert.equal(long.at, "2026-01-02T03:04:05.000Z");
  assert.deepEqual(
    failedTick("review", new InputError({ file: "a.yaml", key: "k" }, "bad", "fix it"), at),
    {
      at: "2026-01-02T03:04:05.000Z",
      command: "review",
      exit: 2,
      result: "input",
      message: 'error: a.yaml (key "k"): bad\n  fix: fix it',
    },
  );
  assert.equal(failedTick("poll", new UsageError("no"), at).exit, 2);
  const hold = failedTick("poll", new HoldError("stuck", "do this"), at);
  assert.deepEqual([hold.exit, hold.result, hold.message], [
    3,
    "hold",
    "HOLD: stuck\n  next: do this",
  ]);
  const other = failedTick("poll", new Error("boom"), at);
  assert.deepEqual([other.exit, other.result, other.message], [1, "error", "error: boom"]);
});

Deno.test("poll and review record their last result, and relay status shows both, as text and as JSON", async () => {
  await using scene = await makeScene();
  await openTask(scene, "Recorded");
  const started = Date.now();
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  const review = await scene.relay(["review"]);
  assert.equal(review.code, 0, all(review));

  const lastPoll = await readLast(scene, "poll");
  assert.equal(lastPoll.command, "poll");
  assert.equal(lastPoll.exit, 0);
  assert.equal(lastPoll.result, "shipped");
  assert.match(lastPoll.message, /^task 1 shipped: task-1 at [0-9a-f]{12}, PR task-1$/);
  assert.ok(Date.parse(lastPoll.at) >= started - 1000, lastPoll.at);
  const lastReview = await readLast(scene, "review");
  assert.deepEqual([lastReview.command, lastReview.exit, lastReview.result], [
    "review",
    0,
    "merged",
  ]);
  assert.match(lastReview.message, /^task 1 merged \([0-9a-f]{12}\)/);

  const status = await scene.relay(["status"]);
  assert.equal(status.code, 0, all(status));
  assert.ok(
    status.stdout.includes(`last poll: ${lastPoll.at} exit 0, task 1 — ${lastPoll.message}\n`),
    status.stdout,
  );
  assert.ok(
    status.stdout.includes(
      `last review: ${lastReview.at} exit 0, task 1 — ${lastReview.message}\n`,
    ),
    status.stdout,
  );
  const json = JSON.parse((await scene.relay(["status", "--json"])).stdout);
  assert.deepEqual(json.lastPoll, lastPoll);
  assert.deepEqual(json.lastReview, lastReview);
});

Deno.test("into a file, relay's step lines and the tick's result line start with the UTC time; --json stays plain JSON", async () => {
  await using scene = await makeScene();
  await openTask(scene, "Timed");
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  // The task's start line, then the tick's result line: both stamped.
  assert.match(
    poll.stdout,
    new RegExp(`^${STAMP} task 1 starts: [^\n]*\n${STAMP} task 1 shipped: task-1 at `),
  );
  const steps = poll.stderr.split("\n").filter((l) => l.includes("relay: task 1:"));
  assert.ok(steps.length >= 2, poll.stderr);
  for (const line of steps) assert.match(line, new RegExp(`^${STAMP} relay: task 1: `));

  const review = await scene.relay(["review"]);
  assert.equal(review.code, 0, all(review));
  assert.match(review.stdout, new RegExp(`^${STAMP} task 1 merged \\(`));
  assert.match(review.stderr, new RegExp(`^${STAMP} relay: task 1: verdict PASS on `, "m"));

  const json = await scene.relay(["review", "--json"]);
  assert.equal(json.code, 0, all(json));
  assert.equal(JSON.parse(json.stdout).result, "idle");
});

Deno.test("a review that throws records the exit code main.ts gives it and its message", async () => {
  await using scene = await makeScene();
  await openTask(scene, "Then the config breaks");
  assert.equal((await scene.relay(["poll"])).code, 0);
  await scene.write(".relay/config.yaml", "version: 1\nfix_rounds: many\n");

  const review = await scene.relay(["review"]);
  assert.equal(review.code, 2, all(review));
  const last = await readLast(scene, "review");
  assert.equal(last.exit, 2);
  assert.equal(last.result, "input");
  assert.match(last.message, /^error: .*\.relay\/config\.yaml.*fix_rounds/);

  const status = await scene.relay(["status"]);
  assert.equal(status.code, 2, all(status));
  assert.match(status.stdout, /^last review: \S+ exit 2, task 1 — error: .*fix_rounds/m);
  assert.match(
    status.stdout,
    /^blocked: task 1 reported SHIPPED, but every review stops: \.relay\/config\.yaml is invalid$/m,
  );
});

Deno.test("an idle poll writes no record; a poll that stops on a typo'd Status line does", async () => {
  await using scene = await makeScene();
  const idle = await scene.relay(["poll"]);
  assert.equal(idle.code, 0, all(idle));
  await scene.write("NEXT-STEPS.md", brief({ task: 1, status: "DONE" }));
  assert.equal((await scene.relay(["poll"])).code, 0);
  assert.equal(await exists(lastPath(scene, "poll")), false, "the idle path wrote a record");

  await scene.write("NEXT-STEPS.md", brief({ task: 1, status: "OPNE" }));
  const typo = await scene.relay(["poll"]);
  assert.equal(typo.code, 2, all(typo));
  const last = await readLast(scene, "poll");
  assert.deepEqual([last.exit, last.result], [2, "input"]);
  assert.match(last.message, /^error: NEXT-STEPS\.md:1: /);
});
