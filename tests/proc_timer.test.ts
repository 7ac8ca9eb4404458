/**
 * lib/proc/timer.ts: timers on AbortSignal.timeout, so that a short command
 * never pays for loading Deno's node:timers polyfill (the global setTimeout's
 * first use). They fire in order, cancel, and keep a process alive exactly
 * while they are set.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { every, later, MAX_TIMER_MS, sleep } from "../lib/proc/timer.ts";
import { run } from "../lib/proc/run.ts";
import { ROOT } from "./helpers/scene.ts";

Deno.test("later() calls each function once, in the order of their delays", async () => {
  const fired: number[] = [];
  for (const ms of [40, 0, 20]) later(ms, () => fired.push(ms));
  await sleep(80);
  assert.deepEqual(fired, [0, 20, 40]);
});

Deno.test("later() cancelled before its time never calls the function", async () => {
  let fired = 0;
  const cancel = later(10, () => fired++);
  cancel();
  cancel(); // twice is harmless
  await sleep(40);
  assert.equal(fired, 0);
});

Deno.test("later() takes Infinity as never and a negative delay as none", async () => {
  let never = 0;
  let soon = 0;
  later(Infinity, () => never++)();
  later(-5, () => soon++);
  await sleep(20);
  assert.equal(never, 0);
  assert.equal(soon, 1);
});

Deno.test("every() repeats until cancelled", async () => {
  let calls = 0;
  const cancel = every(5, () => calls++);
  for (let i = 0; i < 400 && calls < 3; i++) await sleep(5);
  cancel();
  const seen = calls;
  assert.ok(seen >= 3, `called ${seen} times`);
  await sleep(30);
  assert.equal(calls, seen, "no call after cancel");
});

/** Runs a script that imports lib/proc/timer.ts in a deno of its own; returns its stdout. */
async function script(code: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "relay-timer-" });
  try {
    const file = join(dir, "t.ts");
    const timer = new URL("../lib/proc/timer.ts", import.meta.url).href;
    await Deno.writeTextFile(file, `import { every, later } from "${timer}";\n${code}\n`);
    // A cap for a busy machine: the script is expected to end at once.
    const res = await run([Deno.execPath(), "run", "--quiet", "--no-config", file], {
      cwd: ROOT,
      timeoutMs: 30_000,
    });
    return res.stdout;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a set timer keeps the process alive until it fires; a cancelled one does not", async () => {
  assert.equal(await script(`later(200, () => console.log("fired"));`), "fired\n");
  // Were the cancelled 10-minute timers still set, the script would outlive its 30 s cap.
  assert.equal(
    await script(
      `later(600_000, () => console.log("late"))(); every(600_000, () => console.log("tick"))();` +
        ` console.log("done");`,
    ),
    "done\n",
  );
});

Deno.test("a delay past one AbortSignal.timeout's range waits instead of firing at once", async () => {
  let fired = 0;
  const cancel = later(MAX_TIMER_MS + 1_000, () => fired++);
  await sleep(30);
  cancel();
  assert.equal(fired, 0);
});

Deno.test("relay's code sets no timer through setTimeout or setInterval but the lease's", async () => {
  // The lease renewal (split mode only) wants an unref'd interval, which timer.ts has not.
  const allowed = new Set(["lib/loop/split.ts"]);
  const found: string[] = [];
  for await (const file of walk(join(ROOT, "lib"))) {
    const rel = file.slice(ROOT.length + 1);
    if (allowed.has(rel) || rel === "lib/proc/timer.ts") continue;
    const code = (await Deno.readTextFile(file))
      .replace(/\/\*[\s\S]*?\*\//g, "")
      .replace(/\/\/.*$/gm, "");
    if (/\bset(Timeout|Interval)\s*\(/.test(code)) found.push(rel);
  }
  assert.deepEqual(found, [], "use later(), every() or sleep() from lib/proc/timer.ts");
});

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* walk(path);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}
