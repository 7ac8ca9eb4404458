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
import { dirname, join } from "node:path";
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

/** The static import closure of lib/cli/dispatch.ts and `modules` (under lib/) together. */
async function closureOf(
  modules: readonly string[],
): Promise<{ files: Set<string>; bare: Set<string> }> {
  const files = new Set<string>();
  const bare = new Set<string>();
  for (const module of ["cli/dispatch.ts", ...modules]) {
    const closure = await staticClosure(join(ROOT, "lib", module));
    for (const f of closure.files) files.add(f);
    for (const b of closure.bare) bare.add(b);
  }
  return { files, bare };
}

for (const [command, modules] of Object.entries(LOADS)) {
  Deno.test(`relay ${command} statically loads no zod, yaml, full config parser or node: module`, async () => {
    const { files, bare } = await closureOf(modules);
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

/**
 * The cycle's working ticks (inbox add, promote, poll, review) load neither zod nor yaml:
 * ~80 ms of each start on a 2-core machine, more than a tick's own work on a small repo.
 * `.relay/config.yaml` is read by repo_load.ts and the operator profile by profile_load.ts;
 * the full parsers load only for a file those leave to them (to explain it, or to read what
 * they do not). Each command's modules: its own, then those it imports lazily on a cycle's
 * working path (the set a bench cycle loads, from `deno run --coverage`).
 */
const TICK_LOADS: Record<string, string[]> = {
  "inbox add": ["cli/idle.ts", "cli/inbox.ts", "loop/inbox.ts"],
  promote: [
    "cli/idle.ts",
    "cli/promote.ts",
    "state/lock.ts",
    "loop/promote.ts",
    "loop/plan_gate.ts",
    "config/repo_load.ts",
  ],
  poll: [
    "cli/idle.ts",
    "cli/poll.ts",
    "state/last_tick.ts",
    "loop/poll.ts",
    "cli/tick.ts",
    "state/pause.ts",
    "loop/split.ts",
    "loop/unpublished.ts",
    "loop/notify.ts",
    "config/profile_load.ts",
  ],
  review: [
    "cli/idle.ts",
    "cli/review.ts",
    "loop/review.ts",
    "cli/tick.ts",
    "state/pause.ts",
    "loop/split.ts",
    "loop/review_journal.ts",
    "loop/notify.ts",
    "state/json_file.ts",
    "loop/notes.ts",
    "config/profile_load.ts",
  ],
};

/** The full parsers and what only they need. */
const FULL_CONFIG = /^lib\/config\/(repo|profile|yaml_source|zod_types|issues)\.ts$/;

for (const [command, modules] of Object.entries(TICK_LOADS)) {
  Deno.test(`relay ${command} statically loads no zod, yaml, full config parser or node: module, nor do the modules it loads lazily`, async () => {
    const { files, bare } = await closureOf(modules);
    assert.deepEqual([...bare], [], `relay ${command} loads these at start-up`);
    for (const file of files) {
      assert.doesNotMatch(file, FULL_CONFIG, `static import of ${file} by relay ${command}`);
      assert.doesNotMatch(file, /(^|\/)(zod|yaml)/);
    }
    if (command === "poll" || command === "review") {
      // The walk is not blind: the ticks do read both files, with the light readers.
      assert.ok(files.has("lib/config/repo_load.ts"), [...files].join(", "));
      assert.ok(files.has("lib/config/profile_load.ts"), [...files].join(", "));
      assert.ok(files.has("lib/loop/effects/attempt.ts") || command === "review");
      assert.ok(files.has("lib/loop/effects/observe.ts") || command === "poll");
    }
  });
}

/**
 * Where relay may load a `node:` module, and why: each is off the working ticks' path. Any
 * other module uses lib/path.ts, which on POSIX loads nothing.
 */
const NODE_ALLOWED: Record<string, string> = {
  "lib/path.ts": "on Windows only: node's win32 path functions",
  "lib/cli/crontab.ts": "relay init and schedule: PATH's delimiter, the binary's file URL",
  "lib/cli/cron_path.ts": "relay init, schedule and doctor: PATH's delimiter, the temp folder",
  "lib/cli/demo.ts": "relay demo: the bundled templates' file URL",
  "lib/proc/hash.ts":
    "a file of 16 MB or more, hashed a chunk at a time: an agent CLI's binary (at a task's start, in relay probe, before each turn in strict mode), a large file of a repository nested in the primary tree",
};

Deno.test("no module under lib/ loads a node: module, statically or lazily, but those allowed", async () => {
  // Any quoted `node:<name>`, comments included: no comment stripping to fool (a glob such as
  // "refs/*" in a string reads as a comment's start), and no import form to miss (a side-effect
  // import, a template literal, whitespace before the parenthesis).
  const found = new Set<string>();
  for await (const file of walkTs(join(ROOT, "lib"))) {
    const code = await Deno.readTextFile(file);
    if (/["'`]node:[a-z_/]+["'`]/.test(code)) found.add(file.slice(ROOT.length + 1));
  }
  assert.ok(found.size > 0, "the walk saw lib/path.ts's import of node:path");
  assert.deepEqual([...found].sort(), Object.keys(NODE_ALLOWED).sort());
});

async function* walkTs(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* walkTs(path);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}

/**
 * The lazy imports those modules make that would load zod, yaml or a full parser: each only
 * for a rare case, never on a cycle's working path (a bench cycle loads none of them).
 */
const RARE_LAZY: Record<string, string> = {
  "lib/config/repo_load.ts -> ./repo.ts": "a config file the light reader leaves to the full one",
  "lib/config/profile_load.ts -> ./profile.ts": "a profile the light reader leaves to the full one",
  "lib/forge/executor_forge.ts -> ./github_executor.ts": "forge: github",
  "lib/forge/planner_forge.ts -> ./github_planner.ts": "forge: github",
  "lib/loop/effects/preview.ts -> ../../forge/gh.ts": "preview: github-deployments",
  "lib/state/tasks.ts -> zod": "a task record not in the shape relay writes",
  "lib/task/log.ts -> zod": "reading a task's event log (relay show, report), not appending",
};

Deno.test("the working ticks' lazy imports load zod, yaml or a full config parser only for a rare case", async () => {
  const LAZY = /import\(\s*["']([^"']+)["']\s*\)/g;
  const heavy = async (from: string, spec: string): Promise<boolean> => {
    if (spec === "zod" || spec === "yaml") return true;
    if (!spec.startsWith(".")) return false;
    const c = await staticClosure(join(ROOT, dirname(from), spec));
    return c.bare.some((b) => b === "zod" || b === "yaml") ||
      c.files.some((f) => FULL_CONFIG.test(f));
  };
  const seen = new Set<string>();
  for (const modules of Object.values(TICK_LOADS)) {
    for (const module of ["cli/dispatch.ts", ...modules]) {
      for (const file of (await staticClosure(join(ROOT, "lib", module))).files) {
        const code = (await Deno.readTextFile(join(ROOT, file)))
          .replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
        for (const m of code.matchAll(LAZY)) {
          if (!(await heavy(file, m[1]!))) continue;
          const site = `${file} -> ${m[1]}`;
          assert.ok(site in RARE_LAZY, `${site} loads zod, yaml or a full parser: is it rare?`);
          seen.add(site);
        }
      }
    }
  }
  // The list names no site that is gone.
  assert.deepEqual([...seen].sort(), Object.keys(RARE_LAZY).sort());
});

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
