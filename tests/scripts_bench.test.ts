/**
 * scripts/bench.ts (`deno task bench`): its pure parts, and one smoke run of the fastest goal
 * with a single pair. The suite never times anything: the smoke run asserts the output's
 * shape, not its numbers.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  alternation,
  findGoal,
  formatMs,
  gitProcesses,
  GOALS,
  historyStream,
  MAX_PAIRS,
  measure,
  median,
  MIN_PAIRS,
  pairsFor,
  parseBenchArgs,
  ratioLine,
  treeStream,
} from "../scripts/bench.ts";
import { ROOT } from "./helpers/scene.ts";

Deno.test("median() takes the middle value, or the mean of the middle two, of unsorted timings", () => {
  assert.equal(median([5]), 5);
  assert.equal(median([30, 10, 20]), 20);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.equal(median([7, 7, 100, 7, 1]), 7);
  assert.throws(() => median([]), RangeError);
});

Deno.test("alternation() runs the sides A B A B …, one of each per pair", () => {
  assert.deepEqual(alternation(1), ["A", "B"]);
  assert.deepEqual(alternation(3), ["A", "B", "A", "B", "A", "B"]);
});

Deno.test("measure() runs one untimed warm-up pair, then the pairs alternately, timing each run", async () => {
  const calls: string[] = [];
  const times = await measure(
    3,
    () => Promise.resolve(void calls.push("A")),
    () => Promise.resolve(void calls.push("B")),
  );
  assert.deepEqual(calls, ["A", "B", "A", "B", "A", "B", "A", "B"]);
  assert.equal(times.a.length, 3);
  assert.equal(times.b.length, 3);
});

Deno.test("pairsFor() fills the budget by the warm-up pair's time: at least 5 pairs, at most 41, odd", () => {
  assert.equal(pairsFor(40), MAX_PAIRS, "an idle tick: the most");
  assert.equal(pairsFor(130), 31, "a gate run: 4 s / 130 ms");
  assert.equal(pairsFor(250), 17, "16 pairs fill the budget; odd: 17");
  assert.equal(pairsFor(900), MIN_PAIRS, "a cycle: the fewest");
  assert.equal(pairsFor(5_000), MIN_PAIRS);
  assert.equal(pairsFor(0), MAX_PAIRS);
  for (let ms = 1; ms < 2_000; ms += 7) assert.equal(pairsFor(ms) % 2, 1, `${ms} ms`);
});

Deno.test("measure() with no pair count takes as many pairs as the warm-up pair's time calls for", async () => {
  let calls = 0;
  const slow = () => new Promise<void>((resolve) => setTimeout(() => (calls++, resolve()), 5));
  const times = await measure(undefined, slow, slow, () => {});
  // A warm-up pair of about 10 ms: 4 s of budget is more than 41 such pairs.
  assert.equal(times.a.length, MAX_PAIRS);
  assert.equal(times.b.length, MAX_PAIRS);
  assert.equal(calls, 2 * MAX_PAIRS + 2);
});

Deno.test("ratioLine() prints both medians, the ratio, the goal and MET or MISSED", () => {
  const idle = findGoal("1")!;
  assert.equal(
    ratioLine(idle, 23.1, 13),
    "goal 1 idle tick: relay 23.1 ms, bare deno 13.0 ms → 1.78× (goal ≤ 1.3×) MISSED",
  );
  assert.equal(
    ratioLine(idle, 13, 13),
    "goal 1 idle tick: relay 13.0 ms, bare deno 13.0 ms → 1.00× (goal ≤ 1.3×) MET",
  );
  assert.equal(
    ratioLine(findGoal("gate")!, 2345, 1000),
    "goal 4a gate: relay 2.35 s, git 1.00 s → 2.35× (goal ≤ 2×) MISSED",
  );
  assert.equal(formatMs(999.94), "999.9 ms");
  assert.equal(formatMs(1000), "1.00 s");
});

Deno.test("parseBenchArgs() reads --pairs, --only (by id or name), --keep and --check, and refuses the rest", () => {
  assert.deepEqual(parseBenchArgs([]), { keep: false, check: false }, "pairs: by each warm-up");
  const opts = parseBenchArgs(["--", "--pairs", "7", "--only", "audit", "--keep", "--check"]);
  assert.equal(opts.pairs, 7);
  assert.equal(opts.only?.id, "4b");
  assert.equal(parseBenchArgs(["--only", "3"]).only?.name, "scale");
  for (const name of ["1", "idle", "idle-tick", "Idle tick"]) {
    assert.equal(parseBenchArgs(["--only", name]).only?.id, "1", name);
  }
  assert.deepEqual(GOALS.map((g) => g.id), ["1", "2", "3", "3h", "4a", "4b"]);
  assert.equal(parseBenchArgs(["--only", "history"]).only?.id, "3h");
  assert.throws(() => parseBenchArgs(["--pairs", "0"]), /--pairs "0"/);
  assert.throws(() => parseBenchArgs(["--pairs", "2.5"]), /--pairs "2.5"/);
  assert.throws(() => parseBenchArgs(["--only", "9"]), /--only "9" names no goal/);
  assert.throws(() => parseBenchArgs(["--fast"]));
});

/**
 * Runs git in `cwd` with no global or system config; stdout trimmed. `env`: more variables;
 * `stdinAfterMs`: how long the process waits for its stdin (a reader kept open that long).
 */
