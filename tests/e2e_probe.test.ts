/**
 * relay probe and strict mode, end to end: each role's program is resolved and
 * given one scratch turn (the author must write, a reviewer must not); under
 * safety_mode: strict a tick runs a role only with a passing probe of the
 * program as it is now, and a changed binary is refused until re-probed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { AGENTS, all, brief, exists, makeScene, type Scene, stateDir } from "./helpers/scene.ts";

async function queue(scene: Scene, title: string): Promise<void> {
  const res = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title }) });
  assert.equal(res.code, 0, all(res));
}

/** A security role of its own: the scene's read-only fake reviewer. */
async function securityReviews(scene: Scene): Promise<void> {
  const profile = await Deno.readTextFile(scene.profile);
  const reviewer = /reviewer:\n {4}vendor: command\n {4}argv: (\[[^\n]*\])/.exec(profile)![1];
  await Deno.writeTextFile(
    scene.profile,
    profile.replace(
      "worktree_root:",
      `  security:\n    vendor: command\n    argv: ${reviewer}\n    timeout: 60s\nworktree_root:`,
    ),
  );
}

async function probes(scene: Scene) {
  return JSON.parse(await Deno.readTextFile(join(stateDir(scene), "probes.json")));
}

Deno.test("relay probe: a working author and read-only reviewers pass, with the residual risk of a command agent; nothing in the repository changes", async () => {
  await using scene = await makeScene();
  await securityReviews(scene);
  const before = await scene.snapshot();
  const res = await scene.relay(["probe"]);
  assert.equal(res.code, 0, all(res));
  for (const role of ["executor", "reviewer", "security"]) {
    assert.match(
      res.stdout,
      new RegExp(
        `^${role}: PASS_RESIDUAL_RISK — command \\(/\\S+/bash sha256 [0-9a-f]{12}\\): (runs as root; )?a command agent: relay cannot tell how it is sandboxed$`,
        "m",
      ),
    );
  }
  const file = await probes(scene);
  assert.deepEqual(Object.keys(file.roles).sort(), ["executor", "reviewer", "security"]);
  assert.match(file.roles.executor.program.sha256, /^[0-9a-f]{64}$/);
  assert.equal(await scene.snapshot(), before);

  // Unset, with a command executor, the security role is the reviewer's program (a command
  // cannot be made read-only; the executor's script would write): it passes.
  await scene.setAgent("good.sh");
  const defaulted = await scene.relay(["probe", "--role", "security"]);
  assert.equal(defaulted.code, 0, all(defaulted));
  assert.match(defaulted.stdout, /^security: PASS(_RESIDUAL_RISK)? — command /m);
});

Deno.test("relay probe: an author whose writes are denied and a reviewer that writes both FAIL, exit 1", async () => {
  await using scene = await makeScene({ agent: "denied.sh", reviewer: "edits.sh" });
  const author = await scene.relay(["probe", "--role", "executor"]);
  assert.equal(author.code, 1, all(author));
  assert.match(
    author.stdout,
    /^executor: FAIL — command .*: it exited 0 but wrote nothing: its writes are denied, so every attempt would fail$/m,
  );
  const reviewer = await scene.relay(["probe", "--role", "reviewer"]);
  assert.equal(reviewer.code, 1, all(reviewer));
  assert.match(
    reviewer.stdout,
    /^reviewer: FAIL — .*it changed its checkout \( M README\.md\): a reviewer role must not write$/m,
  );
  const file = await probes(scene);
  assert.equal(file.roles.executor.result, "FAIL");
  assert.equal(file.roles.reviewer.result, "FAIL");
  const bad = await scene.relay(["probe", "--role", "nobody"]);
  assert.equal(bad.code, 2, all(bad));
  assert.match(bad.stderr, /--role "nobody" is not a role: use executor, reviewer, security/);
});

