/** End to end: cron ticks that overlap must not run the agent twice. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { brief, makeScene } from "./helpers/scene.ts";

const TICKS = 10;

/** What one `relay poll` said: its result word, from the line it printed. */
function outcome(res: { code: number; stdout: string; stderr: string }): string {
  // Off a terminal the result line starts with the time (UTC): drop it.
  // The tick that starts the task says its start line first.
  const out = res.stdout.trim().split("\n").at(-1)!.replace(
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ /,
    "",
  );
  if (/^task 1 shipped/.test(out)) return "shipped";
  if (/^busy:/.test(out)) return "busy";
  // The idle tick prints nothing unless stdout is a terminal (cron mails any output).
  if (out === "") return "idle";
  return `unexpected: ${out} ${res.stderr}`;
}

Deno.test("10 relay poll ticks started at once run the agent exactly once", async () => {
  await using scene = await makeScene();
  const count = join(scene.dir, "agent-count.txt");
  await scene.write("brief.md", brief({ title: "Add the feature", bar: ["git ls-files src"] }));
  const add = await scene.relay(["inbox", "add", "brief.md"]);
  assert.equal(add.code, 0, add.stderr);
  await Deno.remove(join(scene.work, "brief.md"));
  const promote = await scene.relay(["promote"]);
  assert.equal(promote.code, 0, promote.stderr);

  const env = { FAKE_COUNT_FILE: count, FAKE_SLEEP: "1" };
  const results = await Promise.all(
    Array.from({ length: TICKS }, () => scene.relay(["poll"], { env })),
  );
  const transcript = results.map((r, i) => `#${i} exit ${r.code}: ${r.stdout}${r.stderr}`).join(
    "\n",
  );

  for (const res of results) assert.equal(res.code, 0, transcript);
  const kinds = results.map(outcome);
  assert.equal(kinds.filter((k) => k === "shipped").length, 1, transcript);
  assert.ok(
    kinds.every((k) => k === "shipped" || k === "busy" || k === "idle"),
    transcript,
  );

  const launches = (await Deno.readTextFile(count)).split("\n").filter((l) => l !== "");
  assert.equal(launches.length, 1, `agent launches: ${launches.join(", ")}`);

  await scene.git(scene.work, ["fetch", "--quiet", "origin"]);
  assert.deepEqual((await scene.out(["log", "--format=%s", "origin/main"])).split("\n"), [
    "Task #1: status — SHIPPED (task-1)",
    "initial",
  ]);
  assert.deepEqual(
    (await scene.out(["log", "--format=%s", "origin/main..origin/task-1"])).split("\n"),
    ["Task #1: add the feature"],
  );
  const state = join(scene.work, ".git", "relay");
  await assert.rejects(Deno.stat(join(state, "journal.json")), Deno.errors.NotFound);
  const prs: string[] = [];
  for await (const e of Deno.readDir(join(state, "prs"))) prs.push(e.name);
  assert.deepEqual(prs, ["task-1.json"]);
});
