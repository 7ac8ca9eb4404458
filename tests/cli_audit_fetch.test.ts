/**
 * `relay audit` fetches once: main and relay's notes in the same `git fetch`.
 * A remote without notes is no error (a warning says so), a remote's notes
 * land in refs/notes/relay-remote, and when the remote's notes are gone the
 * copy goes too (the audit reflects the remote, not an old copy of it). The
 * history is read while the fetch runs, from main as the clone had it: read again
 * when the fetch moved main, never used stale.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, makeScene, type Scene } from "./helpers/scene.ts";

interface Audited {
  warnings: string[];
  tip: string;
  commits: { sha: string; subject: string }[];
}

const NO_NOTES = /origin has no refs\/notes\/relay yet/;

/** `relay audit --json` in `cwd`, with the git processes it started counted by name. */
async function audit(
  scene: Scene,
  cwd: string,
): Promise<{ audited: Audited; fetches: number; logs: string[] }> {
  const trace = join(scene.dir, "trace");
  await Deno.remove(trace).catch(() => {});
  const res = await scene.relay(["-C", cwd, "audit", "--json"], { env: { GIT_TRACE: trace } });
  assert.equal(res.code, 0, all(res));
  const lines = (await Deno.readTextFile(trace)).split("\n");
  return {
    audited: JSON.parse(res.stdout) as Audited,
    fetches: lines.filter((l) => /trace: built-in: git fetch\b/.test(l)).length,
    // Each git log's last argument before "--": the tip or the range it read.
    logs: lines.filter((l) => /trace: built-in: git log\b/.test(l)).map((l) =>
      l.replace(/ '?--'?$/, "").split(" ").at(-1)!
    ),
  };
}

async function hasRef(scene: Scene, cwd: string, ref: string): Promise<boolean> {
  return (await scene.git(cwd, ["rev-parse", "--verify", "--quiet", ref], true)).code === 0;
}

Deno.test("relay audit: one fetch for main and the notes; no notes is a warning; gone notes are gone", async () => {
  await using scene = await makeScene();
  const fresh = join(scene.dir, "fresh");
  await scene.git(scene.dir, ["clone", "--quiet", `file://${scene.origin}`, fresh]);

  const before = await audit(scene, fresh);
  assert.equal(before.fetches, 1);
  assert.deepEqual(
    before.logs,
    ["refs/remotes/origin/main"],
    "main did not move: the history read beside the fetch is used",
  );
  assert.equal(before.audited.warnings.filter((w) => NO_NOTES.test(w)).length, 1);
  assert.equal(await hasRef(scene, fresh, "refs/notes/relay-remote"), false);

  // Another clone publishes a note; the audit's one fetch brings it, and main moved too.
  const head = await scene.out(["rev-parse", "HEAD"]);
  const record = { kind: "verdict", task: 1, head, result: "PASS", at: "2026-12-02T00:00:00Z" };
  await scene.git(scene.work, ["notes", "--ref=relay", "add", "-m", JSON.stringify(record), head]);
  await scene.git(scene.work, ["commit", "--quiet", "--allow-empty", "-m", "later"]);
  await scene.git(scene.work, ["push", "--quiet", "origin", "HEAD:main", "refs/notes/relay"]);
  const published = await audit(scene, fresh);
  assert.equal(published.fetches, 1);
  const later = await scene.out(["rev-parse", "HEAD"]);
  assert.deepEqual(
    published.logs,
    ["refs/remotes/origin/main", `${head}..${later}`],
    "main moved forward: only the commits since are read again",
  );
  assert.equal(published.audited.tip, later);
  assert.deepEqual(published.audited.commits.map((c) => c.subject), [
    ...before.audited.commits.map((c) => c.subject),
    "later",
  ]);

  // main rewritten (a force-push of another line): the old read is not continued, main is read whole.
  await scene.git(scene.work, ["reset", "--quiet", "--soft", "HEAD~1"]);
  await scene.git(scene.work, ["commit", "--quiet", "--allow-empty", "-m", "rewritten"]);
  await scene.git(scene.work, ["push", "--quiet", "--force", "origin", "HEAD:main"]);
  const rewritten = await audit(scene, fresh);
  const now = await scene.out(["rev-parse", "HEAD"]);
  assert.deepEqual(rewritten.logs, ["refs/remotes/origin/main", `${later}..${now}`, now]);
  assert.equal(rewritten.audited.tip, now);
  assert.deepEqual(
    rewritten.audited.commits.map((c) => c.subject),
    [...before.audited.commits.map((c) => c.subject), "rewritten"],
  );
  assert.deepEqual(published.audited.warnings, []);
  assert.equal(
    await scene.out(["rev-parse", "refs/notes/relay-remote"], fresh),
    await scene.out(["rev-parse", "refs/notes/relay"]),
  );
  assert.equal(
    await scene.out(["rev-parse", "refs/remotes/origin/main"], fresh),
    await scene.out(["rev-parse", "HEAD"]),
  );

  // The remote's notes are deleted: the copy is pruned and the warning is back.
  await scene.git(scene.dir, ["--git-dir", scene.origin, "update-ref", "-d", "refs/notes/relay"]);
  const gone = await audit(scene, fresh);
  assert.equal(gone.fetches, 1);
  assert.equal(gone.audited.warnings.filter((w) => NO_NOTES.test(w)).length, 1);
  assert.equal(await hasRef(scene, fresh, "refs/notes/relay-remote"), false);
});
