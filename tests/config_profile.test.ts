import assert from "node:assert/strict";
import { join } from "node:path";
import { InputError, UsageError } from "../lib/errors.ts";
import {
  DEFAULT_MODELS,
  DEFAULT_ROLE_TIMEOUT_MS,
  loadProfile,
  parseProfile,
  profilePath,
  renderDefaultProfile,
} from "../lib/config/profile.ts";

const FILE = "/home/op/.config/relay/profile.yaml";

function inputError(fn: () => unknown): InputError {
  try {
    fn();
  } catch (e) {
    if (e instanceof InputError) return e;
    throw e;
  }
  assert.fail("expected an InputError");
}

function envOf(vars: Record<string, string>) {
  return { get: (name: string) => vars[name] };
}

Deno.test("profilePath() prefers the flag, then RELAY_PROFILE, then XDG_CONFIG_HOME, then HOME", () => {
  const all = envOf({ RELAY_PROFILE: "/e/p.yaml", XDG_CONFIG_HOME: "/xdg", HOME: "/home/op" });
  assert.equal(profilePath("/flag/p.yaml", all), "/flag/p.yaml");
  assert.equal(profilePath(undefined, all), "/e/p.yaml");
  assert.equal(
    profilePath(undefined, envOf({ XDG_CONFIG_HOME: "/xdg", HOME: "/home/op" })),
    "/xdg/relay/profile.yaml",
  );
  assert.equal(
    profilePath(undefined, envOf({ HOME: "/home/op" })),
    "/home/op/.config/relay/profile.yaml",
  );
});

Deno.test("profilePath() ignores empty variables and a relative XDG_CONFIG_HOME", () => {
  const env = envOf({ RELAY_PROFILE: "", XDG_CONFIG_HOME: "rel/dir", HOME: "/home/op" });
  assert.equal(profilePath("", env), "/home/op/.config/relay/profile.yaml");
});

Deno.test("profilePath() makes a relative flag absolute", () => {
  assert.equal(profilePath("p.yaml", envOf({})), join(Deno.cwd(), "p.yaml"));
});

Deno.test("profilePath() throws a UsageError when nothing locates the profile", () => {
  assert.throws(() => profilePath(undefined, envOf({})), UsageError);
});

Deno.test("parseProfile() fills the default models and per-role timeouts", () => {
  const p = parseProfile(
    "roles:\n  executor: { vendor: claude }\n  reviewer: { vendor: codex }\n",
    FILE,
  );
  assert.deepEqual(p, {
    path: FILE,
    roles: {
      executor: { vendor: "claude", model: "claude-opus-5-5", timeoutMs: 3_600_000, env: {} },
      reviewer: { vendor: "codex", model: "gpt-6.1-sol", timeoutMs: 1_800_000, env: {} },
      // Unset, the security role is the executor's vendor and model.
      security: { vendor: "claude", model: "claude-opus-5-5", timeoutMs: 1_800_000, env: {} },
    },
    securityDefaulted: true,
    safetyMode: "efficient",
    handsfree: false,
    notify: [],
    limits: { attempts: 10, fixRounds: 20, planRounds: 5 },
  });
});

Deno.test("parseProfile() reads notifiers as argv lists; a program with a space in it is refused naming the key", () => {
  const roles = "roles:\n  executor: { vendor: claude }\n  reviewer: { vendor: codex }\n";
  const p = parseProfile(
    roles + 'notify:\n  - ["notify-send", "relay"]\n  - [/usr/local/bin/page-me]\n',
    FILE,
  );
  assert.deepEqual(p.notify, [["notify-send", "relay"], ["/usr/local/bin/page-me"]]);
  assert.throws(
    () => parseProfile(roles + 'notify:\n  - ["curl -d @- https://x"]\n', FILE),
    (e: Error) =>
      /notify\[0\]/.test(e.message) && /the first item is the program/.test(e.message) &&
      /no shell/.test(e.message),
  );
});

