import assert from "node:assert/strict";
import { join } from "node:path";
import { InputError } from "../lib/errors.ts";
import {
  DEFAULT_REPO_CONFIG,
  effectiveAgentTimeoutMs,
  isSafeBranchName,
  loadRepoConfig,
  parseRepoConfig,
  PROGRAM_KEYS,
  renderDefaultRepoConfig,
} from "../lib/config/repo.ts";

const FILE = ".relay/config.yaml";

function inputError(fn: () => unknown): InputError {
  try {
    fn();
  } catch (e) {
    if (e instanceof InputError) return e;
    throw e;
  }
  assert.fail("expected an InputError");
}

Deno.test("parseRepoConfig() gives the defaults for an empty file", () => {
  assert.deepEqual(parseRepoConfig("", FILE), DEFAULT_REPO_CONFIG);
  assert.deepEqual(parseRepoConfig("# nothing set\n", FILE), DEFAULT_REPO_CONFIG);
  assert.equal(DEFAULT_REPO_CONFIG.timeouts.agentMs, undefined);
  assert.equal(DEFAULT_REPO_CONFIG.timeouts.barMs, 600_000);
  assert.equal(DEFAULT_REPO_CONFIG.timeouts.networkMs, 120_000);
  assert.equal(DEFAULT_REPO_CONFIG.timeouts.leaseMs, 600_000);
});

Deno.test("parseRepoConfig() reads every key and converts names and durations", () => {
  const text = `version: 1
main: trunk
remote: upstream
attempts: 4
fix_rounds: 0
merge: human
forge: github
timeouts:
  agent: 1h30m
  bar: 90
  network: 30s
  lease: 30m
evidence_max_bytes: 2048
gate:
  product: ["src/**", lib/**]
  refuse: [deploy/**]
accepted_infra: [.github/workflows/**]
never_commit: ["*.log", tmp/**]
bar_env: [JAVA_HOME, NODE_OPTIONS, NPM_TOKEN]
docs_file: docs/CHANGES.md
skip_quality_polish: true
plan_review: on
plan_rounds: 3
preview_url: https://deploy-preview-{pr}--site.netlify.app
preview_path: /healthz
preview_timeout: 5m
paperwork:
  commit_suffix: "[skip netlify]"
`;
  assert.deepEqual(parseRepoConfig(text, FILE), {
    version: 1,
    main: "trunk",
    remote: "upstream",
    attempts: 4,
    fixRounds: 0,
    merge: "human",
    forge: "github",
    machines: "one",
    timeouts: { agentMs: 5_400_000, barMs: 90_000, networkMs: 30_000, leaseMs: 1_800_000 },
    evidenceMaxBytes: 2048,
    gate: { product: ["src/**", "lib/**"], refuse: ["deploy/**"] },
    acceptedInfra: [".github/workflows/**"],
    neverCommit: ["*.log", "tmp/**"],
    // A secret-looking name is the owner's choice; its value is still redacted in output.
    barEnv: ["JAVA_HOME", "NODE_OPTIONS", "NPM_TOKEN"],
    docsFile: "docs/CHANGES.md",
    skipQualityPolish: true,
    planReview: true,
    planRounds: 3,
    preview: {
      source: { template: "https://deploy-preview-{pr}--site.netlify.app" },
      path: "/healthz",
      timeoutMs: 300_000,
    },
    paperwork: { commitSuffix: "[skip netlify]" },
  });
});

Deno.test("a commit_suffix of more than one line, or a preview_url with a placeholder relay does not fill, is refused naming the key", () => {
  assert.throws(
    () => parseRepoConfig('paperwork:\n  commit_suffix: "a\\nb"\n', FILE),
    (e: Error) => /paperwork\.commit_suffix/.test(e.message) && /one line/.test(e.message),
  );
  assert.throws(
    () => parseRepoConfig("preview_url: https://x/{sha}\n", FILE),
    (e: Error) => /preview_url/.test(e.message) && /\{pr\}, \{branch\}, \{head\}/.test(e.message),
  );
  assert.throws(
    () => parseRepoConfig("preview_url: https://x\npreview: github-deployments\n", FILE),
    (e: Error) => /set one/.test(e.message),
  );
});

