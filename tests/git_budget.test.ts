/**
 * How many git processes each command of a whole cycle starts (issue 10, goal 2): most of a
 * tick's time on a small repository is git process starts, so each command's count is held
 * here. A change that adds one, or saves one, fails this test with the list of what ran: change
 * the number in BUDGET, with the reason in the commit. The
 * suite times nothing (`deno task bench` does); a count does not depend on the machine.
 *
 * Counted as the bench counts them: git's trace2 start events of processes relay started
 * itself (its `-c core.fsmonitor=false` first): not the agents' git, nor what git starts.
 * The cycle is the second task's, as the loop lives: the first task's worktree is parked,
 * the reviewer's checkout is there to be switched.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, brief, makeScene, queue, type Scene } from "./helpers/scene.ts";

/**
 * Each command's git processes in the second task's cycle (one machine, plain forge): `git`
 * those that are not fetches, exactly; `fetches` at most. The review's merge reuses the
 * gate's fetch of a moment ago, which a machine slow enough to take 15 s between them does not.
 */
const BUDGET: Record<string, { git: number; fetches: number }> = {
  "inbox add": { git: 1, fetches: 0 },
  promote: { git: 0, fetches: 0 },
  poll: { git: 29, fetches: 2 },
  review: { git: 44, fetches: 3 },
};

/** relay's own git argvs (without the `-c` options it always passes) from a trace2 event file. */
async function relayGit(events: string): Promise<string[]> {
  const text = await Deno.readTextFile(events).catch(() => "");
  return text.split("\n").filter((l) => l.includes('"event":"start"')).map((l) =>
    JSON.parse(l).argv as string[]
  ).filter((argv) => argv[1] === "-c" && argv[2] === "core.fsmonitor=false").map((argv) => {
    const rest = argv.slice(1);
    while (rest[0] === "-c") rest.splice(0, 2);
    return rest.join(" ");
  });
}

async function traced(
  scene: Scene,
  name: string,
  args: string[],
  stdin?: string,
): Promise<{ out: string; git: string[] }> {
  const events = join(scene.dir, `trace-${name.replaceAll(" ", "-")}.json`);
  const res = await scene.relay(args, {
    env: { GIT_TRACE2_EVENT: events },
    ...(stdin !== undefined ? { stdin } : {}),
  });
  assert.equal(res.code, 0, all(res));
  return { out: res.stdout, git: await relayGit(events) };
}

Deno.test("a whole cycle starts the git processes each command's budget allows, no more and no fewer", async () => {
  await using scene = await makeScene({ config: "" });
  await queue(scene, brief({ title: "First" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  const poll1 = await scene.relay(["poll"]);
  assert.match(poll1.stdout, /task 1 shipped/, all(poll1));
  const review1 = await scene.relay(["review"]);
  assert.match(review1.stdout, /task 1 merged/, all(review1));

  const counted: Record<string, string[]> = {};
  counted["inbox add"] =
    (await traced(scene, "inbox add", ["inbox", "add", "-"], brief({ title: "Second" }))).git;
  counted.promote = (await traced(scene, "promote", ["promote"])).git;
  const poll = await traced(scene, "poll", ["poll"]);
  assert.match(poll.out, /task 2 shipped/);
  counted.poll = poll.git;
  const review = await traced(scene, "review", ["review"]);
  assert.match(review.out, /task 2 merged/);
  counted.review = review.git;

  const off: string[] = [];
  for (const [step, budget] of Object.entries(BUDGET)) {
    const argvs = counted[step]!;
    const fetches = argvs.filter((a) => a.startsWith("fetch ")).length;
    const git = argvs.length - fetches;
    if (git !== budget.git || fetches > budget.fetches) {
      off.push(
        `relay ${step} started ${git} git processes besides ${fetches} fetch(es); its budget is ${budget.git} besides at most ${budget.fetches}:\n  ${
          argvs.join("\n  ")
        }`,
      );
    }
  }
  assert.deepEqual(off, [], off.join("\n"));
});
