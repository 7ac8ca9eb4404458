import assert from "node:assert/strict";
import { join } from "node:path";
import { lockInfoPath, lockState, tryLock } from "../lib/state/lock.ts";

const LOCK_MODULE = new URL("../lib/state/lock.ts", import.meta.url).href;

/**
 * A tiny program that takes the lock in its own process:
 *   try   <lock>            print "acquired" or "busy", release, exit
 *   hold  <lock> <command>  print "acquired" or "busy", hold until stdin closes
 *   spawn <lock>            take the lock, start a detached `sleep 30`, print its pid, exit
 */
const HOLDER = `
import { tryLock } from ${JSON.stringify(LOCK_MODULE)};
const [mode, path, command = "test"] = Deno.args;
const lock = await tryLock(path, command);
if (mode === "spawn") {
  if (lock === null) { console.log("busy"); Deno.exit(1); }
  const child = new Deno.Command("sleep", {
    args: ["30"], stdin: "null", stdout: "null", stderr: "null", detached: true,
  }).spawn();
  console.log("acquired " + child.pid);
  Deno.exit(0);
}
console.log(lock === null ? "busy" : "acquired");
if (mode === "hold") {
  for await (const _ of Deno.stdin.readable) { /* wait for end of input */ }
}
await lock?.release();
`;

interface Fixture extends AsyncDisposable {
  dir: string;
  lockPath: string;
  holder: string;
}

async function fixture(): Promise<Fixture> {
  const dir = await Deno.makeTempDir({ prefix: "relay-lock-" });
  const holder = join(dir, "holder.ts");
  await Deno.writeTextFile(holder, HOLDER);
  return {
    dir,
    lockPath: join(dir, "state", "tick.lock"),
    holder,
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

function holderCommand(fx: Fixture, args: string[], stdin: "piped" | "null"): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-config",
      "--allow-read",
      "--allow-write",
      "--allow-run",
      "--allow-sys=hostname",
      fx.holder,
      ...args,
    ],
    stdin,
    stdout: "piped",
    stderr: "piped",
  });
}

/** Runs the holder to completion and returns its first stdout line. */
async function holderOnce(fx: Fixture, args: string[]): Promise<string> {
  const out = await holderCommand(fx, args, "null").output();
  const stdout = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, `holder failed: ${new TextDecoder().decode(out.stderr)}`);
  return stdout.split("\n")[0] ?? "";
}

/** A holder that keeps running; `line` is its first stdout line. */
async function startHolder(fx: Fixture, command: string) {
  const child = holderCommand(fx, ["hold", fx.lockPath, command], "piped").spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  const stderr = child.stderr.cancel();
  return {
    child,
    line: text.split("\n")[0] ?? "",
    /** Closes the holder's stdin, so it releases and exits. */
    async finish(): Promise<Deno.CommandStatus> {
      await child.stdin.close().catch(() => {});
      await reader.cancel();
      await stderr;
      return await child.status;
    },
  };
}

Deno.test("tryLock() creates parent folders and the lock file, and writes the holder record", async () => {
  await using fx = await fixture();
  const lock = await tryLock(fx.lockPath, "relay poll");
  assert.ok(lock !== null);
  try {
    assert.equal(lock.path, fx.lockPath);
    assert.ok((await Deno.stat(fx.lockPath)).isFile);
    const info = JSON.parse(await Deno.readTextFile(lockInfoPath(fx.lockPath)));
    assert.equal(info.pid, Deno.pid);
    assert.equal(info.host, Deno.hostname());
    assert.equal(info.command, "relay poll");
    assert.ok(!Number.isNaN(Date.parse(info.started)));
  } finally {
    await lock.release();
  }
});

Deno.test("tryLock() in a second process returns null while the first holds the lock", async () => {
  await using fx = await fixture();
  const lock = await tryLock(fx.lockPath, "relay poll");
  assert.ok(lock !== null);
  try {
    assert.equal(await holderOnce(fx, ["try", fx.lockPath]), "busy");
  } finally {
    await lock.release();
  }
  assert.equal(await holderOnce(fx, ["try", fx.lockPath]), "acquired");
});

Deno.test("tryLock() here returns null while another process holds the lock, and works after it releases", async () => {
  await using fx = await fixture();
  const holder = await startHolder(fx, "relay run");
  let status: Deno.CommandStatus | undefined;
  try {
    assert.equal(holder.line, "acquired");
    assert.equal(await tryLock(fx.lockPath, "relay poll"), null);
  } finally {
    status = await holder.finish();
  }
  assert.equal(status.code, 0);
  await using lock = await tryLock(fx.lockPath, "relay poll");
  assert.ok(lock !== null);
});

