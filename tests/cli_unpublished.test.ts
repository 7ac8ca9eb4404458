/**
 * REVIEWER.md or .relay/config.yaml in the primary tree but not on origin/main:
 * `relay poll` (after its fetch, when it starts an attempt) and `relay status`
 * say so in one line with the fix, and the fix, run as printed, clears it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, brief, makeScene, type Scene } from "./helpers/scene.ts";

async function sh(scene: Scene, command: string, cwd: string): Promise<void> {
  const out = await new Deno.Command("sh", {
    args: ["-c", command],
    cwd,
    env: scene.env,
    clearEnv: true,
    stdin: "null",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
}

function warnings(text: string): string[] {
  return text.split("\n").filter((l) => / warning: |^warning: /.test(l));
}

Deno.test("an unpushed REVIEWER.md is named by relay poll and relay status with a fix that works as printed", async () => {
  await using scene = await makeScene();
  await scene.write("REVIEWER.md", "# How to review\n\nRun the tests.\n");
  const queued = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title: "One" }) });
  assert.equal(queued.code, 0, all(queued));
  assert.equal((await scene.relay(["promote"])).code, 0);

  const status = await scene.relay(["status"]);
  assert.equal(status.code, 0, all(status));
  const said = warnings(status.stdout);
  assert.equal(said.length, 1, status.stdout);
  assert.match(
    said[0]!,
    /^warning: REVIEWER\.md is in \S+ but not on origin\/main \(the reviewer reads REVIEWER\.md from origin\/main, so it is told there is none\); publish it: git add -- REVIEWER\.md && git commit -m "relay: config" && git push$/,
  );
  assert.deepEqual(JSON.parse((await scene.relay(["status", "--json"])).stdout).warnings, said);

  // cron runs the poll with --quiet: the warning still reaches cron.log, once, naming the fix.
  const poll = await scene.relay(["poll", "--quiet"]);
  assert.equal(poll.code, 0, all(poll));
  const polled = warnings(poll.stderr);
  assert.equal(polled.length, 1, poll.stderr);
  assert.ok(
    polled[0]!.endsWith(
      `relay: warning: REVIEWER.md is in ${scene.work} but not on origin/main (the reviewer reads REVIEWER.md from origin/main, so it is told there is none); publish it: git -C ${scene.work} add -- REVIEWER.md && git -C ${scene.work} commit -m "relay: config" && git -C ${scene.work} push`,
    ),
    polled[0],
  );

  // The fix as status printed it, from the repository root; then nothing to say.
  await sh(
    scene,
    said[0]!.slice(said[0]!.indexOf("publish it: ") + "publish it: ".length),
    scene.work,
  );
  assert.equal(
    await scene.out(["ls-tree", "--name-only", "origin/main", "--", "REVIEWER.md"]),
    "REVIEWER.md",
  );
  const after = await scene.relay(["status"]);
  assert.deepEqual(warnings(after.stdout), [], after.stdout);
});

Deno.test("a committed but unpushed config is a push away; from a subfolder the fix uses git -C", async () => {
  await using scene = await makeScene({ bare: true });
  await scene.write(".relay/config.yaml", "version: 1\nattempts: 3\n");
  await scene.git(scene.work, ["add", ".relay/config.yaml"]);
  await scene.git(scene.work, ["commit", "--quiet", "-m", "relay config"]);
  const sub = join(scene.work, "src");
  const status = await scene.relay(["status"], { cwd: sub });
  const said = warnings(status.stdout);
  assert.equal(said.length, 1, status.stdout);
  assert.match(
    said[0]!,
    /^warning: \.relay\/config\.yaml is in \S+ but not on origin\/main \(\.relay\/config\.yaml applies to this clone only\); publish it: git -C \S+ push origin main$/,
  );
  await sh(scene, said[0]!.slice(said[0]!.indexOf("publish it: ") + "publish it: ".length), sub);
  assert.deepEqual(warnings((await scene.relay(["status"], { cwd: sub })).stdout), []);
});
