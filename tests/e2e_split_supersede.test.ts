/**
 * `machines: split`: a machine stopped mid-attempt (SIGKILL, by relay's failpoints) past its
 * executor lease, while another machine did the task. Back, it decides from what the remote
 * shows, never from who held the lease: a run the remote shows someone else worked is set
 * aside (anchored, moved, renamed, not counted) without an agent turn; a run whose branch is
 * pushed is finished; a run nobody else touched is resumed. Machines A and C poll, B reviews
 * (and is where a person queues briefs), all over one bare origin.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  AGENTS,
  all,
  brief,
  exists,
  makeScene,
  type RelayResult,
  running,
  type Scene,
} from "./helpers/scene.ts";
import {
  briefs,
  expire,
  launched,
  type Machine,
  tick,
  worktreeRoot,
} from "./helpers/split_machines.ts";
import { addSubmodule, assertSubmoduleWorks } from "./helpers/submodule.ts";
import type { TaskRecord } from "../lib/state/tasks.ts";

const SET_ASIDE =
  /task 1: set aside this machine's run (\S+) \(stopped after step "([a-z-]+)"\), not resumed: the remote shows task 1 went on without this run: /;

/** A's run on task 1 is killed (exit 137) after `step`; its lease then runs out. */
async function killA(scene: Scene, a: Machine, step: string): Promise<void> {
  const killed = await tick(scene, a, "poll", { RELAY_FAILPOINT: `after-${step}` });
  assert.equal(killed.code, 137, all(killed));
  await expire(scene, "executor");
}

/** One tick that must exit 0 and say `expect` (stdout or stderr). */
async function step(
  scene: Scene,
  m: Machine,
  command: "poll" | "review",
  expect: RegExp,
  opts: { env?: Record<string, string>; args?: string[] } = {},
): Promise<RelayResult> {
  const res = await tick(scene, m, command, opts.env, opts.args);
  assert.equal(res.code, 0, `${m.name} ${command}: ${all(res)}`);
  assert.match(res.stdout + res.stderr, expect, `${m.name} ${command}: ${all(res)}`);
  assert.doesNotMatch(res.stderr, /HOLD/, `${m.name} ${command}: ${all(res)}`);
  return res;
}

/** The merges on the origin's main, newest first. */
async function merges(scene: Scene): Promise<string[]> {
  return (await scene.out(["log", "--merges", "--format=%s", "main"], scene.origin))
    .split("\n").filter((l) => l !== "");
}

/** Machine m's record of task `task` (attempts by round). */
async function record(m: Machine, task = 1): Promise<TaskRecord> {
  return JSON.parse(
    await Deno.readTextFile(join(m.dir, ".git", "relay", "tasks", `${task}.json`)),
  );
}

/** The results of machine m's attempts on task 1's first round, in order. */
async function results(m: Machine): Promise<string[]> {
  return (await record(m)).rounds[0]!.attempts.map((a) => a.result);
}

/** A ref of machine m's clone, or null. */
async function refOf(scene: Scene, m: Machine, ref: string): Promise<string | null> {
  const res = await scene.git(m.dir, ["rev-parse", "--verify", "--quiet", ref], true);
  return res.code === 0 ? res.stdout.trim() : null;
}

/**
 * What a set-aside must leave on machine m for run `runId`: no journal and no decision pending,
 * the journal archived, the attempt recorded as superseded (not failed), the branch renamed,
 * the worktree moved (not removed), the anchors in place, the timeline told.
 */
