/**
 * Machines of a `machines: split` scene (tests/helpers/scene.ts): clones of the bare origin,
 * each with its own operator profile and worktree root, and the ticks they run. The same
 * set-up as tests/e2e_two_machines.test.ts, for the test files that need it beside that one.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { leaseTimesFor } from "../../lib/loop/split.ts";
import { AGENTS, all, brief, type RelayResult, REVIEWERS, type Scene } from "./scene.ts";

/** The short lease of SPLIT_SHORT_LEASE: 2 minutes. */
const SHORT_LEASE_MS = 120_000;
/**
 * A split scene's config with a short lease (`timeouts.lease`, renewed every 24 s), for the
 * tests that wait out a renewal in real time. Short, but not so short that another machine's
 * poll or review, run while the lease holder's turn waits, could outlast a renewal.
 */
export const SPLIT_SHORT_LEASE = `machines: split\ntimeouts:\n  lease: ${SHORT_LEASE_MS / 1000}\n`;
/** SPLIT_SHORT_LEASE's renewal interval. */
export const SHORT_RENEW_MS = leaseTimesFor(SHORT_LEASE_MS).renewEveryMs;

export interface Machine {
  name: string;
  dir: string;
  profile: string;
}

/** NEXT-STEPS.md on the origin's main. */
export function originBrief(scene: Scene): Promise<string> {
  return scene.out(["show", "refs/heads/main:NEXT-STEPS.md"], scene.origin);
}

/** A clone of the origin with its own operator profile (its own worktree root). */
export async function machine(scene: Scene, name: string, dir?: string): Promise<Machine> {
  const clone = dir ?? join(scene.dir, `machine-${name}`);
  if (!dir) await scene.git(scene.dir, ["clone", "--quiet", `file://${scene.origin}`, clone]);
  const profile = join(scene.dir, `profile-${name}.yaml`);
  const text = await Deno.readTextFile(scene.profile);
  await Deno.writeTextFile(
    profile,
    text.replace(/^worktree_root: .*$/m, `worktree_root: ${worktreeRoot(scene, name)}`),
  );
  return { name, dir: clone, profile };
}

/** Where machine `name` keeps its task worktrees. */
export function worktreeRoot(scene: Scene, name: string): string {
  return join(scene.dir, `worktrees-${name}`);
}

/** One tick of `command` on machine `m` (the fakes see FAKE_MACHINE); `args` (e.g. --quiet) after it. */
export function tick(
  scene: Scene,
  m: Machine,
  command: "poll" | "review",
  env: Record<string, string> = {},
  args: string[] = [],
): Promise<RelayResult> {
  return scene.relay(["-C", m.dir, "--profile", m.profile, command, ...args], {
    env: { FAKE_MACHINE: m.name, ...env },
  });
}

/** The fake executor, counting each launch (task and machine) in `launches`; `agent` runs after. */
export async function countingAgent(
  scene: Scene,
  launches: string,
  agent = `exec bash "${join(AGENTS, "good.sh")}" "$@"`,
): Promise<void> {
  const script = join(scene.dir, "counting-agent.sh");
  await Deno.writeTextFile(
    script,
    `#!/usr/bin/env bash\necho "task $RELAY_TASK $FAKE_MACHINE" >> "${launches}"\n${agent}\n`,
  );
  await Deno.writeTextFile(join(scene.dir, "executor-script"), script);
}

/**
 * Machines B (the person's clone, scene.work), A and C, the executor being the counting agent
 * that runs `agent` (the honest agent by default): each launch is noted in `launches`.
 */
export async function machines(
  scene: Scene,
  agent?: string,
): Promise<{ a: Machine; b: Machine; c: Machine; launches: string }> {
  const launches = join(scene.dir, "launches.txt");
  await countingAgent(scene, launches, agent);
  const b = await machine(scene, "B", scene.work);
  const a = await machine(scene, "A");
  const c = await machine(scene, "C");
  return { a, b, c, launches };
}

/**
 * Machines A, B (the person's clone, scene.work) and C, and one brief per title queued, the
 * first promoted and published by B's review; the counting agent runs `agent` (the honest
 * agent by default). Launches are counted in the returned file.
 */
export async function briefs(scene: Scene, titles: string[], agent?: string) {
  const { a, b, c, launches } = await machines(scene, agent);
  for (const title of titles) {
    const add = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title }) });
    assert.equal(add.code, 0, all(add));
  }
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.equal((await tick(scene, b, "review")).code, 0);
  return { a, b, c, launches };
}

