/** `relay resume` through the real CLI. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { brief, exists, makeScene, stateDir } from "./helpers/scene.ts";

Deno.test("relay resume prints the whole reason of a HOLD that spans several lines", async () => {
  await using scene = await makeScene();
  const queued = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title: "Held" }) });
  assert.equal(queued.code, 0, queued.stderr);
  assert.equal((await scene.relay(["promote"])).code, 0);
  const reason = "Cannot push main: the remote refused it\n" +
    "  remote: error: GH006: Protected branch update failed\n" +
    "  remote: error: Changes must be made through a pull request.";
  const hold = {
    task: 1,
    reason,
    next: 'Allow relay to push to main, then run "relay resume".',
    at: "2025-01-01T00:00:00.000Z",
  };
  await Deno.mkdir(stateDir(scene), { recursive: true });
  await Deno.writeTextFile(join(stateDir(scene), "hold.json"), JSON.stringify(hold));

  const res = await scene.relay(["resume"]);
  assert.equal(res.code, 0, res.stderr);
  assert.equal(
    res.stdout,
    `cleared: HOLD on task 1 (since 2025-01-01T00:00:00.000Z): ${reason}\n`,
  );
  assert.equal(await exists(join(stateDir(scene), "hold.json")), false);
  // The task's timeline says a person resumed it, and from what.
  const shown = await scene.relay(["show", "1", "--json"]);
  assert.equal(shown.code, 0, shown.stderr);
  const events = JSON.parse(shown.stdout).events as {
    event: string;
    role: string;
    details: { reason: string };
  }[];
  const resumed = events.find((e) => e.event === "resumed");
  assert.equal(resumed?.role, "person");
  assert.equal(resumed?.details.reason, reason);
});
