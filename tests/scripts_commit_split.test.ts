import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const script = fileURLToPath(new URL("../scripts/commit-split.test.sh", import.meta.url));

const EXPECTED = [
  "ok - old protocol: paperwork on the branch conflicts with main, only on paperwork files",
  "ok - new protocol: product-only branch merges cleanly while main moves by paperwork",
  "ok - new protocol: two branches editing the same product line still conflict on index.html",
];

Deno.test("commit-split.test.sh shows paperwork-only conflicts vanish while real ones remain", async () => {
  // Run from an unrelated cwd: the script must not depend on where it is called from.
  const cwd = await Deno.makeTempDir({ prefix: "relay-commit-split-cwd-" });
  try {
    const out = await new Deno.Command("bash", {
      args: [script],
      cwd,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    const stderr = new TextDecoder().decode(out.stderr);
    const detail = `stdout:\n${stdout}\nstderr:\n${stderr}`;
    assert.equal(out.code, 0, detail);
    const lines = stdout.split("\n");
    for (const line of EXPECTED) assert.ok(lines.includes(line), `missing "${line}"\n${detail}`);
    assert.ok(!lines.some((l) => l.startsWith("not ok")), detail);
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});
