/**
 * The idle fast path: cron runs `relay poll` 1,440 times a day, and when no
 * brief is open it must start no process and load neither zod nor yaml (nor
 * any config module). Proven twice: statically, by walking the import graph
 * that loads before any `await import(...)`, and at runtime, by running the
 * idle tick without the right to start a process, and with the right to write
 * its heartbeat only.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { brief, exists, makeScene, ROOT, type Scene, stateDir } from "./helpers/scene.ts";
import { staticClosure, staticSpecifiers } from "./helpers/static_imports.ts";

function assertLean(closure: { files: string[]; bare: string[] }): void {
  for (const spec of closure.bare) {
    assert.ok(spec.startsWith("node:"), `static import of "${spec}" on the idle path`);
  }
  for (const file of closure.files) {
    assert.ok(!file.startsWith("lib/config/"), `static import of ${file} on the idle path`);
    assert.doesNotMatch(file, /(^|\/)(zod|yaml)/);
  }
}

Deno.test("staticSpecifiers() reads import and export statements, not dynamic imports", () => {
  const source = [
    'import { a } from "./a.ts";',
    "import {",
    "  b,",
    "  type C,",
    '} from "../b.ts";',
    'import type { D } from "./d.ts";',
    'import * as e from "node:path";',
    'import "./side-effect.ts";',
    'export { f } from "./f.ts";',
    'export * from "./g.ts";',
    'export type { H } from "./h.ts";',
    'const { z } = await import("zod");',
    'const y = import("yaml");',
    '  const { w } = await import("./lazy.ts");',
    '/** import { q } from "./doc-comment.ts"; */',
    '// import { r } from "./line-comment.ts";',
    'const s = "import x from ./string.ts";',
  ].join("\n");
  assert.deepEqual(staticSpecifiers(source), [
    "./a.ts",
    "../b.ts",
    "./d.ts",
    "node:path",
    "./side-effect.ts",
    "./f.ts",
    "./g.ts",
    "./h.ts",
  ]);
});

Deno.test("main.ts statically loads only the idle poll's fast path: four small modules, no node: module", async () => {
  const closure = await staticClosure(join(ROOT, "main.ts"));
  assert.deepEqual(closure.files, [
    "lib/cli/idle.ts",
    "lib/protocol/status_line.ts",
    "lib/state/heartbeat.ts",
    "main.ts",
  ]);
  assert.deepEqual(closure.bare, []);
});

Deno.test("lib/cli/poll.ts statically imports no zod, yaml, npm: module or lib/config/ module", async () => {
  const closure = await staticClosure(join(ROOT, "lib", "cli", "poll.ts"));
  // The walk does reach the modules the idle check needs.
  for (
    const needed of ["lib/protocol/status_line.ts", "lib/state/paths.ts", "lib/git/discover.ts"]
  ) {
    assert.ok(closure.files.includes(needed), `${needed} not in ${closure.files.join(", ")}`);
  }
  assert.ok(!closure.files.includes("lib/loop/poll.ts"), "lib/loop/poll.ts must load lazily");
  assertLean(closure);
});

/**
 * `relay poll` with the relay permission set minus run: starting any process
 * would fail. `write` (default: only the poll's heartbeat, the one file the
 * idle tick writes) limits --allow-write, so any other write fails too.
 */
async function pollWithoutRun(
  scene: Scene,
  write: string | "any" = join(stateDir(scene), "heartbeat-poll"),
) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      `--config=${join(ROOT, "deno.json")}`,
      "--allow-read",
      write === "any" ? "--allow-write" : `--allow-write=${write}`,
      "--allow-env",
      "--allow-sys=hostname,uid",
      "--deny-run",
      join(ROOT, "main.ts"),
      "poll",
    ],
    cwd: scene.work,
    env: scene.env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

/** The poll's heartbeat: written within the last minute. */
async function assertBeat(scene: Scene): Promise<void> {
  const at = (await Deno.readTextFile(join(stateDir(scene), "heartbeat-poll"))).trim();
  assert.ok(Date.now() - Date.parse(at) < 60_000, `heartbeat-poll: ${at}`);
}

