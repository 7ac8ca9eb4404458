/**
 * README's test command on a machine with only Node/npm and git: a test that needs a missing tool is
 * ignored (the rest of its file still runs), and `.ci/run` installs nothing (but Chromium, as root
 * with apt-get, for the HTML report's browser test) and reports the skips.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT } from "./helpers/scene.ts";
import { probeTool } from "./helpers/tools.ts";

const decode = (b: Uint8Array) => new TextDecoder().decode(b);

Deno.test("probeTool() answers null for a program that is not installed, and never throws", async () => {
  assert.equal(await probeTool("relay-no-such-program-x9"), null);
  assert.equal(await probeTool("sh", ["-c", "exit 3"]), null);
  assert.equal(await probeTool("sh", ["-c", "echo here"]), "here\n");
});

Deno.test("test files load without gh or python3 on PATH and show the tests that need them as ignored", async () => {
  await using tmp = await tempDir();
  // A PATH with nothing on it: the filtered tests are the ones that need a missing program.
  const empty = join(tmp.path, "bin");
  await Deno.mkdir(empty);
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "test",
      "-P=test",
      "--no-check",
      "--filter",
      "/^(the installed gh documents every flag|acceptance part 1: )/",
      "tests/forge_github.test.ts",
      "tests/scripts_acceptance.test.ts",
    ],
    cwd: ROOT,
    env: { ...Deno.env.toObject(), PATH: empty, NO_COLOR: "1" },
    clearEnv: true,
    stdin: "null",
  }).output();
  const text = decode(out.stdout) + decode(out.stderr);
  assert.equal(out.code, 0, text);
  assert.match(
    text,
    /the installed gh documents every flag and JSON field relay sends \.\.\. ignored/,
  );
  assert.match(text, /acceptance part 1: .* \.\.\. ignored/);
  assert.match(text, /^ok \| 0 passed \| 0 failed \| 2 ignored/m, text);
});

// --- .ci/run, with stand-ins for deno, npx, npm and apt-get ---------------------------------------

async function tempDir(): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.realPath(await Deno.makeTempDir({ prefix: "relay-ci-" }));
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

/** The programs .ci/run itself needs, linked from this machine; no deno, gh, npm or apt-get. */
const SYSTEM_TOOLS = [
  "bash",
  "env",
  "sed",
  "grep",
  "awk",
  "head",
  "tail",
  "tee",
  "mktemp",
  "rm",
  "dirname",
  "cat",
];

/** Stand-ins that log their argv to $CI_CALLS; npx replays $CI_TEST_LOG for `task test`. */
const STANDIN = `#!/usr/bin/env bash
echo "\${0##*/} $*" >> "$CI_CALLS"
case "$*" in
  *"task test"*) cat "$CI_TEST_LOG"; exit "\${CI_TEST_CODE:-0}" ;;
  *--version*) echo "deno 2.9.6 (stable, release, x86_64-unknown-linux-gnu)" ;;
esac
exit 0
`;

/** `id -u` answers $CI_UID: whether .ci/run runs as root is the test's choice, not the machine's. */
const ID = `#!/usr/bin/env bash
echo "\${CI_UID:-1000}"
`;

async function ciRun(
  tmp: string,
  testLog: string,
  opts: { testCode?: number; withDeno?: boolean; uid?: number; withChromium?: boolean } = {},
) {
  const bin = join(tmp, "bin");
  await Deno.mkdir(bin, { recursive: true });
  for (const tool of SYSTEM_TOOLS) {
    const path = (await probeTool("bash", ["-c", `command -v ${tool}`]))?.trim();
    assert.ok(path, `this machine has no ${tool}`);
    await Deno.symlink(path, join(bin, tool)).catch(() => {});
  }
  const standins = [
    "npx",
    "npm",
    "apt-get",
    ...(opts.withDeno ? ["deno"] : []),
    ...(opts.withChromium ? ["chromium"] : []),
  ];
  for (const name of standins) {
    await Deno.writeTextFile(join(bin, name), STANDIN);
    await Deno.chmod(join(bin, name), 0o755);
  }
  await Deno.writeTextFile(join(bin, "id"), ID);
  await Deno.chmod(join(bin, "id"), 0o755);
  const calls = join(tmp, "calls");
  const log = join(tmp, "test.log");
  await Deno.writeTextFile(log, testLog);
  const out = await new Deno.Command(join(bin, "bash"), {
    args: [join(ROOT, ".ci", "run")],
    env: {
      PATH: bin,
      HOME: tmp,
      CI_CALLS: calls,
      CI_TEST_LOG: log,
      CI_TEST_CODE: String(opts.testCode ?? 0),
      CI_UID: String(opts.uid ?? 1000),
    },
    clearEnv: true,
    stdin: "null",
  }).output();
  const stdout = decode(out.stdout);
  const lines = stdout.trimEnd().split("\n");
  const called = (await Deno.readTextFile(calls).catch(() => "")).trimEnd().split("\n");
  return { code: out.code, stdout, last: lines[lines.length - 1], called };
}