Deno.test("parseRepoConfig() fills defaults inside partly given sections", () => {
  const c = parseRepoConfig("timeouts:\n  bar: 5m\ngate:\n  refuse: [x/**]\n", FILE);
  assert.deepEqual(c.timeouts, { barMs: 300_000, networkMs: 120_000, leaseMs: 600_000 });
  assert.deepEqual(c.gate, { product: [], refuse: ["x/**"] });
});

Deno.test("parseRepoConfig() reads an emptied section (`gate:` alone) as its defaults", () => {
  const c = parseRepoConfig("gate:\n  # product: []\ntimeouts:\nmain:\n", FILE);
  assert.deepEqual(c, DEFAULT_REPO_CONFIG);
});

Deno.test("parseRepoConfig() returns fresh lists, never the frozen defaults", () => {
  const c = parseRepoConfig("", FILE);
  c.gate.product.push("src/**");
  assert.deepEqual(DEFAULT_REPO_CONFIG.gate.product, []);
  assert.ok(Object.isFrozen(DEFAULT_REPO_CONFIG.gate.product));
});

Deno.test("parseRepoConfig() rejects an unknown top-level key, naming line, key and the allowed keys", () => {
  const e = inputError(() => parseRepoConfig("main: main\nattempt: 3\n", FILE));
  assert.equal(e.location.file, FILE);
  assert.equal(e.location.line, 2);
  assert.equal(e.location.key, "attempt");
  assert.match(
    e.message,
    /^\.relay\/config\.yaml:2 \(key "attempt"\): Cannot use unknown key "attempt"/,
  );
  assert.match(
    e.fix ?? "",
    /allowed keys: version, main, remote, attempts, fix_rounds, merge, forge/,
  );
});

Deno.test("parseRepoConfig() rejects an unknown nested key with the keys allowed there", () => {
  const e = inputError(() => parseRepoConfig("timeouts:\n  bar: 5m\n  merge: 1m\n", FILE));
  assert.equal(e.location.line, 3);
  assert.equal(e.location.key, "timeouts.merge");
  assert.equal(e.fix, "remove it or use one of the allowed keys: agent, bar, network, lease");
});

const BAD_VALUES: [string, number, string, RegExp][] = [
  ["version: 2\n", 1, "version", /version: 1/],
  ["main: main\nattempts: 11\n", 2, "attempts", /1 to 10/],
  ["attempts: 0\n", 1, "attempts", /1 to 10/],
  ["attempts: 1.5\n", 1, "attempts", /1 to 10/],
  ['attempts: "2"\n', 1, "attempts", /1 to 10/],
  ["fix_rounds: 21\n", 1, "fix_rounds", /0 to 20/],
  ["merge: always\n", 1, "merge", /auto or human/],
  ["forge: gitlab\n", 1, "forge", /plain or github/],
  ["main: -x\n", 1, "main", /base branch/],
  ["main: a..b\n", 1, "main", /base branch/],
  ["remote: 'o rigin'\n", 1, "remote", /remote name/],
  ["timeouts:\n  bar: soon\n", 2, "timeouts.bar", /1h30m/],
  ["timeouts:\n  network: 0\n", 2, "timeouts.network", /duration/],
  ["timeouts:\n  agent: 48h\n", 2, "timeouts.agent", /at most 24h/],
  ["timeouts: 5m\n", 1, "timeouts", /agent, bar, network, lease/],
  [
    "timeouts:\n  lease: 30s\n",
    2,
    "timeouts.lease",
    /from 1m to 24h, e\.g\. "10m": how long a role's lease/,
  ],
  ["timeouts:\n  lease: 25h\n", 2, "timeouts.lease", /from 1m to 24h/],
  ["evidence_max_bytes: 10\n", 1, "evidence_max_bytes", /1024 to 16777216/],
  ["gate:\n  product: src/**\n", 2, "gate.product", /list of repo-relative globs/],
  ["gate:\n  refuse:\n    - ok/**\n    - '!keep/**'\n", 4, "gate.refuse[1]", /globs to refuse/],
  ["accepted_infra: ['']\n", 1, "accepted_infra[0]", /globs/],
  ["never_commit: '*.log'\n", 1, "never_commit", /\["\*\.log", "tmp\/\*\*"\]/],
  ["never_commit: ['!keep.log']\n", 1, "never_commit[0]", /list of repo-relative globs/],
  ["bar_env: [JAVA_HOME, 'A=B']\n", 1, "bar_env[1]", /environment variable names/],
  ["bar_env: ['1X']\n", 1, "bar_env[0]", /environment variable names/],
  ["bar_env: JAVA_HOME\n", 1, "bar_env", /e\.g\. \[JAVA_HOME\]/],
  ["- a\n- b\n", 1, "(top level)", /mapping of settings/],
];