Deno.test("tryLock() twice in one process returns null the second time", async () => {
  await using fx = await fixture();
  await using first = await tryLock(fx.lockPath, "one");
  assert.ok(first !== null);
  assert.equal(await tryLock(fx.lockPath, "two"), null);
});

Deno.test("release() keeps the lock file and the holder record, and is safe to call twice", async () => {
  await using fx = await fixture();
  const lock = await tryLock(fx.lockPath, "relay poll");
  assert.ok(lock !== null);
  await lock.release();
  await lock.release();
  assert.ok((await Deno.stat(fx.lockPath)).isFile);
  assert.ok((await Deno.stat(lockInfoPath(fx.lockPath))).isFile);
  await using again = await tryLock(fx.lockPath, "relay poll");
  assert.ok(again !== null);
});

Deno.test("the kernel frees the lock when its holder is killed with SIGKILL", async () => {
  await using fx = await fixture();
  const holder = await startHolder(fx, "relay poll");
  try {
    assert.equal(holder.line, "acquired");
    assert.equal(await tryLock(fx.lockPath, "relay poll"), null);
    holder.child.kill("SIGKILL");
  } finally {
    const status = await holder.finish();
    assert.equal(status.signal, "SIGKILL");
  }
  await using lock = await tryLock(fx.lockPath, "relay poll");
  assert.ok(lock !== null, "the lock should be free after its holder was killed");
});

Deno.test("a child started while the lock is held does not keep the lock after its parent exits", async () => {
  await using fx = await fixture();
  const line = await holderOnce(fx, ["spawn", fx.lockPath]);
  const match = /^acquired (\d+)$/.exec(line);
  assert.ok(match?.[1], `unexpected holder output: ${line}`);
  const sleeperPid = Number(match[1]);
  try {
    // The holder has exited; its child `sleep 30` is still running.
    Deno.kill(sleeperPid, "SIGCONT"); // throws if the child is gone, which would make this test meaningless
    if (Deno.build.os === "linux") {
      // Deno's own fs API may not read /proc/<pid>/fd without --allow-all; `ls` may.
      const out = await new Deno.Command("ls", { args: ["-l", `/proc/${sleeperPid}/fd`] }).output();
      const listing = new TextDecoder().decode(out.stdout);
      assert.equal(out.code, 0);
      assert.ok(!listing.includes(fx.lockPath), `the child has the lock file open:\n${listing}`);
    }
    await using lock = await tryLock(fx.lockPath, "relay poll");
    assert.ok(lock !== null, "the child process must not have inherited the lock");
  } finally {
    try {
      Deno.kill(-sleeperPid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
});

Deno.test("lockState() reports the holder of a lock held by another process", async () => {
  await using fx = await fixture();
  const holder = await startHolder(fx, "relay poll --verbose");
  try {
    assert.equal(holder.line, "acquired");
    const state = await lockState(fx.lockPath);
    assert.equal(state.held, true);
    assert.equal(state.info?.pid, holder.child.pid);
    assert.equal(state.info?.host, Deno.hostname());
    assert.equal(state.info?.command, "relay poll --verbose");
  } finally {
    await holder.finish();
  }
  const after = await lockState(fx.lockPath);
  assert.equal(after.held, false);
  assert.equal(after.info?.pid, holder.child.pid, "the record stays as the last holder");
  await using lock = await tryLock(fx.lockPath, "relay poll");
  assert.ok(lock !== null, "lockState() must not leave the lock taken");
});

Deno.test("lockState() of a lock that never existed is free with no holder, and creates nothing", async () => {
  await using fx = await fixture();
  assert.deepEqual(await lockState(fx.lockPath), { held: false, info: null });
  await assert.rejects(Deno.stat(fx.lockPath), Deno.errors.NotFound);
});

Deno.test("lockState() ignores a malformed holder record", async () => {
  await using fx = await fixture();
  const lock = await tryLock(fx.lockPath, "relay poll");
  assert.ok(lock !== null);
  await lock.release();
  await Deno.writeTextFile(lockInfoPath(fx.lockPath), "{not json");
  assert.deepEqual(await lockState(fx.lockPath), { held: false, info: null });
  await Deno.writeTextFile(lockInfoPath(fx.lockPath), JSON.stringify({ pid: "1" }));
  assert.deepEqual(await lockState(fx.lockPath), { held: false, info: null });
});
