import assert from "node:assert/strict";
import { readStatus } from "../lib/protocol/status_line.ts";

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
