import assert from "node:assert/strict";
import { buildOutputMatcher } from "../lib/git/build_output.ts";
import { describePaths, voidCause, withoutUntrackedBuildOutput } from "../lib/loop/build_output.ts";

Deno.test("buildOutputMatcher() knows well-known build output and caches at any depth", () => {
  const m = buildOutputMatcher();
  for (
    const path of [
      "__pycache__/x.pyc",
      "src/pkg/__pycache__/app.cpython-311.pyc",
      "legacy.pyc",
      "node_modules/a/index.js",
      "web/node_modules/.bin/x",
      ".DS_Store",
      "docs/.DS_Store",
      "build/main.o",
      "out/App.class",
      ".pytest_cache/v/lastfailed",
      "pkg.egg-info/PKG-INFO",
      ".venv/bin/python",
      ".coverage",
      ".coverage.host.123",
      "coverage/lcov.info",
      ".nyc_output/x.json",
      ".next/cache/x",
      ".gradle/8.0/x",
      ".cache/eslint",
      "tsconfig.tsbuildinfo",
    ]
  ) assert.ok(m.match(path), path);
});

Deno.test("buildOutputMatcher() leaves ambiguous folders and ordinary files alone", () => {
  const m = buildOutputMatcher();
  for (
    const path of [
      "src/app.py",
      "dist/index.js",
      "build/index.html",
      "target/release/app",
      "models/cube.obj",
      "src/coverage/policy.py",
      "lib/x.so",
      "debug.log",
      "venv/notes.md",
    ]
  ) assert.equal(m.match(path), undefined, path);
});

Deno.test("buildOutputMatcher() adds the repo's never_commit globs", () => {
  const m = buildOutputMatcher(["*.log", "tmp/**"]);
  assert.equal(m.match("logs/debug.log"), "*.log");
  assert.equal(m.match("tmp/a/b.txt"), "tmp/**");
  assert.equal(m.match("src/tmp/a.txt"), undefined);
  assert.equal(m.match("__pycache__/x.pyc"), "__pycache__/");
});

Deno.test("describePaths() names a folder once with its count, a lone file by itself", () => {
  const m = buildOutputMatcher();
  assert.equal(
    describePaths(
      ["node_modules/a/index.js", "node_modules/b/x.js", "src/__pycache__/app.pyc", "x.pyc"],
      m,
    ),
    "node_modules/ (2 files), src/__pycache__/app.pyc, x.pyc",
  );
  const many = Array.from({ length: 12 }, (_, i) => `f${i}.pyc`);
  assert.match(describePaths(many, m, 10), /f9\.pyc and 2 more$/);
});

Deno.test("withoutUntrackedBuildOutput() drops untracked caches, keeps everything tracked", () => {
  const m = buildOutputMatcher();
  const status = [
    "?? src/__pycache__/app.pyc",
    "?? .pytest_cache/v/lastfailed",
    "?? notes.txt",
    " M src/__pycache__/old.pyc",
  ].join("\n");
  assert.equal(
    withoutUntrackedBuildOutput(status, m),
    "?? notes.txt\n M src/__pycache__/old.pyc",
  );
});

Deno.test("voidCause() names rewritten tracked build output and the fix; anything else is the reviewer's change", () => {
  const m = buildOutputMatcher();
  const pr = { task: 4, branch: "task-4" };
  const build = voidCause("", " M src/__pycache__/app.cpython-311.pyc", m, pr);
  assert.equal(
    build.cause,
    "the reviewer's run rewrote tracked build output: src/__pycache__/app.cpython-311.pyc",
  );
  assert.match(build.next ?? "", /^task-4 tracks build output/);
  assert.match(build.next ?? "", /Remove it from the branch and add it to \.gitignore/);
  assert.match(build.next ?? "", /Kind: fix, Fixes: 4, Branch: task-4/);
  assert.match(build.next ?? "", /git rm -r --cached -- src\/__pycache__\//);
  assert.match(build.next ?? "", /"__pycache__\/" in \.gitignore/);

  const edit = voidCause("", " M README.md\n?? notes.txt", m, pr);
  assert.equal(edit.cause, "the reviewer changed its worktree");
  // A stage's turn is named as the stage.
  assert.equal(
    voidCause("", " M README.md", m, pr, "the polish stage").twice,
    "the polish stage changed its worktree twice",
  );
  assert.equal(edit.next, undefined);
});