async function assertSetAside(scene: Scene, m: Machine, runId: string): Promise<void> {
  const records = join(m.dir, ".git", "relay");
  assert.equal(await exists(join(records, "journal.json")), false, "no run is journaled");
  assert.equal(await exists(join(records, "set-aside.json")), false, "no set-aside pending");
  assert.ok(await exists(join(records, "runs", runId, "journal.json")), "the journal is archived");
  const attempts = (await record(m)).rounds[0]!.attempts;
  assert.deepEqual(attempts.map((a) => [a.runId, a.result]), [[runId, "superseded"]]);
  assert.ok(await refOf(scene, m, `refs/heads/relay-aside/task-1/${runId}`), "branch renamed");
  assert.equal(await refOf(scene, m, "refs/heads/task-1"), null, "no stale task-1 left");
  assert.ok(await refOf(scene, m, `refs/relay/anchors/task-1/${runId}-before`));
  const moved = join(worktreeRoot(scene, m.name), ".relay-aside", `task-1-${runId}`);
  assert.ok(await exists(join(moved, "README.md")), `worktree moved to ${moved}`);
  assert.equal(await exists(join(worktreeRoot(scene, m.name), "task-1")), false);
  const events = (await Deno.readTextFile(join(records, "tasks", "1.events.jsonl")))
    .trim().split("\n").map((l) => JSON.parse(l));
  const aside = events.filter((e) => e.event === "set-aside");
  assert.equal(aside.length, 1, JSON.stringify(aside));
  assert.equal(aside[0].run, runId);
}

/** A killed after prepared; C takes the expired lease, ships task 1, and B merges it. */
async function doneElsewhere(scene: Scene, titles = ["Crash"]) {
  const machines = await briefs(scene, titles);
  const { a, b, c } = machines;
  await killA(scene, a, "prepared");
  await step(scene, c, "poll", /task 1 shipped/);
  await step(scene, b, "review", /task 1 merged/);
  return machines;
}