/** The lease of `role` on the origin, as its holder last wrote it. */
export async function lease(
  scene: Scene,
  role: "executor" | "reviewer",
): Promise<{
  released?: string;
  releasedBy?: string;
  expiresAt: string;
  holder: { machine: string; run: string };
}> {
  const ref = `refs/relay/leases/${role}`;
  return JSON.parse(await scene.out(["log", "-1", "--format=%B", ref], scene.origin));
}

/**
 * A whole lease passes on the remote's lease: its expires-at is moved into the past, as the
 * crashed holder's would be by then (a lease commit like the holder's, with only that changed).
 */
export async function expire(scene: Scene, role: "executor" | "reviewer"): Promise<void> {
  const ref = `refs/relay/leases/${role}`;
  const old = await scene.out(["rev-parse", ref], scene.origin);
  const lease = JSON.parse(await scene.out(["log", "-1", "--format=%B", ref], scene.origin));
  lease.expiresAt = new Date(Date.now() - 60_000).toISOString();
  const tree = await scene.out(["rev-parse", `${old}^{tree}`], scene.origin);
  const sha = await scene.out(["commit-tree", tree, "-m", JSON.stringify(lease)], scene.origin);
  await scene.git(scene.origin, ["update-ref", ref, sha, old]);
}

/** The launches the counting agent wrote, a line each ("task 1 C"). */
export async function launched(file: string): Promise<string[]> {
  return (await Deno.readTextFile(file).catch(() => "")).split("\n").filter((l) => l !== "");
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A bash `if` block for a fake agent: on machine `name`, when the tick's env sets FAKE_GO, the
 * turn lasts until the file FAKE_GO names exists (at most `seconds`), then runs `then`.
 */
export function waitForGo(name: string, seconds: number, then = ""): string {
  return `if [ "\${FAKE_MACHINE:-}" = ${name} ] && [ -n "\${FAKE_GO:-}" ]; then\n` +
    `  for _ in $(seq 1 ${seconds * 10}); do [ -e "$FAKE_GO" ] && break; sleep 0.1; done\n` +
    `${then}fi\n`;
}

/** The fake reviewer: on machine B it waits for FAKE_GO (see waitForGo), then the honest one. */
export async function reviewerWaitingOnB(scene: Scene, seconds: number): Promise<void> {
  const reviewer = join(scene.dir, "b-waits.sh");
  await Deno.writeTextFile(
    reviewer,
    `#!/usr/bin/env bash\n${waitForGo("B", seconds)}` +
      `exec bash "${join(REVIEWERS, "honest.sh")}" "$@"\n`,
  );
  await Deno.writeTextFile(join(scene.dir, "reviewer-script"), reviewer);
}

/**
 * A machine's network hangs from now until its lease (SPLIT_SHORT_LEASE) is overdue (`started`
 * + 41 s: a renewal is due every 24 s and asked again half an interval late): the origin is out
 * of reach, so the renewal at 24 s and the fetch that would tell a lost lease decide nothing.
 */
export async function hangUntilOverdue(scene: Scene, started: number): Promise<void> {
  const away = `${scene.origin}.away`;
  await Deno.rename(scene.origin, away);
  await sleep(Math.max(0, started + SHORT_RENEW_MS * 1.5 + 5_000 - Date.now()));
  await Deno.rename(away, scene.origin);
}

/**
 * The end of a tick that outlives its lease: the machine's network hangs until the lease is
 * overdue (hangUntilOverdue), then its agent's turn ends (the file `go` appears), and the tick
 * (`pending`) stops with exit 1 on finding `role`'s lease another machine's.
 */
export async function outlivedLease(
  scene: Scene,
  started: number,
  go: string,
  pending: Promise<RelayResult>,
  role: "executor" | "reviewer",
): Promise<RelayResult> {
  await hangUntilOverdue(scene, started);
  await Deno.writeTextFile(go, "");
  const lost = await pending;
  assert.equal(lost.code, 1, all(lost));
  assert.match(lost.stderr, new RegExp(`the ${role} lease on origin is no longer this machine's`));
  return lost;
}

/**
 * A ships task 1; then B's review tick (a FAIL, with `fail`) dies at `failpoint`, after it
 * wrote its paperwork and before that reached the origin.
 */
export async function shippedThenKilled(
  scene: Scene,
  a: Machine,
  b: Machine,
  opts: { fail?: boolean; failpoint?: string } = {},
): Promise<void> {
  const shipped = await tick(scene, a, "poll");
  assert.match(shipped.stdout, /task 1 shipped/, all(shipped));
  const killed = await tick(scene, b, "review", {
    RELAY_FAILPOINT: opts.failpoint ?? "reviewer-paperwork-committed",
    ...(opts.fail ? { FAKE_FAIL_ONCE: join(scene.dir, "failed") } : {}),
  });
  assert.equal(killed.code, 137, all(killed));
}

/** `rounds` of `executor`'s poll and `reviewer`'s review, each ending as a tick should. */
export async function rounds(
  scene: Scene,
  executor: Machine,
  reviewer: Machine,
  rounds: number,
): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    const polled = await tick(scene, executor, "poll");
    assert.ok([0, 1].includes(polled.code), all(polled));
    const reviewed = await tick(scene, reviewer, "review");
    assert.equal(reviewed.code, 0, all(reviewed));
  }
}

