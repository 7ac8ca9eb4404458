/**
 * One agent turn for every role (lib/agents/turn.ts) and the decision about a
 * turn a killed tick left behind (lib/agents/orphan.ts), on small real
 * programs: a script that says what it was given, `sleep` in its own process
 * group, a pid that is gone.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { RoleSpec } from "../lib/config/profile.ts";
import { HoldError, RetryError } from "../lib/errors.ts";
import { isAlive } from "../lib/proc/alive.ts";
import { procStart } from "../lib/proc/started.ts";
import {
  type JournaledTurn,
  orphanTurn,
  overdueText,
  requireRoleProgram,
  roleTimeoutMs,
  startTurn,
  timedOutText,
  type TurnOptions,
  type TurnStart,
} from "../lib/agents/turn.ts";

const SPEAKS = new URL("./fixtures/turn/speaks.sh", import.meta.url).pathname;

interface Temp extends AsyncDisposable {
  dir: string;
  log: string;
}

async function temp(): Promise<Temp> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "relay-turn-" }));
  return {
    dir,
    log: join(dir, "run", "agent.log"),
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

function command(argv: string[], extra: Partial<RoleSpec> = {}): RoleSpec {
  return { vendor: "command", argv, timeoutMs: 60_000, env: {}, ...extra };
}

/** Journal calls, in order. */
type Started = TurnStart;

function options(
  t: Temp,
  spec: RoleSpec,
  started: Started[],
  extra: Partial<TurnOptions> = {},
): TurnOptions {
  return {
    role: "executor",
    spec,
    prompt: "the prompt",
    env: { RELAY_ROLE: "executor", RELAY_TASK: "3" },
    cwd: t.dir,
    logPath: t.log,
    timeoutMs: 30_000,
    progress: "quiet",
    label: "executor task 3",
    journal: { onStart: (start) => void started.push(start) },
    demo: () => Promise.reject(new Error("the demo ran for a program role")),
    ...extra,
  };
}

Deno.test("a turn runs the role's program with the prompt and the caller's RELAY_* over the profile's env, and journals its pid, start and deadline", async () => {
  await using t = await temp();
  const started: Started[] = [];
  const spec = command(["bash", SPEAKS, "{prompt}"], {
    env: { FROM_PROFILE: "yes", RELAY_ROLE: "the profile's", TURN_EXIT: "3" },
  });
  const stdoutPath = join(t.dir, "run", "agent.stdout");
  const before = Date.now();
  const outcome = await startTurn(options(t, spec, started, { stdoutPath, timeoutMs: 45_000 }));
  assert.deepEqual({ ...outcome, durationMs: 0 }, {
    exitCode: 3,
    signal: null,
    timedOut: false,
    durationMs: 0,
  });
  const log = await Deno.readTextFile(t.log);
  assert.match(log, /^args: the prompt$/m);
  assert.match(log, /^RELAY_ROLE=executor$/m, "the caller's RELAY_ROLE wins over the profile's");
  assert.match(log, /^RELAY_TASK=3$/m);
  assert.match(log, /^FROM_PROFILE=yes$/m);
  assert.match(log, /^a line on stderr$/m);
  const stdout = await Deno.readTextFile(stdoutPath);
  assert.match(stdout, /^args: the prompt$/m);
  assert.doesNotMatch(stdout, /stderr/, "stdoutPath holds stdout alone");

  assert.equal(started.length, 1);
  const { pid, started: at, deadline } = started[0]!;
  assert.ok(pid > 0);
  assert.ok(Date.parse(at) >= before - 1 && Date.parse(at) <= Date.now());
  assert.equal(Date.parse(deadline!) - Date.parse(at), 45_000, "deadline = start + turn limit");
});

