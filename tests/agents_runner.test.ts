import assert from "node:assert/strict";
import { join } from "node:path";
import { type AgentRunOptions, runAgent } from "../lib/agents/runner.ts";
import {
  formatDuration,
  formatElapsed,
  printable,
  statusLine,
  timedOutText,
} from "../lib/agents/progress.ts";
import { isAlive, procState, psAlive } from "../lib/proc/alive.ts";

const FIXTURES = new URL("./fixtures/runner/", import.meta.url).pathname;
const fixture = (name: string) => join(FIXTURES, name);

interface Temp extends AsyncDisposable {
  dir: string;
  log: string;
}

async function temp(): Promise<Temp> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "relay-runner-" }));
  return {
    dir,
    log: join(dir, "logs", "turn.log"),
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

function options(t: Temp, argv: string[], extra: Partial<AgentRunOptions> = {}): AgentRunOptions {
  return {
    argv,
    cwd: t.dir,
    env: {},
    timeoutMs: 10_000,
    logPath: t.log,
    progress: "quiet",
    label: "test turn",
    ...extra,
  };
}

/** Live (non-zombie) processes whose process group is `pgid`. */
async function groupMembers(pgid: number): Promise<string[]> {
  const out = await new Deno.Command("ps", { args: ["-e", "-o", "pid=,pgid=,stat=,args="] })
    .output();
  return new TextDecoder().decode(out.stdout).split("\n").filter((line) => {
    const [, group, stat] = line.trim().split(/\s+/);
    return Number(group) === pgid && stat !== undefined && !stat.startsWith("Z");
  });
}

/**
 * Whether `pid` is gone within `ms`: a SIGKILL is delivered at once, but the process ends when
 * the kernel next runs it (its pipes close first, so on a busy machine relay may see the end of
 * its output a moment before the process itself is gone).
 */
async function goneWithin(pid: number, ms = 2_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (await isAlive(pid)) {
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

/** The group's live members once it has emptied, or after `ms` those still in it. */
async function groupAfter(pgid: number, ms = 2_000): Promise<string[]> {
  const until = Date.now() + ms;
  for (;;) {
    const members = await groupMembers(pgid);
    if (members.length === 0 || Date.now() > until) return members;
    await new Promise((r) => setTimeout(r, 20));
  }
}

function killQuietly(pid: number): void {
  try {
    Deno.kill(-pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

Deno.test("runAgent() passes the exit code through and logs both streams", async () => {
  await using t = await temp();
  const result = await runAgent(options(t, ["sh", fixture("echo.sh"), "7"]));
  assert.equal(result.exitCode, 7);
  assert.equal(result.signal, null);
  assert.equal(result.timedOut, false);
  assert.equal(result.startError, undefined);
  const log = await Deno.readTextFile(t.log);
  assert.match(log, /^stdout line$/m);
  assert.match(log, /^stderr line$/m);
  assert.match(log, /--- relay: test turn: started .*pid \d+/);
  assert.match(log, /--- relay: test turn: finished: exit 7 after 0m0\ds ---/);
  assert.match(result.logTail, /stdout line/);
  assert.match(result.logTail, /stderr line/);
  assert.doesNotMatch(result.logTail, /--- relay:/);
});

Deno.test("runAgent() runs in cwd with env merged over the inherited environment", async () => {
  await using t = await temp();
  const result = await runAgent(
    options(t, ["sh", fixture("echo.sh")], { env: { RELAY_TEST_VAR: "from relay" } }),
  );
  assert.equal(result.exitCode, 0);
  assert.match(result.logTail, new RegExp(`^cwd=${t.dir}$`, "m"));
  assert.match(result.logTail, /^var=from relay$/m);
  assert.match(result.logTail, /^home=set$/m, "the inherited HOME must still be there");
});

Deno.test("runAgent() reports the started pid to onStart()", async () => {
  await using t = await temp();
  const pids: number[] = [];
  const result = await runAgent(
    options(t, ["sh", fixture("echo.sh")], { onStart: (pid) => void pids.push(pid) }),
  );
  assert.equal(pids.length, 1);
  assert.match(result.logTail, new RegExp(`^pid=${pids[0]}$`, "m"));
});

Deno.test("runAgent() appends to an existing log and keeps only the last 40 lines in the tail", async () => {
  await using t = await temp();
  await Deno.mkdir(join(t.dir, "logs"));
  await Deno.writeTextFile(t.log, "earlier turn\n");
  const result = await runAgent(options(t, ["seq", "1", "50000"]));
  assert.equal(result.exitCode, 0);
  const tail = result.logTail.split("\n");
  assert.equal(tail.length, 40);
  assert.equal(tail[0], "49961");
  assert.equal(tail.at(-1), "50000");
  const log = await Deno.readTextFile(t.log);
  assert.ok(log.startsWith("earlier turn\n"));
  const numbers = log.split("\n").filter((l) => /^\d+$/.test(l));
  assert.equal(numbers.length, 50000);
  assert.equal(numbers[49999], "50000");
});

Deno.test("runAgent() on timeout kills the whole group, SIGKILL after the grace period", async () => {
  await using t = await temp();
  let pid = 0;
  try {
    const result = await runAgent(options(t, ["sh", fixture("grandchild.sh")], {
      timeoutMs: 300,
      graceMs: 200,
      onStart: (p) => void (pid = p),
    }));
    assert.equal(result.timedOut, true);
    assert.equal(result.exitCode, null);
    assert.equal(result.signal, "SIGKILL");
    assert.ok(result.durationMs >= 450, `stopped too early: ${result.durationMs}ms`);
    const grandchild = Number(/^grandchild (\d+)$/m.exec(result.logTail)?.[1]);
    assert.ok(grandchild > 0, `no grandchild pid in: ${result.logTail}`);
    assert.ok(await goneWithin(grandchild), `grandchild ${grandchild} still running`);
    assert.deepEqual(await groupAfter(pid), []);
    assert.match(
      await Deno.readTextFile(t.log),
      /finished: timed out after 0m0\ds \(limit 0m00s, killed by SIGKILL\)/,
    );
  } finally {
    if (pid) killQuietly(pid);
  }
});

Deno.test("runAgent() on timeout stops a program that obeys SIGTERM without waiting out the grace period", async () => {
  await using t = await temp();
  const result = await runAgent(
    options(t, ["sleep", "300"], { timeoutMs: 300, graceMs: 5_000 }),
  );
  assert.equal(result.timedOut, true);
  assert.equal(result.signal, "SIGTERM");
  // A SIGKILL after the grace would take 300 ms + 5 s; the margin below that is for a busy machine.
  assert.ok(result.durationMs < 4_500, `took ${result.durationMs}ms`);
});

Deno.test("runAgent() kills what the program left running in its group when it exits", async () => {
  await using t = await temp();
  let pid = 0;
  try {
    const result = await runAgent(
      options(t, ["sh", fixture("leftover.sh")], { onStart: (p) => void (pid = p) }),
    );
    assert.equal(result.exitCode, 0);
    assert.equal(result.timedOut, false);
    const leftover = Number(/^leftover (\d+)$/m.exec(result.logTail)?.[1]);
    assert.ok(leftover > 0);
    assert.ok(await goneWithin(leftover), `leftover ${leftover} still running`);
    assert.deepEqual(await groupAfter(pid), []);
  } finally {
    if (pid) killQuietly(pid);
  }
});

Deno.test("runAgent() returns startError instead of throwing for a program that is not found", async () => {
  await using t = await temp();
  let started = false;
  const result = await runAgent(
    options(t, ["relay-no-such-agent-xyz", "-p", "hi"], { onStart: () => void (started = true) }),
  );
  assert.equal(result.exitCode, null);
  assert.equal(result.signal, null);
  assert.equal(result.timedOut, false);
  assert.equal(result.startError, `cannot start "relay-no-such-agent-xyz": not found on PATH`);
  assert.equal(started, false);
  assert.match(await Deno.readTextFile(t.log), /not found on PATH/);
});

Deno.test("runAgent() says why a program given by its path cannot start: missing, or not executable", async () => {
  await using t = await temp();
  const missing = join(t.dir, "no-such-agent");
  const gone = await runAgent(options(t, [missing, "-p", "hi"]));
  assert.equal(gone.exitCode, null);
  assert.equal(gone.startError, `cannot start "${missing}": no such file`);
  const plain = join(t.dir, "not-executable.sh");
  await Deno.writeTextFile(plain, "#!/bin/sh\necho hi\n");
  await Deno.chmod(plain, 0o644);
  const denied = await runAgent(options(t, [plain]));
  assert.equal(denied.exitCode, null);
  assert.equal(denied.startError, `cannot start "${plain}": permission denied (not executable?)`);
});

Deno.test("runAgent() returns startError, not exit 127, for a script whose #! line cannot run", async () => {
  await using t = await temp();
  const badInterpreter = join(t.dir, "bad-interpreter");
  await Deno.writeTextFile(badInterpreter, "#!/opt/relay-no-such/bash\necho hi\n");
  await Deno.chmod(badInterpreter, 0o755);
  let started = false;
  const bad = await runAgent(
    options(t, [badInterpreter], { onStart: () => void (started = true) }),
  );
  assert.equal(bad.exitCode, null);
  assert.equal(started, false);
  assert.equal(
    bad.startError,
    `cannot start "${badInterpreter}": its first line (#!/opt/relay-no-such/bash) names /opt/relay-no-such/bash, which is not an executable file`,
  );
  const viaEnv = join(t.dir, "via-env");
  await Deno.writeTextFile(viaEnv, "#!/usr/bin/env -S relay-no-such-node --flag\n");
  await Deno.chmod(viaEnv, 0o755);
  const missing = await runAgent(options(t, [viaEnv]));
  assert.equal(missing.exitCode, null);
  assert.equal(
    missing.startError,
    `cannot start "${viaEnv}": its first line (#!/usr/bin/env -S relay-no-such-node --flag) starts "relay-no-such-node", which is not on PATH`,
  );
  assert.match(await Deno.readTextFile(t.log), /which is not on PATH/);
  // A script whose interpreter is there runs as before.
  const fine = join(t.dir, "fine");
  await Deno.writeTextFile(fine, "#!/usr/bin/env bash\necho fine\n");
  await Deno.chmod(fine, 0o755);
  const ran = await runAgent(options(t, [fine]));
  assert.equal(ran.startError, undefined);
  assert.equal(ran.exitCode, 0);
  assert.match(ran.logTail, /^fine$/m);
});

Deno.test("runAgent() returns startError for a working directory that does not exist", async () => {
  await using t = await temp();
  const missing = join(t.dir, "gone");
  const result = await runAgent(options(t, ["sh", fixture("echo.sh")], { cwd: missing }));
  assert.equal(result.exitCode, null);
  assert.equal(
    result.startError,
    `cannot start "sh": working directory "${missing}" does not exist`,
  );
});

Deno.test("runAgent() kills the program and rethrows when onStart() fails", async () => {
  await using t = await temp();
  let pid = 0;
  try {
    await assert.rejects(
      runAgent(options(t, ["sh", fixture("grandchild.sh")], {
        onStart: (p) => {
          pid = p;
          throw new Error("journal is read-only");
        },
      })),
      /journal is read-only/,
    );
    assert.ok(pid > 0);
    assert.equal(await isAlive(pid), false);
    assert.deepEqual(await groupAfter(pid), []);
  } finally {
    if (pid) killQuietly(pid);
  }
});

Deno.test("runAgent() kills the program when onStart() fails at once, before it leads its group", async () => {
  // Started through setsid(1) by posix_spawn, the child leads no group for its first moments:
  // a kill of the group then finds none, and the turn would run to its end unrecorded.
  await using t = await temp();
  for (let i = 0; i < 6; i++) {
    const started = Date.now();
    await assert.rejects(
      runAgent(options(t, ["sleep", "30"], {
        timeoutMs: 60_000,
        onStart: () => {
          throw new Error("journal is read-only");
        },
      })),
      /journal is read-only/,
    );
    const took = Date.now() - started;
    assert.ok(took < 15_000, `attempt ${i}: the turn ran on for ${took} ms after onStart failed`);
  }
});

Deno.test("runAgent() with plain progress prints a started and a finished line", async () => {
  await using t = await temp();
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      fixture("progress.ts"),
      "plain",
      t.log,
      "sh",
      fixture("echo.sh"),
      "3",
    ],
    cwd: t.dir,
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  // Not a terminal here: each line starts with the UTC time, as in cron.log.
  assert.match(
    stderr,
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ relay: executor task 3 started \(pid \d+\)$/m,
  );
  assert.match(stderr, /^\S+Z relay: executor task 3 finished: exit 3 after 0m0\ds$/m);
  assert.doesNotMatch(stderr, /stdout line/, "the program's output goes to the log only");
});

Deno.test("runAgent() with tty progress redraws a status line with the last output and clears it", async () => {
  await using t = await temp();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", fixture("progress.ts"), "tty", t.log, "sh", fixture("slow.sh")],
    cwd: t.dir,
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  assert.ok(
    stderr.includes("\r\x1b[2Krelay: executor task 3 0:01 | working on step one"),
    JSON.stringify(stderr),
  );
  assert.ok(
    stderr.endsWith("\r\x1b[2K"),
    `the status line is not cleared: ${JSON.stringify(stderr)}`,
  );
  assert.ok(!stderr.includes("\n"), "tty progress writes no newlines");
});

Deno.test("runAgent() with quiet progress prints nothing", async () => {
  await using t = await temp();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", fixture("progress.ts"), "quiet", t.log, "sh", fixture("echo.sh")],
    cwd: t.dir,
  }).output();
  assert.equal(out.code, 0);
  assert.equal(new TextDecoder().decode(out.stderr), "");
  assert.equal(JSON.parse(new TextDecoder().decode(out.stdout)).exitCode, 0);
});

Deno.test("isAlive() is true for a running process and false once it has exited", async () => {
  const child = new Deno.Command("sleep", { args: ["30"], stdout: "null", stderr: "null" }).spawn();
  try {
    assert.equal(await isAlive(child.pid), true);
    assert.equal(await psAlive(child.pid), true);
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
  assert.equal(await isAlive(child.pid), false);
  assert.equal(await psAlive(child.pid), false);
  assert.equal(await isAlive(Deno.pid), true);
  assert.equal(await isAlive(0), false);
  assert.equal(await isAlive(-1), false);
});

Deno.test("isAlive() is false for a zombie", async () => {
  const child = new Deno.Command("sh", {
    args: [fixture("zombie.sh")],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  try {
    let text = "";
    while (!text.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    const zombie = Number(text.trim());
    assert.ok(zombie > 0);
    // Wait until the child has exited and is left unreaped.
    let state: string | undefined;
    for (let i = 0; i < 150 && state !== "Z"; i++) {
      await new Promise((r) => setTimeout(r, 20));
      const out = await new Deno.Command("cat", { args: [`/proc/${zombie}/stat`] }).output();
      state = procState(new TextDecoder().decode(out.stdout));
    }
    assert.equal(state, "Z", "the fixture did not produce a zombie");
    assert.equal(await isAlive(zombie), false);
    assert.equal(await psAlive(zombie), false);
  } finally {
    child.kill("SIGKILL");
    await reader.cancel();
    await child.status;
  }
});

Deno.test("procState() reads the state letter even when the name holds spaces and parentheses", () => {
  assert.equal(procState("42 (my (odd) name) Z 1 42 42 0 -1"), "Z");
  assert.equal(procState("7 (sleep) S 1 7 7"), "S");
  assert.equal(procState("garbage"), undefined);
});

Deno.test("formatDuration() and formatElapsed() show minutes and zero-padded seconds", () => {
  assert.equal(formatDuration(62_000), "1m02s");
  assert.equal(formatDuration(400), "0m00s");
  assert.equal(formatDuration(3_600_000), "60m00s");
  assert.equal(formatElapsed(62_900), "1:02");
  assert.equal(formatElapsed(5_000), "0:05");
});

Deno.test("statusLine() fits the terminal width and strips terminal escapes from the output line", () => {
  assert.equal(statusLine("executor task 3", 65_000, "", 80), "relay: executor task 3 1:05");
  assert.equal(
    statusLine("reviewer", 1_000, "\x1b[32mok\x1b[0m tests pass", 80),
    "relay: reviewer 0:01 | ok tests pass",
  );
  const long = statusLine("reviewer", 1_000, "x".repeat(500), 40);
  assert.equal(long.length, 39);
  assert.ok(long.endsWith("…"));
  assert.equal(printable("10%\r50%\r100%\r"), "100%");
  assert.equal(printable("a\tb\x07"), "a b");
});

Deno.test("timedOutText() names the turn limit first and the time the turn ran second", () => {
  assert.equal(timedOutText(4_000, 14_200), "timed out: limit 4s, ran 14s");
  assert.equal(timedOutText(5_400_000, 5_405_000), "timed out: limit 1h30m, ran 1h30m5s");
  assert.equal(timedOutText(1_000, 300), "timed out: limit 1s, ran 0s");
  // No limit on record (a journal from an older relay): the run time alone.
  assert.equal(timedOutText(undefined, 14_000), "timed out after 14s");
  assert.equal(timedOutText(Infinity, 14_000), "timed out after 14s");
});
