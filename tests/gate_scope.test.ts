import assert from "node:assert/strict";
import {
  classifyScope,
  type DiffEntry,
  parseRawDiff,
  type ScopeConfig,
  scopeOfRawDiff,
} from "../lib/gate/scope.ts";

const Z = "0".repeat(40);
const A = "a".repeat(40);
const B = "b".repeat(40);
const NONE: ScopeConfig = { gate: { product: [], refuse: [] }, acceptedInfra: [] };

function mod(path: string, oldMode = "100644", newMode = "100644"): DiffEntry {
  return { status: "M", oldMode, newMode, oldSha: A, newSha: B, path };
}
function add(path: string, newMode = "100644"): DiffEntry {
  return { status: "A", oldMode: "000000", newMode, oldSha: Z, newSha: B, path };
}
function del(path: string): DiffEntry {
  return { status: "D", oldMode: "100644", newMode: "000000", oldSha: A, newSha: Z, path };
}
function ren(from: string, to: string): DiffEntry {
  return {
    status: "R",
    score: 100,
    oldMode: "100644",
    newMode: "100644",
    oldSha: A,
    newSha: A,
    oldPath: from,
    path: to,
  };
}

Deno.test("parseRawDiff() reads modifications, additions, deletions and renames", () => {
  const out = [
    `:100644 100644 ${A} ${B} M`,
    "src/app.ts",
    `:000000 100755 ${Z} ${B} A`,
    "bin/run",
    `:100644 000000 ${A} ${Z} D`,
    "old.txt",
    `:100644 100644 ${A} ${A} R100`,
    "netlify/functions/x.js",
    "src/x.js",
    "",
  ].join("\0");
  assert.deepEqual(parseRawDiff(out), [
    { status: "M", oldMode: "100644", newMode: "100644", oldSha: A, newSha: B, path: "src/app.ts" },
    { status: "A", oldMode: "000000", newMode: "100755", oldSha: Z, newSha: B, path: "bin/run" },
    { status: "D", oldMode: "100644", newMode: "000000", oldSha: A, newSha: Z, path: "old.txt" },
    {
      status: "R",
      score: 100,
      oldMode: "100644",
      newMode: "100644",
      oldSha: A,
      newSha: A,
      oldPath: "netlify/functions/x.js",
      path: "src/x.js",
    },
  ]);
});

Deno.test("parseRawDiff() keeps paths with spaces, colons and newlines intact", () => {
  const out = `:100644 100644 ${A} ${B} M\0dir/a file:\nwith newline.txt\0`;
  assert.equal(parseRawDiff(out)[0]?.path, "dir/a file:\nwith newline.txt");
});

Deno.test("parseRawDiff() reads empty output as no entries", () => {
  assert.deepEqual(parseRawDiff(""), []);
});

Deno.test("parseRawDiff() refuses output that is not --raw -z", () => {
  assert.throws(() => parseRawDiff("M\tsrc/app.ts\n"), /not an entry header/);
  assert.throws(() => parseRawDiff(`:100644 100644 ${A} ${A} R100\0only-one-path\0`), /missing/);
});

