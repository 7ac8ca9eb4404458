/**
 * Every `git status` relay runs names how it treats submodules. Without it, git runs a status
 * inside each submodule under that submodule's own config, which an agent can write (a clean
 * filter there runs as relay: see NO_SUBMODULE_STATUS in lib/git/git.ts). The e2e tests show
 * the filter never running for the calls a turn reaches; this look covers every call, and the
 * next one written.
 */
import assert from "node:assert/strict";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { modulesUnder } from "./helpers/static_imports.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** A `"status"` argument followed by an option: the start of a git status argv. */
const STATUS_CALL = /"status",\s*(?:"--|NO_SUBMODULE_STATUS)/g;

Deno.test("every git status in lib/ says how it treats submodules", async () => {
  const bare: string[] = [];
  let calls = 0;
  for (const file of await modulesUnder(join(ROOT, "lib"))) {
    const text = await Deno.readTextFile(file);
    for (const m of text.matchAll(STATUS_CALL)) {
      calls++;
      const argv = text.slice(m.index, text.indexOf("]", m.index));
      if (!/NO_SUBMODULE_STATUS|"--ignore-submodules=(?:dirty|all)"/.test(argv)) {
        const line = text.slice(0, m.index).split("\n").length;
        bare.push(`${relative(ROOT, file)}:${line}`);
      }
    }
  }
  assert.ok(calls >= 15, `found only ${calls} git status calls: has the pattern gone stale?`);
  assert.deepEqual(bare, [], "add NO_SUBMODULE_STATUS (lib/git/git.ts) to these git status calls");
});
