/**
 * .github/workflows/release.yml, read as data: each release target is built on a
 * runner of its own platform and the binary is run there before it is uploaded,
 * and nothing is published before every build passed. This cannot run Actions;
 * it checks the file's shape against scripts/compile.ts, deno.json and
 * lib/cli/init.ts, so the three cannot drift apart silently.
 */
import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { parse } from "yaml";
import { ROOT } from "./helpers/scene.ts";
import { compileArgs, lazyModules, outputPath, RELEASE_TARGETS } from "../scripts/compile.ts";
import { COMMANDS, OWN_MODULES } from "../lib/cli/dispatch.ts";
import { INIT_FILES } from "../lib/cli/init.ts";
import { CONFIG_FILE } from "../lib/state/paths.ts";

type Step = {
  name?: string;
  uses?: string;
  run?: string;
  if?: unknown;
  "continue-on-error"?: unknown;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
};
type Job = {
  needs?: string | string[];
  "runs-on"?: string;
  if?: unknown;
  "continue-on-error"?: unknown;
  permissions?: Record<string, string>;
  strategy?: { "fail-fast"?: boolean; matrix?: { include?: Record<string, string>[] } };
  defaults?: { run?: { shell?: string } };
  env?: Record<string, string>;
  steps?: Step[];
};
type Workflow = { permissions?: Record<string, string>; jobs: Record<string, Job> };

async function workflow(): Promise<Workflow> {
  return parse(await Deno.readTextFile(join(ROOT, ".github", "workflows", "release.yml")));
}

type Platform = { os: string; arch: string };

/** What a GitHub-hosted runner label runs on; null for a label this test does not know. */
function runnerPlatform(label: string): Platform | null {
  if (/^ubuntu-(latest|\d+\.\d+)$/.test(label)) return { os: "linux", arch: "x86_64" };
  if (/^ubuntu-\d+\.\d+-arm$/.test(label)) return { os: "linux", arch: "aarch64" };
  // macos-14 and later (and -latest) are Apple silicon; Intel is macos-13 or macos-N-intel.
  if (/^macos-(latest|1[4-9]|[2-9]\d)$/.test(label)) return { os: "darwin", arch: "aarch64" };
  if (/^macos-(13|\d+-intel)$/.test(label)) return { os: "darwin", arch: "x86_64" };
  if (/^windows-(latest|\d{4})$/.test(label)) return { os: "windows", arch: "x86_64" };
  if (/^windows-\d+-arm$/.test(label)) return { os: "windows", arch: "aarch64" };
  return null;
}

/** The platform of a `deno compile --target` triple. */
function targetPlatform(target: string): Platform {
  const arch = target.split("-")[0]!;
  const os = target.includes("-linux-")
    ? "linux"
    : target.endsWith("-apple-darwin")
    ? "darwin"
    : target.includes("-windows-")
    ? "windows"
    : "";
  assert.ok(os !== "", `unknown target "${target}"`);
  return { os, arch };
}

function needs(job: Job): string[] {
  return job.needs === undefined ? [] : typeof job.needs === "string" ? [job.needs] : job.needs;
}

/** Every job `name` waits for, directly or through another job. */
function upstream(jobs: Record<string, Job>, name: string, seen = new Set<string>()): Set<string> {
  for (const n of needs(jobs[name]!)) {
    if (!seen.has(n)) {
      seen.add(n);
      upstream(jobs, n, seen);
    }
  }
  return seen;
}

/** The one job that uploads the binaries. */
function buildJob(wf: Workflow): [string, Job] {
  const found = Object.entries(wf.jobs).filter(([, job]) =>
    (job.steps ?? []).some((s) => s.uses?.startsWith("actions/upload-artifact@"))
  );
  assert.equal(found.length, 1, `one job uploads the binaries, found: ${found.map(([n]) => n)}`);
  return found[0]!;
}

function stepIndex(steps: Step[], what: string, test: (s: Step) => boolean): number {
  const found = steps.flatMap((s, i) => test(s) ? [i] : []);
  assert.equal(found.length, 1, `exactly one build step ${what}; found ${found.length}`);
  return found[0]!;
}

