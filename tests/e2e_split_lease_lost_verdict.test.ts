/**
 * `machines: split`: a review tick whose reviewer lease another machine took during its
 * reviewer's turn. B's turn on task 1 runs while B's network hangs (the origin is moved out of
 * reach: B's renewal, every 24 s with the scene's 2-minute lease, decides nothing); B's lease runs out, and C reviews the same
 * head and FAILs it (fix brief 2). When B's reviewer ends (a PASS), relay asks the lease before
 * it records anything of the turn, finds it C's, and stops (exit 1): no verdict on B's record,
 * the turn still journaled. The executor answers the fix brief without a new commit; B's next
 * tick holds the lease, finds its turn void (the remote shows C's FAIL, recorded after the turn
 * began), and reviews the answer before anything merges — as after a crash, or on one machine.
 * (It did not: B recorded the PASS, cleared its journal, and merged task 1 on it.)
 *
 * Real time: about 50 s (the lease is renewed every 24 s, and asked again when a renewal is half
 * an interval overdue).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  AGENTS,
  all,
  exists,
  makeScene,
  originMerges,
  reviewRecord,
  stateDir,
} from "./helpers/scene.ts";
import {
  briefs,
  expire,
  outlivedLease,
  reviewerWaitingOnB,
  sleep,
  SPLIT_SHORT_LEASE,
  tick,
} from "./helpers/split_machines.ts";

Deno.test({
  name:
    "split machines: a verdict reached by a review tick that lost its lease mid-turn is not trusted by the next tick over another machine's FAIL of the same round",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using scene = await makeScene({ config: SPLIT_SHORT_LEASE });
    // B's reviewer waits for `go` (B only); then the honest reviewer (PASS unless FAKE_FAIL_ONCE).
    await reviewerWaitingOnB(scene, 300);
    // Task 1: the honest agent; fix brief 2: an executor that pushes back (no new commit).
    const agent = `if [ "$RELAY_TASK" = 2 ]; then exec bash "${
      join(AGENTS, "pushback.sh")
    }" "$@"; else exec bash "${join(AGENTS, "good.sh")}" "$@"; fi`;
    const { a, b, c } = await briefs(scene, ["Lost lease"], agent);
    // B's reviewer may take longer than the scene's 60 s (it waits through B's lost lease).
    const profileB = await Deno.readTextFile(b.profile);
    await Deno.writeTextFile(b.profile, profileB.replaceAll("timeout: 60s", "timeout: 10m"));

    const shipped = await tick(scene, a, "poll");
    assert.match(shipped.stdout, /task 1 shipped/, all(shipped));
    const head = await scene.out(["rev-parse", "refs/heads/task-1"], scene.origin);

    // B's review tick: its reviewer starts and waits.
    const go = join(scene.dir, "go");
    const bTick = tick(scene, b, "review", { FAKE_GO: go });
    const journal = join(stateDir(scene), "review-journal.json");
    for (let i = 0; i < 600 && !(await exists(journal)); i++) await sleep(100);
    assert.ok(await exists(journal), "B's reviewer did not start");
    const started = Date.now();

    // B's lease runs out: C takes the reviewer role and FAILs the same head.
    await expire(scene, "reviewer");
    const failed = await tick(scene, c, "review", { FAKE_FAIL_ONCE: join(scene.dir, "c-fail") });
    assert.equal(failed.code, 0, all(failed));
    assert.match(failed.stdout, /task 1: sent back — fix brief 2/, all(failed));

    // B's network hangs through its next renewal (origin out of reach: the renewal and its
    // fetch fail, deciding nothing); it is back once the lease is overdue.
    // B's reviewer then ends with a PASS.
    const lost = await outlivedLease(scene, started, go, bTick, "reviewer");
    assert.match(lost.stderr, /finds its reviewer turn void if the remote shows the round settled/);
    // Nothing of the turn recorded: the turn is still journaled, no PASS on B's record.
    assert.ok(await exists(journal), "B's review turn is no longer journaled");
    const record = await reviewRecord(scene).catch(() => null);
    assert.deepEqual(
      record?.verdicts.filter((v) => v.verdict === "PASS").map((v) => v.head) ?? [],
      [],
      "B recorded its turn's PASS",
    );
    // Real time: another machine reviews only once B's lease ran out (at least the lease less
    // one renewal, 96 s, after the turn began); moved back as
    // tests/e2e_split_reviewer_stale.test.ts does.
    const j = JSON.parse(await Deno.readTextFile(journal));
    j.started = new Date(Date.parse(j.started) - 3 * 60_000).toISOString();
    await Deno.writeTextFile(journal, JSON.stringify(j));

    // The executor answers C's fix brief without a new commit.
    const answered = await tick(scene, a, "poll");
    assert.match(answered.stdout, /task 2 shipped/, all(answered));
    assert.equal(await scene.out(["rev-parse", "refs/heads/task-1"], scene.origin), head);

    // B's next review tick holds the lease. As after a crash (or on one machine), the
    // executor's answer to the FAIL is reviewed once before any merge: this reviewer FAILs.
    const count = join(scene.dir, "b-review-count");
    const next = await tick(scene, b, "review", {
      FAKE_FAIL_ONCE: join(scene.dir, "b-fail"),
      FAKE_REVIEW_COUNT: count,
    });
    const launches = (await Deno.readTextFile(count).catch(() => "")).split("\n")
      .filter((l) => l !== "").length;
    assert.match(
      next.stdout + next.stderr,
      /reviewer turn \(run \S+\) from an interrupted tick is void/,
      all(next),
    );
    assert.equal((await originMerges(scene)).length, 0, `merged without a review:\n${all(next)}`);
    assert.ok(launches >= 1, "no reviewer turn on the executor's answer");
  },
});
