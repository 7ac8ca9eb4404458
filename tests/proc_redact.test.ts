import assert from "node:assert/strict";
import { isSecretName, Redactor, resetRedactor, secretsOf } from "../lib/proc/redact.ts";
import { barEnv, runCommand } from "../lib/bar/run.ts";
import { Gh } from "../lib/forge/gh.ts";
import { runAgent } from "../lib/agents/runner.ts";

const KEY = "sk-test-PLANTED-1234567890";

Deno.test("isSecretName() knows keys, tokens and passwords, not authors or agent sockets", () => {
  for (
    const name of [
      "ANTHROPIC_API_KEY",
      "OPENAI_API_KEY",
      "GH_TOKEN",
      "GITHUB_TOKEN",
      "AWS_SECRET_ACCESS_KEY",
      "AWS_SESSION_TOKEN",
      "DB_PASSWORD",
      "PGPASSWORD",
      "SMTP_PASSWD",
      "GOOGLE_APPLICATION_CREDENTIALS",
      "BASIC_AUTH",
      "SESSION_COOKIE",
      "SSH_PRIVATE_KEY",
      "npm_config__auth",
    ]
  ) assert.ok(isSecretName(name), name);
  for (
    const name of [
      "PATH",
      "HOME",
      "GIT_AUTHOR_NAME",
      "GIT_AUTHOR_EMAIL",
      "SSH_AUTH_SOCK",
      "DBUS_SESSION_BUS_ADDRESS",
      "XDG_SESSION_TYPE",
      "LANG",
    ]
  ) assert.ok(!isSecretName(name), name);
});

Deno.test("secretsOf() skips short values, word-like values and non-secret names, longest value first", () => {
  const secrets = secretsOf({
    GH_TOKEN: "ghp_0123456789",
    // A word is not a key: redacting it would rewrite paths and prose ("/home/u/postgres-tool").
    PGPASSWORD: "postgresqlpostgres",
    DB_PASSWORD: "password",
    SHORT_TOKEN: "ghp_short",
    ANTHROPIC_API_KEY: KEY,
    FEATURE_KEY: "true",
    PASSWORD: "        ",
    GIT_AUTHOR_NAME: "Test Author",
    OTHER_TOKEN: KEY,
    // Where a secret lives, not the secret: a path that exists.
    GOOGLE_APPLICATION_CREDENTIALS: Deno.cwd(),
    AWS_SECRET_ACCESS_KEY: "/not/an/existing/path+base64ish",
  });
  assert.deepEqual(secrets, [
    { name: "AWS_SECRET_ACCESS_KEY", value: "/not/an/existing/path+base64ish" },
    { name: "ANTHROPIC_API_KEY", value: KEY },
    { name: "GH_TOKEN", value: "ghp_0123456789" },
  ]);
});

Deno.test("Redactor.redact() replaces every occurrence with the variable's name; redactDeep() every string", () => {
  const r = new Redactor(secretsOf({ ANTHROPIC_API_KEY: KEY, GH_TOKEN: "ghp_0123456789" }));
  assert.equal(
    r.redact(`key=${KEY} again ${KEY}; gh ghp_0123456789`),
    "key=[redacted:ANTHROPIC_API_KEY] again [redacted:ANTHROPIC_API_KEY]; gh [redacted:GH_TOKEN]",
  );
  assert.deepEqual(r.redactDeep({ a: [KEY, 3, null], b: { c: `x${KEY}` }, d: true }), {
    a: ["[redacted:ANTHROPIC_API_KEY]", 3, null],
    b: { c: "x[redacted:ANTHROPIC_API_KEY]" },
    d: true,
  });
  const none = new Redactor([]);
  assert.equal(none.active, false);
  assert.equal(none.redact(KEY), KEY);
});

Deno.test("Redactor.stream() catches a secret split across pieces at every position", () => {
  const r = new Redactor(secretsOf({ ANTHROPIC_API_KEY: KEY }));
  const text = `env:\nANTHROPIC_API_KEY=${KEY}\nsk-test is not a key\n`;
  for (let i = 0; i <= text.length; i++) {
    for (let j = i; j <= text.length; j += 5) {
      const s = r.stream();
      const out = s.push(text.slice(0, i)) + s.push(text.slice(i, j)) + s.push(text.slice(j)) +
        s.end();
      assert.equal(out, r.redact(text), `split at ${i}, ${j}`);
      assert.ok(!out.includes("PLANTED"));
    }
  }
  // Text that only starts like a key is held back until it cannot be one, then written.
  const s = r.stream();
  assert.equal(s.push("a sk-te"), "a ");
  assert.equal(s.push("xt"), "sk-text");
  assert.equal(s.push("sk-test-PL"), "");
  assert.equal(s.end(), "sk-test-PL");
});

