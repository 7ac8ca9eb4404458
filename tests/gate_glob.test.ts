import assert from "node:assert/strict";
import { BUILD_OUTPUT } from "../lib/git/build_output.ts";
import { GlobSet, globToRegExp, matchGlob } from "../lib/gate/glob.ts";
import { BUILT_IN_REFUSALS } from "../lib/gate/refusals.ts";

const TABLE: [glob: string, path: string, matches: boolean][] = [
  // a bare name matches the basename at any depth
  ["package.json", "package.json", true],
  ["package.json", "apps/web/package.json", true],
  ["package.json", "package.json.bak", false],
  ["package.json", "mypackage.json", false],
  // case-insensitive
  ["package.json", "PACKAGE.JSON", true],
  ["Makefile", "sub/makefile", true],
  // * stays within a segment
  ["*.lock", "yarn.lock", true],
  ["*.lock", "deep/dir/Cargo.lock", true],
  ["*.lock", "yarn.lock.txt", false],
  ["src/*.ts", "src/a.ts", true],
  ["src/*.ts", "src/sub/a.ts", false],
  ["tsconfig*.json", "tsconfig.build.json", true],
  ["tsconfig*.json", "packages/x/tsconfig.json", true],
  ["Dockerfile*", "Dockerfile", true],
  ["Dockerfile*", "ops/Dockerfile.dev", true],
  ["docker-compose*.y*ml", "docker-compose.override.yaml", true],
  ["docker-compose*.y*ml", "docker-compose.yml", true],
  // ? is one character, not a slash
  ["file?.txt", "file1.txt", true],
  ["file?.txt", "file10.txt", false],
  ["a?b", "a/b", false],
  // a / anchors at the root
  ["src/app.ts", "src/app.ts", true],
  ["src/app.ts", "lib/src/app.ts", false],
  ["/api/", "api/hello.ts", true],
  ["/api/", "src/api/hello.ts", false],
  ["/Makefile", "Makefile", true],
  ["/Makefile", "sub/Makefile", false],
  // a trailing / is the folder and everything below it
  [".github/", ".github/workflows/ci.yml", true],
  [".github/", "sub/.github/x.yml", true],
  [".github/", ".github", true],
  [".github/", ".githubx/a", false],
  ["netlify/functions/", "netlify/functions/x.js", true],
  ["netlify/functions/", "netlify/functions/deep/x.js", true],
  ["netlify/functions/", "web/netlify/functions/x.js", false],
  ["netlify/functions/", "netlify/functionsx/x.js", false],
  // ** crosses folders, zero included
  ["**/pages/api/", "pages/api/a.ts", true],
  ["**/pages/api/", "src/pages/api/a.ts", true],
  ["**/pages/api/", "apps/web/src/pages/api/deep/a.ts", true],
  ["**/pages/api/", "src/pages/apiary.ts", false],
  ["src/**", "src/a.ts", true],
  ["src/**", "src/a/b/c.ts", true],
  ["src/**", "lib/a.ts", false],
  ["src/**/*.ts", "src/a.ts", true],
  ["src/**/*.ts", "src/a/b/c.ts", true],
  ["src/**/*.ts", "src/a/b/c.js", false],
  ["**", "anything/at/all.txt", true],
  ["**/*.md", "README.md", true],
  ["a**b", "axxb", true],
  ["a**b", "ax/xb", false],
  // character classes and escapes
  ["[ab].txt", "a.txt", true],
  ["[ab].txt", "c.txt", false],
  ["[!ab].txt", "c.txt", true],
  ["[!ab].txt", "a.txt", false],
  ["[a-c]x", "bx", true],
  ["\\*.txt", "*.txt", true],
  ["\\*.txt", "a.txt", false],
  ["[oops", "[oops", true],
  // regex specials are literal
  ["a+b(c).txt", "a+b(c).txt", true],
  ["a.b", "axb", false],
  ["$HOME", "$HOME", true],
];

for (const [glob, path, expected] of TABLE) {
  Deno.test(`matchGlob() says "${path}" ${expected ? "matches" : "does not match"} "${glob}"`, () => {
    assert.equal(matchGlob(path, glob), expected, `${glob} → ${globToRegExp(glob)}`);
  });
}

