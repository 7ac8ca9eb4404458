/**
 * End to end, issue 6 item 6: every HOLD is recorded once, from either tick;
 * both ticks then stop and launch nothing; under --quiet (cron) a lasting
 * state is one line in cron.log, then a short hourly reminder — not two lines
 * a minute. Real CLI in the form of the cron line, real git, a bare origin
 * whose hook refuses pushes to main.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  all,
  brief,
  countLines,
  exists,
  makeScene,
  originMerges,
  type RelayResult,
  type Scene,
  stateDir,
} from "./helpers/scene.ts";

/** The crontab line's form: `relay -C <repo> --profile <profile> <tick> --quiet`. */
async function cron(
  scene: Scene,
  command: "poll" | "review",
  env: Record<string, string> = {},
): Promise<RelayResult> {
  return await scene.relay(["-C", scene.work, "--profile", scene.profile, command, "--quiet"], {
    env,
  });
}

/** A person at a terminal: the same tick without --quiet. */
async function byHand(
  scene: Scene,
  command: "poll" | "review",
  env: Record<string, string> = {},
): Promise<RelayResult> {
  return await scene.relay(["-C", scene.work, "--profile", scene.profile, command], { env });
}

async function queue(scene: Scene, text: string): Promise<void> {
  const res = await scene.relay(["inbox", "add", "-"], { stdin: text });
  assert.equal(res.code, 0, all(res));
}

/** A `pre-receive` hook on the origin that refuses any update of main. */
async function protectMain(scene: Scene): Promise<string> {
  const path = join(scene.origin, "hooks", "pre-receive");
  await Deno.writeTextFile(
    path,
    `#!/bin/sh
while read -r old new ref; do
  if [ "$ref" = refs/heads/main ]; then
    echo "protected branch hook declined: main takes no direct pushes" >&2
    exit 1
  fi
done
exit 0
`,
  );
  await Deno.chmod(path, 0o755);
  return path;
}

function holdPath(scene: Scene): string {
  return join(stateDir(scene), "hold.json");
}

async function readHold(scene: Scene): Promise<Record<string, unknown>> {
  return JSON.parse(await Deno.readTextFile(holdPath(scene)));
}

/** Lines a tick wrote, both streams (what cron appends to cron.log). */
function logged(res: RelayResult): string[] {
  return (res.stdout + res.stderr).split("\n").filter((l) => l !== "");
}