async function git(
  cwd: string,
  args: string[],
  stdin?: string,
  opts: { env?: Record<string, string>; stdinAfterMs?: number } = {},
): Promise<string> {
  const child = new Deno.Command("git", {
    args,
    cwd,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_CONFIG_NOSYSTEM: "1",
      ...opts.env,
    },
    clearEnv: true,
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const w = child.stdin.getWriter();
    if (opts.stdinAfterMs) await new Promise((r) => setTimeout(r, opts.stdinAfterMs));
    await w.write(new TextEncoder().encode(stdin));
    await w.close();
  }
  const out = await child.output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  assert.equal(out.code, 0, `git ${args.join(" ")}: ${text(out.stderr)}`);
  return text(out.stdout).trim();
}

Deno.test("the fast-import streams build a tree of exactly N files and N paperwork commits on top", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-bench-test-" });
  try {
    await git(dir, ["init", "--quiet", "--bare", "--initial-branch=main", "repo.git"]);
    const repo = join(dir, "repo.git");
    await git(repo, ["fast-import", "--quiet"], treeStream(250));
    const files = (await git(repo, ["ls-tree", "-r", "--name-only", "main"])).split("\n");
    assert.equal(files.length, 250);
    assert.ok(files.includes(".relay/config.yaml"));
    assert.ok(files.includes("src/d2/f246.txt"));
    const root = await git(repo, ["rev-parse", "main"]);
    await git(repo, ["fast-import", "--quiet"], historyStream(root, 30));
    assert.equal(await git(repo, ["rev-list", "--count", "--first-parent", "main"]), "31");
    assert.equal(await git(repo, ["rev-list", "--max-parents=0", "main"]), root);
    assert.equal(
      await git(repo, ["show", "--name-only", "--format=%s", "main"]),
      "Task #30: status — SHIPPED (task-30)\n\nCOWORK-STATUS.md",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("gitProcesses() counts the git processes relay started (its -c core.fsmonitor=false) and sums their run times, the open ref resolver's left out", () => {
  const start = (sid: string, ...argv: string[]) =>
    JSON.stringify({
      event: "start",
      sid,
      time: "2026-12-07T00:00:00.000000Z",
      t_abs: 0.0004,
      argv,
    });
  const end = (sid: string, seconds: number, event = "exit") =>
    JSON.stringify({ event, sid, t_abs: seconds, code: 0 });
  const relay = ["git", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null"];
  const events = [
    start("a", ...relay, "fetch", "--quiet", "--", "origin"),
    start("a/b", "/usr/lib/git-core/git", "maintenance", "run", "--auto"), // git's own child
    end("a/b", 0.002),
    end("a", 0.0125),
    start("c", ...relay, "--git-dir=/r/.git", "cat-file", "--batch-check=%(objectname)"),
    start("d", "git", "-c", "user.name=x", "commit", "-q", "-m", "the agent's"), // not relay's
    end("d", 0.02),
    start("e", ...relay, "status", "--porcelain=v1", "-z"),
    end("e", 0.003),
    start("f", ...relay, "cat-file", "--batch"), // a one-shot batch read: timed
    end("f", 0.001),
    start("g", ...relay, "push", "--porcelain", "--", "origin", "main"),
    end("g", 0.004, "signal"), // SIGPIPE: git says when
    start("h", ...relay, "push", "--porcelain", "--", "origin", "main"), // SIGKILL: no end
    end("c", 0.4), // open the whole command: counted, not timed
    "",
  ].join("\n");
  const got = gitProcesses(events);
  assert.equal(got.count, 6);
  assert.ok(Math.abs(got.ms - 20.5) < 1e-9, String(got.ms));
  assert.deepEqual(gitProcesses(""), { count: 0, ms: 0 });
});

Deno.test("gitProcesses() reads what git 2.x writes to GIT_TRACE2_EVENT", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-bench-test-" });
  try {
    await git(dir, ["init", "--quiet", "--initial-branch=main", "repo"]);
    const repo = join(dir, "repo");
    const trace = join(dir, "trace");
    const env = { GIT_TRACE2_EVENT: trace };
    await git(repo, ["-c", "core.fsmonitor=false", "status", "--porcelain=v1"], undefined, { env });
    await git(repo, ["status"], undefined, { env });
    // The resolver's shape (lib/git/resolver.ts), kept open a second.
    const resolver = ["-c", "core.fsmonitor=false", `--git-dir=${join(repo, ".git")}`, "cat-file"];
    await git(repo, [...resolver, "--batch-check=%(objectname)"], "HEAD\n", {
      env,
      stdinAfterMs: 1000,
    });
    const got = gitProcesses(await Deno.readTextFile(trace));
    assert.equal(got.count, 2);
    // The resolver was open a second; only the status is summed.
    assert.ok(got.ms > 0 && got.ms < 500, String(got.ms));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task bench --only 1 --pairs 1 prints one goal line and the machine, and removes its fixtures", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "relay-bench-tmp-" });
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "-P=bench",
        `--config=${join(ROOT, "deno.json")}`,
        join(ROOT, "scripts", "bench.ts"),
        "--only",
        "idle",
        "--pairs",
        "1",
      ],
      cwd: ROOT,
      // The bench's temp folder goes under `tmp`, so the test can see that it is gone.
      env: { ...Deno.env.toObject(), TMPDIR: tmp, NO_COLOR: "1" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stdout + stderr);
    const lines = stdout.trimEnd().split("\n");
    assert.equal(lines.length, 2, stdout);
    assert.match(
      lines[0]!,
      /^goal 1 idle tick: relay \d+\.\d+ m?s, bare deno \d+\.\d+ m?s → \d+\.\d\d× \(goal ≤ 1\.3×\) (MET|MISSED)$/,
    );
    assert.match(lines[1]!, /^machine: \d+ CPUs.*, deno \d+\.\d+\.\d+, git \d+\.\d+/);
    assert.deepEqual([...Deno.readDirSync(tmp)], [], "the bench removed its temp folder");
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