Deno.test("release.yml builds every release target on a runner of its own platform, once", async () => {
  const [, build] = buildJob(await workflow());
  assert.equal(build["runs-on"], "${{ matrix.runner }}");
  assert.equal(build.strategy?.["fail-fast"], true);
  const entries = build.strategy?.matrix?.include ?? [];
  for (const target of RELEASE_TARGETS) {
    const mine = entries.filter((e) => e.target === target);
    assert.equal(mine.length, 1, `${target}: ${mine.length} matrix entries, want exactly one`);
    const entry = mine[0]!;
    const runner = runnerPlatform(entry.runner ?? "");
    assert.ok(runner, `${target}: "${entry.runner}" is not a GitHub-hosted runner label we know`);
    assert.deepEqual(runner, targetPlatform(target), `${target} is built on ${entry.runner}`);
    assert.equal(entry.binary, basename(outputPath(target)), `${target}: the binary's name`);
  }
  const extra = entries.filter((e) => !(RELEASE_TARGETS as readonly string[]).includes(e.target!));
  assert.deepEqual(extra, [], "matrix entries for targets scripts/compile.ts does not release");
  assert.equal(build.env?.TARGET, "${{ matrix.target }}");
  assert.equal(build.env?.BINARY, "${{ matrix.binary }}");
  assert.equal(build.defaults?.run?.shell, "bash", "one bash script on every runner, Windows too");
});

Deno.test("each build compiles with -P=relay and relay/, runs version, guard print, init and demo on that binary, then uploads it", async () => {
  const [, build] = buildJob(await workflow());
  const steps = build.steps ?? [];
  const compile = stepIndex(
    steps,
    "compiles",
    (s) => s.run?.includes('deno task compile "$TARGET"') ?? false,
  );
  const check = stepIndex(
    steps,
    "checks the compile flags",
    (s) => s.run?.includes(" compile -P=relay ") ?? false,
  );
  const run = stepIndex(
    steps,
    "runs the binary",
    (s) => s.run?.includes('"./$BINARY" demo') ?? false,
  );
  const upload = stepIndex(
    steps,
    "uploads",
    (s) => s.uses?.startsWith("actions/upload-artifact@") ?? false,
  );
  assert.ok(compile < check && check < run && run < upload, "compile, check, run, then upload");
  for (const i of [compile, check, run, upload]) {
    assert.equal(steps[i]!.if, undefined, `step ${i} runs unconditionally`);
    assert.equal(steps[i]!["continue-on-error"], undefined, `step ${i} stops the job on failure`);
  }
  assert.equal(build["continue-on-error"], undefined);

  // The flags deno compile was given, as scripts/compile.ts printed them, for each target:
  // the check's fixed strings are the start (the permission set, relay/, the command line)
  // and the end (target, output, entry point) of that line.
  const patterns = [...steps[check]!.run!.matchAll(/grep -F -- "([^"]+)"/g)].map((m) => m[1]!);
  assert.equal(patterns.length, 2, "the check greps the compile log for two fixed strings");
  for (const e of build.strategy!.matrix!.include!) {
    const line = ` ${compileArgs(e.target!).join(" ")}`;
    const [start, end] = patterns.map((p) =>
      p.replaceAll("$TARGET", e.target!).replaceAll("$BINARY", e.binary!)
    );
    assert.ok(line.startsWith(start!), `${e.target}: compile flags start with ${start}`);
    assert.match(start!, /^ compile -P=relay --include relay\/ --include lib\/cli\/dispatch\.ts /);
    assert.ok(line.endsWith(end!), `${e.target}: compile flags end with ${end}`);
    assert.equal(end, ` --target ${e.target} -o dist/${e.binary} main.ts`);
  }

  const script = steps[run]!.run!;
  assert.match(script, /cp "dist\/\$BINARY" "\$trial\/"/, "the binary under test is the one built");
  assert.match(script, /mv relay "\$RUNNER_TEMP\/relay-source"/, "relay/ leaves the checkout");
  const order = [
    '"./$BINARY" version',
    '"./$BINARY" guard print',
    "--profile profile.yaml init",
    '"./$BINARY" demo',
  ].map(
    (cmd) => script.indexOf(cmd),
  );
  assert.ok(order.every((at, i) => at > 0 && (i === 0 || at > order[i - 1]!)), `order: ${order}`);
  assert.match(script, /"relay \$\{TAG#v\} \("\*\) ;;/, "version must print the tag's version");
  assert.equal(steps[run]!.env?.TAG, "${{ github.ref_name }}");

  // init's files are compared byte for byte with relay/: the list is init's own.
  const listed = script.match(/for f in ([^;]+); do/)?.[1]?.trim().split(/\s+/);
  const templated = INIT_FILES.filter((f) => f !== CONFIG_FILE && !f.endsWith(".gitkeep"));
  assert.deepEqual(listed, templated, "the init check covers every file init writes from relay/");

  assert.equal(steps[upload]!.with?.path, "dist/${{ matrix.binary }}");
  assert.equal(steps[upload]!.with?.["if-no-files-found"], "error");
});

