/**
 * `machines: split` with `forge: github`: the executor and the reviewer on different machines
 * that share only a bare origin and one GitHub (the stateful stand-in for gh,
 * tests/fixtures/gh-stateful/). Machine A runs only `relay poll`, machine B only `relay review`,
 * machine C races both; each PR merges once, by relay, and every machine knows it was relay.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, brief, makeScene, type Scene } from "./helpers/scene.ts";
import { type Machine, machine, machines, minutes, tick } from "./helpers/split_machines.ts";

const TASKS = 3;

/** The stateful stand-in for gh (tests/fixtures/gh-stateful/): one GitHub all machines share. */
function sharedGitHub(
  scene: Scene,
): { PATH: string; FAKEGH_ORIGIN: string; FAKEGH_STATE: string } {
  return {
    PATH: `${new URL("./fixtures/gh-stateful", import.meta.url).pathname}:${scene.env.PATH}`,
    FAKEGH_ORIGIN: scene.origin,
    FAKEGH_STATE: join(scene.dir, "gh.json"),
  };
}

Deno.test("split machines with forge: github: A polls, B reviews, C races both; each PR merges once", async () => {
  await using scene = await makeScene({ config: "machines: split\nforge: github\n" });
  const gh = sharedGitHub(scene);
  const { a, b, c, launches } = await machines(scene);
  for (let i = 1; i <= TASKS; i++) {
    const stdin = brief({ title: `Step ${i}` });
    const res = await scene.relay(["inbox", "add", "-"], { stdin, env: gh });
    assert.equal(res.code, 0, all(res));
  }
  assert.equal((await scene.relay(["promote"], { env: gh })).code, 0);

  const { merged, transcript } = await minutes(scene, { a, b, c }, TASKS, gh);
  const story = transcript.join("\n");
  const mergedTasks = merged.map((s) => Number(/^Merge task-(\d+):/.exec(s)?.[1])).sort();
  assert.deepEqual(mergedTasks, [1, 2, 3], `merges: ${merged.join(" | ")}\n${story}`);
  const lines = (await Deno.readTextFile(launches)).split("\n").filter((l) => l !== "");
  for (let t = 1; t <= TASKS; t++) {
    assert.equal(lines.filter((l) => l.startsWith(`task ${t} `)).length, 1, lines.join(", "));
  }
  // On GitHub: three PRs, each merged once, by relay.
  const prs = JSON.parse(await Deno.readTextFile(gh.FAKEGH_STATE)).prs as { state: string }[];
  assert.deepEqual(prs.map((p) => p.state), ["MERGED", "MERGED", "MERGED"]);
  const merges = (await Deno.readTextFile(`${gh.FAKEGH_STATE}.log`)).split("\n")
    .filter((l) => l !== "" && /^\["pr","merge"/.test(JSON.stringify(JSON.parse(l).argv)));
  assert.equal(merges.length, TASKS, merges.join("\n"));
  // A reviewer machine that did not merge a PR reads the merging machine's note: no machine
  // takes relay's merge for a person's, and the audit record says relay merged all three.
  assert.doesNotMatch(story, /outside relay/, story);
  const audit = await scene.relay(["audit"], { env: gh });
  assert.equal(audit.code, 0, all(audit));
  assert.match(audit.stdout, /3 reviewed merges, 0 merges handed to a person, 0 violations/);
  // The leases are on the origin, and no tick left one held.
  for (const role of ["executor", "reviewer"]) {
    const lease = JSON.parse(
      await scene.out(["log", "-1", "--format=%B", `refs/relay/leases/${role}`], scene.origin),
    );
    assert.ok(lease.released, `${role} lease released: ${JSON.stringify(lease)}`);
  }
});

/**
 * Machines B (the scene's clone, where a person queues), A and C over one GitHub stand-in,
 * two briefs queued and the first promoted; `step` runs one tick that must exit 0 and say
 * `expect` (on stdout or stderr).
 */
async function twoBriefsOnGitHub(scene: Scene) {
  const gh = sharedGitHub(scene);
  const b = await machine(scene, "B", scene.work);
  const a = await machine(scene, "A");
  const c = await machine(scene, "C");
  for (const title of ["One", "Two"]) {
    const res = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title }), env: gh });
    assert.equal(res.code, 0, all(res));
  }
  assert.equal((await scene.relay(["promote"], { env: gh })).code, 0);
  const step = async (m: Machine, command: "poll" | "review", expect: RegExp) => {
    const res = await tick(scene, m, command, gh);
    assert.equal(res.code, 0, all(res));
    assert.match(res.stdout + res.stderr, expect, all(res));
  };
  return { gh, a, b, c, step };
}

Deno.test("split machines with forge: github: a reviewer machine that did not merge a PR reads the merging machine's note, never takes relay's merge for a person's", async () => {
  await using scene = await makeScene({ config: "machines: split\nforge: github\n" });
  const { gh, a, b, c, step } = await twoBriefsOnGitHub(scene);
  await step(b, "review", /idle: no report/); // pushes the promotion of task 1
  await step(a, "poll", /task 1 shipped/);
  await step(b, "review", /task 1 merged .*promoted task 2/);
  // C never saw PR #1 open; the report on main is still task 1's, and GitHub says merged.
  await step(c, "review", /task 1: #1 was merged by relay on another machine/);
  const audit = await scene.relay(["audit"], { env: gh });
  assert.equal(audit.code, 0, all(audit));
  assert.match(audit.stdout, /1 reviewed merges?, 0 merges handed to a person, 0 violations/);
});

Deno.test("split machines with forge: github: notes that could not be pushed keep the reviewer's lease until they are, so no machine takes relay's merge for a person's", async () => {
  await using scene = await makeScene({ config: "machines: split\nforge: github\n" });
  const { gh, a, b, c, step } = await twoBriefsOnGitHub(scene);
  await step(b, "review", /idle: no report/);
  await step(a, "poll", /task 1 shipped/);
  // The origin refuses relay's notes while `blocked` exists.
  const blocked = join(scene.dir, "notes-blocked");
  const hook = join(scene.origin, "hooks", "pre-receive");
  await Deno.writeTextFile(
    hook,
    `#!/usr/bin/env bash\nwhile read -r old new ref; do\n  if [ "$ref" = refs/notes/relay ] && [ -e "${blocked}" ]; then echo "blocked notes" >&2; exit 1; fi\ndone\n`,
  );
  await Deno.chmod(hook, 0o755);
  await Deno.writeTextFile(blocked, "");
  await step(b, "review", /task 1 merged[\s\S]*notes were not pushed/);
  // B keeps the reviewer's lease: C waits rather than judge the merge without B's note.
  await step(c, "review", /busy: reviewer lease held/);
  await Deno.remove(blocked);
  // B's next tick pushes its notes and lets go; then C knows who merged.
  await step(b, "review", /task 1 is merged/);
  await step(c, "review", /task 1: #1 was merged by relay on another machine/);
  const audit = await scene.relay(["audit"], { env: gh });
  assert.equal(audit.code, 0, all(audit));
  assert.match(audit.stdout, /1 reviewed merges?, 0 merges handed to a person, 0 violations/);
});
