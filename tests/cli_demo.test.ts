/** `relay demo` (README's "Try it": `deno task demo`) through the real CLI. */
import assert from "node:assert/strict";
import { exists, makeScene } from "./helpers/scene.ts";

function sandboxOf(stdout: string): string {
  const m = /^=== sandbox (\S+) ===$/m.exec(stdout);
  assert.ok(m, stdout);
  return m[1]!;
}

Deno.test("relay demo runs the loop end to end, passes its own checks, and removes its sandbox", async () => {
  await using scene = await makeScene();
  // Outside any repository: the demo needs none.
  const res = await scene.relay(["demo"], { cwd: scene.dir });
  assert.equal(res.code, 0, res.stdout + res.stderr);
  for (const task of [1, 2]) {
    assert.match(res.stdout, new RegExp(`^ok  task-${task} carries product files only: `, "m"));
  }
  assert.doesNotMatch(res.stdout, /^BAD/m);
  assert.ok(!(await exists(sandboxOf(res.stdout))), "the sandbox is removed");
});

Deno.test("relay demo --keep leaves the sandbox and says where", async () => {
  await using scene = await makeScene();
  const res = await scene.relay(["demo", "--keep"], { cwd: scene.dir });
  const sandbox = sandboxOf(res.stdout);
  try {
    assert.equal(res.code, 0, res.stdout + res.stderr);
    assert.match(res.stdout, new RegExp(`^sandbox kept at ${sandbox}$`, "m"));
    assert.ok(await exists(`${sandbox}/work/.git`));
  } finally {
    await Deno.remove(sandbox, { recursive: true }).catch(() => {});
  }
});
