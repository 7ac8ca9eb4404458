/**
 * relay audit, end to end: the reviewer side publishes its verdicts, stage
 * receipts and gate decisions as git notes on the heads they judged, pushed
 * beside main; a clone that has nothing but the remote classifies main's
 * history from them and finds a planted violation — and only it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, brief, makeScene, queue, type Scene } from "./helpers/scene.ts";

interface Audited {
  commits: { sha: string; class: string; task?: number }[];
  violations: { sha: string; kind: string; detail: string }[];
  warnings: string[];
}

/** A task sent back once by the reviewer, fixed on the same branch, then merged. */
async function runTaskWithFix(scene: Scene, title: string): Promise<void> {
  const failOnce = join(scene.dir, "failed-once");
  await queue(scene, brief({ title }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.equal((await scene.relay(["poll"])).code, 0);
  const sent = await scene.relay(["review"], { env: { FAKE_FAIL_ONCE: failOnce } });
  assert.match(sent.stdout, /sent back|fix/i, all(sent));
  assert.equal((await scene.relay(["poll"])).code, 0);
  const merged = await scene.relay(["review"], { env: { FAKE_FAIL_ONCE: failOnce } });
  assert.match(merged.stdout, /merged/, all(merged));
}

/** Under merge_policy human: DONE awaiting acceptance, then a person accepts by digest. */
async function runTaskAccepted(scene: Scene, title: string, task: number): Promise<void> {
  await queue(scene, brief({ title }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.equal((await scene.relay(["poll", "--merge-policy", "human"])).code, 0);
  const waiting = await scene.relay(["review"]);
  assert.equal(waiting.code, 3, all(waiting));
  const intent = await scene.relay(["accept", String(task), "--intent-only"]);
  const digest = /--expect (\S+)/.exec(intent.stdout)?.[1];
  assert.ok(digest, all(intent));
  const accepted = await scene.relay(["accept", String(task), "--expect", digest]);
  assert.equal(accepted.code, 0, all(accepted));
}

Deno.test("audit from a fresh clone with only the remote: reviewed merges (one after a fix round, one a person accepted) and paperwork are clean, the one planted direct commit is the one violation", async () => {
  await using scene = await makeScene();
  await runTaskWithFix(scene, "Greet");
  await runTaskAccepted(scene, "Wave", 3);
  // The notes went to the remote with the merges.
  const notes = await scene.git(scene.dir, [
    "--git-dir",
    scene.origin,
    "rev-parse",
    "--verify",
    "refs/notes/relay",
  ]);
  assert.match(notes.stdout.trim(), /^[0-9a-f]{40}$/);

  // A person commits product code straight to main, out of band.
  const person = join(scene.dir, "person");
  await scene.git(scene.dir, ["clone", "--quiet", `file://${scene.origin}`, person]);
  await Deno.writeTextFile(join(person, "src", "hotfix.txt"), "quick fix\n");
  await scene.git(person, ["add", "src/hotfix.txt"]);
  await scene.git(person, ["commit", "--quiet", "-m", "hotfix, no review"]);
  const planted = (await scene.git(person, ["rev-parse", "HEAD"])).stdout.trim();
  await scene.git(person, ["push", "--quiet", "origin", "HEAD:main"]);

  const fresh = join(scene.dir, "fresh");
  await scene.git(scene.dir, ["clone", "--quiet", `file://${scene.origin}`, fresh]);
  const text = await scene.relay(["-C", fresh, "audit"]);
  assert.equal(text.code, 1, all(text));
  const flagged = text.stdout.split("\n").filter((l) => l.includes("VIOLATION"));
  assert.equal(flagged.length, 1, text.stdout);
  assert.match(flagged[0]!, new RegExp(`^  ${planted.slice(0, 12)}  VIOLATION`));
  assert.match(flagged[0]!, /product files committed straight to main.*src\/hotfix\.txt/);
  assert.match(text.stdout, /2 reviewed merges/);
  assert.match(text.stdout, /1 violation$/m);
  // relay's paperwork is counted, not listed; --all lists it, with every other line the same.
  const paperwork = Number(
    /^(\d+) paperwork \(not listed: --all lists them\)/m.exec(text.stdout)?.[1],
  );
  assert.ok(paperwork > 0, text.stdout);
  assert.doesNotMatch(text.stdout, /^ {2}[0-9a-f]{12} {2}paperwork/m);
  assert.equal(
    text.stdout.split("\n").filter((l) => /^ {2}[0-9a-f]{12} {2}merge /.test(l)).length,
    2,
  );
  const every = await scene.relay(["-C", fresh, "audit", "--all"]);
  assert.equal(every.code, 1, all(every));
  const lines = (out: string) => out.split("\n").filter((l) => /^ {2}[0-9a-f]{12} {2}/.test(l));
  const listedAll = lines(every.stdout);
  assert.equal(listedAll.filter((l) => /^ {2}[0-9a-f]{12} {2}paperwork/.test(l)).length, paperwork);
  assert.deepEqual(
    listedAll.filter((l) => !/^ {2}[0-9a-f]{12} {2}paperwork/.test(l)),
    lines(text.stdout),
  );
  assert.match(every.stdout, new RegExp(`^${paperwork} paperwork, `, "m"));

  const json = await scene.relay(["-C", fresh, "audit", "--json"]);
  assert.equal(json.code, 1, all(json));
  const audited = JSON.parse(json.stdout) as Audited;
  assert.deepEqual(audited.warnings, []);
  assert.deepEqual(
    audited.violations.map((v) => [v.sha, v.kind]),
    [[planted, "direct-product-commit"]],
  );
  const merges = audited.commits.filter((c) => c.class === "task-merge");
  assert.deepEqual(merges.map((c) => c.task), [1, 3]);
  const classes = new Set(audited.commits.map((c) => c.class));
  assert.deepEqual([...classes].sort(), ["paperwork", "task-merge", "violation"]);

  // --since the planted commit: nothing after it is a violation.
  const since = await scene.relay(["-C", fresh, "audit", "--since", planted]);
  assert.equal(since.code, 0, all(since));
  assert.match(since.stdout, /0 violations/);
});

Deno.test("audit: a PR merged by hand before review is a merge with no verdict; a bad --since is exit 2", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "Greet" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.equal((await scene.relay(["poll"])).code, 0);
  const person = join(scene.dir, "person");
  await scene.git(scene.dir, ["clone", "--quiet", `file://${scene.origin}`, person]);
  await scene.git(person, [
    "merge",
    "--quiet",
    "--no-ff",
    "-m",
    "Merge task-1 by hand",
    "origin/task-1",
  ]);
  const head = (await scene.git(person, ["rev-parse", "HEAD^2"])).stdout.trim();
  await scene.git(person, ["push", "--quiet", "origin", "HEAD:main"]);

  const res = await scene.relay(["audit", "--json"]);
  assert.equal(res.code, 1, all(res));
  const audited = JSON.parse(res.stdout) as Audited;
  assert.equal(audited.violations.length, 1, res.stdout);
  assert.equal(audited.violations[0]!.kind, "merge-without-verdict");
  assert.match(audited.violations[0]!.detail, new RegExp(head.slice(0, 12)));

  const before = await scene.snapshot();
  const bad = await scene.relay(["audit", "--since", "no-such-rev"]);
  assert.equal(bad.code, 2, all(bad));
  assert.match(bad.stderr, /--since "no-such-rev" is not a commit here/);
  assert.equal(await scene.snapshot(), before);
});
