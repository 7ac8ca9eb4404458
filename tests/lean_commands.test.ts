/**
 * `relay gate` and `relay audit` judge a 10,000-file PR and a 10,000-commit
 * history in about the time git takes (issue 10, goal 4): loading zod and yaml
 * alone costs more than that. Their static import graphs hold neither, and no
 * module of the full config parser; those load only for a config file the
 * light reader (lib/config/repo_load.ts) leaves to the full one. Nor any `node:`
 * module: the first one costs a Deno process ~15 ms (lib/path.ts, lib/cli/options.ts
 * stand in for node:path and node:util's parseArgs).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT } from "./helpers/scene.ts";
import { staticClosure } from "./helpers/static_imports.ts";
import { COMMANDS, OWN_MODULES } from "../lib/cli/dispatch.ts";
import { lazyModules } from "../scripts/compile.ts";

/** Config modules a lean command may load: the light reader and what it needs. */
const LIGHT_CONFIG = ["lib/config/duration.ts", "lib/config/repo_load.ts"];

/** What each command loads: lib/cli/dispatch.ts, the command's module, the modules it imports lazily. */
const LOADS: Record<string, string[]> = {
  gate: [
    "cli/gate.ts",
    "gate/load.ts",
    "gate/gate.ts",
    "gate/output.ts",
    "forge/planner_forge.ts",
    "forge/plain_executor.ts",
  ],
  audit: ["cli/audit.ts"],
};

for (const [command, modules] of Object.entries(LOADS)) {
  Deno.test(`relay ${command} statically loads no zod, yaml, full config parser or node: module`, async () => {
    const files = new Set<string>();
    const bare = new Set<string>();
    for (const module of ["cli/dispatch.ts", ...modules]) {
      const closure = await staticClosure(join(ROOT, "lib", module));
      for (const f of closure.files) files.add(f);
      for (const b of closure.bare) bare.add(b);
    }
    const closure = { files: [...files], bare: [...bare] };
    assert.ok(closure.files.includes("lib/config/repo_load.ts"), closure.files.join(", "));
    assert.ok(closure.files.includes("lib/path.ts"), closure.files.join(", "));
    assert.deepEqual(closure.bare, [], `relay ${command} loads these at start-up`);
    for (const file of closure.files) {
      if (file.startsWith("lib/config/")) {
        assert.ok(LIGHT_CONFIG.includes(file), `static import of ${file} by relay ${command}`);
      }
      assert.doesNotMatch(file, /(^|\/)(zod|yaml)/);
    }
  });
}

Deno.test("lib/cli/dispatch.ts loads modules only by computed specifier, and deno compile is told of each", async () => {
  const source = await Deno.readTextFile(join(ROOT, "lib", "cli", "dispatch.ts"));
  const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
  // A literal import() would have deno read that module's whole graph at every start.
  assert.deepEqual([...code.matchAll(/import\(\s*["'`]/g)].map((m) => m[0]), []);
  const named = [...code.matchAll(/loadModule\(\s*"([^"]+)"\s*\)/g)].map((m) => m[1]!);
  assert.ok(named.length > 0, "dispatch loads help.ts and report.ts by loadModule");
  for (const file of named) {
    assert.ok((OWN_MODULES as readonly string[]).includes(file), `${file} is in OWN_MODULES`);
  }
  const included = lazyModules();
  for (const file of [...OWN_MODULES, ...Object.values(COMMANDS).map(([f]) => f)]) {
    assert.ok(included.includes(`lib/cli/${file}`), `deno compile --include lib/cli/${file}`);
  }
});
