/**
 * `machines: split`, forge plain: a reviewer machine (B) killed during its reviewer's turn
 * leaves that turn journaled. Once B's reviewer lease runs out, another machine (C) may
 * review the same round; when B comes back, the remote says whether its turn's round was
 * settled elsewhere. If it was, B's turn is void (said also under --quiet, on the task's
 * record and timeline) and the loop goes on; if nothing was settled, B's turn is uncertain:
 * a HOLD, as on one machine. Real CLI, real git, a bare file:// origin; B's tick dies at
 * RELAY_FAILPOINT=reviewer-running.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  all,
  exists,
  makeScene,
  originMerges,
  reviewRecord,
  running,
  type Scene,
  stateDir,
} from "./helpers/scene.ts";
import {
  briefs,
  expire,
  lease,
  type Machine,
  reviewerWaitingOnB,
  sleep,
  tick,
} from "./helpers/split_machines.ts";

interface Journal {
  runId: string;
  task: number;
  pid: number;
  uncertain?: unknown;
}

async function waitUntilGone(pid: number, ms: number): Promise<boolean> {
  for (let waited = 0; waited < ms; waited += 100) {
    if (!(await running(pid))) return true;
    await sleep(100);
  }
  return !(await running(pid));
}

/** Ends a process group if it is still there (a test's cleanup). */
function killGroup(pgid: number): void {
  try {
    Deno.kill(-pgid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

function journalPath(scene: Scene): string {
  return join(stateDir(scene), "review-journal.json");
}

/**
 * One brief on machines A, B and C; A ships task 1; B's review tick is killed (SIGKILL)
 * while its reviewer runs, which waits (B's only) until `go` exists. The reviewer honest.sh
 * otherwise: it runs the bar, and FAILs once when FAKE_FAIL_ONCE names a missing file.
 */
async function killedOnB(scene: Scene): Promise<{
  a: Machine;
  b: Machine;
  c: Machine;
  journal: Journal;
  head: string;
}> {
  await reviewerWaitingOnB(scene, 60);
  const { a, b, c } = await briefs(scene, ["Stale turn"]);
  const shipped = await tick(scene, a, "poll");
  assert.match(shipped.stdout, /task 1 shipped/, all(shipped));
  const head = await scene.out(["rev-parse", "refs/heads/task-1"], scene.origin);
  const killed = await tick(scene, b, "review", {
    RELAY_FAILPOINT: "reviewer-running",
    FAKE_GO: join(scene.dir, "go"),
  });
  assert.equal(killed.code, 137, all(killed));
  const journal = JSON.parse(await Deno.readTextFile(journalPath(scene))) as Journal;
  assert.equal(journal.task, 1);
  assert.ok(await running(journal.pid), "B's reviewer runs on after its tick");
  // B's reviewer lease stays B's until it runs out.
  const busy = await tick(scene, c, "review");
  assert.match(busy.stdout, /busy: reviewer lease held by /, all(busy));
  return { a, b, c, journal, head };
}

/** B goes down (a reboot): its reviewer with it. */
async function machineDown(journal: Journal): Promise<void> {
  killGroup(journal.pid);
  assert.ok(await waitUntilGone(journal.pid, 10_000), "B's reviewer did not stop");
}

/**
 * Ten minutes pass for B's turn too, as expire() makes them pass for its lease: the journal's
 * start moves back, so a verdict C records now is as late after it as a real one would be
 * (lib/loop/review_stale.ts counts another machine's verdict from two fifths of the lease, 4
 * minutes, after the start).
 */
async function turnStartedLongAgo(scene: Scene): Promise<void> {
  const journal = JSON.parse(await Deno.readTextFile(journalPath(scene)));
  journal.started = new Date(Date.parse(journal.started) - 10 * 60_000).toISOString();
  await Deno.writeTextFile(journalPath(scene), JSON.stringify(journal));
}

/** C reviews task 1 once B's lease ran out, and FAILs it: fix brief 2 is out. */
async function failedOnC(scene: Scene, c: Machine): Promise<void> {
  await expire(scene, "reviewer");
  const failed = await tick(scene, c, "review", { FAKE_FAIL_ONCE: join(scene.dir, "failed") });
  assert.equal(failed.code, 0, all(failed));
  assert.match(failed.stdout, /task 1: sent back — fix brief 2/, all(failed));
}

/** B's record of task 1 has its turn as void, and so has its timeline. */
async function voidOnRecord(scene: Scene, runId: string, why: RegExp): Promise<void> {
  const record = await reviewRecord(scene);
  const voided = record.voids.find((v) => v.runId === runId);
  assert.ok(voided, JSON.stringify(record.voids));
  assert.match(voided.why, why);
  const events = (await Deno.readTextFile(join(stateDir(scene), "tasks", "1.events.jsonl")))
    .split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
  const event = events.find((e) => e.event === "review-void" && e.run === runId);
  assert.ok(event, events.map((e) => e.event).join(", "));
  assert.equal(event.role, "reviewer");
  assert.match(event.details.why, why);
}

Deno.test("split machines: a reviewer killed mid-turn, whose round another machine reviewed and a fix round followed, is void when it comes back: no HOLD, the lease let go, the fix merged once", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, c, journal, head } = await killedOnB(scene);
  await machineDown(journal);
  await failedOnC(scene, c);
  const fixed = await tick(scene, a, "poll");
  assert.match(fixed.stdout, /task 2 shipped/, all(fixed));
  const newHead = await scene.out(["rev-parse", "refs/heads/task-1"], scene.origin);
  assert.notEqual(newHead, head);

  // B back: its turn judged a head that is no longer under review. Void, and B reviews the
  // fix round (it took the lease) and merges it.
  const back = await tick(scene, b, "review");
  assert.equal(back.code, 0, all(back));
  assert.doesNotMatch(all(back), /HOLD|uncertain/, all(back));
  assert.match(
    back.stdout,
    new RegExp(
      `task 1: this machine's reviewer turn \\(run ${journal.runId}\\) from an interrupted tick is void: task-1 is at ${
        newHead.slice(0, 12)
      } on origin, not at ${head.slice(0, 12)}`,
    ),
    all(back),
  );
  assert.match(back.stdout, /task 1 merged/, all(back));
  assert.equal(await exists(journalPath(scene)), false);
  await voidOnRecord(scene, journal.runId, /is at .* on origin, not at /);
  assert.equal((await originMerges(scene)).length, 1);
  assert.ok(
    (await lease(scene, "reviewer")).released,
    JSON.stringify(await lease(scene, "reviewer")),
  );
  // The loop goes on: C's next review finds the task merged and nothing to do.
  const next = await tick(scene, c, "review");
  assert.equal(next.code, 0, all(next));
  assert.doesNotMatch(next.stdout, /busy: reviewer lease/, all(next));
  assert.equal((await originMerges(scene)).length, 1);
});

Deno.test("split machines: a reviewer killed mid-turn comes back, under --quiet, while another machine's FAIL of the same head is with the executor: the void line shows, the lease is let go", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, c, journal } = await killedOnB(scene);
  await machineDown(journal);
  await turnStartedLongAgo(scene);
  await failedOnC(scene, c);

  const back = await tick(scene, b, "review", {}, ["--quiet"]);
  assert.equal(back.code, 0, all(back));
  assert.doesNotMatch(all(back), /HOLD|uncertain/, all(back));
  assert.match(
    back.stdout,
    new RegExp(
      `task 1: this machine's reviewer turn \\(run ${journal.runId}\\) from an interrupted tick is void: another machine recorded a FAIL on `,
    ),
    all(back),
  );
  assert.equal(await exists(journalPath(scene)), false);
  await voidOnRecord(scene, journal.runId, /another machine recorded a FAIL on /);
  assert.ok(
    (await lease(scene, "reviewer")).released,
    JSON.stringify(await lease(scene, "reviewer")),
  );
  // The fix round, then C reviews and merges it: once.
  assert.match((await tick(scene, a, "poll")).stdout, /task 2 shipped/);
  const merged = await tick(scene, c, "review");
  assert.match(merged.stdout, /task 1 merged/, all(merged));
  assert.equal((await originMerges(scene)).length, 1);
});

