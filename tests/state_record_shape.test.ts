/**
 * The hand-written check of a task record (lib/state/record_shape.ts) lets a
 * record through only when the zod schema would too, and returns it only when
 * zod's result is the same record: checked on a record with every field, and
 * on every variant of it with one field removed, retyped or added.
 */
import assert from "node:assert/strict";
import { isPlainTaskRecord } from "../lib/state/record_shape.ts";
import { buildSchemas, TASK_RECORD_VERSION } from "../lib/state/tasks.ts";

const FINDING = { severity: "minor", text: "a nit" };
const FULL = {
  version: TASK_RECORD_VERSION,
  task: 3,
  rounds: [{
    round: 1,
    brief: 3,
    attempts: [
      { runId: "r1", brief: "d1", started: "t", result: "shipped" },
      { runId: "r2", brief: "d1", started: "t", result: "failed", reason: "why" },
    ],
    receipts: [
      { stage: "implementation", runId: "r1", at: "t", result: "SHIPPED" },
      {
        stage: "review",
        runId: "r3",
        at: "t",
        result: "PASS",
        head: "h",
        tree: "t",
        base: "b",
        detail: "d",
      },
    ],
  }],
  review: {
    task: 3,
    branch: "task-3",
    verdicts: [{
      runId: "r3",
      at: "t",
      reportTask: 3,
      head: "h",
      tree: "t",
      main: "m",
      verdict: "PASS",
      findings: [FINDING],
      stale: false,
      revalidations: [{ main: "m2", mergeTree: "mt", passed: true, at: "t" }],
    }],
    voids: [{ runId: "r0", at: "t", why: "w" }],
    fixes: [
      { task: 4, at: "t", head: "h0" },
      { task: 5, at: "t", head: "h0", why: "w", findings: [FINDING] },
    ],
    merged: { sha: "s", at: "t", by: "relay" },
    closed: { head: "h", at: "t", reason: "r" },
    human: { head: "h", at: "t", files: ["a", "b"] },
    previewWait: { head: "h", since: "t" },
    stages: [{
      stage: "docs",
      runId: "r5",
      at: "t",
      reportTask: 3,
      head: "h",
      tree: "t",
      result: "SKIPPED",
      findings: [],
      detail: "d",
    }],
  },
  config: { version: 1, at: "t", anything: { kept: true } },
  verifications: [{
    at: "t",
    head: "h",
    tree: "t",
    file: "f",
    sha256: "x",
    name: "n",
    text: "y",
  }],
  notes: [{ at: "t", text: "x", delivered: { runId: "r", role: "executor", at: "t" } }],
  plans: [{ runId: "r", at: "t", brief: "d", result: "FAIL", findings: [FINDING], by: "tick" }],
};

type Json = unknown;

/** Every variant of `value` with one thing changed at one place. */
function* variants(value: Json): Generator<Json> {
  const replacements: Json[] = [null, 0, 1, -1, 2.5, "", "x", "PASS", true, [], {}, [1]];
  for (const r of replacements) yield r;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      yield value.filter((_, j) => j !== i);
      for (const inner of variants(value[i])) {
        yield value.map((item, j) => j === i ? inner : item);
      }
    }
  } else if (value !== null && typeof value === "object") {
    const obj = value as Record<string, Json>;
    yield { ...obj, unknown: 1 };
    for (const key of Object.keys(obj)) {
      const { [key]: _, ...rest } = obj;
      yield rest;
      for (const inner of variants(obj[key])) yield { ...obj, [key]: inner };
    }
  }
}

Deno.test("isPlainTaskRecord() passes only what zod passes, and zod returns it unchanged", async () => {
  const schema = (await buildSchemas()).get("v2")!;
  const minimal = { version: TASK_RECORD_VERSION, task: 1, rounds: [], review: null };
  for (const record of [FULL, minimal]) {
    assert.equal(isPlainTaskRecord(record, TASK_RECORD_VERSION), true);
    const parsed = schema.safeParse(record);
    assert.ok(parsed.success);
    assert.deepEqual(parsed.data, record);
  }
  let passed = 0;
  let total = 0;
  for (const record of variants(FULL)) {
    total++;
    if (!isPlainTaskRecord(record, TASK_RECORD_VERSION)) continue;
    passed++;
    const parsed = schema.safeParse(record);
    assert.ok(parsed.success, `passed by hand, refused by zod: ${JSON.stringify(record)}`);
    assert.deepEqual(parsed.data, record, JSON.stringify(record));
  }
  // Both ways are exercised: removing an optional field passes, most changes do not.
  assert.ok(passed > 20 && passed < total / 4, `${passed} of ${total} variants passed`);
});