/** A person on `on` pulls, runs `relay promote` (after `queue`: briefs it adds first), and pushes. */
export async function personPromotes(scene: Scene, on: Machine, queue: string[] = []) {
  await scene.git(on.dir, ["pull", "--quiet", "--ff-only", "origin", "main"]);
  for (const title of queue) {
    const add = await scene.relay(["-C", on.dir, "inbox", "add", "-"], {
      stdin: brief({ title }),
    });
    assert.equal(add.code, 0, all(add));
  }
  const promoted = await scene.relay(["-C", on.dir, "promote"]);
  assert.equal(promoted.code, 0, all(promoted));
  await scene.git(on.dir, ["add", "--all", "--", "NEXT-STEPS.md", ".relay/inbox"]);
  await scene.git(on.dir, ["commit", "--quiet", "-m", "person: promote"]);
  await scene.git(on.dir, ["push", "--quiet", "origin", "HEAD:main"]);
}

/** A person on `on` queues a brief with `relay inbox add`. */
export async function queueOn(scene: Scene, on: Machine, opts: Parameters<typeof brief>[0]) {
  const add = await scene.relay(["-C", on.dir, "inbox", "add", "-"], { stdin: brief(opts) });
  assert.equal(add.code, 0, all(add));
}

/**
 * The reviewer's lease runs out and `m` takes the role: its review tick says `said` (a
 * promotion, say) and pushes what it left; then that lease runs out too.
 */
export async function takesOver(scene: Scene, m: Machine, said: RegExp): Promise<void> {
  await expire(scene, "reviewer");
  const reviewed = await tick(scene, m, "review");
  assert.match(reviewed.stdout, said, all(reviewed));
  await expire(scene, "reviewer");
}

/** How many simulated minutes `minutes` runs at most. */
const MINUTES = 24;

/**
 * Simulated minutes: A's poll, B's review, C's poll and C's review started together, until
 * origin/main has `merges` merges. Every tick must exit 0 without an error or a HOLD.
 */
export async function minutes(
  scene: Scene,
  machines: { a: Machine; b: Machine; c: Machine },
  merges: number,
  env: Record<string, string> = {},
): Promise<{ merged: string[]; transcript: string[] }> {
  const { a, b, c } = machines;
  const transcript: string[] = [];
  let merged: string[] = [];
  for (let minute = 1; minute <= MINUTES; minute++) {
    const ticks: [string, Promise<RelayResult>][] = [
      ["A poll", tick(scene, a, "poll", env)],
      ["B review", tick(scene, b, "review", env)],
      ["C poll", tick(scene, c, "poll", env)],
      ["C review", tick(scene, c, "review", env)],
    ];
    const results = await Promise.all(ticks.map(([, p]) => p));
    for (const [i, res] of results.entries()) {
      const name = ticks[i]![0];
      transcript.push(`minute ${minute} ${name}: exit ${res.code} ${said(res)}`);
      const story = `${name} in minute ${minute}: ${all(res)}\n${transcript.join("\n")}`;
      assert.equal(res.code, 0, story);
      assert.doesNotMatch(res.stderr, /error|HOLD/i, story);
    }
    merged = (await scene.out(["log", "--merges", "--format=%s", "main"], scene.origin))
      .split("\n").filter((l) => l !== "");
    if (merged.length >= merges) break;
  }
  console.log(transcript.join("\n"));
  return { merged, transcript };
}

/** The last line a tick said, without the time stamp (empty: it said nothing). */
export function said(res: RelayResult): string {
  return (res.stdout.trim().split("\n").at(-1) ?? "").replace(
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ /,
    "",
  );
}
