/**
 * One record per task across its fix rounds (lib/state/tasks.ts): version 1's
 * files migrate on read, a fix brief's attempts land in its task's round, a
 * broken record is refused naming the file and the key, and the two ticks
 * updating one record at once never lose each other's change.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { InputError } from "../lib/errors.ts";
import { statePaths } from "../lib/state/paths.ts";
import {
  addReceipt,
  type Attempt,
  readReview,
  readRound,
  readTask,
  recordAttempt,
  writeReview,
} from "../lib/state/tasks.ts";
import type { ReviewRecord } from "../lib/state/reviews.ts";

async function tempState(): Promise<{ dirs: ReturnType<typeof statePaths> } & AsyncDisposable> {
  const dir = await Deno.makeTempDir({ prefix: "relay-record-" });
  return {
    dirs: statePaths(dir),
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

function attempt(runId: string, result: Attempt["result"] = "failed"): Attempt {
  return { runId, brief: "sha-a", started: runId, result, reason: `${runId} failed` };
}

function review(task: number, fixes: number[]): ReviewRecord {
  return {
    task,
    branch: `task-${task}`,
    verdicts: [],
    voids: [],
    fixes: fixes.map((f) => ({ task: f, at: "2026-12-01T00:00:00Z", head: `head-${f}` })),
  };
}

async function writeRaw(path: string, value: unknown): Promise<void> {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, JSON.stringify(value));
}

Deno.test("version 1's files (a record per brief, a review file per PR) become one task with rounds", async () => {
  await using s = await tempState();
  const { dirs } = s;
  const receipt = { stage: "implementation", runId: "r1", at: "t", result: "SHIPPED", head: "h1" };
  await writeRaw(join(dirs.tasks, "1.json"), {
    task: 1,
    attempts: [attempt("r1", "shipped")],
    receipts: [receipt],
  });
  await writeRaw(join(dirs.reviews, "task-1.json"), review(1, [2]));
  await writeRaw(join(dirs.tasks, "2.json"), { task: 2, attempts: [attempt("r2")], receipts: [] });

  const record = await readTask(dirs, 1);
  assert.equal(record.version, 2);
  assert.deepEqual(record.rounds.map((r) => [r.round, r.brief, r.attempts.map((a) => a.runId)]), [
    [1, 1, ["r1"]],
    [2, 2, ["r2"]],
  ]);
  assert.deepEqual(record.review?.fixes.map((f) => f.task), [2]);

  // The fix brief's next attempt goes into round 2 of task 1, and the task is one file from then on.
  const round = await recordAttempt(dirs, { task: 2, fixes: 1 }, attempt("r3"));
  assert.deepEqual([round.round, round.attempts.map((a) => a.runId)], [2, ["r2", "r3"]]);
  const written = JSON.parse(await Deno.readTextFile(join(dirs.tasks, "1.json")));
  assert.equal(written.version, 2);
  assert.deepEqual(written.rounds[1].attempts.map((a: Attempt) => a.runId), ["r2", "r3"]);
  assert.deepEqual(written.review.fixes.map((f: { task: number }) => f.task), [2]);
  // The old files are left where they were: nothing relay wrote is deleted.
  assert.ok((await Deno.stat(join(dirs.reviews, "task-1.json"))).isFile);
  assert.equal((await readRound(dirs, { task: 2, fixes: 1 })).attempts.length, 2);
});

Deno.test("a fix brief's round is its task's next round; a task with no record reads as empty", async () => {
  await using s = await tempState();
  const { dirs } = s;
  assert.deepEqual(await readRound(dirs, { task: 4 }), {
    round: 1,
    brief: 4,
    attempts: [],
    receipts: [],
  });
  await recordAttempt(dirs, { task: 4 }, attempt("a1", "shipped"));
  await addReceipt(dirs, { task: 4 }, {
    stage: "implementation",
    runId: "a1",
    at: "t",
    result: "SHIPPED",
  });
  const failed = review(4, [7]);
  failed.verdicts.push({
    runId: "v1",
    at: "t",
    reportTask: 4,
    head: "h",
    tree: "t",
    main: "m",
    verdict: "FAIL",
    findings: [{ severity: "blocker", text: "no test" }],
  });
  await writeReview(dirs, failed);
  await writeReview(dirs, failed); // written again: one receipt per verdict
  await recordAttempt(dirs, { task: 7, fixes: 4 }, attempt("b1"));
  await recordAttempt(dirs, { task: 7, fixes: 4 }, attempt("b1")); // a resumed tick: once
  const record = await readTask(dirs, 4);
  assert.deepEqual(record.rounds.map((r) => [r.round, r.brief, r.attempts.length]), [
    [1, 4, 1],
    [2, 7, 1],
  ]);
  // Receipts per stage per round: round 1 has the executor's and the reviewer's.
  assert.deepEqual(record.rounds[0]!.receipts.map((r) => [r.stage, r.result]), [
    ["implementation", "SHIPPED"],
    ["review", "FAIL"],
  ]);
  assert.deepEqual((await readReview(dirs, 4, "task-4")).fixes.map((f) => f.task), [7]);
  // No file of its own for the fix brief.
  await assert.rejects(Deno.stat(join(dirs.tasks, "7.json")), Deno.errors.NotFound);
});

Deno.test("a record that is not valid is refused naming the file and the key; nothing is written", async () => {
  await using s = await tempState();
  const { dirs } = s;
  const path = join(dirs.tasks, "3.json");
  const broken = {
    version: 2,
    task: 3,
    rounds: [{ round: 1, brief: 3, attempts: "none", receipts: [] }],
    review: null,
  };
  await writeRaw(path, broken);
  const err = await readTask(dirs, 3).then(() => null, (e) => e);
  assert.ok(err instanceof InputError, String(err));
  assert.equal(err.location.file, path);
  assert.equal(err.location.key, "rounds.0.attempts");
  assert.match(err.message, /move the file aside/);
  await assert.rejects(recordAttempt(dirs, { task: 3 }, attempt("x")), InputError);
  assert.deepEqual(JSON.parse(await Deno.readTextFile(path)), broken);

  await writeRaw(path, { version: 3, task: 3, rounds: [], review: null });
  const newer = await readTask(dirs, 3).then(() => null, (e) => e);
  assert.ok(newer instanceof InputError);
  assert.equal(newer.location.key, "version");
  assert.match(newer.message, /version 3; this relay reads version 2/);
});

Deno.test("updates written at once into one record are all kept: the records lock serialises them", async () => {
  await using s = await tempState();
  const { dirs } = s;
  const writes: Promise<unknown>[] = [];
  for (let i = 0; i < 15; i++) {
    writes.push(recordAttempt(dirs, { task: 5 }, attempt(`run-${i}`)));
    writes.push(addReceipt(dirs, { task: 5 }, {
      stage: "implementation",
      runId: `run-${i}`,
      at: "t",
      result: "SHIPPED",
    }));
  }
  await Promise.all(writes);
  const round = (await readTask(dirs, 5)).rounds[0]!;
  assert.equal(round.attempts.length, 15);
  assert.equal(round.receipts.length, 15);
});

Deno.test("a fix brief a person queued keeps its version-1 attempts: they join its task as a round", async () => {
  await using s = await tempState();
  const { dirs } = s;
  await writeRaw(join(dirs.tasks, "1.json"), { task: 1, attempts: [attempt("r1", "shipped")] });
  // relay sent no fix: the person's fix brief 5 is in no review's `fixes`.
  await writeRaw(join(dirs.reviews, "task-1.json"), review(1, []));
  await writeRaw(join(dirs.tasks, "5.json"), {
    task: 5,
    attempts: [attempt("p1"), attempt("p2")],
    receipts: [{ stage: "implementation", runId: "p2", at: "t", result: "FAILED", base: "b5" }],
  });

  // Counted before anything is written (relay status, the attempt cap)…
  const before = await readRound(dirs, { task: 5, fixes: 1 });
  assert.deepEqual(before.attempts.map((a) => a.runId), ["p1", "p2"]);
  // …and kept when the next attempt is recorded.
  const round = await recordAttempt(dirs, { task: 5, fixes: 1 }, attempt("p3"));
  assert.deepEqual([round.round, round.attempts.map((a) => a.runId)], [2, ["p1", "p2", "p3"]]);
  const record = await readTask(dirs, 1);
  assert.deepEqual(record.rounds.map((r) => r.brief), [1, 5]);
  assert.equal(record.rounds[1]!.receipts[0]!.base, "b5");
});

Deno.test("a task record that is not JSON is bad input naming the file, not an internal error", async () => {
  await using s = await tempState();
  const { dirs } = s;
  const path = join(dirs.tasks, "3.json");
  await writeRaw(path, {});
  await Deno.writeTextFile(path, '{"version": 2, "task": 3, "rou');
  await assert.rejects(() => readTask(dirs, 3), (err: unknown) => {
    assert.ok(err instanceof InputError, String(err));
    assert.match(err.message, /3\.json/);
    assert.match(err.message, /not valid JSON/);
    assert.match(err.message, /move the file aside/);
    return true;
  });
});