Deno.test("barEnv() keeps PATH, HOME, locale, TMPDIR, USER and the names passed, nothing else", () => {
  const env = barEnv(["JAVA_HOME", "DEPLOY_TOKEN", "ABSENT"], {
    PATH: "/usr/bin",
    HOME: "/home/u",
    LANG: "C.UTF-8",
    LC_ALL: "C",
    LC_CTYPE: "C",
    TMPDIR: "/tmp/x",
    USER: "u",
    LOGNAME: "u",
    TERM: "xterm",
    JAVA_HOME: "/opt/java",
    DEPLOY_TOKEN: "tok-1234567890",
    ANTHROPIC_API_KEY: KEY,
    GIT_DIR: "/elsewhere/.git",
    LD_PRELOAD: "/tmp/evil.so",
  });
  assert.deepEqual(Object.keys(env).sort(), [
    "DEPLOY_TOKEN",
    "HOME",
    "JAVA_HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "LOGNAME",
    "PATH",
    "TMPDIR",
    "USER",
  ]);
});

Deno.test("runCommand() runs a bar command without relay's environment", async () => {
  Deno.env.set("RELAY_TEST_NOT_PASSED", "visible-to-relay-only");
  Deno.env.set("RELAY_TEST_PASSED", "passed-through");
  try {
    const dir = await Deno.makeTempDir();
    try {
      const res = await runCommand("env", dir, 10_000, ["RELAY_TEST_PASSED"]);
      assert.equal(res.exit, 0, res.output);
      assert.match(res.output, /^PATH=/m);
      assert.match(res.output, /^RELAY_TEST_PASSED=passed-through$/m);
      assert.doesNotMatch(res.output, /RELAY_TEST_NOT_PASSED/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  } finally {
    Deno.env.delete("RELAY_TEST_NOT_PASSED");
    Deno.env.delete("RELAY_TEST_PASSED");
  }
});

Deno.test("Gh sends no secret of relay's environment to GitHub, in arguments or on stdin", async () => {
  Deno.env.set("RELAY_TEST_API_KEY", KEY);
  resetRedactor(); // it read the environment once, before the key was there
  const dir = await Deno.makeTempDir();
  try {
    const bin = `${dir}/gh`;
    await Deno.writeTextFile(bin, '#!/bin/sh\nprintf "%s\\n" "$@" >> "$OUT"\ncat >> "$OUT"\n');
    await Deno.chmod(bin, 0o755);
    const out = `${dir}/sent`;
    const gh = new Gh(dir, 10_000, bin, { OUT: out });
    await gh.run(["pr", "create", "--title", `leak ${KEY}`, "--body-file", "-"], {
      stdin: `body with ${KEY}\n`,
    });
    const sent = await Deno.readTextFile(out);
    assert.match(sent, /leak \[redacted:RELAY_TEST_API_KEY\]/);
    assert.match(sent, /body with \[redacted:RELAY_TEST_API_KEY\]/);
    assert.ok(!sent.includes("PLANTED"), sent);
  } finally {
    Deno.env.delete("RELAY_TEST_API_KEY");
    resetRedactor();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runAgent() writes an agent's output with relay's secrets redacted, even split across writes", async () => {
  Deno.env.set("RELAY_TEST_API_KEY", KEY);
  resetRedactor();
  const dir = await Deno.makeTempDir();
  try {
    const script = `printf 'key: sk-test-PLA'; sleep 0.3; printf 'NTED-1234567890 done\\n'`;
    const res = await runAgent({
      argv: ["sh", "-c", script],
      cwd: dir,
      env: {},
      timeoutMs: 10_000,
      logPath: `${dir}/agent.log`,
      stdoutPath: `${dir}/agent.stdout`,
      progress: "quiet",
      label: "test agent",
    });
    assert.equal(res.exitCode, 0);
    for (const file of ["agent.log", "agent.stdout"]) {
      const text = await Deno.readTextFile(`${dir}/${file}`);
      assert.match(text, /key: \[redacted:RELAY_TEST_API_KEY\] done\n/, file);
      assert.ok(!text.includes("PLANTED"), file);
    }
    assert.match(res.logTail, /key: \[redacted:RELAY_TEST_API_KEY\] done/);
  } finally {
    Deno.env.delete("RELAY_TEST_API_KEY");
    resetRedactor();
    await Deno.remove(dir, { recursive: true });
  }
});