Deno.test("parseProfile() reads models, timeouts, env, argv and worktree_root", () => {
  const p = parseProfile(
    `roles:
  executor:
    vendor: command
    argv: [/opt/agent, --prompt, "{prompt}"]
    timeout: 2h
    env: { IS_SANDBOX: 1, DEBUG: true, NAME: x }
  reviewer:
    vendor: claude
    model: claude-sonnet-9
    timeout: 600
worktree_root: /srv/wt
`,
    FILE,
  );
  assert.deepEqual(p.roles.executor, {
    vendor: "command",
    argv: ["/opt/agent", "--prompt", "{prompt}"],
    timeoutMs: 7_200_000,
    env: { IS_SANDBOX: "1", DEBUG: "true", NAME: "x" },
  });
  assert.deepEqual(p.roles.reviewer, {
    vendor: "claude",
    model: "claude-sonnet-9",
    timeoutMs: 600_000,
    env: {},
  });
  assert.equal(p.worktreeRoot, "/srv/wt");
});

Deno.test("parseProfile() accepts {prompt} inside a larger argv element", () => {
  const p = parseProfile(
    'roles:\n  executor: { vendor: command, argv: [agent, "--prompt={prompt}"] }\n  reviewer: { vendor: demo }\n',
    FILE,
  );
  assert.deepEqual(p.roles.executor.argv, ["agent", "--prompt={prompt}"]);
  assert.deepEqual(p.roles.reviewer, { vendor: "demo", timeoutMs: 1_800_000, env: {} });
});

