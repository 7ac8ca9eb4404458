/**
 * End to end: what a later tick (or a person) does after a run went wrong
 * part-way — an agent orphaned by a killed tick, a HOLD in the middle of a
 * journaled run, a remote that refuses a push, a promote racing a tick.
 * Real CLI, real git, a bare `file://` origin.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  AGENTS,
  all,
  brief,
  countLines,
  exists,
  makeScene,
  originRefs,
  ROOT,
  running,
  type Scene,
  stateDir,
  taskRecord,
} from "./helpers/scene.ts";

const HOLD = 3;

async function readJsonFile<T>(path: string): Promise<T> {
  return JSON.parse(await Deno.readTextFile(path)) as T;
}

interface JournalFile {
  runId: string;
  step: string;
  agentPid?: number;
  agentStarted?: string;
  agentDeadline?: string;
  agentStamp?: string;
}

interface HoldFile {
  task: number;
  reason: string;
  next: string;
  runId?: string;
}

/** Writes NEXT-STEPS.md in the primary tree as an OPEN feature brief for task 1. */
async function openBrief(scene: Scene): Promise<void> {
  await scene.write(
    "NEXT-STEPS.md",
    brief({ status: "OPEN", task: 1, kind: "feature", extraHeader: "Branch: task-1" }),
  );
}

/** The operator profile with `agent` (under tests/fixtures/agents/) as executor and this turn limit. */
async function setExecutor(scene: Scene, argv: string[], timeout: string): Promise<void> {
  await Deno.writeTextFile(
    scene.profile,
    `roles:\n  executor:\n    vendor: command\n    argv: ${JSON.stringify(argv)}\n` +
      `    timeout: ${timeout}\n` +
      `  reviewer:\n    vendor: command\n    argv: ${JSON.stringify(argv)}\n` +
      `worktree_root: ${scene.worktrees}\n`,
  );
}

/** Launches logged by counted.sh. */
function launches(countFile: string): Promise<number> {
  return countLines(countFile, "run ");
}

/**
 * Processes (not zombies) whose process group is `pgid`, once the group had up
 * to two seconds to finish exiting (a process just killed may still show).
 */
async function groupMembers(pgid: number): Promise<string[]> {
  let members = await listGroup(pgid);
  for (let i = 0; i < 20 && members.length; i++) {
    await sleep(100);
    members = await listGroup(pgid);
  }
  return members;
}

