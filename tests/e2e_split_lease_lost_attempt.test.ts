/**
 * `machines: split`: an executor tick that outlives its lease. Its agent's turn runs while the
 * machine's network hangs (the origin is moved out of reach): the renewal (every 24 s with the
 * scene's 2-minute lease) decides nothing, the lease runs out, and another machine does the task meanwhile. When the turn ends,
 * relay asks the lease before it judges or records the turn, finds it another machine's, and
 * stops (exit 1, not a HOLD): the run stays journaled and no attempt is counted. Its next tick
 * settles the run from what the remote shows, as after a crash: set aside, not failed.
 *
 * Real time: about 45 s (the lease is renewed every 24 s, and asked again when a renewal is half
 * an interval overdue).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { AGENTS, all, exists, makeScene } from "./helpers/scene.ts";
import {
  briefs,
  expire,
  launched,
  outlivedLease,
  sleep,
  SPLIT_SHORT_LEASE,
  tick,
  waitForGo,
} from "./helpers/split_machines.ts";
import type { TaskRecord } from "../lib/state/tasks.ts";

/** The results of the attempts a task record holds, in order (none when there is no record). */
async function results(path: string): Promise<string[]> {
  const text = await Deno.readTextFile(path).catch(() => null);
  if (text === null) return [];
  const record: TaskRecord = JSON.parse(text);
  return record.rounds.flatMap((r) => r.attempts.map((x) => x.result));
}

Deno.test({
  name:
    "split machines: an executor turn that outlived its lease, while another machine did the task, is not counted as a failed attempt: the tick stops before judging it, and the next one sets the run aside",
  // The tick of machine A runs in the background while the other machines act.
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using scene = await makeScene({ config: SPLIT_SHORT_LEASE });
    // A's agent waits for `go`, then fails (exit 1: judged, a failed attempt); C's is honest.
    const agent = waitForGo("A", 300, "  exit 1\n") + `exec bash "${join(AGENTS, "good.sh")}" "$@"`;
    const { a, b, c, launches } = await briefs(scene, ["Outlived"], agent);
    // A's agent takes longer than the scene's 60 s turn limit: it waits through the hang.
    const profileA = await Deno.readTextFile(a.profile);
    await Deno.writeTextFile(a.profile, profileA.replaceAll("timeout: 60s", "timeout: 10m"));

    const go = join(scene.dir, "go");
    const aTick = tick(scene, a, "poll", { FAKE_GO: go });
    for (let i = 0; i < 600 && !(await launched(launches)).includes("task 1 A"); i++) {
      await sleep(100);
    }
    assert.deepEqual(await launched(launches), ["task 1 A"], "A's agent did not start");
    const started = Date.now();

    // A's lease runs out: C takes the executor's role and ships task 1; B merges it.
    await expire(scene, "executor");
    const shipped = await tick(scene, c, "poll");
    assert.match(shipped.stdout, /task 1 shipped/, all(shipped));
    const merged = await tick(scene, b, "review");
    assert.match(merged.stdout, /task 1 merged/, all(merged));

    // A's network hangs through its next renewal; it is back once the lease is overdue.
    const lost = await outlivedLease(scene, started, go, aTick, "executor");
    assert.doesNotMatch(lost.stderr, /HOLD/, all(lost));

    // Nothing of the turn was judged: the run is journaled, no attempt recorded, no HOLD.
    const records = join(a.dir, ".git", "relay");
    assert.ok(await exists(join(records, "journal.json")), "the run is still journaled");
    assert.equal(await exists(join(records, "hold.json")), false, "no HOLD on record");
    assert.deepEqual(await results(join(records, "tasks", "1.json")), []);

    // A's next tick holds the lease again, and sets the run aside: the task went on without it.
    const back = await tick(scene, a, "poll");
    assert.equal(back.code, 0, all(back));
    assert.match(
      back.stdout,
      /task 1: set aside this machine's run \S+ \(stopped after step "agent-finished"\), not resumed: the remote shows task 1 went on without this run/,
      all(back),
    );
    assert.deepEqual(await results(join(records, "tasks", "1.json")), ["superseded"]);
    assert.deepEqual(await launched(launches), ["task 1 A", "task 1 C"]);
  },
});