for (const [text, line, key, fix] of BAD_VALUES) {
  Deno.test(`parseRepoConfig() rejects ${JSON.stringify(text.trim())} at line ${line}, key ${key}`, () => {
    const e = inputError(() => parseRepoConfig(text, FILE));
    assert.equal(e.location.file, FILE);
    assert.equal(e.location.line, line);
    assert.equal(e.location.key, key);
    assert.match(e.message, /Cannot use /);
    assert.match(e.fix ?? "", fix);
  });
}

Deno.test("parseRepoConfig() says why a value is wrong, not only where", () => {
  const e = inputError(() => parseRepoConfig("timeouts:\n  bar: soon\n", FILE));
  assert.match(e.message, /Cannot use "soon": write seconds/);
  const neg = inputError(() => parseRepoConfig("gate:\n  refuse: ['!x']\n", FILE));
  assert.match(neg.message, /negated globs are not supported/);
});

Deno.test("parseRepoConfig() reports the first problem by line and counts the rest", () => {
  const e = inputError(() => parseRepoConfig("merge: x\nattempts: 99\nforge: y\n", FILE));
  assert.equal(e.location.line, 1);
  assert.match(e.message, /2 more problem/);
});

for (const key of PROGRAM_KEYS) {
  Deno.test(`parseRepoConfig() refuses the program key "${key}" and points to the profile`, () => {
    const e = inputError(() => parseRepoConfig(`main: main\n${key}: x\n`, FILE));
    assert.equal(e.location.line, 2);
    assert.equal(e.location.key, key);
    assert.match(e.message, /Cannot name a program in the repo config/);
    assert.match(e.fix ?? "", /operator profile/);
    assert.match(e.fix ?? "", /~\/\.config\/relay\/profile\.yaml/);
  });
}

Deno.test("parseRepoConfig() refuses program keys nested anywhere, in any case", () => {
  const nested = inputError(() =>
    parseRepoConfig("timeouts:\n  bar: 5m\ngate:\n  product: []\n  extra:\n    Argv: [sh]\n", FILE)
  );
  assert.equal(nested.location.line, 6);
  assert.equal(nested.location.key, "gate.extra.Argv");
  const inList = inputError(() =>
    parseRepoConfig("accepted_infra:\n  - x\n  - command: rm\n", FILE)
  );
  assert.equal(inList.location.line, 3);
  assert.equal(inList.location.key, "accepted_infra[1].command");
});

Deno.test('parseRepoConfig() allows timeouts.agent, the one place "agent" is a duration', () => {
  assert.equal(parseRepoConfig("timeouts:\n  agent: 20m\n", FILE).timeouts.agentMs, 1_200_000);
  const e = inputError(() => parseRepoConfig("timeouts:\n  agent:\n    vendor: claude\n", FILE));
  assert.equal(e.location.key, "timeouts.agent.vendor");
  assert.equal(e.location.line, 3);
});