Deno.test("nothing is published before every build passed", async () => {
  const wf = await workflow();
  const [buildName] = buildJob(wf);
  assert.deepEqual(wf.permissions, { contents: "read" }, "the workflow itself can write nothing");
  const publishes = (s: Step) =>
    /\bgh release\b|\bnpm publish\b|\bgit push\b|\bgit tag\b/.test(s.run ?? "") ||
    /release|publish/i.test(s.uses ?? "");
  const publishers = Object.entries(wf.jobs).filter(([, job]) => (job.steps ?? []).some(publishes));
  assert.ok(publishers.length > 0, "some job publishes the release");
  for (const [name, job] of publishers) {
    assert.ok(upstream(wf.jobs, name).has(buildName), `${name} publishes and needs ${buildName}`);
    assert.equal(job.if, undefined, `${name} runs only when everything it needs succeeded`);
  }
  for (const [name, job] of Object.entries(wf.jobs)) {
    if (job.permissions?.contents === "write") {
      assert.ok(upstream(wf.jobs, name).has(buildName), `${name} can write and needs the build`);
    }
  }
  assert.ok(upstream(wf.jobs, buildName).has("test"), "the build waits for the test suite");
  // The test job checks what CI checks: formatting, lint and types, then the suite.
  const runs = (wf.jobs.test!.steps ?? []).flatMap((s) => s.run ? [s.run] : []);
  assert.deepEqual(runs, ["deno task check", "deno task test"]);
});

Deno.test("the binary carries deno.json's relay permission set (no net, no ffi) and relay/", async () => {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  const relay = config.permissions?.relay;
  assert.ok(relay, 'deno.json has a "relay" permission set');
  for (const key of ["net", "ffi", "all", "import"]) {
    assert.ok(!(key in relay), `the relay permission set must not grant "${key}"`);
  }
  assert.match(config.tasks.relay, /\s-P=relay\s/, "deno task relay runs with the same set");
  for (const target of RELEASE_TARGETS) {
    const args = compileArgs(target);
    assert.equal(args[0], "compile");
    assert.ok(args.includes("-P=relay"), `${target}: -P=relay`);
    const included = args.flatMap((a, i) => a === "--include" ? [args[i + 1]] : []);
    // The templates, the command line main.ts imports by a computed specifier, and each
    // module the command line imports that way: every command's, the help, the error report.
    assert.deepEqual(included, ["relay/", ...lazyModules()], `${target}: --include`);
    const modules = new Set(
      Object.values(COMMANDS).map(([file]) => `lib/cli/${file}`).concat(
        OWN_MODULES.map((f) => `lib/cli/${f}`),
        "lib/cli/dispatch.ts",
      ),
    );
    assert.deepEqual(new Set(included.slice(1)), modules, `${target}: every lazy module`);
    const wide = args.filter((a) => /^(-A|--allow-|-[NRWESI]\b|--unstable)/.test(a));
    assert.deepEqual(wide, [], `${target}: no permission beyond the set`);
  }
});

Deno.test("every template relay reads is in relay/, which the binary embeds", async () => {
  const templates = await Deno.readTextFile(join(ROOT, "lib", "cli", "templates.ts"));
  assert.match(templates, /new URL\(`\.\.\/\.\.\/relay\/\$\{name\}`, import\.meta\.url\)/);
  const names = new Set(
    INIT_FILES.filter((f) => f !== CONFIG_FILE && !f.endsWith(".gitkeep")).map((f) => basename(f)),
  );
  for (const file of ["demo.ts", "guard.ts"]) {
    const text = await Deno.readTextFile(join(ROOT, "lib", "cli", file));
    const used = [...text.matchAll(/readTemplate\("([^"]+)"\)/g)].map((m) => m[1]!);
    assert.ok(used.length > 0, `${file} reads a template`);
    for (const name of used) names.add(name);
  }
  for (const name of names) {
    const info = await Deno.stat(join(ROOT, "relay", name));
    assert.ok(info.isFile, `relay/${name}`);
  }
});