Deno.test("matchGlob() ignores a leading ./ on the path", () => {
  assert.equal(matchGlob("./src/app.ts", "src/app.ts"), true);
});

Deno.test("globToRegExp() refuses an empty glob", () => {
  assert.throws(() => globToRegExp(""), /empty/);
  assert.throws(() => globToRegExp("/"), /empty/);
});

Deno.test("globToRegExp() compiles a case-insensitive, fully anchored RegExp", () => {
  const re = globToRegExp("*.md");
  assert.equal(re.flags.includes("i"), true);
  assert.equal(re.test("notes/a.md"), true);
  assert.equal(re.test("notes/a.md/b"), false);
});

Deno.test("GlobSet gives each glob of the table the same answer as its RegExp", () => {
  const globs = [...new Set(TABLE.map(([glob]) => glob))];
  const set = new GlobSet(globs);
  for (const path of new Set(TABLE.map(([, path]) => path))) {
    const expected = globs.flatMap((g, i) => globToRegExp(g).test(path) ? [i] : []);
    assert.deepEqual(set.matches(path), expected, path);
  }
});

Deno.test("GlobSet matches the built-in refusals and build output exactly as their RegExps", () => {
  const globs = [...BUILT_IN_REFUSALS.map((r) => r.glob), ...BUILD_OUTPUT, "*/", "[Kk]it/", "ü*"];
  const regexps = globs.map(globToRegExp);
  const set = new GlobSet(globs);
  // Each glob's own text, made into paths at several depths and cases, plus near misses.
  const names = globs.flatMap((g) => {
    const plain = g.replace(/^\/|\/$/g, "").replaceAll("**/", "").replaceAll("*", "x")
      .replaceAll("?", "q");
    return [plain, plain.toUpperCase(), `${plain}x`, `x${plain}`, plain.slice(1)];
  });
  const paths = [
    ...names,
    ...names.map((n) => `src/${n}`),
    ...names.map((n) => `${n}/inner/file.ts`),
    "a//b",
    "dir/",
    "\u212Aeep/package.json", // the Kelvin sign: lower-cases to "k", a RegExp's /i does not fold it
    "über/x.txt",
    "src/ünicode.lock",
  ];
  let hits = 0;
  for (const path of paths) {
    const expected = regexps.flatMap((re, i) => re.test(path) ? [i] : []);
    assert.deepEqual(set.matches(path), expected, path);
    if (expected.length > 0) hits++;
  }
  // Not a comparison of empty answers: most of these paths match some glob.
  assert.ok(hits > paths.length / 2, `${hits} of ${paths.length} paths matched`);
});

Deno.test("GlobSet agrees with the RegExps on random paths built from the globs' own words", () => {
  const globs = [
    ...BUILT_IN_REFUSALS.map((r) => r.glob),
    ...BUILD_OUTPUT,
    "docs/*.md",
    "/top/",
    "**/gen/*.ts",
    "a/**/b/",
    "x/y*/",
  ];
  const regexps = globs.map(globToRegExp);
  const set = new GlobSet(globs);
  // Words from the globs (netlify, functions, config.toml, *.lock as x.lock …) and plain ones.
  const words = [
    ...new Set(
      globs.flatMap((g) => g.split("/")).filter((w) => w !== "" && w !== "**")
        .map((w) => w.replaceAll("*", "x").replaceAll("?", "q")),
    ),
    "src",
    "lib",
    "index.ts",
    "README.md",
  ];
  let seed = 42;
  const pick = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return words[seed % words.length]!;
  };
  let hits = 0;
  for (let i = 0; i < 5000; i++) {
    const depth = 1 + (i % 5);
    const path = Array.from({ length: depth }, pick).join("/");
    const cased = i % 7 === 0 ? path.toUpperCase() : path;
    const expected = regexps.flatMap((re, k) => re.test(cased) ? [k] : []);
    assert.deepEqual(set.matches(cased), expected, cased);
    if (expected.length > 0) hits++;
  }
  assert.ok(hits > 1000, `${hits} of 5000 random paths matched`);
});