Deno.test("strict mode: no probe, then a changed executor binary, each refused with exit 4 until re-probed", async () => {
  await using scene = await makeScene();
  // The executor is a program file of the test's own, so the test can change the binary.
  const bin = join(scene.dir, "agent-bin");
  // Strict mode: the author leaves its files, relay commits them.
  const execs = (agent: string) => `#!/usr/bin/env bash\nexec bash ${join(AGENTS, agent)} "$@"\n`;
  await Deno.writeTextFile(bin, execs("uncommitted.sh"));
  await Deno.chmod(bin, 0o755);
  await scene.setAgent([bin, "{prompt}"], "safety_mode: strict\n");
  await securityReviews(scene);
  await queue(scene, "First");
  await queue(scene, "Second");
  assert.equal((await scene.relay(["promote"])).code, 0);

  const unprobed = await scene.relay(["poll"]);
  assert.equal(unprobed.code, 4, all(unprobed));
  assert.match(
    unprobed.stderr,
    /re-probe: safety_mode is strict and the executor has not been probed/,
  );
  assert.match(unprobed.stderr, /next: Run "relay probe --role executor"/);
  assert.doesNotMatch(unprobed.stdout, /starts:/, "a refused tick does not start the task");
  assert.equal(await exists(join(stateDir(scene), "journal.json")), false, "an attempt started");

  assert.equal((await scene.relay(["probe"])).code, 0);
  const shipped = await scene.relay(["poll"]);
  assert.equal(shipped.code, 0, all(shipped));
  assert.match(shipped.stdout, /task 1 starts: .*merge auto, strict/);
  assert.match(shipped.stdout, /task 1 shipped/);
  const merged = await scene.relay(["review"]);
  assert.equal(merged.code, 0, all(merged));
  assert.match(merged.stdout, /task 1 merged/);

  // The binary changes (to an agent that commits): the next task's tick refuses it,
  // launching nothing.
  await Deno.writeTextFile(bin, execs("good.sh"));
  const changed = await scene.relay(["poll"]);
  assert.equal(changed.code, 4, all(changed));
  assert.match(
    changed.stderr,
    /re-probe: the executor program changed since it was probed: \S+agent-bin \(sha256 [0-9a-f]{12}\) then, \S+agent-bin \(sha256 [0-9a-f]{12}\) now/,
  );
  assert.equal(await exists(join(stateDir(scene), "journal.json")), false, "an attempt started");
  const status = await scene.relay(["status", "--brief"]);
  assert.match(status.stdout, /^poll .*re-probe: the executor program changed/m);

  // Re-probed, it runs; it commits by itself, which strict mode stops with its commits kept.
  assert.equal((await scene.relay(["probe", "--role", "executor"])).code, 0);
  const again = await scene.relay(["poll"]);
  assert.equal(again.code, 3, all(again));
  assert.match(
    again.stderr,
    /HOLD: task 2: in strict mode the executor must not commit, but its turn moved task-2 from [0-9a-f]{12} to [0-9a-f]{12}/,
  );
  assert.match(
    again.stderr,
    /Its commits are kept on task-2 and under refs\/relay\/anchors\/task-2\//,
  );
  assert.match(
    await scene.out(["log", "-1", "--format=%s", "task-2"]),
    /^Task #2: add the feature$/,
  );
});

Deno.test("strict mode pins the whole invocation: its arguments, environment, model, and the script an interpreter runs", async () => {
  const { invocationDigest } = await import("../lib/loop/probe.ts");
  const dir = await Deno.makeTempDir({ prefix: "relay-probe-digest-" });
  try {
    const script = join(dir, "agent.sh");
    await Deno.writeTextFile(script, "echo one\n");
    const spec = {
      vendor: "command" as const,
      argv: ["bash", script, "{prompt}"],
      env: {},
      timeoutMs: 60_000,
    };
    const base = await invocationDigest("executor", spec);
    assert.equal(await invocationDigest("executor", spec), base);
    assert.notEqual(
      await invocationDigest("executor", { ...spec, env: { IS_SANDBOX: "1" } }),
      base,
    );
    assert.notEqual(
      await invocationDigest("executor", { ...spec, argv: ["bash", script, "--fast", "{prompt}"] }),
      base,
    );
    await Deno.writeTextFile(script, "echo two\n");
    assert.notEqual(await invocationDigest("executor", spec), base, "the script changed");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
