/**
 * `relay gate` and `relay audit` judge a 10,000-file PR and a 10,000-commit
 * history in about the time git takes (issue 10, goal 4): loading zod and yaml
 * alone costs more than that. Their static import graphs hold neither, and no
 * module of the full config parser; those load only for a config file the
 * light reader (lib/config/repo_load.ts) leaves to the full one.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT } from "./helpers/scene.ts";
import { staticClosure } from "./helpers/static_imports.ts";

/** Config modules a lean command may load: the light reader and what it needs. */
const LIGHT_CONFIG = ["lib/config/duration.ts", "lib/config/repo_load.ts"];

for (const command of ["gate", "audit"]) {
  Deno.test(`lib/cli/${command}.ts statically loads no zod, yaml or full config parser`, async () => {
    const closure = await staticClosure(join(ROOT, "lib", "cli", `${command}.ts`));
    assert.ok(closure.files.includes("lib/config/repo_load.ts"), closure.files.join(", "));
    for (const spec of closure.bare) {
      assert.ok(spec.startsWith("node:"), `static import of "${spec}" by relay ${command}`);
    }
    for (const file of closure.files) {
      if (file.startsWith("lib/config/")) {
        assert.ok(LIGHT_CONFIG.includes(file), `static import of ${file} by relay ${command}`);
      }
      assert.doesNotMatch(file, /(^|\/)(zod|yaml)/);
    }
  });
}
