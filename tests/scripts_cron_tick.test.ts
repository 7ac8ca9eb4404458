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

Deno.test("cron wrappers log a run's output under one header, leave no trace of an idle tick, and pass the exit code on", async () => {
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
    assert.equal(await Deno.readTextFile(calls), "args: poll --quiet\nargs: review\nargs: poll\n");

    const usage = await tick("poll.sh", [], env);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /usage: .* poll <repo>/);
    assert.equal((await tick("cron-tick.sh", ["frobnicate", repo], env)).code, 2);
    assert.equal((await tick("poll.sh", [join(dir, "missing")], env)).code, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