Deno.test("split machines: a machine killed at prepared, whose task another machine then did and merged, sets its run aside when back: no agent turn, not counted, everything kept, and the next brief goes on", async () => {
  await using scene = await makeScene({ config: "machines: split\nattempts: 1\n" });
  const { a, b, launches } = await doneElsewhere(scene, ["Crash", "Next"]);
  const back = await step(scene, a, "poll", SET_ASIDE);
  const [, runId, at] = SET_ASIDE.exec(back.stdout)!;
  assert.equal(at, "prepared");
  assert.match(back.stdout, /NEXT-STEPS\.md on origin\/main is no longer task 1 OPEN/);
  // The same tick goes on with what the remote's main asks for: task 2, here.
  assert.match(back.stdout, /task 2 shipped/, all(back));
  assert.deepEqual(await launched(launches), ["task 1 C", "task 2 A"]);
  await assertSetAside(scene, a, runId!);
  // A person who looks into the set-aside worktree and runs relay there is sent to the
  // loop's checkout: its NEXT-STEPS.md is the stale run's.
  const inAside = await scene.relay(["status"], {
    cwd: join(worktreeRoot(scene, a.name), ".relay-aside", `task-1-${runId}`),
  });
  assert.equal(inAside.code, 2, all(inAside));
  assert.match(inAside.stderr, /one of relay's task or review worktrees; .*relay -C /);
  // With attempts: 1 a counted attempt would have made task 1 BLOCKED: none is.
  await step(scene, b, "review", /task 2 merged/);
  assert.deepEqual((await merges(scene)).map((m) => m.split(":")[0]), [
    "Merge task-2",
    "Merge task-1",
  ]);
  // Nothing of task 1 on A resumes later.
  await step(scene, a, "poll", /idle/);
  assert.deepEqual(await launched(launches), ["task 1 C", "task 2 A"]);
});

/** In A's task worktree a submodule (addSubmodule), which git itself refuses to move. Its path. */
async function submoduleInTaskWorktree(scene: Scene, a: Machine): Promise<string> {
  const wt = join(worktreeRoot(scene, a.name), "task-1");
  await addSubmodule(scene, a.dir, wt);
  const refused = await scene.git(a.dir, ["worktree", "move", wt, `${wt}.x`], true);
  assert.match(refused.stderr, /containing submodules cannot be moved/, "git itself refuses");
  return wt;
}

/** A's set-aside worktree of run `runId`: a worktree git lists, unlocked, its submodule working. */
async function submoduleWorks(scene: Scene, a: Machine, runId: string): Promise<void> {
  const moved = join(worktreeRoot(scene, a.name), ".relay-aside", `task-1-${runId}`);
  const listed = await scene.out(["worktree", "list", "--porcelain"], a.dir);
  assert.match(listed, new RegExp(`worktree ${moved.replaceAll(/[.]/g, "\\.")}\n`));
  assert.doesNotMatch(listed, /locked/, "relay's lock of the move is gone");
  await assertSubmoduleWorks(scene, moved);
}

Deno.test("split machines: a run whose worktree holds a submodule (git moves no such worktree) is set aside all the same: moved with its submodule still working, nothing of it lost", async () => {
  await using scene = await makeScene({ config: "machines: split\nattempts: 1\n" });
  const { a } = await doneElsewhere(scene);
  await submoduleInTaskWorktree(scene, a);
  const back = await step(scene, a, "poll", SET_ASIDE);
  const [, runId] = SET_ASIDE.exec(back.stdout)!;
  assert.match(
    back.stderr + back.stdout,
    /which holds submodules, to \S+ \(renamed, then git worktree repair\)/,
  );
  await assertSetAside(scene, a, runId!);
  await submoduleWorks(scene, a, runId!);
});

Deno.test("split machines: setting aside a run whose worktree holds a submodule changed inside runs nothing that submodule's own config names", async () => {
  await using scene = await makeScene({ config: "machines: split\nattempts: 1\n" });
  const { a } = await doneElsewhere(scene);
  const wt = await submoduleInTaskWorktree(scene, a);
  // The turn committed the submodule with a file of its own; then, as an agent could, a clean
  // filter in the submodule's git folder and a change of that file at the same size.
  const lib = join(wt, "lib");
  await scene.git(lib, ["add", "local.txt"]);
  await scene.git(lib, ["commit", "--quiet", "-m", "a file of its own"]);
  await scene.git(wt, ["add", "lib"]);
  await scene.git(wt, ["commit", "--quiet", "-m", "the turn's submodule"]);
  const ran = join(scene.dir, "filter-ran");
  const gitDir = await scene.out(["rev-parse", "--absolute-git-dir"], lib);
  await scene.git(lib, ["config", "filter.x.clean", `sh -c 'echo ran >> "${ran}"; cat'`]);
  await Deno.mkdir(join(gitDir, "info"), { recursive: true });
  await Deno.writeTextFile(join(gitDir, "info", "attributes"), "* filter=x\n");
  await Deno.writeTextFile(join(lib, "local.txt"), "ONLY HERE\n");
  await Deno.utime(join(lib, "local.txt"), 946684800, 946684800);
  const back = await step(scene, a, "poll", SET_ASIDE);
  await assertSetAside(scene, a, SET_ASIDE.exec(back.stdout)![1]!);
  assert.equal(await exists(ran), false, "relay's git ran the submodule's filter");
});

Deno.test("split machines: a move of a worktree with a submodule that a killed tick left halfway (folder renamed, git's record not repaired) survives a git worktree prune and is finished by the next tick", async () => {
  await using scene = await makeScene({ config: "machines: split\nattempts: 1\n" });
  const { a } = await doneElsewhere(scene);
  const wt = await submoduleInTaskWorktree(scene, a);
  // A's tick is killed right after relay renamed the worktree's folder, before git's record of
  // it was repaired.
  const killed = await tick(scene, a, "poll", { RELAY_FAILPOINT: "worktree-renamed" });
  assert.equal(killed.code, 137, all(killed));
  const { runId } = JSON.parse(
    await Deno.readTextFile(join(a.dir, ".git", "relay", "set-aside.json")),
  );
  assert.equal(await exists(wt), false);
  assert.match(await scene.out(["worktree", "list", "--porcelain"], a.dir), /locked relay: moving/);
  // A person (or relay's review side) prunes meanwhile: the locked record, and the
  // submodule's git data in it, stay.
  await scene.git(a.dir, ["worktree", "prune"]);
  assert.ok(await exists(join(a.dir, ".git", "worktrees", "task-1", "modules", "lib", "HEAD")));

  const back = await step(scene, a, "poll", SET_ASIDE);
  assert.equal(SET_ASIDE.exec(back.stdout)![1], runId);
  assert.ok(await exists(join(worktreeRoot(scene, a.name), ".relay-aside", `task-1-${runId}`)));
  await assertSetAside(scene, a, runId);
  await submoduleWorks(scene, a, runId);
});

Deno.test("split machines: a run journaled with its worktree named through a link (as relay wrote it before it resolved worktree_root) is set aside all the same: its worktree anchored and moved", async () => {
  await using scene = await makeScene({ config: "machines: split\nattempts: 1\n" });
  const { a } = await doneElsewhere(scene);
  const link = join(scene.dir, "worktrees-A-link");
  await Deno.symlink(worktreeRoot(scene, a.name), link);
  // Every path of the run's worktree in its journal (the folder, the files its guard keeps) as
  // the link names it.
  const path = join(a.dir, ".git", "relay", "journal.json");
  const text = await Deno.readTextFile(path);
  const real = `${worktreeRoot(scene, a.name)}/`;
  assert.ok(text.includes(real));
  await Deno.writeTextFile(path, text.replaceAll(real, `${link}/`));
  const back = await step(scene, a, "poll", SET_ASIDE);
  await assertSetAside(scene, a, SET_ASIDE.exec(back.stdout)![1]!);
});

Deno.test("split machines: the set-aside line is said under --quiet too (how cron runs ticks)", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a } = await doneElsewhere(scene);
  const back = await step(scene, a, "poll", SET_ASIDE, { args: ["--quiet"] });
  assert.match(back.stdout, SET_ASIDE, all(back));
});

