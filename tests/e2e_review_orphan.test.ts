/**
 * A review tick killed (SIGKILL) during the reviewer's turn leaves the reviewer
 * running in its own process group. The next ticks wait for it while it is
 * within its turn limit, stop it past that, and never start a second reviewer
 * beside it. Real CLI, real git; the tick dies at RELAY_FAILPOINT=reviewer-running.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  all,
  brief,
  countLines,
  exists,
  makeScene,
  REVIEWERS,
  reviewRecord,
  running,
  type Scene,
  stateDir,
} from "./helpers/scene.ts";

interface ReviewJournalFile {
  runId: string;
  task: number;
  pid: number;
  started: string;
  deadline?: string;
  stamp?: string;
  worktree: string;
}

interface ReviewFile {
  verdicts: { runId: string; verdict: string }[];
  voids: { runId: string; why: string }[];
}

async function waitUntilGone(pid: number, ms: number): Promise<boolean> {
  for (let waited = 0; waited < ms; waited += 100) {
    if (!(await running(pid))) return true;
    await sleep(100);
  }
  return !(await running(pid));
}

function killGroupQuietly(pgid: number | undefined): void {
  if (pgid === undefined) return;
  try {
    Deno.kill(-pgid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Reviewer launches logged by the fake reviewers (`review <pid>` lines). */
function launches(countFile: string): Promise<number> {
  return countLines(countFile, "review ");
}

/** A shipped task 1 whose PR waits for review, with waits.sh as the reviewer (turn limit given). */
async function shippedScene(reviewerTimeout: string): Promise<Scene> {
  const scene = await makeScene({ reviewer: "waits.sh" });
  await Deno.writeTextFile(
    scene.profile,
    (await Deno.readTextFile(scene.profile)).replace(
      /(reviewer:\n(?:.*\n)*? {4}timeout: )60s/,
      `$1${reviewerTimeout}`,
    ),
  );
  assert.match(await Deno.readTextFile(scene.profile), new RegExp(`timeout: ${reviewerTimeout}\n`));
  // The reviewer is the fake the scene's dispatch file names (tests/fixtures/dispatch.sh).
  assert.equal(
    await Deno.readTextFile(join(scene.dir, "reviewer-script")),
    join(REVIEWERS, "waits.sh"),
  );
  const queued = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title: "Orphan" }) });
  assert.equal(queued.code, 0, all(queued));
  assert.equal((await scene.relay(["promote"])).code, 0);
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 1 shipped/);
  return scene;
}

async function readJournal(scene: Scene): Promise<ReviewJournalFile> {
  return JSON.parse(await Deno.readTextFile(join(stateDir(scene), "review-journal.json")));
}

function readReviewRecord(scene: Scene): Promise<ReviewFile> {
  return reviewRecord(scene);
}

async function originMainSubject(scene: Scene): Promise<string> {
  await scene.git(scene.work, ["fetch", "--quiet", "origin"]);
  return await scene.out(["log", "-1", "--format=%s", "origin/main"]);
}

