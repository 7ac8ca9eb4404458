/**
 * A task's timeline as the ticks write it: one FAIL, a fix round, a PASS and
 * the merge are one task with two rounds, and `relay show` tells it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { brief, makeScene, stateDir } from "./helpers/scene.ts";

Deno.test("relay show tells one task across its fix round: FAIL, the fix, PASS, the merge", async () => {
  await using scene = await makeScene();
  const env = { FAKE_FAIL_ONCE: join(scene.dir, "fail-once") };
  assert.equal(
    (await scene.relay(["inbox", "add", "-"], { stdin: brief({ title: "Greet" }) })).code,
    0,
  );
  assert.equal((await scene.relay(["promote"])).code, 0);
  for (const tick of ["poll", "review", "poll", "review"]) {
    const res = await scene.relay([tick], { env });
    assert.equal(res.code, 0, `${tick}: ${res.stdout}${res.stderr}`);
  }
  assert.match(await scene.out(["log", "-1", "--format=%s", "origin/main"]), /^Merge task-1/);

  const show = await scene.relay(["show", "1"]);
  assert.equal(show.code, 0, show.stderr);
  const text = show.stdout;
  const lines = text.split("\n");
  assert.equal(lines[0], "task 1 — Greet [task-1]");
  const round2 = lines.findIndex((l) => l.startsWith("round 2 (fix brief 2"));
  assert.ok(lines.indexOf("round 1 (brief 1)") === 1 && round2 > 1, text);
  const before = lines.slice(0, round2).join("\n");
  const after = lines.slice(round2).join("\n");
  assert.match(before, /attempt 1 of 2/);
  assert.match(before, /executor turn \S+, exit 0/);
  assert.match(before, /bar: 1\/1 passed/);
  assert.match(
    before,
    /verdict: FAIL at [0-9a-f]{12}\n\s+- \[blocker\] fails: the reviewer wants a second look/,
  );
  assert.match(before, /sent back as fix brief 2 \(round 2\)/);
  assert.match(after, /fix brief 2 opened \(fixes task 1\)/);
  assert.match(after, /verdict: PASS/);
  assert.match(after, /gate: MERGE/);
  assert.match(after, /merged [0-9a-f]{12} by relay/);

  // A fix brief's number shows its task; --json has the same two rounds.
  assert.match((await scene.relay(["show", "2"])).stdout, /brief 2 is a fix round of task 1/);
  const json = JSON.parse((await scene.relay(["show", "1", "--json"])).stdout);
  assert.deepEqual(json.rounds.map((r: { round: number; brief: number }) => [r.round, r.brief]), [
    [1, 1],
    [2, 2],
  ]);
  // One log for the task, appended to by both ticks; none for the fix brief's own number.
  const tasks = [...Deno.readDirSync(join(stateDir(scene), "tasks"))].map((e) => e.name);
  assert.ok(tasks.includes("1.events.jsonl"), tasks.join(", "));
  assert.ok(!tasks.includes("2.events.jsonl"), tasks.join(", "));
});