/** Ships task 1 (its PR waits for review) with task 2 queued behind it; returns the launch counters. */
async function shipFirst(scene: Scene): Promise<{ agent: string; reviewer: string }> {
  const counts = { agent: join(scene.dir, "agent-runs"), reviewer: join(scene.dir, "reviews") };
  await queue(scene, brief({ title: "First" }));
  await queue(scene, brief({ title: "Second" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  const poll = await cron(scene, "poll", { FAKE_COUNT_FILE: counts.agent });
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 1 shipped/);
  return counts;
}

Deno.test("a HOLD raised in the review tick is recorded; both ticks then stop, launch nothing and say nothing; an hourly reminder; resume goes on", async () => {
  await using scene = await makeScene();
  const { agent, reviewer } = await shipFirst(scene);
  const env = { FAKE_COUNT_FILE: agent, FAKE_REVIEW_COUNT: reviewer };
  const hook = await protectMain(scene);

  // The review's merge push is refused by the remote: a HOLD, said in full, and recorded.
  const held = await cron(scene, "review", env);
  assert.equal(held.code, 3, all(held));
  assert.equal(held.stdout, "");
  assert.match(
    held.stderr,
    /relay: HOLD: Cannot merge task-1: pushing the merge to origin\/main failed: the remote refused it/,
  );
  assert.match(held.stderr, /protected branch hook declined/);
  // Recorded, the HOLD stops the loop until a person resumes it: its advice says so.
  assert.match(
    held.stderr,
    /\n {2}next: Check what "origin" enforces on main.* Then run "relay resume"\.$/m,
  );
  const hold = await readHold(scene);
  assert.equal(hold.task, 1);
  assert.match(String(hold.reason), /^Cannot merge task-1: .*protected branch hook declined/);
  assert.match(String(hold.next), /Then run "relay resume"\.$/);
  assert.equal(await countLines(reviewer, "review "), 1);

  // Another brief is open: without the HOLD, the poll would start its executor now.
  const promoted = await scene.relay(["promote"]);
  assert.match(promoted.stdout, /promoted task 2/, all(promoted));

  // Minute after minute, both ticks meet the HOLD on record: exit 3, nothing launched,
  // nothing in cron.log, the record unchanged.
  for (let minute = 0; minute < 3; minute++) {
    for (const command of ["poll", "review"] as const) {
      const res = await cron(scene, command, env);
      assert.equal(res.code, 3, `${command}, minute ${minute}: ${all(res)}`);
      assert.deepEqual(logged(res), [], `${command}, minute ${minute}: ${all(res)}`);
    }
  }
  assert.equal(await countLines(agent, "run "), 1);
  assert.equal(await countLines(reviewer, "review "), 1);
  assert.deepEqual(await readHold(scene), hold);

  // An hour after cron.log last heard of it: one short reminder, then quiet again.
  const twoHoursAgo = new Date(Date.now() - 2 * 3600_000).toISOString();
  await Deno.writeTextFile(
    holdPath(scene),
    JSON.stringify({ ...hold, at: twoHoursAgo, said: twoHoursAgo }, null, 2),
  );
  const reminder = await cron(scene, "poll", env);
  assert.equal(reminder.code, 3, all(reminder));
  const lines = logged(reminder);
  assert.equal(lines.length, 1, all(reminder));
  assert.match(
    lines[0]!,
    new RegExp(`relay: still on HOLD since ${twoHoursAgo} \\(task 1\\): Cannot merge task-1`),
  );
  for (const command of ["review", "poll"] as const) {
    const res = await cron(scene, command, env);
    assert.equal(res.code, 3, all(res));
    assert.deepEqual(logged(res), [], `${command} after the reminder: ${all(res)}`);
  }

  // A person at a terminal is shown the whole HOLD every time.
  for (const command of ["poll", "review", "poll"] as const) {
    const res = await byHand(scene, command, env);
    assert.equal(res.code, 3, all(res));
    assert.match(
      res.stderr,
      /relay: HOLD: Cannot merge task-1: .*protected branch hook declined/,
    );
    assert.match(res.stderr, /\n {2}next: /);
  }
  assert.equal(await countLines(agent, "run "), 1);
  assert.equal(await countLines(reviewer, "review "), 1);

  // The person lifts the protection and resumes: the loop goes on without them.
  await Deno.remove(hook);
  const resume = await scene.relay(["resume"]);
  assert.equal(resume.code, 0, all(resume));
  assert.match(resume.stdout, /cleared: HOLD on task 1/);
  const merged = await cron(scene, "review", env);
  assert.equal(merged.code, 0, all(merged));
  assert.match(merged.stdout, /task 1 merged/);
  assert.equal(await countLines(reviewer, "review "), 1, "the PASS stood");
  const second = await cron(scene, "poll", env);
  assert.equal(second.code, 0, all(second));
  assert.match(second.stdout, /task 2 shipped/);
  const done = await cron(scene, "review", env);
  assert.equal(done.code, 0, all(done));
  assert.match(done.stdout, /task 2 merged/);
  assert.ok(!(await exists(holdPath(scene))));
  assert.deepEqual((await originMerges(scene)).map((s) => s.replace(/:.*/, "")), [
    "Merge task-2",
    "Merge task-1",
  ]);
});

Deno.test("a repeated error under --quiet is one line in cron.log, said again when it changes or an hour on", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "Away" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  const count = join(scene.dir, "count");
  const env = { FAKE_COUNT_FILE: count };
  const away = (name: string) =>
    scene.git(scene.work, ["config", "remote.origin.pushurl", join(scene.dir, name)]);

  // The remote is away at push time, minute after minute: said once.
  await away("away-1.git");
  const first = await cron(scene, "poll", env);
  assert.equal(first.code, 1, all(first));
  // The task starts on this tick: its start line, once (later ticks run it frozen).
  assert.match(first.stdout, /^\S+ task 1 starts: [^\n]*\n$/);
  const said = first.stderr.split("\n").filter((l) => l !== "");
  assert.equal(said.length, 1, all(first));
  assert.match(said[0]!, /relay: not yet: Cannot push "task-1" to "origin" yet: .*away-1\.git/);
  for (let minute = 0; minute < 3; minute++) {
    const res = await cron(scene, "poll", env);
    assert.equal(res.code, 1, all(res));
    assert.deepEqual(logged(res), [], `minute ${minute}: ${all(res)}`);
  }
  assert.ok(!(await exists(holdPath(scene))), "a remote that is away is not a HOLD");

  // A different message is a change of state: said once more.
  await away("away-2.git");
  const changed = await cron(scene, "poll", env);
  assert.equal(changed.code, 1, all(changed));
  assert.equal(logged(changed).length, 1, all(changed));
  assert.match(logged(changed)[0]!, /relay: not yet: .*away-2\.git/);
  assert.deepEqual(logged(await cron(scene, "poll", env)), []);

  // An hour on, the same state is said again.
  const record = join(stateDir(scene), "last-poll.json");
  const last = JSON.parse(await Deno.readTextFile(record));
  const twoHoursAgo = new Date(Date.now() - 2 * 3600_000).toISOString();
  await Deno.writeTextFile(record, JSON.stringify({ ...last, said: twoHoursAgo }, null, 2));
  const hourly = await cron(scene, "poll", env);
  assert.equal(hourly.code, 1, all(hourly));
  assert.equal(logged(hourly).length, 1, all(hourly));
  assert.match(logged(hourly)[0]!, /relay: not yet: .*away-2\.git/);
  assert.deepEqual(logged(await cron(scene, "poll", env)), []);

  // A person at a terminal sees it every time.
  for (let i = 0; i < 2; i++) {
    const res = await byHand(scene, "poll", env);
    assert.equal(res.code, 1, all(res));
    assert.match(res.stderr, /relay: not yet: .*away-2\.git/);
  }

  // The remote is back: the next tick ships, and says so; the agent ran once.
  await scene.git(scene.work, ["config", "--unset", "remote.origin.pushurl"]);
  const shipped = await cron(scene, "poll", env);
  assert.equal(shipped.code, 0, all(shipped));
  assert.match(shipped.stdout, /task 1 shipped/);
  assert.equal(await countLines(count, "run "), 1);
});
