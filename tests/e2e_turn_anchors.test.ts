/**
 * End to end: every commit an agent turn made is on a relay anchor before any
 * guard can HOLD — a commit on a detached HEAD, one made and dropped, one left
 * in a worktree that was deleted, one made while the agent planted a program in
 * git's config (then without relay running git) — and following the HOLD's
 * advice literally (move the worktree aside, `git worktree prune`, `relay
 * resume`) never loses it. Real CLI, real git, fake agents and reviewers.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, brief, exists, makeScene, type Scene, stateDir } from "./helpers/scene.ts";
import type { Journal } from "../lib/state/journal.ts";
import { worktreeGitDir } from "../lib/loop/guard.ts";
import { anchorAbandonedTurn, anchorWithoutGit, markTurn } from "../lib/loop/turn_anchors.ts";

const HOLD = 3;

async function openBrief(scene: Scene, task = 1): Promise<void> {
  await scene.write(
    "NEXT-STEPS.md",
    brief({ status: "OPEN", task, kind: "feature", extraHeader: `Branch: task-${task}` }),
  );
}

async function readHoldFile(scene: Scene): Promise<{ reason: string; next: string }> {
  return JSON.parse(await Deno.readTextFile(join(stateDir(scene), "hold.json")));
}

/** The shas a fake agent wrote to its FAKE_SEEN file, one a line. */
async function seen(file: string): Promise<string[]> {
  return (await Deno.readTextFile(file)).split("\n").filter((l) => l !== "");
}

/** Refs under `prefix` that reach `sha`. */
async function refsContaining(scene: Scene, sha: string, prefix: string): Promise<string[]> {
  return (await scene.out(["for-each-ref", "--format=%(refname)", "--contains", sha, prefix]))
    .split("\n").filter((l) => l !== "");
}

/** Drops every reflog and every unreachable object: what survives is on a ref. */
async function collectGarbage(scene: Scene): Promise<void> {
  await scene.git(scene.work, ["reflog", "expire", "--expire=now", "--all"]);
  await scene.git(scene.work, ["gc", "--quiet", "--prune=now"]);
}

async function isCommit(scene: Scene, sha: string): Promise<boolean> {
  return (await scene.git(scene.work, ["cat-file", "-e", `${sha}^{commit}`], true)).code === 0;
}

/** The anchor refs a HOLD's advice names. */
function namedAnchors(next: string): string[] {
  return [...next.matchAll(/refs\/relay\/anchors\/task-\d+\/[^\s,()]+-after-\d+/g)].map((m) =>
    m[0]
  );
}

Deno.test("a commit on a detached HEAD is anchored before the HOLD, and following the advice literally keeps it", async () => {
  await using scene = await makeScene({ agent: "detached.sh" });
  const seenFile = join(scene.dir, "seen");
  await openBrief(scene);

  const poll = await scene.relay(["poll"], { env: { FAKE_SEEN: seenFile } });
  assert.equal(poll.code, HOLD, all(poll));
  assert.match(poll.stderr, /the worktree is on "a detached HEAD" instead of "task-1"/);
  const [commit] = await seen(seenFile);
  const hold = await readHoldFile(scene);
  const named = namedAnchors(hold.next);
  assert.equal(named.length, 1, hold.next);
  assert.deepEqual(await refsContaining(scene, commit!, "refs/relay/anchors/"), named);

  // "Inspect and repair by hand, then run relay resume": the next attempt finds the worktree
  // still detached and says to move it aside; then to prune; each followed to the letter.
  await scene.setAgent("good.sh");
  assert.equal((await scene.relay(["resume"])).code, 0);
  const detached = await scene.relay(["poll"]);
  assert.equal(detached.code, HOLD, all(detached));
  assert.match(detached.stderr, /move the folder aside/);
  const worktree = join(scene.worktrees, "task-1");
  await Deno.rename(worktree, `${worktree}.aside`);
  await scene.relay(["resume"]);
  const missing = await scene.relay(["poll"]);
  assert.equal(missing.code, HOLD, all(missing));
  assert.match(missing.stderr, /git worktree prune/);
  await scene.git(scene.work, ["worktree", "prune"]);
  await scene.relay(["resume"]);
  const shipped = await scene.relay(["poll"]);
  assert.equal(shipped.code, 0, all(shipped));
  assert.match(shipped.stdout, /task 1 shipped/);

  await collectGarbage(scene);
  assert.ok(await isCommit(scene, commit!), "the detached commit was lost");
  assert.deepEqual(await refsContaining(scene, commit!, "refs/relay/anchors/"), named);
});

Deno.test("commits an agent made and dropped (a detached HEAD, a branch moved back) are anchored though the turn ships", async () => {
  await using scene = await makeScene({ agent: "wanders.sh" });
  const seenFile = join(scene.dir, "seen");
  await openBrief(scene);

  const poll = await scene.relay(["poll"], { env: { FAKE_SEEN: seenFile } });
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 1 shipped/);
  const dropped = await seen(seenFile);
  assert.equal(dropped.length, 2);
  for (const sha of dropped) {
    assert.deepEqual(await refsContaining(scene, sha, "refs/heads/"), [], "on a branch after all");
    const refs = await refsContaining(scene, sha, "refs/relay/anchors/task-1/");
    assert.equal(refs.length, 1, `${sha} is on ${refs.join(", ") || "no anchor"}`);
    assert.match(refs[0]!, /-a1-after-\d+$/);
  }
});

