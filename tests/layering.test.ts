/**
 * The layout of lib/, checked on the code itself: every folder has a rank, and
 * a module imports (statically or through a literal dynamic import) only from
 * its own folder or from folders of a lower rank. A low-level module that
 * reached up (the gate into the loop for the bar runner, the agent runner into
 * the loop for its log) would tie the layers into one knot.
 */
import assert from "node:assert/strict";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { modulesUnder } from "./helpers/static_imports.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const LIB = join(ROOT, "lib");

/** Lower imports nothing above it. `lib/errors.ts` sits below everything. */
const RANK: Record<string, number> = {
  "": 0, // lib/errors.ts
  proc: 1, // subprocesses, liveness, redaction, log lines
  git: 2, // one Git object per tree; push outcomes
  state: 3, // relay's records under .git/relay/
  config: 3, // the operator profile and .relay/config.yaml
  protocol: 4, // the brief, the report, the verdict: parsers and writers
  bar: 5, // running the verification bar
  forge: 5, // PRs on plain git or GitHub
  agents: 6, // presets, prompts, the agent runner, demo agents
  gate: 6, // the merge gate
  task: 7, // the task state machine: state, events, pure decisions
  loop: 8, // the ticks: the driver and the effect handlers
  cli: 9, // one file per command
};

const IMPORT =
  /(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)|import\s+["']([^"']+)["']/g;

/** The lib/ folder a module is in ("" for a file directly in lib/). */
function folder(path: string): string {
  const rel = relative(LIB, path).split(/[\\/]/);
  return rel.length > 1 ? rel[0]! : "";
}

Deno.test("every lib/ folder has a rank", async () => {
  const folders = new Set((await modulesUnder(LIB)).map(folder));
  const missing = [...folders].filter((f) => !(f in RANK));
  assert.deepEqual(missing, [], `give these folders a rank in tests/layering.test.ts: ${missing}`);
});

Deno.test("no module in lib/ imports from a folder of its own rank or above (except its own folder)", async () => {
  const bad: string[] = [];
  let edges = 0;
  for (const file of await modulesUnder(LIB)) {
    const from = folder(file);
    const text = (await Deno.readTextFile(file)).replace(/\/\*[\s\S]*?\*\//g, "").replace(
      /^\s*\/\/.*$/gm,
      "",
    );
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2] ?? m[3];
      if (!spec?.startsWith(".")) continue;
      const to = folder(resolve(dirname(file), spec));
      if (to === from) continue;
      edges++;
      if (RANK[to]! >= RANK[from]!) {
        bad.push(
          `${relative(ROOT, file)} (${from}, rank ${RANK[from]}) imports ${spec} (${to}, rank ${
            RANK[to]
          })`,
        );
      }
    }
  }
  assert.ok(edges > 100, `the walk saw only ${edges} imports across folders`);
  assert.deepEqual(bad, []);
});
