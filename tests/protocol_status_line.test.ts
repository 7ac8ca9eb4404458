import assert from "node:assert/strict";
import { readHeaderField, readHeaderTask, readStatus } from "../lib/protocol/status_line.ts";

Deno.test("readStatus() reads the status from a canonical first line", () => {
  assert.equal(readStatus("Status: OPEN\nTask: 1\n"), "OPEN");
  assert.equal(readStatus("Status: DONE\n"), "DONE");
  assert.equal(readStatus("Status: QUEUED"), "QUEUED");
});

Deno.test("readStatus() tolerates a BOM, CRLF, trailing spaces and any case", () => {
  assert.equal(readStatus("\uFEFFStatus: OPEN\r\nTask: 1\r\n"), "OPEN");
  assert.equal(readStatus("status: open   \nTask: 1"), "OPEN");
  assert.equal(readStatus("STATUS:done\t\r\n"), "DONE");
  assert.equal(readStatus("  Status :  Queued  "), "QUEUED");
});

Deno.test("readStatus() returns null when the first line is not a Status line", () => {
  assert.equal(readStatus(""), null);
  assert.equal(readStatus("\nStatus: OPEN\n"), null);
  assert.equal(readStatus("# Brief\nStatus: OPEN\n"), null);
  assert.equal(readStatus("Status: WIP\n"), null);
  assert.equal(readStatus("Status: OPEN now\n"), null);
  assert.equal(readStatus("Statuses: OPEN\n"), null);
});

Deno.test("readStatus() looks only at the first line", () => {
  assert.equal(readStatus("Status: DONE\nStatus: OPEN\n"), "DONE");
});

Deno.test("status_line.ts imports nothing", async () => {
  const source = await Deno.readTextFile(
    new URL("../lib/protocol/status_line.ts", import.meta.url),
  );
  assert.doesNotMatch(source, /^\s*import\b/m);
});

Deno.test("readHeaderField() reads a header field of a brief or report, not a line of its body", () => {
  const brief =
    "\uFEFFStatus: OPEN\r\nTask: 12\r\nBranch: task-4\r\nkind:  fix \r\n\r\n## Goal\r\nTask: 99\r\n";
  assert.equal(readHeaderField(brief, "Branch"), "task-4");
  assert.equal(readHeaderField(brief, "KIND"), "fix");
  assert.equal(readHeaderTask(brief), 12);
  assert.equal(readHeaderTask("Status: DONE\n\nTask: 3\n"), null);
  assert.equal(readHeaderTask("Task: three\n"), null);
  assert.equal(readHeaderField(null, "task"), null);
});
