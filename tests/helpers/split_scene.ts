/**
 * `machines: split` scenes: clones of one bare origin, each a machine with its own operator
 * profile (its own worktree root), ticking relay as cron would there. The same helpers as
 * tests/e2e_two_machines.test.ts has for itself.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { AGENTS, all, brief, type RelayResult, type Scene } from "./scene.ts";

export interface Machine {
  name: string;
  dir: string;
  profile: string;
}

/** A clone of the origin with its own operator profile (its own worktree root). */
export async function machine(scene: Scene, name: string, dir?: string): Promise<Machine> {
  const clone = dir ?? join(scene.dir, `machine-${name}`);
  if (!dir) await scene.git(scene.dir, ["clone", "--quiet", `file://${scene.origin}`, clone]);
  const profile = join(scene.dir, `profile-${name}.yaml`);
  const text = await Deno.readTextFile(scene.profile);
  await Deno.writeTextFile(
    profile,
    text.replace(/^worktree_root: .*$/m, `worktree_root: ${join(scene.dir, `worktrees-${name}`)}`),
  );
  return { name, dir: clone, profile };
}

/** One tick of `command` on machine `m` (the fakes see FAKE_MACHINE); `args` after the command. */
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

/**
 * Machines A, B (the person's clone, scene.work) and C, the executor being the honest agent
 * (tests/fixtures/agents/good.sh), and one brief queued, promoted and published by B's review.
 */
export async function oneBrief(scene: Scene, title: string) {
  await Deno.writeTextFile(join(scene.dir, "executor-script"), join(AGENTS, "good.sh"));
  const b = await machine(scene, "B", scene.work);
  const a = await machine(scene, "A");
  const c = await machine(scene, "C");
  const add = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title }) });
  assert.equal(add.code, 0, all(add));
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.equal((await tick(scene, b, "review")).code, 0);
  return { a, b, c };
}

/** The lease of `role` on the origin, as its holder last wrote it. */
export async function lease(
  scene: Scene,
  role: "executor" | "reviewer",
): Promise<{ released?: string; expiresAt: string; holder: { machine: string } }> {
  const ref = `refs/relay/leases/${role}`;
  return JSON.parse(await scene.out(["log", "-1", "--format=%B", ref], scene.origin));
}

/**
 * Ten minutes pass on the remote's lease: its expires-at is moved into the past, as the
 * crashed holder's would be by then (a lease commit like the holder's, with only that changed).
 */
export async function expire(scene: Scene, role: "executor" | "reviewer"): Promise<void> {
  const ref = `refs/relay/leases/${role}`;
  const old = await scene.out(["rev-parse", ref], scene.origin);
  const held = JSON.parse(await scene.out(["log", "-1", "--format=%B", ref], scene.origin));
  held.expiresAt = new Date(Date.now() - 60_000).toISOString();
  const tree = await scene.out(["rev-parse", `${old}^{tree}`], scene.origin);
  const sha = await scene.out(["commit-tree", tree, "-m", JSON.stringify(held)], scene.origin);
  await scene.git(scene.origin, ["update-ref", ref, sha, old]);
}
