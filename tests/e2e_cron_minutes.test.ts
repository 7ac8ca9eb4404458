/**
 * The loop as cron runs it: both crontab lines that `relay init` prints fire at
 * the same second every minute. A simulated minute starts `relay poll` and
 * `relay review` together (in either order, a hair apart) and waits for both;
 * the next minute starts when both have ended, as cron's next firing would
 * find them. With instant agents a brief must go from OPEN to merged within
 * three minutes and three queued briefs within nine, also against a remote
 * that answers every fetch half a second late.
 */
import assert from "node:assert/strict";
import { all, brief, makeScene, type RelayResult, type Scene } from "./helpers/scene.ts";

/** The poll and review lines of the crontab `relay init` prints, as argv. */
function cronLine(scene: Scene, tick: "poll" | "review"): string[] {
  return ["-C", scene.work, "--profile", scene.profile, tick, "--quiet"];
}

async function queueThree(scene: Scene): Promise<void> {
  for (const title of ["First", "Second", "Third"]) {
    const res = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title }) });
    assert.equal(res.code, 0, all(res));
  }
  const promote = await scene.relay(["promote"]);
  assert.equal(promote.code, 0, all(promote));
}

/** The tasks merged on origin/main, read in the bare origin itself. */
async function mergedTasks(scene: Scene): Promise<number[]> {
  const log = await scene.out(["log", "--format=%s", "main"], scene.origin);
  return [...log.matchAll(/^Merge task-(\d+):/gm)].map((m) => Number(m[1])).sort();
}

/** One cron minute: both ticks started together; `first` starts a moment before the other. */
async function minute(
  scene: Scene,
  first: "poll" | "review",
): Promise<{ poll: RelayResult; review: RelayResult }> {
  const second = first === "poll" ? "review" : "poll";
  const a = scene.relay(cronLine(scene, first));
  const b = scene.relay(cronLine(scene, second));
  const [ra, rb] = await Promise.all([a, b]);
  return first === "poll" ? { poll: ra, review: rb } : { poll: rb, review: ra };
}

/**
 * Runs simulated minutes until three briefs are merged or `limit` minutes
 * have passed; returns the minute each task merged and the transcript.
 */
async function runMinutes(
  scene: Scene,
  order: (minute: number) => "poll" | "review",
  limit: number,
): Promise<{ mergedAt: Map<number, number>; transcript: string[] }> {
  const mergedAt = new Map<number, number>();
  const transcript: string[] = [];
  for (let m = 1; m <= limit && mergedAt.size < 3; m++) {
    const first = order(m);
    const { poll, review } = await minute(scene, first);
    transcript.push(
      `minute ${m} (${first} first)\n  poll   exit ${poll.code}: ${
        (poll.stdout + poll.stderr).trim().replaceAll("\n", "\n    ")
      }\n  review exit ${review.code}: ${
        (review.stdout + review.stderr).trim().replaceAll("\n", "\n    ")
      }`,
    );
    // Both ticks exit 0 on every minute of a healthy loop: no HOLD, no error, no failure.
    assert.equal(poll.code, 0, transcript.join("\n"));
    assert.equal(review.code, 0, transcript.join("\n"));
    for (const task of await mergedTasks(scene)) {
      if (!mergedAt.has(task)) {
        mergedAt.set(task, m);
        transcript.push(`  => task ${task} merged in minute ${m}`);
      }
    }
  }
  return { mergedAt, transcript };
}

function assertSchedule(mergedAt: Map<number, number>, transcript: string[]): void {
  const text = transcript.join("\n");
  // Printed so a run shows the schedule (and the closing note can quote it).
  console.log(text);
  assert.deepEqual([...mergedAt.keys()].sort(), [1, 2, 3], text);
  assert.ok(mergedAt.get(1)! <= 3, `task 1 merged in minute ${mergedAt.get(1)}\n${text}`);
  assert.ok(mergedAt.get(3)! <= 9, `task 3 merged in minute ${mergedAt.get(3)}\n${text}`);
}

async function assertEachMergedOnce(scene: Scene): Promise<void> {
  const log = await scene.out(["log", "--format=%s", "main"], scene.origin);
  for (const task of [1, 2, 3]) {
    const merges = log.split("\n").filter((s) => s.startsWith(`Merge task-${task}:`));
    assert.equal(merges.length, 1, log);
  }
  const files = await scene.out(
    ["ls-tree", "-r", "--name-only", "main", "--", "src"],
    scene.origin,
  );
  assert.deepEqual(files.split("\n"), [
    "src/app.txt",
    "src/feature-1.txt",
    "src/feature-2.txt",
    "src/feature-3.txt",
  ]);
}

Deno.test("cron minutes: poll and review fired together, poll first, merge three briefs in time", async () => {
  await using scene = await makeScene();
  await queueThree(scene);
  const { mergedAt, transcript } = await runMinutes(scene, () => "poll", 9);
  assertSchedule(mergedAt, transcript);
  await assertEachMergedOnce(scene);
});

Deno.test("cron minutes: review fired a moment before poll every minute still merges three briefs in time", async () => {
  await using scene = await makeScene();
  await queueThree(scene);
  const { mergedAt, transcript } = await runMinutes(scene, () => "review", 9);
  assertSchedule(mergedAt, transcript);
  await assertEachMergedOnce(scene);
});

Deno.test("cron minutes: a remote that answers every fetch half a second late, either order", async () => {
  await using scene = await makeScene();
  await scene.git(scene.work, [
    "config",
    "remote.origin.uploadpack",
    "sleep 0.5; git-upload-pack",
  ]);
  await queueThree(scene);
  const { mergedAt, transcript } = await runMinutes(
    scene,
    (m) => m % 2 === 1 ? "review" : "poll",
    9,
  );
  assertSchedule(mergedAt, transcript);
  await assertEachMergedOnce(scene);
});