Deno.test("a reviewer orphaned by a killed review tick is waited for, never joined by a second one; once gone its turn is uncertain: a HOLD, replayed only by resume --retry-uncertain", async () => {
  await using scene = await shippedScene("60s");
  const count = join(scene.dir, "reviews.log");
  const go = join(scene.dir, "go");
  const env = { FAKE_REVIEW_COUNT: count, FAKE_GO: go };

  const killed = await scene.relay(["review"], {
    env: { ...env, RELAY_FAILPOINT: "reviewer-running" },
  });
  assert.equal(killed.code, 137, all(killed));
  const journal = await readJournal(scene);
  try {
    assert.equal(journal.task, 1);
    assert.match(journal.runId, /review1-t1$/);
    // The reviewer's checkout that turns share (lib/loop/effects/review_checkout.ts).
    assert.equal(journal.worktree, join(scene.worktrees, "review"));
    assert.ok(journal.deadline, "a reviewer with a turn limit has a deadline");
    assert.equal(Date.parse(journal.deadline) - Date.parse(journal.started), 60_000);
    if (Deno.build.os === "linux") assert.match(journal.stamp ?? "", /^[0-9a-f-]{36}:\d+$/);
    assert.ok(await running(journal.pid), "the orphaned reviewer should still run");

    // relay status tells what the next review does: wait for that reviewer, not start one.
    const predicted = await scene.relay(["status"], { env });
    assert.match(
      predicted.stdout,
      new RegExp(
        `^next review: waits: the reviewer of run ${journal.runId} \\(pid ${journal.pid}\\), which an interrupted tick left running, runs on$`,
        "m",
      ),
      all(predicted),
    );
    // The reviewer's turn is still open: the next tick waits and starts nothing.
    const busy = await scene.relay(["review"], { env });
    assert.equal(busy.code, 0, all(busy));
    assert.match(
      busy.stdout,
      new RegExp(
        `busy: the reviewer from an interrupted tick is still running \\(pid ${journal.pid}, run ${journal.runId}, turn limit at `,
      ),
    );
    assert.equal(await launches(count), 1, "a second reviewer was started");
    assert.ok(await exists(join(stateDir(scene), "review-journal.json")));
    assert.ok(await running(journal.pid), "relay stopped a reviewer within its turn limit");
    assert.ok(await exists(journal.worktree), "the running reviewer's worktree was removed");
    const last = JSON.parse(await Deno.readTextFile(join(stateDir(scene), "last-review.json")));
    assert.equal(last.result, "busy");
    assert.equal(last.exit, 0);

    // It ends on its own while no tick watches it: an uncertain turn. The next tick says so,
    // holds, and launches nothing; a plain resume leaves it; only --retry-uncertain replays it.
    await Deno.writeTextFile(go, "");
    assert.ok(await waitUntilGone(journal.pid, 20_000), "the orphaned reviewer did not end");
    const gone = await scene.relay(["status"], { env });
    assert.match(
      gone.stdout,
      new RegExp(
        `^next review: stops: the reviewer of run ${journal.runId} \\(pid ${journal.pid}\\) ended while no tick watched it`,
        "m",
      ),
      all(gone),
    );
    const held = await scene.relay(["review"], { env });
    assert.equal(held.code, 3, all(held));
    assert.match(
      held.stderr,
      new RegExp(
        `HOLD: task 1: uncertain reviewer turn: run ${journal.runId} \\(pid ${journal.pid}\\) ended while no tick watched it`,
      ),
    );
    assert.match(held.stderr, /relay resume --retry-uncertain/);
    for (let minute = 0; minute < 2; minute++) {
      assert.equal((await scene.relay(["review"], { env })).code, 3);
    }
    assert.equal(await launches(count), 1, "an uncertain turn was replayed by a tick");
    const plain = await scene.relay(["resume"]);
    assert.equal(plain.code, 3, all(plain));
    assert.match(plain.stdout, /not cleared: the HOLD is an uncertain reviewer turn/);
    assert.equal((await scene.relay(["review"], { env })).code, 3);
    assert.equal(await launches(count), 1);
    const retry = await scene.relay(["resume", "--retry-uncertain"]);
    assert.equal(retry.code, 0, all(retry));
    assert.match(
      retry.stdout,
      new RegExp(`the uncertain reviewer turn of run ${journal.runId} is void`),
    );
    const again = await scene.relay(["resume", "--retry-uncertain"]);
    assert.equal(again.code, 2, all(again));
    assert.match(again.stdout, /nothing to replay/);
    const res = await scene.relay(["review"], { env });
    assert.equal(res.code, 0, all(res));
    assert.match(res.stdout, /task 1 merged/);
    assert.match(await originMainSubject(scene), /^Merge task-1: Orphan/);
    assert.equal(await launches(count), 2);
    assert.equal(
      await Deno.readTextFile(`${count}.overlap`).catch(() => ""),
      "",
      "two reviewers ran at the same time",
    );
    const record = await readReviewRecord(scene);
    assert.deepEqual(record.voids.map((v) => v.runId), [journal.runId]);
    assert.match(
      record.voids[0]!.why,
      /^uncertain \(ended while no tick watched it\); run again by relay resume --retry-uncertain$/,
    );
    assert.equal(record.verdicts.length, 1);
    assert.notEqual(record.verdicts[0]!.runId, journal.runId);
    assert.equal(record.verdicts[0]!.verdict, "PASS");
    assert.equal(await exists(join(stateDir(scene), "review-journal.json")), false);
    // The checkout the orphan used is the one the replayed turn ran in: switched and verified
    // clean, and left clean by that turn; no per-run worktree stays behind.
    const status = await new Deno.Command("git", {
      args: ["-C", journal.worktree, "status", "--porcelain", "--untracked-files=all", "--ignored"],
      env: scene.env,
    }).output();
    assert.equal(
      new TextDecoder().decode(status.stdout),
      "",
      "the reviewer's checkout is not clean",
    );
    const left = [];
    for await (const e of Deno.readDir(scene.worktrees)) left.push(e.name);
    assert.deepEqual(left.filter((n) => n.startsWith("review")), ["review"]);
  } finally {
    killGroupQuietly(journal.pid);
  }
});