Deno.test("split machines: a machine killed at committed, whose task another machine then did, sets its unpushed run aside with its commit kept; killed at pr-opened or paperwork-pushed, it finishes its shipped run and the task merges once", async () => {
  for (const at of ["committed", "pr-opened", "paperwork-pushed"]) {
    await using scene = await makeScene({ config: "machines: split\n" });
    const { a, b, c, launches } = await briefs(scene, [`Killed at ${at}`]);
    await killA(scene, a, at);
    const story: string[] = [];
    const run = async (m: Machine, command: "poll" | "review") => {
      const res = await tick(scene, m, command);
      story.push(`${m.name} ${command}: ${all(res)}`);
      assert.equal(res.code, 0, `after ${at}:\n${story.join("\n")}`);
      assert.doesNotMatch(res.stderr, /HOLD/, `after ${at}:\n${story.join("\n")}`);
      return res;
    };
    // C takes the expired lease and does what the remote asks of it; then the loop runs on.
    await run(c, "poll");
    let back: RelayResult | null = null;
    for (let minute = 0; minute < 4 && (await merges(scene)).length === 0; minute++) {
      await run(b, "review");
      back ??= await run(a, "poll");
    }
    assert.equal((await merges(scene)).length, 1, `after ${at}:\n${story.join("\n")}`);
    console.log(`--- killed after ${at}:\n${story.join("\n")}`);
    const said = all(back!);
    if (at === "committed") {
      // Nothing of A's was pushed: C did the task; A's run (not shipped) is set aside.
      assert.deepEqual(await launched(launches), ["task 1 A", "task 1 C"]);
      const runId = SET_ASIDE.exec(back!.stdout)?.[1];
      assert.ok(runId, said);
      await assertSetAside(scene, a, runId);
      // The turn's commit stays on the renamed branch, and under an anchor.
      const kept = await refOf(scene, a, `refs/relay/anchors/task-1/${runId}-aside-branch`);
      assert.equal(kept, await refOf(scene, a, `refs/heads/relay-aside/task-1/${runId}`));
      assert.ok(await refOf(scene, a, `refs/relay/anchors/task-1/${runId}-after-1`));
    } else {
      // A's branch is on the remote: its run is finished, never set aside, counted as shipped.
      assert.doesNotMatch(said, /set aside/);
      assert.deepEqual(await launched(launches), ["task 1 A"]);
      assert.deepEqual(await results(a), ["shipped"]);
      assert.equal(await exists(join(a.dir, ".git", "relay", "journal.json")), false);
    }
    // Nobody waits on a lease left behind.
    const lease = JSON.parse(
      await scene.out(["log", "-1", "--format=%B", "refs/relay/leases/executor"], scene.origin),
    );
    assert.ok(lease.released, `after ${at}: ${JSON.stringify(lease)}\n${story.join("\n")}`);
  }
});

