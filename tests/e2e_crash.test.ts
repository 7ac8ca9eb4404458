/**
 * End to end: kill -9 at each step of the executor tick, then a clean tick —
 * nothing lost, nothing doubled. Each failpoint gets its own scene: queue and
 * promote a brief, `relay poll` with RELAY_FAILPOINT set (the process SIGKILLs
 * itself there), then plain `relay poll` until the task ships.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { STEPS } from "../lib/state/journal.ts";
import { EXECUTOR_TABLE } from "../lib/task/table.ts";
import { parseBrief } from "../lib/protocol/brief.ts";
import { checkReport } from "../lib/protocol/honesty.ts";
import { parseReport } from "../lib/protocol/report.ts";
import { brief, exists, makeScene, ROOT, type Scene, taskRecord } from "./helpers/scene.ts";

/** Points the tick passes through itself, before and while the agent runs. */
const FIXED_POINTS = [
  "after-lock",
  "after-worktree",
  "after-prepared",
  "agent-running",
  "after-report-saved",
];
/**
 * "after-<step>" for every journal step the tick advances through. "prepared"
 * has its own point above (it is written once, not advanced to), and
 * "agent-started" is journaled inside the agent's onStart, where the point is
 * "agent-running".
 */
const STEP_POINTS = STEPS.filter((s) => s !== "prepared" && s !== "agent-started").map((s) =>
  `after-${s}`
);
const POINTS = [...FIXED_POINTS, ...STEP_POINTS];

/** How long the fake agent sleeps when the tick is killed while it runs (seconds). */
const ORPHAN_SLEEP = "1";
/** Bound on the "busy" polls while the orphaned agent finishes. */
const MAX_BUSY_POLLS = 40;

function relayDir(scene: Scene): string {
  return join(scene.work, ".git", "relay");
}

async function listDir(path: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(path)) names.push(e.name);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return names.sort();
}