Deno.test("split machines: a reviewer turn left behind is judged by the lease it ran under: a person who lengthens timeouts.lease meanwhile does not turn another machine's FAIL of the round into an uncertain turn", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { b, c, journal } = await killedOnB(scene);
  const kept = JSON.parse(await Deno.readTextFile(journalPath(scene)));
  assert.equal(kept.leaseMs, 600_000, "the journal keeps the lease the turn ran under");
  await machineDown(journal);
  await turnStartedLongAgo(scene);
  await failedOnC(scene, c);
  // A person on B lengthens the lease to an hour (another machine's verdict on a round would
  // then come at least 48 minutes after a turn's start, and counts from 24).
  await scene.git(b.dir, ["pull", "--quiet", "--ff-only", "origin", "main"]);
  await Deno.writeTextFile(
    join(b.dir, ".relay", "config.yaml"),
    "machines: split\ntimeouts:\n  lease: 1h\n",
  );
  await scene.git(b.dir, ["commit", "--quiet", "-am", "a longer lease"]);
  await scene.git(b.dir, ["push", "--quiet", "origin", "main"]);

  const back = await tick(scene, b, "review");
  assert.equal(back.code, 0, all(back));
  assert.doesNotMatch(all(back), /HOLD|uncertain/, all(back));
  assert.match(
    back.stdout,
    /reviewer turn \(run \S+\) from an interrupted tick is void: another machine recorded a FAIL on /,
    all(back),
  );
});

