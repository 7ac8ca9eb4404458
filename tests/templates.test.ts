/** The example files in relay/ are the protocol's own documentation: they must parse and pass the honesty rule. */
import assert from "node:assert/strict";
import { parseBrief } from "../lib/protocol/brief.ts";
import { checkReport } from "../lib/protocol/honesty.ts";
import { parseReport } from "../lib/protocol/report.ts";

const read = (name: string) => Deno.readTextFile(new URL(`../relay/${name}`, import.meta.url));

Deno.test("relay/NEXT-STEPS.md and relay/COWORK-STATUS.md parse, and the example report is a valid answer to the example brief", async () => {
  const brief = parseBrief(await read("NEXT-STEPS.md"), "relay/NEXT-STEPS.md");
  assert.equal(brief.status, "OPEN");
  assert.equal(brief.bar.length, 2);
  const report = parseReport(await read("COWORK-STATUS.md"), "relay/COWORK-STATUS.md");
  assert.deepEqual(checkReport(report, brief), []);
});

Deno.test("CLAUDE.md and AGENTS.md templates open with what the project is NOT", async () => {
  for (const name of ["CLAUDE.md", "AGENTS.md"]) {
    assert.match((await read(name)).split("\n")[0]!, /is NOT/);
  }
});