async function crashThenFinish(point: string): Promise<void> {
  await using scene = await makeScene();
  const count = join(scene.dir, "agent-count.txt");
  const orphaned = point === "agent-running";
  const env: Record<string, string> = orphaned
    ? { FAKE_COUNT_FILE: count, FAKE_SLEEP: ORPHAN_SLEEP }
    : { FAKE_COUNT_FILE: count };

  await scene.write(
    "brief.md",
    brief({ title: "Add the feature", bar: ["git ls-files src", "cat src/feature-1.txt"] }),
  );
  const add = await scene.relay(["inbox", "add", "brief.md"]);
  assert.equal(add.code, 0, add.stderr);
  await Deno.remove(join(scene.work, "brief.md"));
  const promote = await scene.relay(["promote"]);
  assert.equal(promote.code, 0, promote.stderr);

  const killed = await scene.relay(["poll"], { env: { ...env, RELAY_FAILPOINT: point } });
  assert.equal(
    killed.code,
    137,
    `poll with RELAY_FAILPOINT=${point} should die by SIGKILL\n${killed.stdout}${killed.stderr}`,
  );
  assert.doesNotMatch(killed.stdout, /shipped/, "the killed tick must not report a result");

  // The next ticks: "busy" while an orphaned agent still runs, then the finish.
  let finish = await scene.relay(["poll"], { env });
  const transcript = [finish.stdout + finish.stderr];
  for (let i = 0; i < MAX_BUSY_POLLS && /^\S+Z busy/m.test(finish.stdout); i++) {
    assert.ok(orphaned, `only an orphaned agent makes a tick busy:\n${transcript}`);
    assert.equal(finish.code, 0, finish.stderr);
    await new Promise((r) => setTimeout(r, 100));
    finish = await scene.relay(["poll"], { env });
    transcript.push(finish.stdout + finish.stderr);
  }
  assert.equal(finish.code, 0, transcript.join("\n---\n"));
  assert.match(finish.stdout, /task 1 shipped/, transcript.join("\n---\n"));
  if (orphaned) {
    // The finishing tick took the orphan's work as it was; it did not start the turn again.
    assert.match(finish.stderr, /ended while no tick watched it; not relaunching that turn/);
  }

  // The agent ran exactly once, including for a turn whose tick was killed.
  const launches = (await Deno.readTextFile(count)).split("\n").filter((l) => l !== "");
  assert.equal(launches.length, 1, `agent launches: ${launches.join(", ")}`);

  await scene.git(scene.work, ["fetch", "--quiet", "origin"]);
  const head = await scene.out(["rev-parse", "origin/task-1"]);
  // Exactly one product commit, the agent's, on the branch.
  assert.deepEqual(
    (await scene.out(["log", "--format=%s", "origin/main..origin/task-1"])).split("\n"),
    ["Task #1: add the feature"],
  );
  assert.deepEqual(
    (await scene.out(["diff", "--name-only", "origin/main...origin/task-1"])).split("\n"),
    ["src/feature-1.txt"],
  );
  // Exactly one paperwork commit on main, on top of the initial one.
  assert.deepEqual((await scene.out(["log", "--format=%s", "origin/main"])).split("\n"), [
    "Task #1: status — SHIPPED (task-1)",
    "initial",
  ]);
  assert.equal(
    await scene.out(["rev-parse", "main"]),
    await scene.out(["rev-parse", "origin/main"]),
  );
  assert.equal(await scene.out(["status", "--porcelain"]), "");

  // The report on main is valid for the brief and points at the pushed head.
  const done = parseBrief(await scene.out(["show", "origin/main:NEXT-STEPS.md"]), "NEXT-STEPS.md");
  assert.equal(done.status, "DONE");
  const report = parseReport(
    await scene.out(["show", "origin/main:COWORK-STATUS.md"]),
    "COWORK-STATUS.md",
  );
  assert.deepEqual(checkReport(report, done), []);
  assert.equal(report.outcome, "SHIPPED");
  assert.equal(report.head, head);
  assert.equal(report.pr, "task-1");
  assert.equal(report.evidence.length, 2);
  assert.ok(report.evidence.every((e) => e.exit === 0), JSON.stringify(report.evidence));

  // One PR record, at the pushed head; no journal left; one attempt on record.
  const state = relayDir(scene);
  assert.deepEqual(await listDir(join(state, "prs")), ["task-1.json"]);
  const pr = JSON.parse(await Deno.readTextFile(join(state, "prs", "task-1.json")));
  assert.equal(pr.head, head);
  assert.equal(await exists(join(state, "journal.json")), false, "the journal is archived");
  const record = await taskRecord(scene);
  assert.equal(record.version, 2);
  assert.deepEqual(record.rounds[0]!.attempts.map((a) => a.result), ["shipped"]);
  assert.equal(record.rounds[0]!.receipts.length, 1);

  // And the tick after that is idle and changes nothing.
  const before = await scene.snapshot();
  const idle = await scene.relay(["poll"], { env });
  assert.equal(idle.code, 0, idle.stderr);
  assert.equal(await scene.snapshot(), before);
  assert.equal((await Deno.readTextFile(count)).trim().split("\n").length, 1);
}

Deno.test("every failpoint in the tick is covered by a crash test", async () => {
  // The literal crash points of the executor's tick and its effect handlers, and the one the
  // driver fires after each step of the transition table is saved (agent-started aside: the
  // turn's own point, agent-running, is right after it).
  const files = [join(ROOT, "lib", "loop", "poll.ts")];
  for await (const e of Deno.readDir(join(ROOT, "lib", "loop", "effects"))) {
    files.push(join(ROOT, "lib", "loop", "effects", e.name));
  }
  const literal: string[] = [];
  for (const file of files) {
    const source = await Deno.readTextFile(file);
    literal.push(...[...source.matchAll(/failpoint\("([^"]+)"\)/g)].map((m) => m[1]!));
  }
  const stepped = Object.values(EXECUTOR_TABLE).flatMap((row) =>
    Object.values(row).flatMap((to) => typeof to === "string" ? [to] : [to.SHIPPED, to.BLOCKED])
  ).filter((step) => step !== "agent-started").map((step) => `after-${step}`);
  const inCode = new Set([...literal.filter((p) => !p.startsWith("review")), ...stepped]);
  assert.ok(inCode.size >= 8, `found only ${[...inCode].join(", ")}`);
  for (const point of inCode) assert.ok(POINTS.includes(point), `untested failpoint ${point}`);
  for (const point of POINTS) assert.ok(inCode.has(point), `no failpoint ${point} in the tick`);
});

for (const point of POINTS) {
  Deno.test(`relay poll killed by SIGKILL at "${point}" is finished by the next tick with nothing lost or doubled`, async () => {
    await crashThenFinish(point);
  });
}