async function listGroup(pgid: number): Promise<string[]> {
  const out = await new Deno.Command("ps", {
    args: ["-e", "-o", "pid=,pgid=,stat=,args="],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(out.stdout).split("\n").filter((line) => {
    const [, group, stat] = line.trim().split(/\s+/);
    return Number(group) === pgid && stat !== undefined && !stat.startsWith("Z");
  });
}

function killGroupQuietly(pgid: number | undefined): void {
  if (pgid === undefined) return;
  try {
    Deno.kill(-pgid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Installs a pre-receive hook in the origin that refuses pushes to refs matching `pattern` (a shell case pattern). */
async function refuseOnOrigin(scene: Scene, pattern: string, message: string): Promise<string> {
  const hook = join(scene.origin, "hooks", "pre-receive");
  await Deno.writeTextFile(
    hook,
    `#!/bin/sh\nwhile read old new ref; do\n  case "$ref" in\n    ${pattern})\n` +
      `      echo ${JSON.stringify(message)}\n      exit 1\n      ;;\n  esac\ndone\nexit 0\n`,
  );
  await Deno.chmod(hook, 0o755);
  return hook;
}

// --- 1. orphaned agents --------------------------------------------------------------------------

// Two tests, so neither depends on how fast this machine runs a tick: one with a turn limit no
// tick comes near (the orphan is waited for), one that waits for its short limit to pass.
Deno.test("an agent orphaned by a killed tick is waited for by a later tick while within its turn limit", async () => {
  await using scene = await makeScene();
  const countFile = join(scene.dir, "count");
  const env = { FAKE_COUNT_FILE: countFile };
  await setExecutor(scene, ["bash", join(AGENTS, "counted.sh"), "hang.sh", "{prompt}"], "30m");
  await openBrief(scene);

  const before = Date.now();
  const killed = await scene.relay(["poll"], { env: { ...env, RELAY_FAILPOINT: "agent-running" } });
  assert.equal(killed.code, 137, all(killed));
  const journal = await readJsonFile<JournalFile>(join(stateDir(scene), "journal.json"));
  const pid = journal.agentPid;
  try {
    assert.equal(journal.step, "agent-started");
    assert.ok(pid !== undefined && journal.agentStarted && journal.agentDeadline);
    const started = Date.parse(journal.agentStarted);
    assert.equal(Date.parse(journal.agentDeadline) - started, 30 * 60_000);
    // Journaled during the killed tick (ISO time has millisecond precision).
    assert.ok(started >= before && started <= Date.now(), journal.agentStarted);
    // Linux: the boot and start ticks that tell this agent from a reused pid, clock steps or not.
    if (Deno.build.os === "linux") assert.match(journal.agentStamp ?? "", /^[0-9a-f-]{36}:\d+$/);
    assert.ok(await running(pid), "the orphaned agent should still run");

    const busy = await scene.relay(["poll"], { env });
    assert.equal(busy.code, 0, all(busy));
    assert.match(
      busy.stdout,
      new RegExp(
        `^\\S+Z busy: the agent from an interrupted tick is still running \\(pid ${pid}, `,
      ),
    );
    assert.ok(await running(pid), "relay stopped an agent within its turn limit");
    assert.equal(await launches(countFile), 1, "a second agent was launched beside the orphan");
    assert.equal(
      (await readJsonFile<JournalFile>(join(stateDir(scene), "journal.json"))).step,
      "agent-started",
    );
  } finally {
    killGroupQuietly(pid);
  }
});

Deno.test("an agent orphaned by a killed tick is stopped at its turn limit by a later tick, and the attempt fails as timed out with its work kept", async () => {
  await using scene = await makeScene();
  const countFile = join(scene.dir, "count");
  const env = { FAKE_COUNT_FILE: countFile };
  await setExecutor(scene, ["bash", join(AGENTS, "counted.sh"), "hang.sh", "{prompt}"], "6s");
  await openBrief(scene);

  const killed = await scene.relay(["poll"], { env: { ...env, RELAY_FAILPOINT: "agent-running" } });
  assert.equal(killed.code, 137, all(killed));
  const journal = await readJsonFile<JournalFile>(join(stateDir(scene), "journal.json"));
  const pid = journal.agentPid;
  try {
    assert.equal(journal.step, "agent-started");
    assert.ok(pid !== undefined && journal.agentStarted && journal.agentDeadline);
    const deadline = Date.parse(journal.agentDeadline);
    assert.equal(deadline - Date.parse(journal.agentStarted), 6_000);
    assert.ok(await running(pid), "the orphaned agent should still run");

    // Past its limit (a state: the clock passed the journaled deadline), the next tick stops the
    // whole group and fails the attempt as timed out, naming the limit rather than the run time.
    while (Date.now() <= deadline + 300) await sleep(Math.max(50, deadline + 301 - Date.now()));
    const poll = await scene.relay(["poll"], { env });
    assert.equal(poll.code, 1, all(poll));
    assert.match(poll.stderr, /passed its turn limit .*; stopping its process group/);
    assert.match(poll.stdout, /attempt 1\/2 failed: the agent timed out: limit 6s, ran \d+s/);
    assert.deepEqual(await groupMembers(pid), [], "a process of the orphan's group survived");
    assert.equal(await launches(countFile), 1, "the turn was launched again");

    const record = (await taskRecord(scene)).rounds[0]!;
    assert.deepEqual(record.attempts.map((a) => a.result), ["failed"]);
    assert.match(record.attempts[0]!.reason ?? "", /timed out: limit 6s/);
    // The half-done work is committed on the branch, not lost.
    assert.match(
      await scene.out(["log", "-1", "--format=%s", "task-1"]),
      /^WIP: Task #1 attempt 1 \(the agent timed out: limit 6s, ran \d+s/,
    );
    assert.equal(await exists(join(stateDir(scene), "journal.json")), false);
  } finally {
    killGroupQuietly(pid);
  }
});

Deno.test("a pid that another process took after the orphaned agent ended is not taken for the agent, and is left running", async () => {
  await using scene = await makeScene();
  const countFile = join(scene.dir, "count");
  const env = { FAKE_COUNT_FILE: countFile };
  await openBrief(scene);

  const killed = await scene.relay(["poll"], { env: { ...env, RELAY_FAILPOINT: "agent-running" } });
  assert.equal(killed.code, 137, all(killed));
  const path = join(stateDir(scene), "journal.json");
  const journal = await readJsonFile<JournalFile>(path);
  assert.ok(journal.agentPid !== undefined);
  // The fast agent finishes its work on its own.
  for (let i = 0; i < 100 && await running(journal.agentPid); i++) await sleep(100);
  assert.equal(await running(journal.agentPid), false);

  // Its pid now names an unrelated process group leader that started long after the agent did.
  const stranger = new Deno.Command("sleep", {
    args: ["30"],
    stdin: "null",
    stdout: "null",
    stderr: "null",
    detached: true,
  }).spawn();
  try {
    const hourAgo = Date.now() - 3_600_000;
    await Deno.writeTextFile(
      path,
      JSON.stringify({
        ...journal,
        agentPid: stranger.pid,
        agentStarted: new Date(hourAgo).toISOString(),
        agentDeadline: new Date(hourAgo + 60_000).toISOString(),
      }),
    );
    const poll = await scene.relay(["poll"], { env });
    assert.equal(poll.code, 0, all(poll));
    assert.match(poll.stderr, new RegExp(`not our agent: pid ${stranger.pid} now belongs to`));
    assert.match(poll.stderr, /ended while no tick watched it; not relaunching that turn/);
    assert.match(poll.stdout, /task 1 shipped/);
    assert.ok(await running(stranger.pid), "relay killed a process that was not its agent");
    assert.equal(await launches(countFile), 1);
  } finally {
    killGroupQuietly(stranger.pid);
    await stranger.status;
  }
});

// --- 3. a HOLD in the middle of a run ------------------------------------------------------------

Deno.test("a HOLD at the push is recorded; status shows it; once the person fixes the branch, resume keeps the run and the next poll pushes it without rerunning the agent", async () => {
  await using scene = await makeScene();
  await openBrief(scene);
  const killed = await scene.relay(["poll"], { env: { RELAY_FAILPOINT: "after-committed" } });
  assert.equal(killed.code, 137, all(killed));
  const { runId } = await readJsonFile<JournalFile>(join(stateDir(scene), "journal.json"));

  // Meanwhile someone else pushes a commit to task-1 on the origin.
  const other = join(scene.dir, "other");
  await scene.git(scene.dir, ["clone", "--quiet", `file://${scene.origin}`, other]);
  await scene.git(other, ["switch", "--quiet", "-c", "task-1"]);
  await Deno.writeTextFile(join(other, "notes.txt"), "someone else's work\n");
  await scene.git(other, ["add", "notes.txt"]);
  await scene.git(other, ["commit", "--quiet", "-m", "someone else's commit"]);
  await scene.git(other, ["push", "--quiet", "origin", "task-1"]);
  const theirs = await scene.out(["rev-parse", "HEAD"], other);

  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, HOLD, all(poll));
  assert.match(poll.stderr, /relay: HOLD: Cannot push "task-1" to "origin": .*\(fetch first\)/);
  assert.match(poll.stderr, /someone else pushed to it\?/);
  assert.match(poll.stderr, /Then run "relay resume": the next tick finishes run /);
  const hold = await readJsonFile<HoldFile>(join(stateDir(scene), "hold.json"));
  assert.equal(hold.task, 1);
  assert.equal(hold.runId, runId);
  assert.match(hold.reason, /^Cannot push "task-1" to "origin"/);
  assert.match(hold.next, /merging origin\/task-1 into task-1/);
  assert.match(
    hold.next,
    new RegExp(`relay resume": the next tick finishes run ${runId} from where it stopped`),
  );
  assert.equal(await scene.out(["rev-parse", "task-1"], scene.origin), theirs);

  // Every later tick stops at the recorded HOLD, and status shows it.
  const again = await scene.relay(["poll"]);
  assert.equal(again.code, HOLD, all(again));
  assert.ok(again.stderr.includes(hold.reason), again.stderr);
  const status = await scene.relay(["status"]);
  assert.equal(status.code, HOLD, all(status));
  assert.ok(status.stdout.includes(`HOLD: ${hold.reason}`), status.stdout);

  // The person does what `next` says: bring the other commit into the local branch.
  const worktree = join(scene.worktrees, "task-1");
  await scene.git(worktree, ["fetch", "--quiet", "origin"]);
  await scene.git(worktree, ["merge", "--quiet", "--no-edit", "origin/task-1"]);
  const resume = await scene.relay(["resume"]);
  assert.equal(resume.code, 0, all(resume));
  assert.match(resume.stdout, /^cleared: HOLD on task 1/);
  assert.equal(await exists(join(stateDir(scene), "hold.json")), false);
  assert.equal(await exists(join(stateDir(scene), "journal.json")), true, "the run is kept");

  await scene.setAgent("revise.sh");
  const finish = await scene.relay(["poll"]);
  assert.equal(finish.code, 0, all(finish));
  assert.match(
    finish.stderr,
    /task-1 moved on to [0-9a-f]{12} while the run was held; carrying on from there/,
  );
  assert.doesNotMatch(finish.stderr, /starting the executor/, "the agent is not run again");
  assert.match(finish.stdout, /task 1 shipped/);
  // The first attempt's commit and the other person's are on the pushed branch; nothing twice.
  const pushed = await scene.out(["log", "--format=%s", "main..task-1"], scene.origin);
  assert.match(pushed, /^Task #1: add the feature$/m);
  assert.match(pushed, /^someone else's commit$/m);
  assert.doesNotMatch(pushed, /revise the feature/);
  const record = (await taskRecord(scene)).rounds[0]!;
  assert.deepEqual(record.attempts.map((a) => [a.runId, a.result]), [[runId, "shipped"]]);
});

// --- 4. pushes the remote refuses ----------------------------------------------------------------

Deno.test("a protected main refusing the paperwork push is a HOLD quoting the remote, recorded; resume keeps the run and the next poll finishes it", async () => {
  await using scene = await makeScene();
  await openBrief(scene);
  const mainBefore = await scene.out(["rev-parse", "main"], scene.origin);
  const hook = await refuseOnOrigin(
    scene,
    "refs/heads/main",
    "GH006: Protected branch update failed for refs/heads/main.",
  );

  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, HOLD, all(poll));
  assert.match(
    poll.stderr,
    /relay: HOLD: Cannot push the paperwork commit to "origin\/main": the remote refused it: \[remote rejected\] \(pre-receive hook declined\); the remote said: "GH006: Protected branch update failed for refs\/heads\/main\."/,
  );
  assert.doesNotMatch(poll.stderr, /rebasing/, "a refusal is not retried as a race");
  const hold = await readJsonFile<HoldFile>(join(stateDir(scene), "hold.json"));
  assert.match(hold.reason, /GH006: Protected branch update failed/);
  assert.match(hold.next, /branch protection/);
  assert.match(hold.next, /The paperwork commit waits on local main/);
  assert.match(hold.next, /relay resume": the next tick finishes run /);
  assert.equal(await scene.out(["rev-parse", "main"], scene.origin), mainBefore);
  // The branch itself went out: only main is protected.
  assert.equal(
    await scene.out(["rev-parse", "task-1"], scene.origin),
    await scene.out(["rev-parse", "task-1"]),
  );

  await Deno.remove(hook);
  const resume = await scene.relay(["resume"]);
  assert.equal(resume.code, 0, all(resume));
  assert.match(
    resume.stdout,
    /^kept run .*: the agent's turn is done; the next poll carries on from step "[a-z-]+" without running it again/m,
  );
  const finish = await scene.relay(["poll"]);
  assert.equal(finish.code, 0, all(finish));
  assert.match(finish.stdout, /task 1 shipped/);
  assert.deepEqual(
    (await scene.out(["log", "--format=%s", "main"], scene.origin)).split("\n"),
    ["Task #1: status — SHIPPED (task-1)", "initial"],
  );
});

Deno.test("a task branch the remote refuses (not a race) is a HOLD quoting the remote, without blaming someone else's push", async () => {
  await using scene = await makeScene();
  await openBrief(scene);
  await refuseOnOrigin(scene, "refs/heads/task-*", "GH013: Repository rule violations found.");

  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, HOLD, all(poll));
  assert.match(
    poll.stderr,
    /relay: HOLD: Cannot push "task-1" to "origin": the remote refused it: \[remote rejected\] \(pre-receive hook declined\); the remote said: "GH013: Repository rule violations found\."/,
  );
  assert.doesNotMatch(poll.stderr, /someone else pushed/);
  const hold = await readJsonFile<HoldFile>(join(stateDir(scene), "hold.json"));
  assert.match(hold.reason, /GH013/);
  assert.match(hold.next, /pre-receive hook/);
  assert.equal(
    (await scene.git(scene.origin, ["rev-parse", "--verify", "--quiet", "task-1"], true)).code,
    1,
  );
});

Deno.test("a push that cannot reach the remote is retried by the next tick, quoting git — not a HOLD", async () => {
  await using scene = await makeScene();
  await openBrief(scene);
  // Every fetch before the push works; the push URL points nowhere (the remote is gone for now).
  await scene.git(scene.work, [
    "remote",
    "set-url",
    "--push",
    "origin",
    join(scene.dir, "gone.git"),
  ]);

  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 1, all(poll));
  assert.match(
    poll.stderr,
    /relay: not yet: Cannot push "task-1" to "origin" yet: the remote could not be reached: ".*does not appear to be a git repository.*; the next tick tries again/,
  );
  assert.equal(await exists(join(stateDir(scene), "hold.json")), false);
  assert.deepEqual(Object.keys(await originRefs(scene)), ["refs/heads/main"]);

  // The remote is back: the next tick pushes the turn it already has, without rerunning it.
  await scene.git(scene.work, ["remote", "set-url", "--delete", "--push", "origin", ".*"]);
  const again = await scene.relay(["poll"]);
  assert.equal(again.code, 0, all(again));
  assert.match(again.stdout, /task 1 shipped/);
  const runs: string[] = [];
  for await (const e of Deno.readDir(join(stateDir(scene), "runs"))) runs.push(e.name);
  assert.equal(runs.filter((r) => /-task1-a\d+$/.test(r)).length, 1, runs.join(", "));
});

// --- 5. promote and the tick lock ----------------------------------------------------------------

const LOCK_MODULE = new URL("../lib/state/lock.ts", import.meta.url).href;
const HOLDER = `
import { tryLock } from ${JSON.stringify(LOCK_MODULE)};
const lock = await tryLock(Deno.args[0], "poll");
console.log(lock === null ? "busy" : "acquired");
for await (const _ of Deno.stdin.readable) { /* hold until stdin closes */ }
await lock?.release();
`;

Deno.test("relay promote while a tick holds the lock says busy, exits 0 and changes nothing", async () => {
  await using scene = await makeScene();
  await scene.write("brief.md", brief({ task: 1, title: "Queued" }));
  assert.equal((await scene.relay(["inbox", "add", "brief.md"])).code, 0);
  await Deno.remove(join(scene.work, "brief.md"));
  const holderPath = join(scene.dir, "holder.ts");
  await Deno.writeTextFile(holderPath, HOLDER);
  const holder = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-config",
      "--allow-read",
      "--allow-write",
      "--allow-sys=hostname",
      holderPath,
      join(stateDir(scene), "poll.lock"),
    ],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = holder.stdout.pipeThrough(new TextDecoderStream()).getReader();
  try {
    let line = "";
    while (!line.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      line += value;
    }
    assert.equal(line.trim(), "acquired");
    const before = await scene.snapshot();
    const inbox = await Array.fromAsync(Deno.readDir(join(scene.work, ".relay", "inbox")));

    const res = await scene.relay(["promote"]);
    assert.equal(res.code, 0, all(res));
    assert.equal(res.stdout, "busy: a tick is running; try again in a minute\n");
    const json = await scene.relay(["promote", "--json"]);
    assert.equal(json.code, 0, all(json));
    assert.deepEqual(JSON.parse(json.stdout), {
      result: "busy",
      message: "busy: a tick is running; try again in a minute",
    });
    assert.equal(await scene.snapshot(), before);
    assert.equal(await exists(join(scene.work, "NEXT-STEPS.md")), false);
    assert.equal(
      (await Array.fromAsync(Deno.readDir(join(scene.work, ".relay", "inbox")))).length,
      inbox.length,
    );
  } finally {
    await holder.stdin.close().catch(() => {});
    await reader.cancel().catch(() => {});
    await holder.status;
  }
  // Once the tick is over, promote works.
  const after = await scene.relay(["promote"]);
  assert.equal(after.code, 0, all(after));
  assert.match(after.stdout, /^promoted task 1: Queued/);
});