Deno.test("a turn asks the tick's lease first: one lost to another machine starts no agent", async () => {
  await using t = await temp();
  const { guardWith } = await import("../lib/git/lease_guard.ts");
  using _guard = { [Symbol.dispose]: () => guardWith(null) };
  let asked = 0;
  guardWith({
    confirm: () => {
      asked++;
      return Promise.reject(new RetryError("the executor lease is no longer this machine's"));
    },
  });
  const marker = join(t.dir, "ran");
  const started: Started[] = [];
  await assert.rejects(
    startTurn(options(t, command(["touch", marker, "{prompt}"]), started)),
    RetryError,
  );
  assert.equal(asked, 1);
  assert.deepEqual(started, [], "nothing journaled as started");
  assert.equal(await Deno.stat(marker).then(() => true, () => false), false, "the agent never ran");
  // With the lease still this tick's, the same turn runs.
  guardWith({ confirm: () => Promise.resolve() });
  const ok = await startTurn(options(t, command(["touch", marker, "{prompt}"]), started));
  assert.equal(ok.exitCode, 0);
  assert.equal(await Deno.stat(marker).then(() => true, () => false), true);
});

Deno.test("a turn past its limit is stopped and says it timed out; with no limit, no deadline is journaled", async () => {
  await using t = await temp();
  const started: Started[] = [];
  const outcome = await startTurn(
    options(t, command(["sleep", "{prompt}"]), started, {
      prompt: "30",
      timeoutMs: 1_000,
      graceMs: 200,
    }),
  );
  assert.equal(outcome.timedOut, true);
  assert.equal(outcome.exitCode, null);
  assert.equal(outcome.signal, "SIGTERM");
  assert.ok(outcome.durationMs >= 1_000 && outcome.durationMs < 10_000, `${outcome.durationMs}`);
  assert.match(timedOutText(1_000, outcome.durationMs), /^timed out: limit 1s, ran \ds$/);
  assert.equal(Date.parse(started[0]!.deadline!) - Date.parse(started[0]!.started), 1_000);
  assert.equal(await isAlive(started[0]!.pid), false);
  if (Deno.build.os === "linux") {
    assert.match(started[0]!.stamp ?? "", /^[0-9a-f-]{36}:\d+$/, "Linux: boot id and start ticks");
  }

  // No limit: the turn runs to its end (not cut off at once), and the journal has no deadline.
  const open: Started[] = [];
  const ok = await startTurn(
    options(t, command(["sleep", "{prompt}"]), open, { prompt: "0.3", timeoutMs: Infinity }),
  );
  assert.equal(ok.timedOut, false);
  assert.equal(ok.exitCode, 0);
  assert.equal(open.length, 1);
  assert.equal(open[0]!.deadline, undefined);
});

Deno.test("a demo role runs the caller's demo instead of a program, and journals no pid", async () => {
  await using t = await temp();
  const started: Started[] = [];
  let ran = 0;
  const outcome = await startTurn(
    options(t, { vendor: "demo", timeoutMs: 1_000, env: {} }, started, {
      demo: () => {
        ran++;
        return Promise.resolve(4);
      },
    }),
  );
  assert.equal(ran, 1);
  assert.deepEqual({ ...outcome, durationMs: 0 }, {
    exitCode: 4,
    signal: null,
    timedOut: false,
    durationMs: 0,
  });
  assert.deepEqual(started, []);
  assert.equal(await Deno.stat(t.log).then(() => true, () => false), false, "no agent log");
});

Deno.test("a program that cannot start is a startError, not a journaled turn", async () => {
  await using t = await temp();
  const started: Started[] = [];
  const outcome = await startTurn(
    options(t, command([join(t.dir, "no-such-program"), "{prompt}"]), started),
  );
  assert.equal(outcome.exitCode, null);
  assert.equal(outcome.timedOut, false);
  assert.match(outcome.startError ?? "", /cannot start ".*no-such-program": no such file/);
  assert.deepEqual(started, []);
});

Deno.test("a turn whose journal cannot be written is stopped and the error passed on", async () => {
  await using t = await temp();
  let pid = 0;
  await assert.rejects(
    startTurn(
      options(t, command(["sleep", "{prompt}"]), [], {
        prompt: "30",
        journal: {
          onStart: (start) => {
            pid = start.pid;
            throw new Error("disk full");
          },
        },
      }),
    ),
    /disk full/,
  );
  assert.ok(pid > 0);
  assert.equal(await isAlive(pid), false, "an unjournaled turn was left running");
});