Deno.test(".ci/run without deno or gh installs nothing, runs every step through npx and counts the skipped", async () => {
  await using tmp = await tempDir();
  const log = [
    "the installed gh documents every flag and JSON field relay sends ... ignored (0ms)",
    "",
    "ok | 695 passed | 0 failed | 1 ignored (2m3s)",
    "",
  ].join("\n");
  const r = await ciRun(tmp.path, log);
  assert.equal(r.code, 0, r.stdout);
  assert.equal(r.last, "695 passed, 0 failed, 1 skipped");
  assert.match(
    r.stdout,
    /ci: skipped: the installed gh documents every flag and JSON field relay sends\n/,
  );
  assert.deepEqual(r.called, [
    "npx -y deno@2.9.6 --version",
    "npx -y deno@2.9.6 fmt --check",
    "npx -y deno@2.9.6 lint",
    "npx -y deno@2.9.6 check main.ts lib/ scripts/ tests/",
    "npx -y deno@2.9.6 task test",
  ]);
  // Not root: Chromium is not installed, and the browser test is said to be skipped.
  assert.match(
    r.stdout,
    /^ci: chromium is missing \(installing it needs root and apt-get\): the HTML report's browser test is skipped$/m,
  );
  assert.doesNotMatch(r.stdout, /^ci: (?!skipped:|chromium ).*(install|\bgh\b)/im);
});

Deno.test(".ci/run as root with apt-get installs a missing chromium, and an install that leaves none fails nothing", async () => {
  await using tmp = await tempDir();
  const r = await ciRun(tmp.path, "ok | 3 passed | 0 failed | 1 ignored (1s)\n", {
    withDeno: true,
    uid: 0,
  });
  assert.equal(r.code, 0, r.stdout);
  assert.equal(r.last, "3 passed, 0 failed, 1 skipped");
  assert.deepEqual(r.called, [
    "deno --version",
    "deno --version",
    "deno fmt --check",
    "deno lint",
    "deno check main.ts lib/ scripts/ tests/",
    "apt-get install -y chromium",
    "npx -y deno@2.9.6 task test",
  ]);
  // The stand-in apt-get exits 0 but puts no chromium on PATH: said, and CI goes on.
  assert.match(
    r.stdout,
    /^ci: chromium is missing and apt-get could not install it: the HTML report's browser test is skipped$/m,
  );

  // Chromium on PATH: nothing is installed, even as root.
  await using tmp2 = await tempDir();
  const found = await ciRun(tmp2.path, "ok | 3 passed | 0 failed (1s)\n", {
    withDeno: true,
    uid: 0,
    withChromium: true,
  });
  assert.equal(found.code, 0, found.stdout);
  assert.ok(!found.called.some((c) => c.startsWith("apt-get")), found.called.join("\n"));
  assert.match(found.stdout, /^ci: chromium found: the HTML report's browser test runs$/m);
});

Deno.test(".ci/run keeps the plain 'N passed, N failed' line, fails on a failed test, and uses a deno 2.9.6 on PATH", async () => {
  await using tmp = await tempDir();
  const ok = await ciRun(tmp.path, "ok | 12 passed | 0 failed (3s)\n", { withDeno: true });
  assert.equal(ok.code, 0, ok.stdout);
  assert.equal(ok.last, "12 passed, 0 failed");
  assert.deepEqual(ok.called, [
    "deno --version", // which deno is this?
    "deno --version",
    "deno fmt --check",
    "deno lint",
    "deno check main.ts lib/ scripts/ tests/",
    "npx -y deno@2.9.6 task test",
  ]);

  await using tmp2 = await tempDir();
  const failedLog = "FAILED | 11 passed | 1 failed | 2 ignored (3s)\n";
  const bad = await ciRun(tmp2.path, failedLog, { testCode: 1, withDeno: true });
  assert.equal(bad.code, 1, bad.stdout);
  assert.equal(bad.last, "11 passed, 1 failed, 2 skipped");

  await using tmp3 = await tempDir();
  const none = await ciRun(tmp3.path, "error: Module not found\n", { testCode: 1, withDeno: true });
  assert.equal(none.code, 1);
  assert.match(none.stdout, /ci: no test summary found\n0 passed, 1 failed\n$/);
});