const CATEGORIES: [path: string, category: string][] = [
  ["package.json", "dependency manifest"],
  ["apps/web/package.json", "dependency manifest"],
  ["PACKAGE.JSON", "dependency manifest"],
  ["package-lock.json", "dependency manifest"],
  ["yarn.lock", "dependency manifest"],
  ["pnpm-lock.yaml", "dependency manifest"],
  ["bun.lockb", "dependency manifest"],
  ["deno.json", "dependency manifest"],
  ["deno.lock", "dependency manifest"],
  ["Cargo.toml", "dependency manifest"],
  ["Cargo.lock", "dependency manifest"],
  ["go.mod", "dependency manifest"],
  ["go.sum", "dependency manifest"],
  ["requirements-dev.txt", "dependency manifest"],
  ["constraints.txt", "dependency manifest"],
  ["pyproject.toml", "dependency manifest"],
  ["setup.py", "dependency manifest"],
  ["Pipfile", "dependency manifest"],
  ["poetry.lock", "dependency manifest"],
  ["Gemfile", "dependency manifest"],
  ["relay.gemspec", "dependency manifest"],
  ["composer.json", "dependency manifest"],
  ["pom.xml", "dependency manifest"],
  ["build.gradle.kts", "dependency manifest"],
  ["settings.gradle", "dependency manifest"],
  ["App.csproj", "dependency manifest"],
  ["mix.exs", "dependency manifest"],
  ["Package.swift", "dependency manifest"],
  ["Podfile", "dependency manifest"],
  [".npmrc", "dependency manifest"],
  [".yarnrc.yml", "dependency manifest"],
  [".nvmrc", "dependency manifest"],
  [".tool-versions", "dependency manifest"],
  ["netlify.toml", "build or deploy config"],
  ["vercel.json", "build or deploy config"],
  ["Dockerfile", "build or deploy config"],
  ["docker/Dockerfile.prod", "build or deploy config"],
  ["web.dockerfile", "build or deploy config"],
  ["docker-compose.yml", "build or deploy config"],
  ["compose.yaml", "build or deploy config"],
  ["Makefile", "build or deploy config"],
  ["GNUmakefile", "build or deploy config"],
  ["rules.mk", "build or deploy config"],
  ["CMakeLists.txt", "build or deploy config"],
  ["tsconfig.json", "build or deploy config"],
  ["tsconfig.build.json", "build or deploy config"],
  ["jsconfig.json", "build or deploy config"],
  ["vite.config.ts", "build or deploy config"],
  ["webpack.config.js", "build or deploy config"],
  ["rollup.config.mjs", "build or deploy config"],
  ["esbuild.config.js", "build or deploy config"],
  ["babel.config.json", "build or deploy config"],
  [".babelrc", "build or deploy config"],
  ["next.config.mjs", "build or deploy config"],
  ["nuxt.config.ts", "build or deploy config"],
  ["svelte.config.js", "build or deploy config"],
  ["astro.config.mjs", "build or deploy config"],
  ["tailwind.config.js", "build or deploy config"],
  ["postcss.config.cjs", "build or deploy config"],
  ["wrangler.toml", "build or deploy config"],
  ["fly.toml", "build or deploy config"],
  ["render.yaml", "build or deploy config"],
  ["Procfile", "build or deploy config"],
  ["firebase.json", "build or deploy config"],
  ["serverless.yml", "build or deploy config"],
  ["infra/main.tf", "build or deploy config"],
  ["prod.tfvars", "build or deploy config"],
  [".env", "build or deploy config"],
  [".env.production", "build or deploy config"],
  ["public/_headers", "build or deploy config"],
  ["public/_redirects", "build or deploy config"],
  [".htaccess", "build or deploy config"],
  [".eslintrc.json", "build or deploy config"],
  ["eslint.config.js", "build or deploy config"],
  [".prettierrc", "build or deploy config"],
  ["biome.json", "build or deploy config"],
  ["netlify/functions/hello.js", "serverless function"],
  ["netlify/edge-functions/geo.ts", "serverless function"],
  ["api/hello.ts", "serverless function"],
  ["pages/api/user.ts", "serverless function"],
  ["app/api/route.ts", "serverless function"],
  ["src/pages/api/user.ts", "serverless function"],
  ["src/app/api/route.ts", "serverless function"],
  ["supabase/functions/f/index.ts", "serverless function"],
  ["supabase/migrations/0001.sql", "serverless function"],
  ["functions/index.js", "serverless function"],
  [".github/workflows/ci.yml", "CI"],
  [".gitlab-ci.yml", "CI"],
  [".circleci/config.yml", "CI"],
  [".travis.yml", "CI"],
  ["azure-pipelines.yml", "CI"],
  ["Jenkinsfile", "CI"],
  ["bitbucket-pipelines.yml", "CI"],
  [".buildkite/pipeline.yml", "CI"],
  [".ci/run.sh", "CI"],
  ["CLAUDE.md", "agent instructions"],
  ["docs/AGENTS.md", "agent instructions"],
  ["GEMINI.md", "agent instructions"],
  ["REVIEWER.md", "agent instructions"],
  [".claude/settings.json", "agent instructions"],
  [".codex/config.toml", "agent instructions"],
  [".cursor/rules/a.mdc", "agent instructions"],
  [".cursorrules", "agent instructions"],
  [".windsurfrules", "agent instructions"],
  [".relay/config.yaml", "relay's own file"],
  [".relay/inbox/0002-x.md", "relay's own file"],
  ["NEXT-STEPS.md", "relay's own file"],
  ["sub/COWORK-STATUS.md", "relay's own file"],
  [".gitattributes", "git metadata"],
  [".gitmodules", "git metadata"],
  [".githooks/pre-commit", "git metadata"],
  [".husky/pre-push", "git metadata"],
  [".pre-commit-config.yaml", "git metadata"],
];

for (const [path, category] of CATEGORIES) {
  Deno.test(`classifyScope() refuses "${path}" as ${category}`, () => {
    const scope = classifyScope([mod(path)], NONE);
    assert.deepEqual(scope.product, []);
    assert.equal(scope.refused.length, 1);
    assert.equal(scope.refused[0]!.path, path);
    assert.ok(scope.refused[0]!.why.split(", ").includes(category), scope.refused[0]!.why);
  });
}