Deno.test("idle relay poll starts no process and writes only its heartbeat: exit 0 with --deny-run and --allow-write=<heartbeat>, with no NEXT-STEPS.md and with Status: DONE", async () => {
  await using scene = await makeScene();
  // The folder is relay's state folder, made by whichever tick runs first; the permission
  // covers the heartbeat file alone.
  await Deno.mkdir(stateDir(scene), { recursive: true });
  const before = await scene.snapshot();

  const absent = await pollWithoutRun(scene);
  assert.equal(absent.code, 0, absent.stderr);
  assert.equal(absent.stderr, "");
  assert.equal(await scene.snapshot(), before);
  await assertBeat(scene);

  await scene.write("NEXT-STEPS.md", brief({ task: 1, status: "DONE" }));
  await Deno.remove(join(stateDir(scene), "heartbeat-poll"));
  const doneBefore = await scene.snapshot();
  const done = await pollWithoutRun(scene);
  assert.equal(done.code, 0, done.stderr);
  assert.equal(done.stderr, "");
  assert.equal(await scene.snapshot(), doneBefore);
  await assertBeat(scene);
});

Deno.test("the idle poll's write allowance bites: a poll that records more than its heartbeat is refused that write", async () => {
  // The control for the write limit above: a Status relay does not know is a tick that
  // records its result (.git/relay/last-poll.json), which the allowance does not cover.
  await using scene = await makeScene();
  await Deno.mkdir(stateDir(scene), { recursive: true });
  await scene.write("NEXT-STEPS.md", "Status: OPNE\n");
  const res = await pollWithoutRun(scene);
  assert.equal(res.code, 2, res.stdout + res.stderr);
  assert.match(res.stderr, /cannot record the last poll in .*: Requires write access/);
  assert.ok(!(await exists(join(stateDir(scene), "last-poll.json"))), res.stderr);
});

Deno.test("relay poll with an open brief does need to start processes: --deny-run makes it fail", async () => {
  // The control for the test above: --deny-run really bites once the tick does work.
  await using scene = await makeScene();
  await scene.write(
    "NEXT-STEPS.md",
    brief({ task: 1, status: "OPEN", extraHeader: "Branch: task-1\nKind: feature" }),
  );
  const res = await pollWithoutRun(scene, "any");
  assert.equal(res.code, 1, res.stdout + res.stderr);
  // The tick's first process: git, or setsid(1) for a fetch in a session of its own.
  assert.match(res.stderr, /Requires run access to "(git|\/usr\/bin\/setsid)"/);
});

Deno.test("idle relay poll prints nothing when stdout is not a terminal", async () => {
  await using scene = await makeScene();
  for (const setup of [null, brief({ task: 1, status: "DONE" })]) {
    if (setup !== null) await scene.write("NEXT-STEPS.md", setup);
    const res = await scene.relay(["poll"]);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, "");
    assert.equal(res.stderr, "");
    const quiet = await scene.relay(["poll", "--quiet"]);
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.equal(quiet.stdout + quiet.stderr, "");
  }
});

Deno.test("idle relay poll --json prints {result: idle} and why", async () => {
  await using scene = await makeScene();
  const absent = await scene.relay(["poll", "--json"]);
  assert.equal(absent.code, 0, absent.stderr);
  const a = JSON.parse(absent.stdout);
  assert.equal(a.result, "idle");
  assert.match(a.message, /^idle: no NEXT-STEPS\.md$/);

  await scene.write("NEXT-STEPS.md", brief({ task: 1, status: "DONE" }));
  const done = await scene.relay(["poll", "--json"]);
  assert.equal(done.code, 0, done.stderr);
  const d = JSON.parse(done.stdout);
  assert.equal(d.result, "idle");
  assert.match(d.message, /^idle: NEXT-STEPS\.md is not OPEN$/);
  assert.equal(done.stderr, "");
});