Deno.test("split machines: a lease that passed through a machine that did nothing with it sets nothing aside: the run is resumed as ever, and no attempt is failed", async () => {
  await using scene = await makeScene({ config: "machines: split\nattempts: 1\n" });
  const { a, b, c, launches } = await briefs(scene, ["Resumed"]);
  await killA(scene, a, "prepared");
  // C takes the lease, HOLDs at once (its primary tree is off main: its own problem), lets go.
  await scene.git(c.dir, ["switch", "--quiet", "-c", "elsewhere"]);
  const held = await tick(scene, c, "poll");
  assert.equal(held.code, 3, all(held));
  assert.match(held.stderr, /The primary tree is on "elsewhere"/, all(held));
  const lease = JSON.parse(
    await scene.out(["log", "-1", "--format=%B", "refs/relay/leases/executor"], scene.origin),
  );
  assert.ok(lease.released, JSON.stringify(lease));
  const cId = (await Deno.readTextFile(join(c.dir, ".git", "relay", "machine-id"))).trim();
  assert.equal(lease.holder.machine, cId, "the lease A finds is C's, released");
  const back = await step(scene, a, "poll", /task 1 shipped/);
  assert.doesNotMatch(all(back), /set aside/);
  assert.match(back.stderr, /resuming task 1 run /);
  assert.deepEqual(await launched(launches), ["task 1 A"]);
  assert.deepEqual(await results(a), ["shipped"]);
  await step(scene, b, "review", /task 1 merged/);
});

Deno.test("split machines: a fix round after a set-aside starts from the remote's branch, not the stale one the killed machine had", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, c, launches } = await briefs(scene, ["Fix me"]);
  await killA(scene, a, "prepared");
  await step(scene, c, "poll", /task 1 shipped/);
  const shipped = await scene.out(["rev-parse", "task-1"], scene.origin);
  // B's first review FAILs: a fix brief (task 2) on task-1, published on main.
  const env = { FAKE_FAIL_ONCE: join(scene.dir, "failed-once") };
  await step(scene, b, "review", /sent back — fix brief 2/, { env });
  // A back: its run is set aside, and the fix runs on C's task-1 as the remote has it.
  const back = await step(scene, a, "poll", /task 2 shipped/, { env });
  assert.match(back.stdout, SET_ASIDE, all(back));
  assert.match(back.stderr, /task 2: worktree created at /, all(back));
  assert.deepEqual(await launched(launches), ["task 1 C", "task 2 A"]);
  await scene.git(scene.origin, ["merge-base", "--is-ancestor", shipped, "task-1"]);
  await step(scene, b, "review", /task 2 merged|task 1 merged/, { env });
  assert.equal((await merges(scene)).length, 1);
});

Deno.test("split machines: a machine killed while setting a run aside finishes the set-aside at its next tick and never runs the run's agent", async () => {
  for (const failpoint of ["set-aside-decided", "set-aside-moved"]) {
    await using scene = await makeScene({ config: "machines: split\n" });
    const { a, launches } = await doneElsewhere(scene);
    const killed = await tick(scene, a, "poll", { RELAY_FAILPOINT: failpoint });
    assert.equal(killed.code, 137, `${failpoint}: ${all(killed)}`);
    assert.ok(await exists(join(a.dir, ".git", "relay", "set-aside.json")), failpoint);
    const back = await step(scene, a, "poll", SET_ASIDE);
    await assertSetAside(scene, a, SET_ASIDE.exec(back.stdout)![1]!);
    assert.deepEqual(await launched(launches), ["task 1 C"], failpoint);
    await step(scene, a, "poll", /idle/);
    assert.deepEqual(await launched(launches), ["task 1 C"], failpoint);
  }
});