const PRODUCT = [
  "src/app.ts",
  "src/api/client.ts", // api/ is refused at the root only
  "lib/functions/math.ts", // functions/ likewise
  "README.md",
  "docs/guide.md",
  "src/packages.ts",
  "web/index.html",
  "src/components/Button.svelte",
  "tests/app.test.ts",
];

for (const path of PRODUCT) {
  Deno.test(`classifyScope() lets "${path}" through as product code`, () => {
    assert.deepEqual(classifyScope([mod(path)], NONE), {
      refused: [],
      accepted: [],
      product: [path],
    });
  });
}

Deno.test("classifyScope() refuses a rename into netlify/functions/ on its new path", () => {
  const scope = classifyScope([ren("src/x.js", "netlify/functions/x.js")], NONE);
  assert.deepEqual(scope.refused, [{ path: "netlify/functions/x.js", why: "serverless function" }]);
  assert.deepEqual(scope.product, ["src/x.js"]);
});

Deno.test("classifyScope() refuses a rename out of a refused path on its old path", () => {
  const scope = classifyScope([ren(".github/workflows/ci.yml", "src/ci.yml")], NONE);
  assert.deepEqual(scope.refused, [{ path: ".github/workflows/ci.yml", why: "CI" }]);
  assert.deepEqual(scope.product, ["src/ci.yml"]);
});

Deno.test("classifyScope() refuses deleting a refused file", () => {
  const scope = classifyScope([del("package.json")], NONE);
  assert.deepEqual(scope.refused, [{ path: "package.json", why: "dependency manifest" }]);
});

Deno.test("classifyScope() refuses turning on the executable bit", () => {
  const scope = classifyScope([mod("src/run.sh", "100644", "100755")], NONE);
  assert.deepEqual(scope.refused, [{ path: "src/run.sh", why: "executable bit" }]);
});

Deno.test("classifyScope() refuses turning off the executable bit", () => {
  const scope = classifyScope([mod("bin/deploy", "100755", "100644")], NONE);
  assert.deepEqual(scope.refused, [{ path: "bin/deploy", why: "executable bit" }]);
});

Deno.test("classifyScope() refuses a new file added as executable", () => {
  const scope = classifyScope([add("src/tool", "100755")], NONE);
  assert.deepEqual(scope.refused, [{ path: "src/tool", why: "executable bit" }]);
});

Deno.test("classifyScope() lets an edit of a file that was already executable through", () => {
  assert.deepEqual(classifyScope([mod("src/run.sh", "100755", "100755")], NONE).product, [
    "src/run.sh",
  ]);
});

Deno.test("classifyScope() refuses a symlink on either side", () => {
  assert.deepEqual(classifyScope([add("src/link", "120000")], NONE).refused, [
    { path: "src/link", why: "symlink" },
  ]);
  const gone = { ...del("src/link"), oldMode: "120000" };
  assert.deepEqual(classifyScope([gone], NONE).refused, [{ path: "src/link", why: "symlink" }]);
});

Deno.test("classifyScope() refuses a submodule", () => {
  assert.deepEqual(classifyScope([add("vendor/lib", "160000")], NONE).refused, [
    { path: "vendor/lib", why: "submodule" },
  ]);
});

Deno.test("classifyScope() names every reason a path is refused", () => {
  const scope = classifyScope([add("package.json", "100755")], NONE);
  assert.deepEqual(scope.refused, [{
    path: "package.json",
    why: "dependency manifest, executable bit",
  }]);
});

Deno.test("classifyScope() adds the config's gate.refuse globs to the built-in ones", () => {
  const config: ScopeConfig = { gate: { product: [], refuse: ["deploy/**"] }, acceptedInfra: [] };
  const scope = classifyScope(
    [mod("deploy/prod.sh"), mod("package.json"), mod("src/a.ts")],
    config,
  );
  assert.deepEqual(scope.refused, [
    { path: "deploy/prod.sh", why: 'gate.refuse "deploy/**"' },
    { path: "package.json", why: "dependency manifest" },
  ]);
  assert.deepEqual(scope.product, ["src/a.ts"]);
});

Deno.test("classifyScope() refuses paths outside the configured product globs", () => {
  const config: ScopeConfig = {
    gate: { product: ["src/**", "docs/"], refuse: [] },
    acceptedInfra: [],
  };
  const scope = classifyScope([mod("src/a.ts"), mod("docs/x.md"), mod("scripts/x.ts")], config);
  assert.deepEqual(scope.refused, [
    { path: "scripts/x.ts", why: "not under the configured product globs" },
  ]);
  assert.deepEqual(scope.product, ["src/a.ts", "docs/x.md"]);
});

