/** The per-task event log: append and read back, whole lines under concurrent appenders, bad lines named. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT } from "./helpers/scene.ts";
import { InputError } from "../lib/errors.ts";
import {
  appendEvent,
  eventsPath,
  LOG_FIX,
  type NewEvent,
  readEvents,
  taskOfBrief,
  tasksWithEvents,
} from "../lib/task/log.ts";

/** A temporary git common dir, removed on dispose. */
async function commonDir(): Promise<AsyncDisposable & { path: string }> {
  const path = await Deno.makeTempDir({ prefix: "relay-log-" });
  return {
    path,
    [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }).catch(() => {}),
  };
}

const opened: NewEvent = {
  event: "brief-opened",
  run: "r1",
  role: "relay",
  brief: 1,
  round: 1,
  details: { title: "Add a greeting", branch: "task-1", kind: "task" },
};

Deno.test("appendEvent writes one line per event and readEvents reads them back in order", async () => {
  await using dir = await commonDir();
  assert.deepEqual(await readEvents(dir.path, 1), [], "no log yet: no events");
  await appendEvent(dir.path, 1, { ...opened, at: "2025-03-01T09:00:00.000Z" });
  await appendEvent(dir.path, 1, {
    event: "verdict",
    run: "r2",
    role: "reviewer",
    brief: 1,
    round: 1,
    details: {
      head: "b".repeat(40),
      verdict: "FAIL",
      findings: [{ severity: "blocker", text: "x" }],
    },
  });
  const path = eventsPath(dir.path, 1);
  assert.equal(path, join(dir.path, "relay", "tasks", "1.events.jsonl"));
  const text = await Deno.readTextFile(path);
  assert.equal(text.split("\n").length, 3, "two lines, each ending in a newline");

  const events = await readEvents(dir.path, 1);
  assert.deepEqual(events[0], {
    v: 1,
    at: "2025-03-01T09:00:00.000Z",
    run: "r1",
    role: "relay",
    event: "brief-opened",
    brief: 1,
    round: 1,
    details: { title: "Add a greeting", branch: "task-1", kind: "task" },
  });
  assert.equal(events[1]!.event, "verdict");
  assert.equal(events[1]!.role, "reviewer");
  assert.ok(Date.now() - Date.parse(events[1]!.at) < 60_000, "at defaults to now");
  assert.deepEqual(events[1]!.details.findings, [{ severity: "blocker", text: "x" }]);

  assert.deepEqual(await tasksWithEvents(dir.path), [1]);
});

Deno.test("readEvents keeps events it does not know and skips blank lines", async () => {
  await using dir = await commonDir();
  await appendEvent(dir.path, 2, { ...opened, brief: 2 });
  const future = {
    v: 1,
    at: "2025-03-01T09:00:00Z",
    run: null,
    role: "person",
    event: "something-new",
    brief: 2,
    round: 1,
    details: { what: 1 },
  };
  await Deno.writeTextFile(eventsPath(dir.path, 2), `\n${JSON.stringify(future)}\n`, {
    append: true,
  });
  const events = await readEvents(dir.path, 2);
  assert.deepEqual(events.map((e) => e.event), ["brief-opened", "something-new"]);
  assert.equal(events[1]!.run, null);
});

Deno.test("a line that is not JSON, or not an event, is bad input naming the file, the line and the fix", async () => {
  await using dir = await commonDir();
  await appendEvent(dir.path, 1, opened);
  const path = eventsPath(dir.path, 1);
  await Deno.writeTextFile(path, '{"v": 1, "at": "2025-03-01T0', { append: true });
  await assert.rejects(
    () => readEvents(dir.path, 1),
    (err: unknown) => {
      assert.ok(err instanceof InputError);
      assert.equal(err.location.file, path);
      assert.equal(err.location.line, 2);
      assert.match(err.message, /:2: Cannot read the task's event log: the line is not JSON/);
      assert.equal(err.fix, LOG_FIX);
      return true;
    },
  );

  const line = JSON.parse(await Deno.readTextFile(path).then((t) => t.split("\n")[0]!));
  await Deno.writeTextFile(
    path,
    `${JSON.stringify(line)}\n${JSON.stringify({ ...line, role: "robot" })}\n`,
  );
  await assert.rejects(
    () => readEvents(dir.path, 1),
    (err: unknown) => {
      assert.ok(err instanceof InputError);
      assert.equal(err.location.line, 2);
      assert.equal(err.location.key, "role");
      assert.match(err.message, /fix: the log is append-only: move the file aside/);
      return true;
    },
  );
});

Deno.test("taskOfBrief finds the task a fix brief is a round of", async () => {
  await using dir = await commonDir();
  await appendEvent(dir.path, 1, opened);
  await appendEvent(dir.path, 1, { ...opened, brief: 3, round: 2 });
  await appendEvent(dir.path, 4, { ...opened, brief: 4 });
  assert.equal(await taskOfBrief(dir.path, 1), 1);
  assert.equal(await taskOfBrief(dir.path, 3), 1);
  assert.equal(await taskOfBrief(dir.path, 4), 4);
  assert.equal(await taskOfBrief(dir.path, 2), null);
  assert.deepEqual(await tasksWithEvents(dir.path), [1, 4]);
});

/** A process that appends `count` events with a long detail (so a torn write would show). */
function appender(dir: string, tag: string, count: number): Deno.ChildProcess {
  const url = new URL("../lib/task/log.ts", import.meta.url).href;
  const script = `
    const { appendEvent } = await import(${JSON.stringify(url)});
    for (let i = 0; i < ${count}; i++) {
      await appendEvent(${JSON.stringify(dir)}, 1, {
        event: "review-void", run: ${JSON.stringify(tag)}, role: "relay", brief: 1, round: 1,
        details: { why: ${
    JSON.stringify(tag)
  }.repeat(4000) + i + " " + Deno.env.get("RELAY_LOG_TEST_TOKEN") },
      });
    }`;
  return new Deno.Command(Deno.execPath(), {
    args: ["eval", `--config=${join(ROOT, "deno.json")}`, script],
    env: { RELAY_LOG_TEST_TOKEN: "Sk-test-9f8e7d6c5b4a" },
    stdout: "null",
    stderr: "piped",
  }).spawn();
}

Deno.test("two processes appending at once never break a line, and secrets are redacted", async () => {
  await using dir = await commonDir();
  const count = 150;
  const children = [appender(dir.path, "a", count), appender(dir.path, "b", count)];
  for (const child of children) {
    const out = await child.output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  }
  const text = await Deno.readTextFile(eventsPath(dir.path, 1));
  assert.doesNotMatch(text, /Sk-test-9f8e7d6c5b4a/);
  assert.match(text, /\[redacted:RELAY_LOG_TEST_TOKEN\]/);
  const events = await readEvents(dir.path, 1); // every line parses
  assert.equal(events.length, 2 * count);
  for (const tag of ["a", "b"]) {
    const mine = events.filter((e) => e.run === tag).map((e) => e.details.why as string);
    assert.equal(mine.length, count);
    mine.forEach((why, i) => assert.ok(why.startsWith(`${tag.repeat(4000)}${i} `), `${tag} ${i}`));
  }
});