Deno.test("split machines: a run killed after its agent's turn, before relay looked at it, is set aside with the turn's commit and its uncommitted files anchored", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, c, launches } = await briefs(scene, ["Unguarded turn"]);
  // The agent committed the feature and left its report uncommitted; then A was killed.
  await killA(scene, a, "agent-finished");
  // And a git repository of its own inside the worktree, with no commit (git add fails on one).
  const web = join(worktreeRoot(scene, "A"), "task-1", "web");
  await Deno.mkdir(web, { recursive: true });
  await scene.git(web, ["init", "--quiet"]);
  await Deno.writeTextFile(join(web, "index.html"), "hello\n");
  await step(scene, c, "poll", /task 1 shipped/);
  await step(scene, b, "review", /task 1 merged/);
  const back = await step(scene, a, "poll", SET_ASIDE);
  const [, runId, at] = SET_ASIDE.exec(back.stdout)!;
  assert.equal(at, "agent-finished");
  await assertSetAside(scene, a, runId!);
  assert.deepEqual(await launched(launches), ["task 1 A", "task 1 C"]);
  const anchors = `refs/relay/anchors/task-1/${runId}`;
  // The turn's commit: on an anchor, and the tip of the renamed branch.
  const turn = await refOf(scene, a, `${anchors}-after-1`);
  assert.ok(turn);
  assert.equal(await refOf(scene, a, `${anchors}-aside-branch`), turn);
  assert.equal(await refOf(scene, a, `refs/heads/relay-aside/task-1/${runId}`), turn);
  // The uncommitted report: in a snapshot commit on top of the turn's, and still in the
  // moved worktree, untouched.
  const snapshot = await refOf(scene, a, `${anchors}-aside-worktree`);
  assert.ok(snapshot);
  assert.equal(await scene.out(["rev-parse", `${snapshot}^`], a.dir), turn);
  const report = await scene.out(["show", `${snapshot}:COWORK-STATUS.md`], a.dir);
  assert.match(report, /^Task: 1\nOutcome: SHIPPED/);
  const moved = join(worktreeRoot(scene, "A"), ".relay-aside", `task-1-${runId}`);
  assert.equal((await Deno.readTextFile(join(moved, "COWORK-STATUS.md"))).trim(), report);
  assert.equal(
    await scene.out(["status", "--porcelain=v1", "--", "COWORK-STATUS.md"], moved),
    "?? COWORK-STATUS.md",
  );
  // The inner repository: not in the snapshot, still in the moved worktree.
  assert.doesNotMatch(await scene.out(["ls-tree", "--name-only", snapshot!], a.dir), /^web$/m);
  assert.equal(await Deno.readTextFile(join(moved, "web", "index.html")), "hello\n");
});

Deno.test("split machines: a run killed after its guard passed (relay's copies of the agent's report made) is set aside, the copies not taken for the agent's doing", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, c, launches } = await briefs(scene, ["Guarded turn"]);
  await killA(scene, a, "report-saved");
  await step(scene, c, "poll", /task 1 shipped/);
  await step(scene, b, "review", /task 1 merged/);
  const back = await step(scene, a, "poll", SET_ASIDE);
  await assertSetAside(scene, a, SET_ASIDE.exec(back.stdout)![1]!);
  assert.deepEqual(await launched(launches), ["task 1 A", "task 1 C"]);
});

Deno.test("split machines: a run whose agent a killed tick left running is set aside with that agent stopped first", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, c, launches } = await briefs(scene, ["Orphan"]);
  // A's tick dies while its agent sleeps; the agent runs on in its own process group.
  const killed = await tick(scene, a, "poll", {
    RELAY_FAILPOINT: "agent-running",
    FAKE_SLEEP: "40",
  });
  assert.equal(killed.code, 137, all(killed));
  const journal = JSON.parse(await Deno.readTextFile(join(a.dir, ".git", "relay", "journal.json")));
  const pid = journal.agentPid as number;
  assert.ok(await running(pid), `the agent (pid ${pid}) runs on`);
  await expire(scene, "executor");
  await step(scene, c, "poll", /task 1 shipped/);
  await step(scene, b, "review", /task 1 merged/);
  const back = await step(scene, a, "poll", SET_ASIDE);
  assert.match(back.stderr, new RegExp(`stopping the agent of run \\S+ \\(pid ${pid}\\)`));
  assert.equal(await running(pid), false, `the agent (pid ${pid}) is stopped`);
  await assertSetAside(scene, a, SET_ASIDE.exec(back.stdout)![1]!);
  assert.deepEqual(await launched(launches), ["task 1 A", "task 1 C"]);
});