Deno.test("classifyScope() does not let product globs un-refuse a built-in refusal", () => {
  const config: ScopeConfig = { gate: { product: ["**"], refuse: [] }, acceptedInfra: [] };
  const scope = classifyScope([mod("package.json"), mod(".github/workflows/ci.yml")], config);
  assert.deepEqual(scope.refused.map((r) => r.path), ["package.json", ".github/workflows/ci.yml"]);
});

Deno.test("classifyScope() routes a refused path on accepted_infra to the human path", () => {
  const config: ScopeConfig = {
    gate: { product: [], refuse: [] },
    acceptedInfra: [".github/workflows/**"],
  };
  const scope = classifyScope([mod(".github/workflows/ci.yml"), mod("src/a.ts")], config);
  assert.deepEqual(scope.refused, []);
  assert.deepEqual(scope.accepted, [{ path: ".github/workflows/ci.yml", why: "CI" }]);
  assert.deepEqual(scope.product, ["src/a.ts"]);
});

Deno.test("classifyScope() matches accepted_infra case-insensitively", () => {
  const config: ScopeConfig = { gate: { product: [], refuse: [] }, acceptedInfra: ["Dockerfile"] };
  assert.deepEqual(classifyScope([mod("DOCKERFILE")], config).accepted, [
    { path: "DOCKERFILE", why: "build or deploy config" },
  ]);
});

Deno.test("classifyScope() never lets accepted_infra accept relay's own files", () => {
  const config: ScopeConfig = {
    gate: { product: [], refuse: [] },
    acceptedInfra: ["NEXT-STEPS.md", "COWORK-STATUS.md", ".relay/**", "**"],
  };
  const scope = classifyScope(
    [
      mod("NEXT-STEPS.md"),
      mod("COWORK-STATUS.md"),
      add(".relay/inbox/0009-x.md"),
      mod("CLAUDE.md"),
    ],
    config,
  );
  assert.deepEqual(scope.refused.map((r) => r.path), [
    "NEXT-STEPS.md",
    "COWORK-STATUS.md",
    ".relay/inbox/0009-x.md",
  ]);
  // Other agent instructions can be accepted: they go to a person, not to a merge.
  assert.deepEqual(scope.accepted.map((r) => r.path), ["CLAUDE.md"]);
});

Deno.test("classifyScope() lists a path touched twice once", () => {
  const scope = classifyScope([ren("src/a.ts", "src/b.ts"), add("src/a.ts")], NONE);
  assert.deepEqual(scope.product, ["src/a.ts", "src/b.ts"]);
});

Deno.test("classifyScope() refuses build output a branch adds or changes, with the fix, and lets it remove some", () => {
  const entry = (status: string, path: string) => ({
    status,
    oldMode: status === "A" ? "000000" : "100644",
    newMode: status === "D" ? "000000" : "100644",
    oldSha: "0".repeat(40),
    newSha: "1".repeat(40),
    path,
  });
  const scope = classifyScope(
    [
      entry("A", "src/app.py"),
      entry("A", "src/__pycache__/app.cpython-311.pyc"),
      entry("M", "node_modules/left-pad/index.js"),
      entry("A", "logs/run.log"),
      entry("D", "old/__pycache__/gone.pyc"),
    ],
    { gate: { product: [], refuse: [] }, acceptedInfra: [], neverCommit: ["*.log"] },
  );
  assert.deepEqual(scope.product, ["src/app.py", "old/__pycache__/gone.pyc"]);
  assert.deepEqual(scope.refused.map((i) => i.path), [
    "src/__pycache__/app.cpython-311.pyc",
    "node_modules/left-pad/index.js",
    "logs/run.log",
  ]);
  for (const item of scope.refused) {
    assert.match(
      item.why,
      /build output: remove it from the branch \(git rm --cached\) and list it in \.gitignore/,
    );
  }
});

Deno.test("classifyScope() names a path once when a rename's old path is added anew", () => {
  // package.json renamed away, and a new package.json added: one refused path, two reasons
  // merged, never two entries for one path.
  const entries = [ren("package.json", "src/pkg.json"), add("package.json", "100755")];
  const scope = classifyScope(entries, NONE);
  assert.deepEqual(scope.refused, [{
    path: "package.json",
    why: "dependency manifest, executable bit",
  }]);
  assert.deepEqual(scope.product, ["src/pkg.json"]);
});