Deno.test("a detached commit made while planting core.fsmonitor is anchored by a loose ref file, and relay never runs the program", async () => {
  await using scene = await makeScene({ agent: "detached.sh" });
  const seenFile = join(scene.dir, "seen");
  const marker = join(scene.dir, "fsmonitor-ran");
  await openBrief(scene);

  const poll = await scene.relay(["poll"], { env: { FAKE_SEEN: seenFile, FAKE_MARKER: marker } });
  assert.equal(poll.code, HOLD, all(poll));
  assert.match(poll.stderr, /it changed files that steer git or relay: \.git\/config/);
  assert.equal(await exists(marker), false, "relay ran the planted fsmonitor program");
  const [commit] = await seen(seenFile);
  const [anchor, ...more] = namedAnchors((await readHoldFile(scene)).next);
  assert.deepEqual(more, []);
  assert.equal(await Deno.readTextFile(join(scene.work, ".git", anchor!)), `${commit}\n`);

  // The advice: put the files back before running git. Then git sees the anchor too.
  await scene.git(scene.work, ["config", "--unset", "core.fsmonitor"]);
  assert.deepEqual(await refsContaining(scene, commit!, "refs/relay/anchors/"), [anchor]);
});

Deno.test("a detached commit in a worktree deleted during the turn survives the HOLD's prune and resume", async () => {
  await using scene = await makeScene({ agent: "detached.sh" });
  const seenFile = join(scene.dir, "seen");
  await openBrief(scene);

  const poll = await scene.relay(["poll"], { env: { FAKE_SEEN: seenFile, FAKE_VANISH: "1" } });
  assert.equal(poll.code, HOLD, all(poll));
  assert.match(poll.stderr, /was deleted during run/);
  const [commit] = await seen(seenFile);
  const hold = await readHoldFile(scene);
  assert.match(hold.next, /Run "git worktree prune"/);
  const named = namedAnchors(hold.next);
  assert.equal(named.length, 1, hold.next);

  await scene.git(scene.work, ["worktree", "prune"]);
  const resumed = await scene.relay(["resume"]);
  assert.equal(resumed.code, 0, all(resumed));
  await collectGarbage(scene);
  assert.ok(await isCommit(scene, commit!), "the detached commit was lost");
  assert.deepEqual(await refsContaining(scene, commit!, "refs/relay/anchors/"), named);
});

Deno.test("a reviewer that commits and checks the PR head out again is void, and its commits are kept", async () => {
  await using scene = await makeScene({ reviewer: "commits-back.sh" });
  const seenFile = join(scene.dir, "seen");
  await scene.relay(["inbox", "add", "-"], { stdin: brief({ title: "Reviewed" }) });
  await scene.relay(["promote"]);
  const shipped = await scene.relay(["poll"]);
  assert.equal(shipped.code, 0, all(shipped));

  const review = await scene.relay(["review"], { env: { FAKE_SEEN: seenFile } });
  assert.equal(review.code, HOLD, all(review));
  assert.match(review.stderr, /changed its worktree twice \(it made commits it left on no ref/);
  await scene.git(scene.work, ["fetch", "--quiet", "origin"]);
  assert.doesNotMatch(await scene.out(["log", "--format=%s", "origin/main"]), /^Merge /m);
  const commits = await seen(seenFile);
  assert.equal(commits.length, 2);
  await collectGarbage(scene);
  for (const sha of commits) {
    assert.ok(await isCommit(scene, sha), `the reviewer's commit ${sha} was lost`);
    const refs = await refsContaining(scene, sha, "refs/relay/void/");
    assert.equal(refs.length, 1, refs.join(", "));
    assert.match(refs[0]!, /^refs\/relay\/void\/[^/]+\/commit-1$/);
  }
});

Deno.test("a turn abandoned before relay looked at it (relay close mid-turn) is anchored without git, once; anchors are never overwritten", async () => {
  await using scene = await makeScene();
  const common = join(scene.work, ".git");
  const worktree = join(scene.worktrees, "task-1");
  await scene.git(scene.work, ["worktree", "add", "--quiet", "-b", "task-1", worktree, "HEAD"]);
  const before = await scene.out(["rev-parse", "HEAD"], worktree);
  const turn = await markTurn(common, (worktreeGitDir(worktree))!, "task-1");
  await scene.git(worktree, ["checkout", "--quiet", "--detach"]);
  await scene.git(worktree, ["commit", "--quiet", "--allow-empty", "-m", "on no branch"]);
  const commit = await scene.out(["rev-parse", "HEAD"], worktree);
  const journal: Journal = {
    version: 1,
    task: 1,
    runId: "r1",
    attempt: 1,
    step: "agent-started",
    branch: "task-1",
    worktree,
    originMain: before,
    before,
    mainBefore: before,
    primaryDiff: "",
    reportBefore: "",
    updated: "",
    turn,
  };
  const prefix = "refs/relay/anchors/task-1/r1-after-";

  assert.deepEqual(await anchorAbandonedTurn(common, { ...journal, step: "committed" }), []);
  assert.deepEqual(await anchorAbandonedTurn(common, journal), [`${prefix}1`]);
  assert.deepEqual(await refsContaining(scene, commit, "refs/relay/"), [`${prefix}1`]);
  // Already anchored: nothing new.
  assert.deepEqual(await anchorAbandonedTurn(common, journal), []);
  // A sha already anchored keeps its ref; a new one gets the next number; none is overwritten.
  await scene.git(scene.work, ["pack-refs", "--all"]);
  assert.deepEqual(await anchorWithoutGit(common, prefix, [before, commit]), [
    `${prefix}2`,
    `${prefix}1`,
  ]);
  assert.equal(await scene.out(["rev-parse", `${prefix}1`]), commit);
  assert.equal(await scene.out(["rev-parse", `${prefix}2`]), before);
});
