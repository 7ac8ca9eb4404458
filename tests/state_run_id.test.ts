import assert from "node:assert/strict";
import { runId } from "../lib/state/run_id.ts";

Deno.test("runId() never repeats within the same second and keeps what it names at the end", () => {
  const ids = Array.from({ length: 2000 }, () => runId("review7-t1"));
  assert.equal(new Set(ids).size, ids.length);
  for (const id of ids.slice(0, 5)) {
    assert.match(id, /^\d{8}T\d{6}\.\d{3}Z-[0-9a-f]{6}-review7-t1$/);
  }
});
