/**
 * The split of authority, checked on the code itself: nothing the executor
 * tick can load — statically or through a lazy import — reaches the planner's
 * forge (merge, close) or the review/gate modules.
 */
import assert from "node:assert/strict";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { GitHubExecutorForge } from "../lib/forge/github_executor.ts";
import { PlainExecutorForge } from "../lib/forge/plain_executor.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const IMPORT =
  /(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)|import\s+["']([^"']+)["']/g;

/** Every local module reachable from `entry` through static and literal dynamic imports. */
async function closure(entry: string): Promise<Set<string>> {
  const seen = new Set<string>();
  const queue = [resolve(ROOT, entry)];
  while (queue.length) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = (await Deno.readTextFile(file)).replace(/\/\*[\s\S]*?\*\//g, "").replace(
      /^\s*\/\/.*$/gm,
      "",
    );
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2] ?? m[3];
      if (spec?.startsWith(".")) queue.push(resolve(dirname(file), spec));
    }
  }
  return new Set([...seen].map((f) => relative(ROOT, f)));
}

const PLANNER_ONLY = [
  /^lib\/forge\/(plain|github)_planner\.ts$/,
  /^lib\/forge\/planner_forge\.ts$/,
  /^lib\/loop\/review\.ts$/,
  // The planner's effect handlers: observing, the reviewer's turn, the gate and the merge,
  // send-backs, promotion.
  /^lib\/loop\/effects\/(observe|review_turn|review_checkout|gate|verdicts|promotion)\.ts$/,
  /^lib\/gate\//,
];

for (const entry of ["lib/cli/poll.ts", "lib/loop/poll.ts", "lib/forge/executor_forge.ts"]) {
  Deno.test(`nothing ${entry} can load reaches the planner's merge capability`, async () => {
    const reached = await closure(entry);
    assert.ok(
      reached.has("lib/forge/types.ts") || entry === "lib/cli/poll.ts",
      "the walk follows imports",
    );
    const bad = [...reached].filter((f) => PLANNER_ONLY.some((re) => re.test(f)));
    assert.deepEqual(bad, [], `${entry} reaches planner-only modules`);
  });
}

Deno.test("the walk does see the planner modules from the reviewer's side (it is not blind)", async () => {
  const reached = await closure("lib/cli/review.ts");
  assert.ok(reached.has("lib/forge/plain_planner.ts"));
  assert.ok(reached.has(join("lib", "gate", "gate.ts")));
});

Deno.test("the executor's forge classes have no merge or close method", () => {
  for (const cls of [PlainExecutorForge, GitHubExecutorForge]) {
    for (const name of ["merge", "close", "recordVerdict"]) {
      assert.equal(name in cls.prototype, false, `${cls.name}.${name}`);
    }
  }
});