Deno.test("idlePoll() answers only a plain idle poll, and leaves every other case to the full path", async () => {
  const { idlePoll } = await import("../lib/cli/idle.ts");
  const dir = await Deno.makeTempDir({ prefix: "relay-idle-" });
  try {
    const repo = join(dir, "repo");
    await Deno.mkdir(join(repo, ".git"), { recursive: true });
    await Deno.mkdir(join(repo, ".relay"), { recursive: true });
    await Deno.mkdir(join(repo, "src", "deep"), { recursive: true });
    const heartbeat = join(repo, ".git", "relay", "heartbeat-poll");
    const answer = async (argv: string[], cwd = repo) => {
      await Deno.remove(heartbeat).catch(() => {});
      const code = idlePoll(argv, cwd);
      assert.equal(await exists(heartbeat), code === 0, `heartbeat for ${argv.join(" ")}`);
      return code;
    };
    // Not set up (no .relay/config.yaml): the full path explains.
    assert.equal(await answer(["poll", "--quiet"]), null);
    await Deno.writeTextFile(join(repo, ".relay", "config.yaml"), "version: 1\n");
    // No brief, a DONE brief, a QUEUED one: idle, from the repository or below it, with -C.
    assert.equal(await answer(["poll", "--quiet"]), 0);
    await Deno.writeTextFile(join(repo, "NEXT-STEPS.md"), "Status: DONE\nTask: 1\n");
    assert.equal(await answer(["poll", "-q"]), 0);
    assert.equal(await answer(["poll"], join(repo, "src", "deep")), 0);
    assert.equal(await answer(["-C", repo, "--profile", "/p.yaml", "poll", "--quiet"], dir), 0);
    assert.equal(await answer(["-C", "repo", "--profile=/p.yaml", "poll", "--quiet"], dir), 0);
    // Everything else is the full path's.
    for (
      const argv of [
        ["poll", "--json"],
        ["poll", "--merge-policy", "human"],
        ["poll", "--help"],
        ["poll", "--quit"],
        ["review", "--quiet"],
        ["-C"],
        ["-C", join(dir, "nowhere"), "poll", "--quiet"],
        ["--version"],
      ]
    ) {
      assert.equal(await answer(argv), null, argv.join(" "));
    }
    await Deno.writeTextFile(join(repo, "NEXT-STEPS.md"), "Status: OPEN\nTask: 2\n");
    assert.equal(await answer(["poll", "--quiet"]), null);
    await Deno.writeTextFile(join(repo, "NEXT-STEPS.md"), "Status: OPNE\nTask: 2\n");
    assert.equal(await answer(["poll", "--quiet"]), null, "a Status typo is bad input");
    await Deno.writeTextFile(join(repo, "NEXT-STEPS.md"), "Task: 2\nTitle: no Status line\n");
    assert.equal(await answer(["poll", "--quiet"]), null, "a brief with no Status is bad input");
    await Deno.writeTextFile(join(repo, "NEXT-STEPS.md"), "\n");
    assert.equal(await answer(["poll", "--quiet"]), 0, "an empty brief file is no brief");
    await Deno.writeTextFile(join(repo, "NEXT-STEPS.md"), "Status: DONE\n");
    await Deno.mkdir(join(repo, ".git", "relay"), { recursive: true });
    await Deno.writeTextFile(join(repo, ".git", "relay", "journal.json"), "{}");
    assert.equal(await answer(["poll", "--quiet"]), null, "a tick left unfinished");
    // A linked worktree (its .git is a file): the full path refuses it.
    const linked = join(dir, "linked");
    await Deno.mkdir(join(linked, ".relay"), { recursive: true });
    await Deno.writeTextFile(join(linked, ".git"), `gitdir: ${repo}/.git/worktrees/linked\n`);
    await Deno.writeTextFile(join(linked, ".relay", "config.yaml"), "version: 1\n");
    assert.equal(idlePoll(["poll", "--quiet"], linked), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
