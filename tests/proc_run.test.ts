import { running } from "./helpers/scene.ts";
import assert from "node:assert/strict";
import { CommandError } from "../lib/errors.ts";
import { DRAIN_MS, run, stopGroup } from "../lib/proc/run.ts";
import { parseLstart, parseProcStart, processStartTime, procStart } from "../lib/proc/started.ts";

function kill(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    Deno.kill(pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

/** The pid a shell script printed as `pid <n>` on its first line. */
/** Polls `done` every 50 ms for up to `ms` (a cap for a busy machine, not the expected wait). */
async function until(done: () => Promise<boolean>, ms = 10_000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end;) {
    if (await done()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return await done();
}

async function psArgs(): Promise<string> {
  const ps = await new Deno.Command("ps", { args: ["-eo", "args"] }).output();
  return new TextDecoder().decode(ps.stdout);
}

function printedPid(text: string): number | undefined {
  const m = /^pid (\d+)$/m.exec(text);
  return m ? Number(m[1]) : undefined;
}

Deno.test("run() returns a command's full output and exit code", async () => {
  const res = await run(["sh", "-c", "echo out; echo err >&2; exit 3"], {
    cwd: "/",
    allowFail: true,
  });
  assert.equal(res.code, 3);
  assert.equal(res.signal, null);
  assert.equal(res.stdout, "out\n");
  assert.equal(res.stderr, "err\n");
  assert.equal(res.timedOut, false);
});

Deno.test("run() throws a CommandError naming the exit code and stderr when a command fails", async () => {
  await assert.rejects(
    run(["sh", "-c", "echo broken >&2; exit 4"], { cwd: "/" }),
    (err: unknown) => {
      assert.ok(err instanceof CommandError);
      assert.equal(err.code, 4);
      assert.match(err.message, /^exited 4: sh -c/);
      assert.match(err.message, /broken/);
      return true;
    },
  );
});

Deno.test("run() keeps more than a megabyte on each stream intact", async () => {
  const script =
    "head -c 3000000 /dev/zero | tr '\\0' a; head -c 2000000 /dev/zero | tr '\\0' b >&2";
  const res = await run(["sh", "-c", script], { cwd: "/" });
  assert.equal(res.stdout.length, 3_000_000);
  assert.equal(res.stderr.length, 2_000_000);
  assert.match(res.stdout, /^a+$/);
  assert.match(res.stderr, /^b+$/);
});

Deno.test("run() hands stdout over as it arrives, and a receiver that throws neither hangs the child nor loses the error", async () => {
  const script = "head -c 3000000 /dev/zero | tr '\\0' x; echo; echo err >&2";
  let size = 0;
  const res = await run(["sh", "-c", script], {
    cwd: "/",
    onStdout: (chunk) => size += chunk.length,
  });
  assert.equal(size, 3_000_001);
  assert.equal(res.stdout, "", "what is handed over is not also kept");
  assert.equal(res.stderr, "err\n");
  // The receiver gives up at the first chunk: the rest (far more than a pipe holds) is still
  // read, the child ends, and run() throws the receiver's error.
  let calls = 0;
  await assert.rejects(
    run(["sh", "-c", script], {
      cwd: "/",
      timeoutMs: 30_000,
      onStdout: () => {
        calls++;
        throw new Error("cannot read this");
      },
    }),
    /cannot read this/,
  );
  assert.equal(calls, 1);
});

Deno.test("run() gives a command its own process group only when it has a timeout or ends its group", async () => {
  // `ps -o pid=,pgid=` of the shell itself: its own group when started detached, else ours.
  const script = "ps -o pid=,pgid= -p $$";
  const groupOf = async (opts: { timeoutMs?: number; endGroup?: boolean }) => {
    const [pid, pgid] = (await run(["sh", "-c", script], { cwd: "/", ...opts })).stdout.trim()
      .split(/\s+/).map(Number);
    return { own: pid === pgid, pgid };
  };
  const ps = await new Deno.Command("ps", { args: ["-o", "pgid=", "-p", String(Deno.pid)] })
    .output();
  const ours = Number(new TextDecoder().decode(ps.stdout).trim());
  const plain = await groupOf({});
  assert.equal(plain.own, false, "a local command stays in relay's group (a cheap start)");
  assert.equal(plain.pgid, ours);
  assert.equal(
    (await groupOf({ timeoutMs: 30_000 })).own,
    true,
    "a timed command can be killed as a group",
  );
  assert.equal(
    (await groupOf({ endGroup: true })).own,
    true,
    "a bar command's leftovers end with it",
  );
});

Deno.test("run() starts a command with a timeout as the leader of a session of its own, the pid it holds", async () => {
  // pid, process group and session: one number, the pid run() kills the group by.
  const res = await run(["sh", "-c", "ps -o pid=,pgid=,sid= -p $$"], {
    cwd: "/",
    timeoutMs: 30_000,
  });
  const [pid, pgid, sid] = res.stdout.trim().split(/\s+/).map(Number);
  assert.equal(pgid, pid);
  assert.equal(sid, pid);
});

Deno.test("run() says a program with a timeout is not found as it says it of any other", async () => {
  for (const opts of [{}, { timeoutMs: 30_000 }, { endGroup: true }]) {
    await assert.rejects(
      run(["relay-no-such-program-xyz", "x"], { cwd: "/", ...opts }),
      (err: Error) =>
        err instanceof CommandError &&
        /cannot start "relay-no-such-program-xyz": not found on PATH/.test(err.message),
      JSON.stringify(opts),
    );
  }
});

Deno.test("run() stops a command whose timeout comes before it leads its group", async () => {
  // A timeout of 0 fires while setsid(1) may not have made the child a group leader yet.
  for (let i = 0; i < 6; i++) {
    const started = Date.now();
    await assert.rejects(run(["sleep", "30"], { cwd: "/", timeoutMs: 0 }), /timed out/);
    const took = Date.now() - started;
    assert.ok(took < 15_000, `attempt ${i}: the command ran on for ${took} ms past its timeout`);
  }
});

Deno.test("run() feeds stdin text to the command", async () => {
  const text = "line\n".repeat(50_000);
  const res = await run(["wc", "-l"], { cwd: "/", stdin: text });
  assert.equal(res.stdout.trim(), "50000");
});

Deno.test("run() does not hang when a command exits without reading a large stdin", async () => {
  const res = await run(["true"], { cwd: "/", stdin: "x".repeat(1_000_000) });
  assert.equal(res.code, 0);
});

Deno.test("run() throws the timeout CommandError within seconds even when a setsid grandchild holds the pipes", async () => {
  let survivor: number | undefined;
  const started = performance.now();
  try {
    await assert.rejects(
      run(["sh", "-c", "setsid sleep 20 & echo pid $! >&2; sleep 10"], {
        cwd: "/",
        timeoutMs: 1000,
      }),
      (err: unknown) => {
        assert.ok(err instanceof CommandError);
        survivor = printedPid(err.message.replace(/^ +/gm, ""));
        assert.equal(err.code, null);
        assert.match(err.message, /^timed out after 1s: sh -c/);
        return true;
      },
    );
    const elapsed = performance.now() - started;
    // Expected: about 1 s + DRAIN_MS. The bound only has to stay below the grandchild's 20 s (what
    // waiting for the pipes would take), with room for a busy machine.
    assert.ok(elapsed < 1000 + DRAIN_MS + 12_000, `run() took ${Math.round(elapsed)}ms`);
    assert.ok(elapsed >= 1000, `run() returned after ${Math.round(elapsed)}ms, before the timeout`);
    // The grandchild left the group, so the timeout kill could not reach it: it holds the pipes.
    assert.ok(survivor !== undefined && await running(survivor), "no setsid grandchild found");
  } finally {
    kill(survivor);
  }
});

Deno.test("run() returns what a command printed when it exits while a setsid grandchild holds the pipes", async () => {
  const started = performance.now();
  const res = await run(["sh", "-c", "setsid sleep 20 & echo pid $!; echo started"], {
    cwd: "/",
    timeoutMs: 10_000,
  });
  const elapsed = performance.now() - started;
  const pid = printedPid(res.stdout);
  try {
    // Expected: about DRAIN_MS; waiting for the pipes would take the grandchild's 20 s.
    assert.ok(elapsed < DRAIN_MS + 12_000, `run() took ${Math.round(elapsed)}ms`);
    assert.equal(res.code, 0);
    assert.equal(res.timedOut, false);
    assert.match(res.stdout, /^pid \d+\nstarted\n$/);
    assert.ok(pid !== undefined && await running(pid), "the grandchild should still be running");
  } finally {
    kill(pid);
  }
});

Deno.test("stopGroup() stops a detached process group with SIGTERM, and what ignores it with SIGKILL", async () => {
  // The leader dies on SIGTERM; its background child ignores SIGTERM and must go by SIGKILL.
  const child = new Deno.Command("sh", {
    args: ["-c", "(trap '' TERM; exec sleep 30) & echo pid $!; wait"],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
    detached: true,
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  const member = printedPid(text);
  try {
    assert.ok(member !== undefined, `unexpected output: ${text}`);
    assert.ok(await running(member));
    const stopped = await stopGroup(child.pid, () => running(child.pid), 2_000);
    assert.equal(stopped, true);
    assert.equal((await child.status).signal, "SIGTERM");
    // A SIGKILLed process may take a moment to go: wait for that state (it would live 30 s).
    assert.ok(
      await until(async () => !(await running(member))),
      "the SIGTERM-proof member survived",
    );
  } finally {
    kill(member);
    await reader.cancel().catch(() => {});
  }
});

Deno.test("parseLstart() reads ps's C-locale start time as local time", () => {
  assert.equal(
    parseLstart("Mon Jun  3 10:22:33 2024\n")?.getTime(),
    new Date(2024, 5, 3, 10, 22, 33).getTime(),
  );
  assert.equal(
    parseLstart("Sun Nov 29 20:09:46 2026")?.getTime(),
    new Date(2026, 10, 29, 20, 9, 46).getTime(),
  );
  assert.equal(parseLstart(""), null);
  assert.equal(parseLstart("Mon Foo  3 10:22:33 2024"), null);
  assert.equal(parseLstart("yesterday"), null);
});

Deno.test("processStartTime() gives a child's start time to within a few seconds, and null for no process", async () => {
  const before = Date.now();
  const child = new Deno.Command("sleep", { args: ["5"], stdin: "null", stdout: "null" }).spawn();
  try {
    const started = await processStartTime(child.pid);
    const after = Date.now();
    assert.ok(started !== null);
    // ps prints whole seconds computed from the boot time and clock ticks, so it can be off by
    // a second or two either way; `before`..`after` brackets the spawn however slow the machine.
    assert.ok(
      started.getTime() >= before - 3_000 && started.getTime() <= after + 3_000,
      `${started.toISOString()} is not within ${new Date(before).toISOString()}..${
        new Date(after).toISOString()
      }`,
    );
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
  assert.equal(await processStartTime(0), null);
  assert.equal(await processStartTime(2 ** 22 + 12345), null);
});

Deno.test("run({endGroup}) ends what a command left running in its group, and a timeout keeps the output printed so far", async () => {
  const marker = `relay-run-${crypto.randomUUID()}`;
  // `exec -a` names the sleeping process after the marker, so ps can find it.
  await run(["bash", "-c", `(exec -a ${marker} sleep 300) & echo started`], {
    cwd: Deno.cwd(),
    endGroup: true,
  })
    .catch(() => {});
  // Killed processes may take a moment to leave the table; one left running would stay 300 s.
  assert.ok(await until(async () => !(await psArgs()).includes(marker)), `${marker} still runs`);

  const err = await run(["sh", "-c", "echo 'test 1 ok'; echo 'warning' >&2; sleep 30"], {
    cwd: Deno.cwd(),
    timeoutMs: 500,
  }).then(() => null, (e: Error) => e);
  assert.ok(err);
  assert.match(err.message, /timed out/);
  assert.match(err.message, /test 1 ok/);
  assert.match(err.message, /warning/);
});

Deno.test("run() without endGroup leaves what a command started in its group running (git's credential cache)", async () => {
  const marker = `relay-keep-${crypto.randomUUID()}`;
  const res = await run(["bash", "-c", `(exec -a ${marker} sleep 5) & echo pid $!`], {
    cwd: Deno.cwd(),
  });
  const pid = Number(/pid (\d+)/.exec(res.stdout)?.[1]);
  try {
    // The background subshell renames itself (exec -a) on its own time: wait until ps shows it.
    assert.ok(
      await until(async () => (await psArgs()).includes(marker)),
      `${marker} is not running`,
    );
  } finally {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

Deno.test("parseProcStart() reads the boot id, the uptime and a stat line whose name holds anything", () => {
  const boot = "d7ba6b9d-8bcd-4b94-8115-d0bc68dd02fa";
  const rest = "19964 19964 19179 0 -1 4194304 105 0 0 0 0 0 0 0 20 0 1 0 2382883 3133440 410";
  assert.deepEqual(
    parseProcStart(`${boot}\n23830.50 15360.26\n19967 (a) b (c) S ${rest}\n`),
    { stamp: `${boot}:2382883`, elapsedMs: 1_670, zombie: false },
  );
  assert.equal(parseProcStart(`${boot}\n23830.50 1\n19967 (sh) Z ${rest}\n`)?.zombie, true);
  // Read in a time namespace whose boot clock is 100.5 s ahead: ticks and uptime shifted alike.
  const shifted = `${boot}\n23931.00 1\nmonotonic 0 0\nboottime 100 500000000\n19967 (sh) S ${
    rest.replace("2382883", "2392933")
  }\n`;
  assert.deepEqual(parseProcStart(shifted), {
    stamp: `${boot}:2382883`,
    elapsedMs: 1_670,
    zombie: false,
  });
  assert.equal(parseProcStart(`${boot}\n23830.50 1\n`), null, "no stat line");
  assert.equal(parseProcStart(`${boot}\n23830.50 1\n19967 (sh) S 1 2 3\n`), null, "cut short");
  assert.equal(parseProcStart(`\nup\n19967 (sh) S ${rest}\n`), null);
});

Deno.test({
  name: "procStart() on Linux: a child's stamp holds while it runs; no process gives null",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const child = new Deno.Command("sleep", { args: ["30"], stdout: "null", stderr: "null" })
      .spawn();
    try {
      const first = await procStart(child.pid);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const second = await procStart(child.pid);
      assert.ok(first !== null && second !== null);
      assert.match(first.stamp, /^[0-9a-f-]{36}:\d+$/);
      assert.equal(second.stamp, first.stamp);
      assert.equal(first.zombie, false);
      assert.ok(second.elapsedMs >= first.elapsedMs && second.elapsedMs < 30_000);
      const self = await procStart(Deno.pid);
      assert.ok(self !== null);
      assert.notEqual(self.stamp, first.stamp, "another process, another stamp");
      assert.equal(self.stamp.split(":")[0], first.stamp.split(":")[0], "one boot");
      // Read from a time namespace with another boot clock (where this machine lets a user
      // make one): the same stamp.
      const files = ["/proc/sys/kernel/random/boot_id", "/proc/uptime"];
      const inside = await new Deno.Command("unshare", {
        args: [
          "-Ur",
          "-T",
          "--boottime",
          "100000",
          "--",
          "cat",
          ...files,
          "/proc/self/timens_offsets",
          `/proc/${child.pid}/stat`,
        ],
        stdout: "piped",
        stderr: "null",
      }).output().catch(() => null);
      if (inside?.success) {
        const text = new TextDecoder().decode(inside.stdout);
        assert.match(text, /^boottime\s+100000\s/m);
        assert.equal(parseProcStart(text)?.stamp, first.stamp);
      }
    } finally {
      child.kill("SIGKILL");
      await child.status;
    }
    assert.equal(await procStart(0), null);
    assert.equal(await procStart(2 ** 22 + 12345), null);
  },
});
