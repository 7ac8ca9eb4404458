/** scripts/poll.sh and scripts/review.sh: the cron wrappers, with a stand-in relay binary. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT } from "./helpers/scene.ts";

async function tick(script: string, args: string[], env: Record<string, string>) {
  const out = await new Deno.Command("bash", {
    args: [join(ROOT, "scripts", script), ...args],
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: env.HOME ?? "/nonexistent",
      ...env,
    },
    clearEnv: true,
    stdin: "null",
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

Deno.test("cron wrappers log a run's output under one header, leave no trace of an idle or silent tick, and pass the exit code on", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-cron-" });
  try {
    const repo = join(dir, "repo");
    await Deno.mkdir(join(repo, ".git"), { recursive: true });
    const fake = join(dir, "relay");
    await Deno.writeTextFile(
      fake,
      '#!/usr/bin/env bash\necho "args: $*" >> "$CALLS"\n[ -n "${SAY:-}" ] && echo "$SAY" && echo "to stderr" >&2\nexit "${CODE:-0}"\n',
    );
    await Deno.chmod(fake, 0o755);
    const calls = join(dir, "calls");
    const log = join(repo, ".git", "relay", "cron.log");
    const env = { RELAY_BIN: fake, CALLS: calls, HOME: dir };

    assert.equal((await tick("poll.sh", [repo, "--quiet"], env)).code, 0);
    assert.equal(await Deno.readTextFile(log), "", "an idle tick writes nothing");

    assert.equal((await tick("review.sh", [repo], { ...env, SAY: "merged task 1" })).code, 0);
    const logged = await Deno.readTextFile(log);
    assert.match(
      logged,
      /^=== \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ relay review \(pid \d+, repo .*\) ===\nmerged task 1\nto stderr\n$/,
    );

    assert.equal((await tick("poll.sh", [repo], { ...env, SAY: "HOLD", CODE: "3" })).code, 3);
    assert.match(await Deno.readTextFile(log), /relay poll .*\nHOLD\nto stderr\n=== exit 3 ===\n$/);
    // A HOLD that lasts: relay says nothing (exit 3), and neither does the wrapper.
    const before = await Deno.readTextFile(log);
    assert.equal((await tick("poll.sh", [repo, "--quiet"], { ...env, CODE: "3" })).code, 3);
    assert.equal(await Deno.readTextFile(log), before, "a silent tick leaves no exit line");
    assert.equal(
      await Deno.readTextFile(calls),
      "args: poll --quiet\nargs: review\nargs: poll\nargs: poll --quiet\n",
    );

    const usage = await tick("poll.sh", [], env);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /usage: .* poll <repo>/);
    assert.equal((await tick("cron-tick.sh", ["frobnicate", repo], env)).code, 2);
    assert.equal((await tick("poll.sh", [join(dir, "missing")], env)).code, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cron wrappers run relay with NO_COLOR=1 and a PATH of safe folders only: no world-writable, cache or missing folder", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-cron-" });
  try {
    const repo = join(dir, "repo");
    await Deno.mkdir(join(repo, ".git"), { recursive: true });
    const fake = join(dir, "relay");
    await Deno.writeTextFile(
      fake,
      '#!/usr/bin/env bash\necho "PATH=$PATH"\necho "NO_COLOR=$NO_COLOR"\n',
    );
    await Deno.chmod(fake, 0o755);
    // (These sit under /tmp, itself refused; tests/cli_init_crontab.test.ts checks each rule
    // apart. A world-writable folder outside /tmp, when the system has one, is here too.)
    const ww = join(dir, "shared");
    await Deno.mkdir(ww);
    await Deno.chmod(ww, 0o1777);
    const cache = join(dir, "home", ".npm", "_npx", "1a2b", "node_modules", ".bin");
    await Deno.mkdir(cache, { recursive: true });
    const modules = join(dir, "app", "node_modules", ".bin");
    await Deno.mkdir(modules, { recursive: true });
    const missing = join(dir, "not-there");
    const sticky = ["/run/lock", "/var/lock"].filter((d) => {
      try {
        const info = Deno.statSync(d);
        return info.isDirectory && ((info.mode ?? 0) & 0o002) !== 0;
      } catch {
        return false;
      }
    });
    const PATH = [ww, cache, modules, missing, "relative", ...sticky, "/usr/bin", "/usr/bin/"]
      .join(":");

    const res = await tick("poll.sh", [repo], { RELAY_BIN: fake, HOME: join(dir, "home"), PATH });
    assert.equal(res.code, 0, res.stderr);
    const log = await Deno.readTextFile(join(repo, ".git", "relay", "cron.log"));
    assert.match(log, /^NO_COLOR=1$/m);
    const path = /^PATH=(.*)$/m.exec(log)?.[1] ?? "";
    const dirs = path.split(":");
    for (const bad of [ww, cache, modules, missing, "relative", "", ...sticky]) {
      assert.ok(!dirs.includes(bad), `${bad} in ${path}`);
    }
    assert.ok(dirs.includes("/usr/bin"), path);
    assert.equal(dirs.filter((d) => d === "/usr/bin").length, 1, path);
    for (const d of dirs) {
      const info = await Deno.stat(d);
      assert.ok(info.isDirectory && ((info.mode ?? 0) & 0o002) === 0, d);
      assert.ok(!d.startsWith("/tmp/"), d);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
