/**
 * `machines: split`: the executor and the reviewer on different machines that
 * share only a bare origin. Machine A runs only `relay poll`, machine B only
 * `relay review` (it is also where a person queues briefs), machine C races
 * both. A simulated minute starts all four ticks at the same moment and waits
 * for them; three queued briefs must end merged on origin/main, each task's
 * executor turn run once, each merge made once, nothing lost, and every tick
 * ending 0 (a tick that loses a lease race says busy).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { AGENTS, all, brief, exists, makeScene } from "./helpers/scene.ts";
import {
  briefs,
  countingAgent,
  expire,
  machine,
  machines,
  minutes,
  tick,
} from "./helpers/split_machines.ts";

const TASKS = 3;

Deno.test("split machines: A polls, B reviews, C races both; three briefs merge once each", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  // The executor notes each launch: task and machine.
  const { a, b, c, launches } = await machines(scene);

  // A person queues the briefs and promotes the first on B: B's next review tick commits
  // and pushes them (split mode: the reviewer's paperwork is its own).
  for (let i = 1; i <= TASKS; i++) {
    const res = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title: `Step ${i}` }) });
    assert.equal(res.code, 0, all(res));
  }
  const promote = await scene.relay(["promote"]);
  assert.equal(promote.code, 0, all(promote));

  const { merged, transcript } = await minutes(scene, { a, b, c }, TASKS);
  const story = transcript.join("\n");

  // Every task merged, each exactly once.
  const mergedTasks = merged.map((s) => Number(/^Merge task-(\d+):/.exec(s)?.[1])).sort();
  assert.deepEqual(mergedTasks, [1, 2, 3], `merges: ${merged.join(" | ")}\n${story}`);

  // Each task's executor turn ran exactly once (no fix rounds: the reviewer passes all).
  const lines = (await Deno.readTextFile(launches)).split("\n").filter((l) => l !== "");
  const perTask = (t: number) => lines.filter((l) => l.startsWith(`task ${t} `)).length;
  for (let t = 1; t <= TASKS; t++) assert.equal(perTask(t), 1, `launches: ${lines.join(", ")}`);
  // Only the executor machines ran it.
  assert.ok(lines.every((l) => / (A|C)$/.test(l)), lines.join(", "));

  // Nothing lost: every task branch's head is in main, with its feature file.
  const refs = await scene.out(["for-each-ref", "--format=%(refname)"], scene.origin);
  for (let t = 1; t <= TASKS; t++) {
    await scene.git(scene.origin, ["merge-base", "--is-ancestor", `task-${t}`, "main"]);
    const file = await scene.out(["show", `main:src/feature-${t}.txt`], scene.origin);
    assert.equal(file, `feature for task ${t}`);
    // The PR record lives on the origin, and says merged.
    assert.match(refs, new RegExp(`^refs/relay/prs/task-${t}$`, "m"));
    const record = JSON.parse(
      await scene.out(["log", "-1", "--format=%B", `refs/relay/prs/task-${t}`], scene.origin),
    );
    assert.equal(record.state, "merged", `record of task ${t}`);
    assert.equal(record.reviews?.length, 1, `one verdict on task ${t}'s record`);
  }
  // The leases are on the origin, and no tick left one held.
  for (const role of ["executor", "reviewer"]) {
    const lease = JSON.parse(
      await scene.out(["log", "-1", "--format=%B", `refs/relay/leases/${role}`], scene.origin),
    );
    assert.ok(lease.released, `${role} lease released: ${JSON.stringify(lease)}`);
  }
  // main is only paperwork commits and merges of task branches (first-parent history).
  const firstParent = (await scene.out(
    ["log", "--first-parent", "--format=%s", "main"],
    scene.origin,
  )).split("\n");
  for (const subject of firstParent) {
    assert.match(subject, /^(Merge task-\d+:|Task #\d+: (status|brief) — |relay: inbox|initial)/);
  }
  // Both roles really ran on more than one machine's behalf? At least: B reviewed, A or C polled.
  assert.match(story, /minute \d+ (A|C) poll: exit 0 task \d+ shipped/);
  // Local refs the machines keep (anchors) were never touched by the mirror fetch.
  for (const m of [a, b, c]) {
    const mine = await scene.out(["for-each-ref", "--format=%(refname)", "refs/relay/"], m.dir);
    assert.doesNotMatch(mine, /refs\/relay\/(prs|leases)\//, `${m.name}: ${mine}`);
  }
});

Deno.test("split machines: a FAIL's fix brief is the reviewer's own commit; an executor machine picks it up and the fix merges", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, c, launches } = await machines(scene);
  const add = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title: "Needs a fix" }) });
  assert.equal(add.code, 0, all(add));
  assert.equal((await scene.relay(["promote"])).code, 0);

  // The first review anywhere FAILs (once); every later one runs the bar and passes.
  const env = { FAKE_FAIL_ONCE: join(scene.dir, "failed-once") };
  const { merged, transcript } = await minutes(scene, { a, b, c }, 1, env);
  const story = transcript.join("\n");
  assert.deepEqual(merged.map((m) => /^Merge task-(\d+):/.exec(m)?.[1]), ["1"], story);
  assert.match(story, /(B|C) review: exit 0 task 1: sent back — fix brief 2/);

  // The original turn and the fix's turn: once each, on executor machines.
  const lines = (await Deno.readTextFile(launches)).split("\n").filter((l) => l !== "");
  assert.equal(lines.length, 2, lines.join(", "));
  assert.equal(lines.filter((l) => l.startsWith("task 1 ")).length, 1, lines.join(", "));
  assert.ok(lines.every((l) => / (A|C)$/.test(l)), lines.join(", "));

  // The fix brief reached main in the reviewer's own paperwork commit, before the fix ran.
  const subjects = await scene.out(["log", "--first-parent", "--format=%s", "main"], scene.origin);
  assert.match(subjects, /^Task #2: brief — OPEN \(task-1\)$/m, subjects);
  assert.match(subjects, /^Task #2: status — SHIPPED \(task-1\)$/m, subjects);
  // The record on the origin carries both verdicts, in order, and says merged.
  const record = JSON.parse(
    await scene.out(["log", "-1", "--format=%B", "refs/relay/prs/task-1"], scene.origin),
  );
  assert.equal(record.state, "merged");
  assert.deepEqual(
    record.reviews.map((r: { text: string }) => /Verdict: (PASS|FAIL)/.exec(r.text)?.[1]),
    ["FAIL", "PASS"],
  );
  // Every update of the record was a fast-forward: its history is a line of commits.
  const history = await scene.out(
    ["rev-list", "--count", "--min-parents=2", "refs/relay/prs/task-1"],
    scene.origin,
  );
  assert.equal(history, "0");
});

Deno.test("split machines: the executor brings its tree up to origin/main fast-forward only; a person's change in the way is a HOLD that says what to do, never a reset", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const launches = join(scene.dir, "launches.txt");
  await countingAgent(scene, launches);
  const b = await machine(scene, "B", scene.work);
  const a = await machine(scene, "A");
  // Someone works in A's tree; main then changes the same file.
  await Deno.writeTextFile(join(a.dir, "src", "app.txt"), "app v1, edited on A\n");
  await scene.write("src/app.txt", "app v2\n");
  await scene.git(scene.work, ["commit", "--quiet", "-am", "app v2"]);
  await scene.git(scene.work, ["push", "--quiet", "origin", "HEAD:main"]);
  const add = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title: "Blocked" }) });
  assert.equal(add.code, 0, all(add));
  assert.equal((await scene.relay(["promote"])).code, 0);
  // B's review tick commits and pushes the promotion.
  const review = await tick(scene, b, "review");
  assert.equal(review.code, 0, all(review));
  assert.match(
    await scene.out(["log", "-1", "--format=%s", "main"], scene.origin),
    /^Task #1: brief — OPEN \(task-1\)$/,
  );

  const head = await scene.out(["rev-parse", "HEAD"], a.dir);
  const poll = await tick(scene, a, "poll");
  assert.equal(poll.code, 3, all(poll));
  assert.match(poll.stderr, /Cannot fast-forward "main" in the primary tree to origin\/main/);
  assert.match(poll.stderr, /git stash push --include-untracked -- src\/app\.txt/);
  // Nothing was reset, nothing ran, and the lease was let go (no other machine waits on it).
  assert.equal(await Deno.readTextFile(join(a.dir, "src", "app.txt")), "app v1, edited on A\n");
  assert.equal(await scene.out(["rev-parse", "HEAD"], a.dir), head);
  assert.equal(await Deno.readTextFile(launches).catch(() => ""), "");
  const lease = async () =>
    JSON.parse(
      await scene.out(["log", "-1", "--format=%B", "refs/relay/leases/executor"], scene.origin),
    );
  assert.ok((await lease()).released, JSON.stringify(await lease()));
  // The HOLD on A's record is about A's tree, not the task: A's next tick lets the lease go
  // again, and another machine may do the task meanwhile.
  const again = await tick(scene, a, "poll");
  assert.equal(again.code, 3, all(again));
  assert.match(again.stderr, /Cannot fast-forward "main"/);
  assert.ok((await lease()).released, JSON.stringify(await lease()));
});

Deno.test("split machines: one machine's poll and review started at the same second, a brief to start: the poll starts it at once and the review follows it, neither waits out the other", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { c, launches } = await briefs(scene, ["Both ticks here"]);
  // Cron starts both ticks of machine C together: the poll holds the poll lock for its tick and
  // takes the review lock to prepare the attempt; the review needs both. Each waits up to 15 s
  // for the other: had the review taken the review lock first and then waited for the poll
  // lock, the two would wait on each other until the review gave up ("busy: relay poll is
  // running on this machine") and the poll had lost 15 s.
  for (let round = 1; round <= 3; round++) {
    const [poll, review] = await Promise.all([tick(scene, c, "poll"), tick(scene, c, "review")]);
    const story = `round ${round}\n--- poll\n${all(poll)}\n--- review\n${all(review)}`;
    assert.equal(poll.code, 0, story);
    assert.equal(review.code, 0, story);
    assert.doesNotMatch(review.stdout, /busy: relay poll is running on this machine/, story);
    assert.doesNotMatch(poll.stdout + poll.stderr, /held the review lock/, story);
    if (/merged/.test(review.stdout)) break;
  }
  const merged = await scene.out(["log", "--merges", "--format=%s", "main"], scene.origin);
  assert.match(merged, /^Merge task-1:/, merged);
  assert.equal((await Deno.readTextFile(launches)).trim(), "task 1 C");
});

Deno.test("split machines: a HOLD on the executor machine keeps its lease, so another machine never starts the task over", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  // The agent moves main itself: a HOLD on A's records, its attempt still journaled there.
  const { a, c, launches } = await briefs(
    scene,
    ["Held"],
    `exec bash "${join(AGENTS, "moves-main.sh")}" "$@"`,
  );

  const lease = async () =>
    JSON.parse(
      await scene.out(["log", "-1", "--format=%B", "refs/relay/leases/executor"], scene.origin),
    );
  const first = await tick(scene, a, "poll");
  assert.equal(first.code, 3, all(first));
  assert.match(first.stderr, /HOLD: /);
  // A's next ticks meet the HOLD (or the paperwork it stopped); each keeps the lease.
  for (let i = 0; i < 2; i++) {
    const again = await tick(scene, a, "poll");
    assert.equal(again.code, 3, all(again));
    const held = await lease();
    assert.equal(held.released, undefined, JSON.stringify(held));
    // C: busy, and no agent starts there.
    const other = await tick(scene, c, "poll");
    assert.equal(other.code, 0, all(other));
    assert.match(other.stdout, /busy: executor lease held by /, all(other));
  }
  assert.deepEqual((await Deno.readTextFile(launches)).trim().split("\n"), ["task 1 A"]);
});

Deno.test("split machines: a reviewer HOLD with no turn journaled keeps the reviewer's lease, so another machine never reviews past it", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, c } = await briefs(
    scene,
    ["Silent review"],
    `exec bash "${join(AGENTS, "good.sh")}" "$@"`,
  );
  assert.equal((await tick(scene, a, "poll")).code, 0);
  // The reviewer prints no verdict, twice: a HOLD on B's record, no review turn journaled.
  const reviewer = join(scene.dir, "reviewer-script");
  await Deno.writeTextFile(
    reviewer,
    (await Deno.readTextFile(reviewer)).replace(/honest\.sh$/, "silent.sh"),
  );
  const held = await tick(scene, b, "review");
  assert.equal(held.code, 3, all(held));
  assert.match(held.stderr, /no valid verdict twice/);
  assert.equal(
    await Deno.stat(join(scene.work, ".git", "relay", "review-journal.json")).then(
      () => true,
      () => false,
    ),
    false,
    "no review turn is journaled",
  );
  const lease = JSON.parse(
    await scene.out(["log", "-1", "--format=%B", "refs/relay/leases/reviewer"], scene.origin),
  );
  assert.equal(lease.released, undefined, JSON.stringify(lease));
  // C, with an honest reviewer, is busy: it neither reviews nor merges past B's HOLD.
  const other = await tick(scene, c, "review");
  assert.equal(other.code, 0, all(other));
  assert.match(other.stdout, /busy: reviewer lease held by /, all(other));
  assert.doesNotMatch(
    await scene.out(["log", "--format=%s", "main"], scene.origin),
    /^Merge /m,
  );
});

Deno.test("split machines: a failed attempt keeps the executor's lease, so its next attempt is the same machine's, on its own work, and the task's attempts are not started afresh elsewhere", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  // Commits work, then exits 1 with no report: a failed attempt (of 2) each time.
  const { a, c, launches } = await briefs(
    scene,
    ["Fails"],
    'mkdir -p src\necho "attempt on $FAKE_MACHINE" >> src/attempts.txt\ngit add src\ngit commit -qm "work of $FAKE_MACHINE"\nexit 1',
  );

  const first = await tick(scene, a, "poll");
  assert.equal(first.code, 1, all(first));
  assert.match(first.stdout + first.stderr, /attempt 1\/2 failed/);
  const other = await tick(scene, c, "poll");
  assert.equal(other.code, 0, all(other));
  assert.match(other.stdout, /busy: executor lease held by /, all(other));
  const second = await tick(scene, a, "poll");
  assert.match(all(second), /task 1 BLOCKED: 2 attempt\(s\) failed/, all(second));
  assert.deepEqual((await Deno.readTextFile(launches)).trim().split("\n"), [
    "task 1 A",
    "task 1 A",
  ]);
  // The BLOCKED report's branch carries both attempts' work, pushed for a person to see.
  const log = await scene.out(["log", "--format=%s", "task-1"], scene.origin);
  assert.equal(log.split("\n").filter((l) => l === "work of A").length, 2, log);
});

Deno.test("split machines: a reviewer killed after its verdict holds the reviewer's lease until it expires; another machine then merges once, and the killed one back lets the lease go", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, c } = await briefs(
    scene,
    ["Review crash"],
    `exec bash "${join(AGENTS, "good.sh")}" "$@"`,
  );
  assert.equal((await tick(scene, a, "poll")).code, 0);
  // B is killed (SIGKILL, by relay's failpoint) with its verdict recorded, its journal left.
  const killed = await tick(scene, b, "review", { RELAY_FAILPOINT: "review-after-verdict" });
  assert.equal(killed.code, 137, all(killed));
  const busy = await tick(scene, c, "review");
  assert.equal(busy.code, 0, all(busy));
  assert.match(busy.stdout, /busy: reviewer lease held by /, all(busy));
  await expire(scene, "reviewer");
  const took = await tick(scene, c, "review");
  assert.equal(took.code, 0, all(took));
  const merges = () => scene.out(["log", "--merges", "--format=%s", "main"], scene.origin);
  assert.match(await merges(), /^Merge task-1/, all(took));
  // B back: it sees C's merge for what it is, merges nothing, and its stale journal (the
  // verdict is on its record) no longer keeps the reviewer's lease here.
  const back = await tick(scene, b, "review");
  assert.equal(back.code, 0, all(back));
  assert.match(back.stderr, /task 1: task-1 was merged by relay on another machine/, all(back));
  assert.equal(await exists(join(b.dir, ".git", "relay", "review-journal.json")), false);
  const next = await tick(scene, c, "review");
  assert.equal(next.code, 0, all(next));
  assert.doesNotMatch(next.stdout, /busy: reviewer lease/, all(next));
  assert.equal((await merges()).split("\n").length, 1);
});