Deno.test("a role other than executor or reviewer names the preset its argv takes", async () => {
  await using t = await temp();
  const spec = command(["bash", SPEAKS, "{prompt}"]);
  await assert.rejects(
    startTurn(options(t, spec, [], { role: "docs" })),
    /role "docs" needs a preset/,
  );
  const outcome = await startTurn(
    options(t, spec, [], { role: "docs", preset: "executor", env: { RELAY_ROLE: "docs" } }),
  );
  assert.equal(outcome.exitCode, 0);
  assert.match(await Deno.readTextFile(t.log), /^RELAY_ROLE=docs$/m);
});

Deno.test("requireRoleProgram() HOLDs for a program that is not there, and lets a demo role or a present program by", async () => {
  const err = await requireRoleProgram(
    "reviewer",
    command(["relay-no-such-program-xyz", "{prompt}"]),
    "/etc/relay/profile.yaml",
  ).then(() => null, (e) => e);
  assert.ok(err instanceof HoldError, String(err));
  assert.equal(
    err.message,
    'Cannot start the reviewer: "relay-no-such-program-xyz" is not on PATH',
  );
  assert.match(
    err.next,
    /^Fix roles\.reviewer in the operator profile \(\/etc\/relay\/profile\.yaml\)/,
  );
  assert.equal(err.recheck, true);

  await requireRoleProgram("executor", command(["bash", SPEAKS, "{prompt}"]), "p.yaml");
  await requireRoleProgram("executor", { vendor: "demo", timeoutMs: 1, env: {} }, "p.yaml");
});

Deno.test("requireRoleProgram() HOLDs for a script whose #! line cannot run: a missing interpreter, or env finding no node", async () => {
  await using t = await temp();
  const bin = join(t.dir, "bin");
  await Deno.mkdir(bin);
  const write = async (name: string, text: string) => {
    await Deno.writeTextFile(join(bin, name), text);
    await Deno.chmod(join(bin, name), 0o755);
  };
  await write("claude", "#!/usr/bin/env relay-fake-node\nconsole.log('hi')\n");
  await write("direct", "#!/opt/relay-no-such/node --flag\n");
  await write("relay-fake-node", "#!/bin/sh\necho fake node\n");
  // cron's PATH, most often: the CLI is found by its absolute path, its node is not on PATH.
  const cron = { PATH: "/usr/bin:/bin" };
  const err = await requireRoleProgram(
    "executor",
    command([join(bin, "claude"), "{prompt}"], { env: cron }),
    "/etc/relay/profile.yaml",
  ).then(() => null, (e) => e);
  assert.ok(err instanceof HoldError, String(err));
  assert.equal(
    err.message,
    `Cannot start the executor: "${
      join(bin, "claude")
    }" is there, but its first line (#!/usr/bin/env relay-fake-node) starts "relay-fake-node", which is not on PATH`,
  );
  assert.match(
    err.next,
    /roles\.executor\.env of the operator profile \(\/etc\/relay\/profile\.yaml\)/,
  );
  assert.match(err.next, /PATH is \/usr\/bin:\/bin\)\. No attempt was used/);
  assert.equal(err.recheck, true);

  const direct = await requireRoleProgram(
    "reviewer",
    command(["direct", "{prompt}"], { env: { PATH: bin } }),
    "p.yaml",
  ).then(() => null, (e) => e);
  assert.ok(direct instanceof HoldError, String(direct));
  // A name found on PATH: the HOLD says where.
  assert.match(direct.message, /^Cannot start the reviewer: "direct" \(.*\/bin\/direct\) is there/);
  assert.match(
    direct.message,
    /its first line \(#!\/opt\/relay-no-such\/node --flag\) names \/opt\/relay-no-such\/node, which is not an executable file$/,
  );

  // With its node on the role's PATH the same script starts.
  await requireRoleProgram(
    "executor",
    command([join(bin, "claude"), "{prompt}"], { env: { PATH: `${bin}:/usr/bin:/bin` } }),
    "p.yaml",
  );
});