Deno.test("split machines: an agent that pushed its own task branch (allowed) before its tick was killed is not set aside as 'another machine's work': its run is resumed, no second agent turn", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, launches } = await briefs(
    scene,
    ["Pushes its own branch"],
    `exec bash "${join(AGENTS, "pushes-upstream.sh")}" "$@"`,
  );
  // A's agent pushes task-1 itself (as agents often do) and exits; A's tick is killed
  // before relay looked at the turn. Nobody else touches the task.
  const killed = await tick(scene, a, "poll", { RELAY_FAILPOINT: "after-agent-finished" });
  assert.equal(killed.code, 137, all(killed));
  const back = await tick(scene, a, "poll");
  assert.equal(back.code, 0, all(back));
  assert.doesNotMatch(all(back), /set aside/, all(back));
  assert.match(back.stdout, /task 1 shipped/, all(back));
  assert.deepEqual(await launched(launches), ["task 1 A"], "one agent turn, not two");
  const review = await tick(scene, b, "review");
  assert.match(review.stdout, /task 1 merged/, all(review));
  assert.equal(await exists(join(a.dir, ".git", "relay", "set-aside.json")), false);
});

Deno.test('split machines with the plain forge journal "pushed" before anything is on the remote (the branch goes with the PR record at pr-opened): a run killed there, whose task another machine then did and merged, is set aside, not held on a rejected push', async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, c, launches } = await briefs(scene, ["Killed at pushed"]);
  const killed = await tick(scene, a, "poll", { RELAY_FAILPOINT: "after-pushed" });
  assert.equal(killed.code, 137, all(killed));
  // Nothing of A's is on the remote: "pushed" is journaled, the push is openPr's.
  assert.equal(
    (await scene.git(scene.origin, ["rev-parse", "--verify", "--quiet", "task-1"], true)).code,
    1,
  );
  await expire(scene, "executor");
  const shipped = await tick(scene, c, "poll");
  assert.match(shipped.stdout, /task 1 shipped/, all(shipped));
  const merged = await tick(scene, b, "review");
  assert.match(merged.stdout, /task 1 merged/, all(merged));
  const back = await tick(scene, a, "poll");
  assert.equal(back.code, 0, all(back));
  assert.match(
    back.stdout,
    /set aside this machine's run \S+ \(stopped after step "pushed"\)/,
    all(back),
  );
  assert.deepEqual(await launched(launches), ["task 1 A", "task 1 C"]);
});

Deno.test('split machines: a run killed at "pushed" (plain forge, split) that nobody else touched is resumed and ships', async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, launches } = await briefs(scene, ["Killed at pushed, alone"]);
  const killed = await tick(scene, a, "poll", { RELAY_FAILPOINT: "after-pushed" });
  assert.equal(killed.code, 137, all(killed));
  await expire(scene, "executor");
  const back = await tick(scene, a, "poll");
  assert.equal(back.code, 0, all(back));
  assert.doesNotMatch(all(back), /set aside/, all(back));
  assert.match(back.stdout, /task 1 shipped/, all(back));
  const merged = await tick(scene, b, "review");
  assert.match(merged.stdout, /task 1 merged/, all(merged));
  assert.deepEqual(await launched(launches), ["task 1 A"]);
});

Deno.test("split machines: a run resumed after the remote's main moved meanwhile (a brief queued on the reviewer's machine) is not held for 'main moved': the fast-forward is relay's own, and the run ships", async () => {
  await using scene = await makeScene({ config: "machines: split\n" });
  const { a, b, launches } = await briefs(scene, ["Killed, then resumed"]);
  // A is killed before its agent ran; its lease has not run out, nobody else works task 1.
  const killed = await tick(scene, a, "poll", { RELAY_FAILPOINT: "after-prepared" });
  assert.equal(killed.code, 137, all(killed));
  // Meanwhile a person queues a brief on B, and B's review tick pushes that paperwork.
  const before = await scene.out(["rev-parse", "refs/heads/main"], scene.origin);
  const add = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title: "Queued" }) });
  assert.equal(add.code, 0, all(add));
  await step(scene, b, "review", /./);
  const moved = await scene.out(["rev-parse", "refs/heads/main"], scene.origin);
  assert.notEqual(moved, before, "B's tick pushed the queued brief to origin/main");
  // A comes back: it resumes its run, brings main up to the remote's, and ships.
  const back = await step(scene, a, "poll", /task 1 shipped/);
  assert.match(all(back), /resuming task 1 run /, all(back));
  assert.doesNotMatch(all(back), /set aside|main moved/, all(back));
  assert.deepEqual(await launched(launches), ["task 1 A"]);
  await step(scene, b, "review", /task 1 merged/);
});