Deno.test("classifyScope() sorts the same paths the same way with or without a rename among them", () => {
  const paths = [
    "src/a.ts",
    "package.json",
    "src/.github/workflows/x.yml",
    "netlify/functions/f.js",
    "dist/out.js",
    "docs/guide.md",
    "Dockerfile.dev",
    "src/node_modules/x/index.js",
  ];
  const config: ScopeConfig = {
    gate: { product: [], refuse: ["docs/**"] },
    acceptedInfra: ["Dockerfile*"],
  };
  const plain = classifyScope(paths.map((p) => mod(p)), config);
  const withRename = classifyScope(
    [...paths.map((p) => mod(p)), ren("src/old-name.ts", "src/new-name.ts")],
    config,
  );
  assert.deepEqual(withRename, {
    refused: plain.refused,
    accepted: plain.accepted,
    product: [...plain.product, "src/old-name.ts", "src/new-name.ts"],
  });
  // Not two empty answers: each kind is there.
  assert.ok(plain.refused.length >= 4 && plain.accepted.length === 1 && plain.product.length >= 1);
});

/** `git diff --raw -z` text for entries, as git writes it. */
function rawOf(entries: readonly DiffEntry[]): string {
  return entries.map((e) =>
    `:${e.oldMode} ${e.newMode} ${e.oldSha} ${e.newSha} ${e.status}${e.score ?? ""}\0` +
    (e.oldPath !== undefined ? `${e.oldPath}\0` : "") + `${e.path}\0`
  ).join("");
}

Deno.test("scopeOfRawDiff() gives classifyScope(parseRawDiff()) on random diffs of every kind", () => {
  const words = [
    "src",
    "lib",
    "app.ts",
    "package.json",
    ".github",
    "workflows",
    "ci.yml",
    "netlify",
    "functions",
    "dist",
    "node_modules",
    "Dockerfile",
    "README.md",
    "run.sh",
    "x.lock",
  ];
  const configs: ScopeConfig[] = [
    NONE,
    { gate: { product: ["src/**", "lib/**"], refuse: [] }, acceptedInfra: [] },
    { gate: { product: [], refuse: ["README.md"] }, acceptedInfra: ["Dockerfile"] },
  ];
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const path = () =>
    Array.from({ length: 1 + rand(3) }, () => words[rand(words.length)]!).join("/") +
    (rand(4) === 0 ? `/f${rand(1000)}.txt` : "");
  const kinds: (() => DiffEntry)[] = [
    () => mod(path()),
    () => mod(path()),
    () => mod(path()),
    () => mod(path(), "100644", "100755"),
    () => mod(path(), "120000", "120000"),
    () => add(path()),
    () => add(path(), "100755"),
    () => del(path()),
    () => ({ ...ren(path(), path()), status: "C", score: 90 }),
    () => ({ ...mod(path()), status: "T", newMode: "120000" }),
  ];
  let compared = 0;
  for (let round = 0; round < 300; round++) {
    const entries = Array.from({ length: 1 + rand(12) }, () => kinds[rand(kinds.length)]!());
    // A third of the diffs also rename something: the long way, the same answer.
    if (round % 3 === 0) entries.push(ren(path(), path()));
    const raw = rawOf(entries);
    for (const config of configs) {
      assert.deepEqual(scopeOfRawDiff(raw, config), classifyScope(parseRawDiff(raw), config), raw);
      compared++;
    }
  }
  assert.equal(compared, 900);
  // Git's own trailing NULs, and no output at all.
  assert.deepEqual(scopeOfRawDiff(rawOf([mod("src/a.ts")]) + "\0\0", NONE).product, ["src/a.ts"]);
  assert.deepEqual(scopeOfRawDiff("", NONE), { refused: [], accepted: [], product: [] });
});

Deno.test("scopeOfRawDiff() refuses what parseRawDiff() refuses, with the same words", () => {
  const plain = rawOf([mod("src/a.ts")]);
  for (
    const bad of [
      plain + `:100644 100644 ${A} ${B} M\0\0`,
      plain + `:100644 100644 ${A} ${B} M`,
      plain + "not a header\0src/b.ts\0",
      plain + `\0${plain}`,
      `:100644 100644 ${A} ${A} R100\0only-one-path\0`,
    ]
  ) {
    const said = (() => {
      try {
        parseRawDiff(bad);
      } catch (err) {
        return (err as Error).message;
      }
      return "nothing";
    })();
    assert.notEqual(said, "nothing", JSON.stringify(bad));
    assert.throws(() => scopeOfRawDiff(bad, NONE), { message: said });
  }
});