const BAD: [string, string, number, string, RegExp, RegExp][] = [
  // [name, yaml, line, key, problem, fix]
  [
    "a missing reviewer",
    "roles:\n  executor: { vendor: claude }\n",
    1,
    "roles.reviewer",
    /Cannot find required key "roles.reviewer"/,
    /add roles.reviewer with at least "vendor/,
  ],
  [
    "an empty file",
    "",
    1,
    "roles",
    /Cannot find required key "roles"/,
    /add roles.executor and roles.reviewer/,
  ],
  [
    "an unknown vendor",
    "roles:\n  executor:\n    vendor: gpt\n  reviewer: { vendor: demo }\n",
    3,
    "roles.executor.vendor",
    /Cannot use "gpt"/,
    /claude, codex, command, demo/,
  ],
  [
    "an unknown role key",
    "roles:\n  executor:\n    vendor: claude\n    modle: x\n  reviewer: { vendor: demo }\n",
    4,
    "roles.executor.modle",
    /unknown key "modle"/,
    /allowed keys: vendor, model, argv, timeout, env/,
  ],
  [
    "an unknown role name",
    "roles:\n  executor: { vendor: claude }\n  reviewer: { vendor: demo }\n  planner: { vendor: demo }\n",
    4,
    "roles.planner",
    /unknown key "planner"/,
    /allowed keys: executor, reviewer/,
  ],
  [
    "argv on claude",
    "roles:\n  executor:\n    vendor: claude\n    argv: [x, '{prompt}']\n  reviewer: { vendor: demo }\n",
    4,
    "roles.executor.argv",
    /argv is only for vendor command, not claude/,
    /for vendor command only/,
  ],
  [
    "command without argv",
    "roles:\n  executor: { vendor: demo }\n  reviewer:\n    vendor: command\n",
    3,
    "roles.reviewer.argv",
    /vendor command needs argv/,
    /"\{prompt\}" appears/,
  ],
  [
    "command with an empty program",
    "roles:\n  executor:\n    vendor: command\n    argv:\n      - ''\n      - '{prompt}'\n  reviewer: { vendor: demo }\n",
    5,
    "roles.executor.argv[0]",
    /the program name is empty/,
    /absolute path or a program on PATH/,
  ],
  [
    "command with a relative program path",
    "roles:\n  executor:\n    vendor: command\n    argv: [./bin/agent, '{prompt}']\n  reviewer: { vendor: demo }\n",
    4,
    "roles.executor.argv[0]",
    /relative path would resolve inside the agent's worktree/,
    /absolute path/,
  ],
  [
    "command without {prompt}",
    "roles:\n  executor:\n    vendor: command\n    argv: [/bin/agent, --go]\n  reviewer: { vendor: demo }\n",
    4,
    "roles.executor.argv",
    /prompt would never reach the program/,
    /\{prompt\}/,
  ],
  [
    "a model on command",
    "roles:\n  executor:\n    vendor: command\n    model: m\n    argv: [a, '{prompt}']\n  reviewer: { vendor: demo }\n",
    4,
    "roles.executor.model",
    /vendor command takes no model/,
    /put it in argv/,
  ],
  [
    "a model on demo",
    "roles:\n  executor: { vendor: demo, model: m }\n  reviewer: { vendor: demo }\n",
    2,
    "roles.executor.model",
    /vendor demo takes no model/,
    /claude or codex only/,
  ],
  [
    "a bad timeout",
    "roles:\n  executor: { vendor: demo }\n  reviewer:\n    vendor: demo\n    timeout: 5 minutes\n",
    5,
    "roles.reviewer.timeout",
    /Cannot use "5 minutes"/,
    /1h30m/,
  ],
  [
    "a bad env name",
    "roles:\n  executor:\n    vendor: demo\n    env:\n      BAD-NAME: x\n  reviewer: { vendor: demo }\n",
    5,
    "roles.executor.env.BAD-NAME",
    /not a valid variable name/,
    /NAME: value/,
  ],
  [
    "a RELAY_ env name",
    "roles:\n  executor:\n    vendor: demo\n    env: { RELAY_REPORT: /tmp/x }\n  reviewer: { vendor: demo }\n",
    4,
    "roles.executor.env.RELAY_REPORT",
    /set by relay/,
    /RELAY_/,
  ],
  [
    "a test_command with a pipe",
    'roles:\n  executor: { vendor: demo }\n  reviewer: { vendor: demo }\ntest_command: "npm test | tee log"\n',
    4,
    "test_command",
    /not one exact command: it contains "\|" \(a pipe\)/,
    /\/bin\/bash \/absolute\/path\/script\.sh/,
  ],
  [
    "a test_command with command substitution",
    'roles:\n  executor: { vendor: demo }\n  reviewer: { vendor: demo }\ntest_command: "npm test $(echo x)"\n',
    4,
    "test_command",
    /"\$\(" \(command substitution\)/,
    /one exact command/,
  ],
  [
    "a test_command with a leading VAR=",
    'roles:\n  executor: { vendor: demo }\n  reviewer: { vendor: demo }\ntest_command: "CI=1 npm test"\n',
    4,
    "test_command",
    /a leading VAR=/,
    /one exact command/,
  ],
  [
    "a test_command with &&",
    'roles:\n  executor: { vendor: demo }\n  reviewer: { vendor: demo }\ntest_command: "npm ci && npm test"\n',
    4,
    "test_command",
    /"&&" \(a second command\)/,
    /script\.sh/,
  ],
  [
    "a test_command with a redirection",
    'roles:\n  executor: { vendor: demo }\n  reviewer: { vendor: demo }\ntest_command: "npm test > out.txt"\n',
    4,
    "test_command",
    /a redirection/,
    /one exact command/,
  ],
  [
    "both security and gate",
    "roles:\n  executor: { vendor: demo }\n  reviewer: { vendor: demo }\n  security: { vendor: demo }\n  gate: { vendor: demo }\n",
    5,
    "roles.gate",
    /another name for security/,
    /vendor/,
  ],
  [
    "an unknown safety_mode",
    "roles:\n  executor: { vendor: demo }\n  reviewer: { vendor: demo }\nsafety_mode: paranoid\n",
    4,
    "safety_mode",
    /.+/,
    /efficient or strict/,
  ],
  [
    "a limit over its range",
    "roles:\n  executor: { vendor: demo }\n  reviewer: { vendor: demo }\nlimits: { attempts: 50 }\n",
    4,
    "limits.attempts",
    /.+/,
    /attempts \(1-10\)/,
  ],
  [
    "a relative worktree_root",
    "roles:\n  executor: { vendor: demo }\n  reviewer: { vendor: demo }\nworktree_root: wt\n",
    4,
    "worktree_root",
    /must be an absolute path/,
    /absolute path/,
  ],
];