Deno.test("parseRepoConfig() checks program keys before unknown keys", () => {
  const e = inputError(() => parseRepoConfig("roles:\n  executor:\n    vendor: claude\n", FILE));
  assert.equal(e.location.key, "roles");
  assert.match(e.message, /Cannot name a program/);
});

Deno.test("parseRepoConfig() passes YAML syntax errors on with file and line", () => {
  const e = inputError(() => parseRepoConfig("main: main\nmain: dev\n", FILE));
  assert.equal(e.location.line, 2);
  assert.match(e.message, /Cannot parse YAML/);
});

Deno.test("renderDefaultRepoConfig() parses back to the defaults", () => {
  const text = renderDefaultRepoConfig();
  assert.deepEqual(parseRepoConfig(text, FILE), DEFAULT_REPO_CONFIG);
  assert.match(text, /^ {2}# agent: 30m /m);
  for (
    const key of [
      "attempts",
      "fix_rounds",
      "merge",
      "forge",
      "evidence_max_bytes",
      "accepted_infra",
      "never_commit",
      "bar_env",
    ]
  ) {
    assert.match(text, new RegExp(`^${key}: `, "m"));
  }
});

Deno.test("effectiveAgentTimeoutMs() only ever lowers the operator's timeout", () => {
  const base = parseRepoConfig("", FILE);
  assert.equal(effectiveAgentTimeoutMs(3_600_000, base), 3_600_000);
  const lower = parseRepoConfig("timeouts:\n  agent: 20m\n", FILE);
  assert.equal(effectiveAgentTimeoutMs(3_600_000, lower), 1_200_000);
  const higher = parseRepoConfig("timeouts:\n  agent: 3h\n", FILE);
  assert.equal(effectiveAgentTimeoutMs(3_600_000, higher), 3_600_000);
});

Deno.test("isSafeBranchName() accepts ordinary names and refuses ones git or argv would misread", () => {
  for (const ok of ["main", "release/1.2", "dev_x", "v2"]) assert.ok(isSafeBranchName(ok), ok);
  for (const bad of ["", "-f", "a..b", "a/", "a.lock", "a b", "a//b", "a/.b", ".x", "a@{1}"]) {
    assert.ok(!isSafeBranchName(bad), bad);
  }
});

Deno.test("loadRepoConfig() gives the defaults when .relay/config.yaml is missing", async () => {
  const root = await Deno.makeTempDir();
  try {
    assert.deepEqual(await loadRepoConfig(root), DEFAULT_REPO_CONFIG);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("loadRepoConfig() reads the file and names its path in errors", async () => {
  const root = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(root, ".relay"));
    const file = join(root, ".relay", "config.yaml");
    await Deno.writeTextFile(file, "attempts: 5\n");
    assert.equal((await loadRepoConfig(root)).attempts, 5);
    await Deno.writeTextFile(file, "attempts: 5\nvendor: codex\n");
    const e = await loadRepoConfig(root).then(() => undefined, (err: unknown) => err);
    assert.ok(e instanceof InputError);
    assert.equal(e.location.file, file);
    assert.equal(e.location.line, 2);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("machines: one by default, split with either forge; another word is refused with the fix", () => {
  assert.equal(parseRepoConfig("version: 1\n", FILE).machines, "one");
  assert.equal(parseRepoConfig("machines: split\n", FILE).machines, "split");
  const github = parseRepoConfig("forge: github\nmachines: split\n", FILE);
  assert.equal(github.machines, "split");
  assert.equal(github.forge, "github");
  const bad = inputError(() => parseRepoConfig("machines: two\n", FILE));
  assert.match(bad.message, /machines/);
  assert.match(bad.message, /one \(both ticks in this clone\) or split/);
});