Deno.test("split machines: a reviewer killed mid-turn whose turn is still running when it comes back, after another machine merged the task, stops that reviewer and voids its turn", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { b, c, journal } = await killedOnB(scene);
  try {
    // B stays up (only its tick died): its reviewer waits on. C passes task 1 and merges it.
    await expire(scene, "reviewer");
    const took = await tick(scene, c, "review");
    assert.match(took.stdout, /task 1 merged/, all(took));
    assert.ok(await running(journal.pid));

    const back = await tick(scene, b, "review");
    assert.equal(back.code, 0, all(back));
    assert.doesNotMatch(all(back), /HOLD|uncertain|busy/, all(back));
    assert.match(
      back.stdout,
      new RegExp(
        `task 1: this machine's reviewer turn \\(run ${journal.runId}\\) from an interrupted tick is void: task-1 was merged on origin`,
      ),
      all(back),
    );
    assert.ok(await waitUntilGone(journal.pid, 1_000), "B's reviewer was not stopped");
    assert.equal(await exists(journalPath(scene)), false);
    await voidOnRecord(scene, journal.runId, /was merged on origin/);
    assert.ok((await lease(scene, "reviewer")).released);
    assert.equal((await originMerges(scene)).length, 1);
  } finally {
    killGroup(journal.pid);
  }
});

Deno.test("split machines: a reviewer killed mid-turn whose round nobody else reviewed comes back to an uncertain turn: a HOLD that keeps the reviewer's lease, as on one machine", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { b, c, journal } = await killedOnB(scene);
  await machineDown(journal);
  // B's lease runs out, but no other machine reviews: the same head is still under review
  // with no verdict, so the verdict B's turn reached may be the one that matters.
  await expire(scene, "reviewer");
  const back = await tick(scene, b, "review");
  assert.equal(back.code, 3, all(back));
  assert.match(
    back.stderr,
    new RegExp(`HOLD: task 1: uncertain reviewer turn: run ${journal.runId} `),
    all(back),
  );
  assert.doesNotMatch(all(back), /is void/, all(back));
  const kept = JSON.parse(await Deno.readTextFile(journalPath(scene))) as Journal;
  assert.equal(kept.runId, journal.runId);
  assert.ok(kept.uncertain, "the journal is marked uncertain");
  assert.equal((await lease(scene, "reviewer")).released, undefined);
  const other = await tick(scene, c, "review");
  assert.match(other.stdout, /busy: reviewer lease held by /, all(other));
  assert.equal((await originMerges(scene)).length, 0);
});