for (const [name, text, line, key, problem, fix] of BAD) {
  Deno.test(`parseProfile() rejects ${name}, naming file, line ${line} and key ${key}`, () => {
    const e = inputError(() => parseProfile(text, FILE));
    assert.equal(e.location.file, FILE);
    assert.equal(e.location.line, line);
    assert.equal(e.location.key, key);
    assert.match(e.message, problem);
    assert.match(e.fix ?? "", fix);
    assert.ok(e.message.startsWith(`${FILE}:${line} (key "${key}"): `), e.message);
  });
}

Deno.test("renderDefaultProfile() parses back: executor claude, reviewer codex, default timeouts", () => {
  const p = parseProfile(renderDefaultProfile(), FILE);
  assert.deepEqual(p.roles.executor, {
    vendor: "claude",
    model: DEFAULT_MODELS.claude,
    timeoutMs: DEFAULT_ROLE_TIMEOUT_MS.executor,
    env: {},
  });
  assert.deepEqual(p.roles.reviewer, {
    vendor: "codex",
    model: DEFAULT_MODELS.codex,
    timeoutMs: DEFAULT_ROLE_TIMEOUT_MS.reviewer,
    env: {},
  });
  assert.equal(p.worktreeRoot, undefined);
});

Deno.test("loadProfile() reads the file and records its path", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = join(dir, "profile.yaml");
    await Deno.writeTextFile(file, renderDefaultProfile());
    const p = await loadProfile(file);
    assert.equal(p.path, file);
    assert.equal(p.roles.executor.vendor, "claude");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadProfile() on a missing file says to run relay init and shows a minimal profile", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = join(dir, "nope.yaml");
    const e = await loadProfile(file).then(() => undefined, (err: unknown) => err);
    assert.ok(e instanceof InputError);
    assert.equal(e.location.file, file);
    assert.match(e.message, /Cannot read the operator profile: the file does not exist/);
    assert.match(e.fix ?? "", /relay init/);
    const example = (e.fix ?? "").slice((e.fix ?? "").indexOf("roles:"));
    const p = parseProfile(example.replace(/\n {2}/g, "\n"), "example");
    assert.equal(p.roles.executor.vendor, "claude");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("parseProfile() reads the lifecycle keys: security (or gate), test_command, modes, limits", () => {
  const base =
    "roles:\n  executor: { vendor: codex, model: gpt-x }\n  reviewer: { vendor: claude }\n";
  const p = parseProfile(
    base +
      "  gate: { vendor: claude, model: claude-z }\n" +
      "test_command: /bin/bash /srv/ci/test.sh\nsafety_mode: strict\nmerge_policy: human\n" +
      "handsfree: true\nlimits: { attempts: 3, fix_rounds: 1, plan_rounds: 2 }\n",
    FILE,
  );
  assert.deepEqual(p.roles.security, {
    vendor: "claude",
    model: "claude-z",
    timeoutMs: DEFAULT_ROLE_TIMEOUT_MS.reviewer,
    env: {},
  });
  assert.equal(p.securityDefaulted, false);
  assert.equal(p.testCommand, "/bin/bash /srv/ci/test.sh");
  assert.equal(p.safetyMode, "strict");
  assert.equal(p.mergePolicy, "human");
  assert.equal(p.handsfree, true);
  assert.deepEqual(p.limits, { attempts: 3, fixRounds: 1, planRounds: 2 });
  // Plain exact commands pass; the security role defaults to the executor's vendor and model.
  for (const command of ["npm test", "deno task test", "pytest -q tests/", "go test ./..."]) {
    assert.equal(parseProfile(base + `test_command: ${command}\n`, FILE).testCommand, command);
  }
  const d = parseProfile(base, FILE);
  assert.deepEqual([d.roles.security.vendor, d.roles.security.model], ["codex", "gpt-x"]);
});
