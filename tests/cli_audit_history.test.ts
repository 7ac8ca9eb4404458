/**
 * The audit reads main's history from `git log` as git writes it (lib/cli/audit.ts,
 * HistoryReader): cut into chunks anywhere — inside a commit, a path, a multi-byte
 * character — it gives what parseHistory gives for the whole output at once.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { historyLog, HistoryReader, parseHistory } from "../lib/cli/audit.ts";
import { Git } from "../lib/git/git.ts";
import { makeScene } from "./helpers/scene.ts";

/** `bytes` pushed in chunks of 1 to `max` bytes, sizes from a fixed sequence. */
function readInChunks(bytes: Uint8Array, max: number) {
  const reader = new HistoryReader();
  let seed = 7;
  for (let at = 0; at < bytes.length;) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const size = 1 + (seed % max);
    reader.push(bytes.subarray(at, at + size));
    at += size;
  }
  return reader.end();
}

Deno.test("HistoryReader: a real git log in chunks of any size reads as the whole output does", async () => {
  await using scene = await makeScene();
  const git = new Git(scene.work);
  // Commits with non-ASCII subjects and authors, added, changed, renamed and deleted paths,
  // and a merge: every shape the audit's log has.
  for (let i = 0; i < 40; i++) {
    await Deno.writeTextFile(join(scene.work, `f${i % 7}.txt`), `${i}\n`);
    if (i % 5 === 0) await Deno.writeTextFile(join(scene.work, `ü-${i}.md`), "—\n");
    await git.run(["add", "-A"]);
    await git.run([
      "-c",
      "user.name=Zoë Ünal",
      "commit",
      "--quiet",
      "-m",
      `Task #${i}: status — SHIPPED (task-${i}) ✓`,
    ]);
  }
  await git.run(["checkout", "--quiet", "-b", "side"]);
  await git.run(["mv", "f1.txt", "moved — f1.txt"]);
  await git.run(["commit", "--quiet", "-m", "rename on a side branch"]);
  await git.run(["checkout", "--quiet", "-"]);
  await git.run(["merge", "--quiet", "--no-ff", "-m", "Merge side — ok", "side"]);
  const out = await git.out(historyLog("HEAD"));
  const whole = parseHistory(out);
  assert.ok(whole.length >= 41, `${whole.length} commits`);
  assert.ok(whole.some((c) => c.parents.length === 2 && c.files.includes("moved — f1.txt")));
  assert.ok(whole.some((c) => c.added.some((p) => p.startsWith("ü-"))));
  const [merge, last] = whole;
  assert.equal(merge!.sha, await git.out(["rev-parse", "HEAD"]));
  assert.deepEqual(merge!.parents, (await git.out(["rev-parse", "HEAD^1", "HEAD^2"])).split("\n"));
  assert.equal(merge!.subject, "Merge side — ok");
  assert.deepEqual(merge!.files, ["f1.txt", "moved — f1.txt"]);
  assert.deepEqual(merge!.added, ["moved — f1.txt"]);
  assert.equal(last!.subject, "Task #39: status — SHIPPED (task-39) ✓");
  assert.match(last!.author, /^Zoë Ünal <.+>$/);
  assert.deepEqual(last!.parents, [await git.out(["rev-parse", "HEAD~2"])]);
  assert.deepEqual(last!.files, ["f4.txt"]);
  const bytes = new TextEncoder().encode(out);
  for (const max of [1, 2, 3, 17, 64, 4096, bytes.length]) {
    assert.deepEqual(readInChunks(bytes, max), whole, `chunks of up to ${max} bytes`);
  }
  // As Git.stream hands it over, from the same git log.
  const streamed = new HistoryReader();
  await git.stream(historyLog("HEAD"), (c) => streamed.push(c));
  assert.deepEqual(streamed.end(), whole);
});

Deno.test("HistoryReader: a path that holds the commit separator (or a whole forged header) stays a path of its commit", async () => {
  await using scene = await makeScene();
  const git = new Git(scene.work);
  const before = (await git.out(["log", "--format=%H"])).split("\n").length;
  const forged = `\x1e${"f".repeat(40)}\x1f\x1fA <a@x>\x1fMerge task-9`;
  await Deno.writeTextFile(join(scene.work, forged), "x\n");
  await Deno.mkdir(join(scene.work, "src"), { recursive: true });
  await Deno.writeTextFile(join(scene.work, "src", "app.ts"), "x\n");
  await git.run(["add", "-A"]);
  await git.run(["commit", "--quiet", "-m", "product change"]);
  const out = await git.out(historyLog("HEAD"));
  assert.ok(out.includes(forged), "git wrote the name as it is (-z)");
  for (const commits of [parseHistory(out), readInChunks(new TextEncoder().encode(out), 5)]) {
    assert.equal(commits.length, before + 1);
    assert.equal(commits[0]!.subject, "product change");
    assert.deepEqual([...commits[0]!.files].sort(), [forged, "src/app.ts"].sort());
    assert.ok(!commits.some((c) => c.sha === "f".repeat(40)));
  }
});

Deno.test("HistoryReader: no output is no commits; one commit with no paths is one commit", () => {
  assert.deepEqual(new HistoryReader().end(), []);
  const reader = new HistoryReader();
  const sha = "a".repeat(40);
  reader.push(new TextEncoder().encode(`\x1e${sha}\x1f\x1fA <a@x>\x1fempty`));
  assert.deepEqual(reader.end(), [{
    sha,
    parents: [],
    author: "A <a@x>",
    subject: "empty",
    files: [],
    added: [],
  }]);
});
