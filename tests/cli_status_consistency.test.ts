/**
 * `relay status` never contradicts itself or the last tick: a HOLD the last
 * poll stopped at is what the waiting line says; a failure is shown as the
 * task's it was about; records from before `relay resume` are history; a
 * BLOCKED task shows a person's options at once. Real CLI, real git, fake agents.
 */
import assert from "node:assert/strict";
import { all, brief, makeScene, type Scene } from "./helpers/scene.ts";

async function queue(scene: Scene, title: string): Promise<void> {
  const res = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title }) });
  assert.equal(res.code, 0, all(res));
}

async function promote(scene: Scene): Promise<void> {
  const res = await scene.relay(["promote"]);
  assert.equal(res.code, 0, all(res));
}

/** The waiting line(s): everything after the blank line, but the problem and next-tick lines. */
function waiting(stdout: string): string {
  const after = stdout.split("\n\n").slice(1).join("\n\n");
  return after.split("\n").filter((l) => !/^(problem: |next poll: |next review: )/.test(l))
    .join("\n").trim();
}

/** What status predicts the next tick of a kind does. */
function nextTick(stdout: string, kind: "poll" | "review"): string {
  const line = stdout.split("\n").find((l) => l.startsWith(`next ${kind}: `));
  assert.ok(line, `no "next ${kind}:" line in:\n${stdout}`);
  return line.slice(`next ${kind}: `.length).trim();
}

Deno.test("after a poll HOLD that hold.json does not carry, status says what the HOLD says, not that the next poll starts the executor", async () => {
  await using scene = await makeScene();
  await queue(scene, "Needs origin/main");
  await promote(scene);
  // origin loses main: the poll stops before any work, with a HOLD that clears by itself.
  await scene.git(scene.origin, ["update-ref", "-d", "refs/heads/main"]);
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 3, all(poll));
  assert.match(poll.stderr, /HOLD: "origin\/main" does not exist/);

  const status = await scene.relay(["status"]);
  assert.equal(status.code, 3, all(status));
  assert.match(
    status.stdout,
    /^last poll: \S+ exit 3, task 1 — HOLD: "origin\/main" does not exist/m,
  );
  const line = waiting(status.stdout);
  assert.doesNotMatch(line, /the next poll starts the executor/, status.stdout);
  assert.match(line, /^HOLD: "origin\/main" does not exist\n {2}next: Push main to origin first/);
  assert.match(line, /the next poll checks again/);
  // As of the last fetch, the next poll stops where this one did: no promise to start.
  assert.equal(nextTick(status.stdout, "poll"), 'stops: "origin/main" does not exist');
  const json = JSON.parse((await scene.relay(["status", "--json"])).stdout);
  assert.equal(json.waiting, line);
  assert.equal(json.lastPoll.task, 1);
});

Deno.test("a failure of task 1 is not shown as task 2's: the record names its task and the waiting line ignores it", async () => {
  await using scene = await makeScene({ agent: "exit1.sh", config: "attempts: 1\n" });
  await queue(scene, "Fails");
  await queue(scene, "Next one");
  await promote(scene);
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 1, all(poll));
  assert.match(poll.stdout, /task 1 BLOCKED/);
  // A person moves on: the next brief is opened by hand.
  await promote(scene);

  const status = await scene.relay(["status"]);
  assert.equal(status.code, 0, all(status));
  assert.match(status.stdout, /^brief +task 2 OPEN — Next one/m);
  assert.match(status.stdout, /^last poll: \S+ exit 1, task 1 — task 1 BLOCKED/m);
  assert.equal(waiting(status.stdout), "task 2 is open: the next poll starts the executor");
  assert.equal(nextTick(status.stdout, "poll"), "starts the executor for task 2, attempt 1 of 1");
});

Deno.test("a BLOCKED task shows a person's options at once, before the review tick raises its HOLD", async () => {
  await using scene = await makeScene({ agent: "exit1.sh", config: "attempts: 1\n" });
  await queue(scene, "Cannot be done");
  await promote(scene);
  assert.equal((await scene.relay(["poll"])).code, 1);

  const shown = (await scene.relay(["status"])).stdout;
  const before = waiting(shown);
  assert.equal(nextTick(shown, "review"), "hands the BLOCKED task to a person");
  assert.match(before, /^task 1 is BLOCKED: a person decides what happens next\n {2}next: /);
  for (const option of [/relay close 1 --reason/, /Kind: fix, Fixes: 1/, /relay inbox add/]) {
    assert.match(before, option);
  }
  // The review tick's HOLD gives the same options.
  const review = await scene.relay(["review"]);
  assert.equal(review.code, 3, all(review));
  const next = before.split("\n  next: ")[1]!;
  assert.ok(review.stderr.includes(`next: ${next}`), all(review));
});

Deno.test("after relay resume, an old HOLD is history: one line, marked, and not what the loop waits on", async () => {
  await using scene = await makeScene({ agent: "switches.sh" });
  await queue(scene, "Switches branch");
  await promote(scene);
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 3, all(poll));
  const held = await scene.relay(["status"]);
  assert.equal(held.code, 3, all(held));
  assert.match(held.stdout, /^last poll: \S+ exit 3, task 1 — HOLD: .*\n {2}next: /m);

  const resume = await scene.relay(["resume"]);
  assert.equal(resume.code, 0, all(resume));
  const status = await scene.relay(["status"]);
  assert.equal(status.code, 0, all(status));
  assert.match(
    status.stdout,
    /^last poll: \S+ exit 3, task 1 — HOLD: [^\n]* \[history: before relay resume cleared the HOLD at \S+\]$/m,
  );
  assert.doesNotMatch(status.stdout, /^ {2}next: /m, "no advice from a cleared HOLD");
  assert.equal(waiting(status.stdout), "task 1 is open: the next poll starts the executor");
  assert.equal(nextTick(status.stdout, "poll"), "starts the executor for task 1, attempt 2 of 2");
  const json = JSON.parse((await scene.relay(["status", "--json"])).stdout);
  assert.equal(json.holdCleared.by, "resume");
  assert.equal(json.hold, null);
});