Deno.test("a reviewer orphaned past its turn limit is stopped with its whole group, and the tick then reviews", async () => {
  await using scene = await shippedScene("6s");
  const count = join(scene.dir, "reviews.log");
  const env = { FAKE_REVIEW_COUNT: count, FAKE_GO: join(scene.dir, "never") };

  const killed = await scene.relay(["review"], {
    env: { ...env, RELAY_FAILPOINT: "reviewer-running" },
  });
  assert.equal(killed.code, 137, all(killed));
  const journal = await readJournal(scene);
  try {
    assert.ok(journal.deadline);
    const deadline = Date.parse(journal.deadline);
    assert.equal(deadline - Date.parse(journal.started), 6_000);
    assert.ok(await running(journal.pid));

    await sleep(Math.max(0, deadline - Date.now()) + 300);
    const res = await scene.relay(["review"], { env });
    assert.equal(res.code, 0, all(res));
    assert.match(res.stderr, /passed its turn limit .*; stopping its process group/);
    assert.equal(await running(journal.pid), false, "the overdue reviewer still runs");
    assert.match(res.stdout, /task 1 merged/);
    assert.equal(await launches(count), 2);
    assert.equal(await Deno.readTextFile(`${count}.overlap`).catch(() => ""), "");
    const record = await readReviewRecord(scene);
    assert.deepEqual(record.voids.map((v) => v.runId), [journal.runId]);
    assert.match(record.voids[0]!.why, /^interrupted; stopped past its turn limit$/);
    assert.equal(await exists(join(stateDir(scene), "review-journal.json")), false);
  } finally {
    killGroupQuietly(journal.pid);
  }
});

Deno.test("a reviewer turn that ends normally leaves no review journal behind", async () => {
  await using scene = await shippedScene("60s");
  const count = join(scene.dir, "reviews.log");
  const go = join(scene.dir, "go");
  await Deno.writeTextFile(go, "");
  const res = await scene.relay(["review"], { env: { FAKE_REVIEW_COUNT: count, FAKE_GO: go } });
  assert.equal(res.code, 0, all(res));
  assert.match(res.stdout, /task 1 merged/);
  assert.equal(await launches(count), 1);
  assert.equal(await exists(join(stateDir(scene), "review-journal.json")), false);
  assert.deepEqual((await readReviewRecord(scene)).voids, []);
});

Deno.test("a reviewer turn cut off at its turn limit is void, and the reason names the limit", async () => {
  await using scene = await shippedScene("1s");
  const count = join(scene.dir, "reviews.log");
  // The first launch waits for a file that never comes, so the 1 s limit cuts it off.
  const res = await scene.relay(["review"], {
    env: { FAKE_REVIEW_COUNT: count, FAKE_GO: join(scene.dir, "never") },
  });
  // The second turn reviews at once (merge), unless a busy machine cuts it off too (a HOLD).
  assert.ok(res.code === 0 || res.code === 3, all(res));
  assert.match(res.stderr, /gave no valid verdict: the reviewer timed out: limit 1s, ran \d+s\n/);
  const record = await readReviewRecord(scene);
  assert.match(record.voids[0]?.why ?? "", /^invalid verdict: the reviewer timed out: limit 1s/);
});
