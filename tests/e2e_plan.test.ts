/**
 * The plan stage, end to end with fake agents: `relay plan <task>` judges a
 * queued brief before any work (findings into its inbox file on a FAIL, a PASS
 * recorded against the brief as it is); with plan_review on, promotion waits
 * for that PASS, and the review tick runs the plan review itself before it
 * promotes the next brief — a FAIL there is a HOLD on that task.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  all,
  brief,
  exists,
  makeScene,
  type Scene,
  stateDir,
  taskRecord,
} from "./helpers/scene.ts";

async function queue(scene: Scene, title: string): Promise<string> {
  const res = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title }) });
  assert.equal(res.code, 0, all(res));
  return /\((\.relay\/inbox\/[^)]+)\)/.exec(res.stdout)![1]!;
}

async function lines(file: string): Promise<string[]> {
  return (await Deno.readTextFile(file).catch(() => "")).split("\n").filter((l) => l);
}

Deno.test("relay plan: a FAIL writes the findings into the queued brief and promotion waits; an edited brief that passes is promoted", async () => {
  await using scene = await makeScene({ config: "plan_review: true\n" });
  await scene.setStage("plan", "blocks-once.sh");
  const env = {
    FAKE_STAGE_LOG: join(scene.dir, "stages.log"),
    FAKE_STAGE_MARK: join(scene.dir, "plan-failed"),
  };
  const file = await queue(scene, "Greet");
  const main = await scene.out(["rev-parse", "origin/main"]);

  // plan_review is on: nothing is promoted before a plan review.
  const early = await scene.relay(["promote"]);
  assert.equal(early.code, 1, all(early));
  assert.match(
    early.stdout,
    /not promoting: task 1 waits for its plan review \(plan_review is on\): relay plan 1/,
  );

  const before = await scene.snapshot();
  const failed = await scene.relay(["plan", "1"], { env });
  assert.equal(failed.code, 1, all(failed));
  assert.match(
    failed.stdout,
    /plan review FAIL for task 1: the findings are under "## Plan review" in \.relay\/inbox\/0001-greet\.md/,
  );
  assert.match(failed.stdout, /\[blocker\] plan: the greeting is built from user input/);
  // It ran on main, read-only, as the plan stage; only the inbox file changed.
  assert.deepEqual(await lines(env.FAKE_STAGE_LOG), [`plan ${main}`]);
  const queued = await scene.read(file);
  assert.match(queued, /^Status: QUEUED$/m);
  assert.match(
    queued,
    /## Plan review\n\nrelay's plan review FAILED this brief \(run \S+, \S+; round 1 of 2\)\. Answer each finding/,
  );
  assert.match(
    queued,
    /- \[blocker\] plan: the greeting is built from user input without escaping/,
  );
  assert.equal(await scene.snapshot(), before);
  const record = await taskRecord(scene, 1);
  assert.equal(record.plans?.length, 1);
  assert.equal(record.plans![0]!.result, "FAIL");
  assert.equal(record.plans![0]!.by, "person");
  assert.match(
    JSON.stringify(record.rounds[0]!.receipts),
    /"stage":"plan","runId":"[^"]+","at":"[^"]+","result":"FAIL"/,
  );

  const still = await scene.relay(["promote"]);
  assert.equal(still.code, 1, all(still));
  assert.match(
    still.stdout,
    /task 1 failed its plan review: answer the findings under "## Plan review"/,
  );

  // The person answers the findings: an edited brief is a new brief, and this one passes.
  await scene.write(
    file,
    queued.replace("- src/feature-N.txt exists.", "- `git ls-files src` lists src/feature-1.txt."),
  );
  const passed = await scene.relay(["plan", "1"], { env });
  assert.equal(passed.code, 0, all(passed));
  assert.match(
    passed.stdout,
    /plan review PASS for task 1 \(brief [0-9a-f]{12}\): it may be promoted/,
  );
  assert.doesNotMatch(await scene.read(file), /## Plan review/);
  const promoted = await scene.relay(["promote"]);
  assert.equal(promoted.code, 0, all(promoted));
  assert.match(await scene.read("NEXT-STEPS.md"), /^Status: OPEN\nTask: 1\n/);
  assert.match(await scene.read("NEXT-STEPS.md"), /git ls-files src` lists src\/feature-1\.txt/);
  // The start line says the plan stage ran for this task.
  const poll = await scene.relay(["poll"], { env });
  assert.match(poll.stdout, /plan rounds 2, exec rounds/);
});

Deno.test("plan_review on: the review tick reviews the next brief before it promotes it; a FAIL is a HOLD on that task", async () => {
  await using scene = await makeScene({ config: "plan_review: true\n" });
  await scene.setStage("plan", "passes.sh");
  const env = {
    FAKE_STAGE_LOG: join(scene.dir, "stages.log"),
    FAKE_STAGE_MARK: join(scene.dir, "plan-failed"),
  };
  await queue(scene, "First");
  assert.equal((await scene.relay(["plan", "1"], { env })).code, 0);
  assert.equal((await scene.relay(["promote"])).code, 0);
  await queue(scene, "Second");
  await queue(scene, "Third");
  assert.equal((await scene.relay(["poll"], { env })).code, 0);

  // Task 1 merges; the tick reviews task 2's brief (it passes) and promotes it.
  const merged = await scene.relay(["review"], { env });
  assert.equal(merged.code, 0, all(merged));
  assert.match(merged.stdout, /task 1 merged \([0-9a-f]{12}\); promoted task 2/);
  assert.equal((await lines(env.FAKE_STAGE_LOG)).filter((l) => l.startsWith("plan ")).length, 2);
  assert.equal((await taskRecord(scene, 2)).plans![0]!.by, "tick");

  // Task 3's plan review fails: the tick stops for a person, task 3 stays queued with the findings.
  await scene.setStage("plan", "blocks-once.sh");
  assert.equal((await scene.relay(["poll"], { env })).code, 0);
  const held = await scene.relay(["review"], { env });
  assert.equal(held.code, 3, all(held));
  assert.match(
    all(held),
    /task 3 failed its plan review: the findings are under "## Plan review" in \.relay\/inbox\/0003-third\.md/,
  );
  assert.match(all(held), /relay resume/);
  const hold = JSON.parse(await Deno.readTextFile(join(stateDir(scene), "hold.json")));
  assert.equal(hold.task, 3);
  assert.match(await scene.read(".relay/inbox/0003-third.md"), /## Plan review/);
  assert.match(await scene.read("NEXT-STEPS.md"), /^Status: DONE\nTask: 2\n/);
});

Deno.test("relay plan leaves another task's reviewer-side turn on record alone: it is the review tick's to settle", async () => {
  await using scene = await makeScene();
  await queue(scene, "Greet");
  const journal = join(stateDir(scene), "review-journal.json");
  const orphan = {
    version: 1,
    runId: "20260101T000000.000Z-abcdef-review7-t1",
    task: 7,
    pid: 999999,
    started: "2026-01-01T00:00:00.000Z",
    worktree: join(scene.dir, "gone"),
    uncertain: { at: "2026-01-01T00:01:00.000Z", why: "ended while no tick watched it" },
  };
  await Deno.mkdir(stateDir(scene), { recursive: true });
  await Deno.writeTextFile(journal, JSON.stringify(orphan));
  const res = await scene.relay(["plan", "1"]);
  assert.equal(res.code, 1, all(res));
  assert.match(
    res.stdout,
    /not reviewed now: the reviewer turn of task 7 \(run \S+review7-t1\) is on record as uncertain; relay review settles it first/,
  );
  assert.deepEqual(JSON.parse(await Deno.readTextFile(journal)), orphan);
  // No plan review ran, so none is on record.
  assert.equal(await exists(join(stateDir(scene), "tasks", "1.json")), false);
});

Deno.test("kill -9 during a plan turn: waited for while it runs, then uncertain (never replayed by itself) until resume --retry-uncertain", async () => {
  await using scene = await makeScene({ config: "plan_review: true\n" });
  await scene.setStage("plan", "waits.sh");
  const go = join(scene.dir, "go");
  await queue(scene, "Greet");
  const killed = await scene.relay(["plan", "1"], {
    env: { FAKE_STAGE_GO: go, RELAY_FAILPOINT: "plan-running" },
  });
  assert.equal(killed.code, 137, all(killed));
  const busy = await scene.relay(["plan", "1"], { env: { FAKE_STAGE_GO: go } });
  assert.equal(busy.code, 1, all(busy));
  assert.match(busy.stdout, /busy: the reviewer from an interrupted tick is still running/);
  await Deno.writeTextFile(go, "");
  let held = await scene.relay(["plan", "1"], { env: { FAKE_STAGE_GO: go } });
  for (let i = 0; i < 50 && held.code === 1; i++) {
    await new Promise((r) => setTimeout(r, 200));
    held = await scene.relay(["plan", "1"], { env: { FAKE_STAGE_GO: go } });
  }
  assert.equal(held.code, 3, all(held));
  assert.match(all(held), /uncertain plan stage turn: run \S+plan1-t1/);
  assert.match(all(held), /relay inbox drop 1/);
  assert.equal(await exists(join(stateDir(scene), "tasks", "1.json")), false);
  const retry = await scene.relay(["resume", "--retry-uncertain"]);
  assert.equal(retry.code, 0, all(retry));
  const again = await scene.relay(["plan", "1"], { env: { FAKE_STAGE_GO: go } });
  assert.equal(again.code, 0, all(again));
  assert.match(again.stdout, /plan review PASS for task 1/);
});