Deno.test("roleTimeoutMs() is the role's limit, capped by the repo's", () => {
  const spec = command(["x"], { timeoutMs: 60_000 });
  assert.equal(roleTimeoutMs(spec, undefined), 60_000);
  assert.equal(roleTimeoutMs(spec, 30_000), 30_000);
  assert.equal(roleTimeoutMs(spec, 90_000), 60_000);
});

// --- orphans -------------------------------------------------------------------------------------

/** `sleep 30`, optionally as the leader of its own process group, as a killed tick leaves it. */
function sleeper(ownGroup: boolean): Deno.ChildProcess & AsyncDisposable {
  const child = new Deno.Command("sleep", {
    args: ["30"],
    stdin: "null",
    stdout: "null",
    stderr: "null",
    detached: ownGroup,
  }).spawn();
  return Object.assign(child, {
    [Symbol.asyncDispose]: async () => {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
      await child.status;
    },
  });
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** The journaled turn is taken as lost to another process that has its pid now; none is stopped. */
async function assertReused(turn: JournaledTurn): Promise<void> {
  const reused = await orphanTurn(turn, {
    stopping: () => assert.fail("another process is not stopped"),
  });
  assert.equal(reused.kind, "gone");
  if (reused.kind !== "gone") return;
  assert.match(
    reused.reused ?? "",
    new RegExp(`^pid ${turn.pid} now belongs to a process started`),
  );
}

Deno.test("orphanTurn(): our turn within its limit is running, and is left alone", async () => {
  await using child = sleeper(true);
  const turn: JournaledTurn = {
    pid: child.pid,
    started: iso(Date.now()),
    deadline: iso(Date.now() + 60_000),
  };
  let stopping = 0;
  const decision = await orphanTurn(turn, { stopping: () => stopping++ });
  assert.deepEqual(decision, { kind: "running" });
  assert.equal(stopping, 0);
  assert.equal(await isAlive(child.pid), true);
  // A journal from before start times were kept: nothing to check, so it runs.
  assert.deepEqual(await orphanTurn({ pid: child.pid }), { kind: "running" });
});

Deno.test("orphanTurn(): our turn past its deadline has its group stopped and counts as timed out and interrupted", async () => {
  await using child = sleeper(true);
  let exited = false;
  void child.status.then(() => exited = true);
  const calls: string[] = [];
  // Journaled 2s before it really started: within the tolerance, so still our turn.
  const decision = await orphanTurn(
    { pid: child.pid, started: iso(Date.now() - 2_000), deadline: iso(Date.now() - 1) },
    { stopping: () => calls.push(exited ? "after it ended" : "while it ran"), graceMs: 2_000 },
  );
  assert.deepEqual(calls, ["while it ran"], "the tick is told once, before the group is stopped");
  assert.equal(decision.kind, "stopped");
  if (decision.kind !== "stopped") return;
  assert.deepEqual({ ...decision.outcome, durationMs: 0 }, {
    exitCode: null,
    signal: null,
    timedOut: true,
    durationMs: 0,
    interrupted: true,
  });
  // It ran from its journaled start until it was stopped.
  assert.ok(decision.outcome.durationMs >= 2_000 && decision.outcome.durationMs < 30_000);
  assert.equal((await child.status).signal, "SIGTERM");
});

Deno.test("orphanTurn(): a pid that is gone, or another process's now, is a lost turn; none is stopped", async () => {
  const done = new Deno.Command("true").spawn();
  await done.status;
  const lost = await orphanTurn(
    { pid: done.pid, started: iso(Date.now()), deadline: iso(Date.now() - 1) },
    { stopping: () => assert.fail("a gone turn is not stopped") },
  );
  assert.deepEqual(lost, {
    kind: "gone",
    outcome: { exitCode: null, signal: null, timedOut: false, durationMs: 0, interrupted: true },
  });
  // A demo turn: journaled as started, with no pid.
  assert.equal((await orphanTurn({})).kind, "gone");

  await using other = sleeper(true);
  await assertReused({
    pid: other.pid,
    started: iso(Date.now() - 3_600_000),
    deadline: iso(Date.now() - 1),
  });
  assert.equal(await isAlive(other.pid), true);
});

Deno.test("orphanTurn(): an overdue turn that outlives SIGTERM and SIGKILL to its group is stuck", async () => {
  // Not the leader of a group of its own: the signals to "its group" reach nothing.
  await using child = sleeper(false);
  let stopping = 0;
  const decision = await orphanTurn(
    { pid: child.pid, started: iso(Date.now()), deadline: iso(Date.now() - 1) },
    { stopping: () => stopping++, graceMs: 100 },
  );
  assert.deepEqual(decision, { kind: "stuck" });
  assert.equal(stopping, 1);
  assert.equal(await isAlive(child.pid), true);
});

Deno.test({
  name:
    "orphanTurn(): on Linux the journaled stamp names the turn and times its limit, whatever the wall clock did since",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    await using child = sleeper(true);
    const seen = await procStart(child.pid);
    assert.ok(seen !== null, "the sleeper's /proc entry is readable");
    const hour = 3_600_000;
    const now = Date.now();
    // The wall clock stepped an hour on since launch. By ps's start time this pid is another
    // process's now; by its stamp it is our turn, 1 minute into its 1-minute-plus limit.
    const stepped = {
      pid: child.pid,
      started: iso(now - hour),
      deadline: iso(now - hour + 60_000),
    };
    assert.equal((await orphanTurn(stepped)).kind, "gone", "without the stamp: taken as lost");
    assert.deepEqual(await orphanTurn({ ...stepped, stamp: seen.stamp }), { kind: "running" });

    // Another stamp (a later start, or the same ticks in another boot): another process, even
    // with ps's start time right.
    const [boot, ticks] = seen.stamp.split(":");
    const fresh = { pid: child.pid, started: iso(now), deadline: iso(now + 60_000) };
    for (const stamp of [`${boot}:${Number(ticks) - 1}`, `${"0".repeat(8)}-0000:${ticks}`]) {
      const reused = await orphanTurn(
        { ...fresh, stamp },
        { stopping: () => assert.fail("another process is not stopped") },
      );
      assert.equal(reused.kind, "gone");
      if (reused.kind !== "gone") return;
      assert.equal(
        reused.reused,
        `pid ${child.pid} now belongs to another process (${seen.stamp}, not ${stamp})`,
      );
    }
    assert.equal(await isAlive(child.pid), true);

    // The wall clock stepped an hour back: its deadline is still ahead, but the turn has run
    // longer than its limit (here 20 ms) by its own clock, so it is stopped.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const back = { pid: child.pid, started: iso(now + hour), deadline: iso(now + hour + 20) };
    const ran: number[] = [];
    const stopped = await orphanTurn({ ...back, stamp: seen.stamp }, {
      graceMs: 2_000,
      stopping: (ranMs) => void ran.push(ranMs),
    });
    assert.equal(ran.length, 1);
    assert.ok(ran[0]! >= 100 && ran[0]! < 30_000, `told it ran ${ran[0]} ms`);
    assert.match(overdueText({ ...back, stamp: seen.stamp }, ran[0]!), /^ran \d+s of 0s$/);
    assert.equal(stopped.kind, "stopped");
    if (stopped.kind !== "stopped") return;
    assert.equal(stopped.outcome.timedOut, true);
    // Its duration is the time it ran, not a figure read off the stepped clock.
    assert.ok(stopped.outcome.durationMs >= 100 && stopped.outcome.durationMs < 30_000);
    assert.equal((await child.status).signal, "SIGTERM");
  },
});
