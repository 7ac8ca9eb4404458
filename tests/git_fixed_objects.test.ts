/**
 * What a Git remembers and what it runs once: answers about objects named by a full id
 * (a commit's tree, a file at a commit) are read once, answers about names that move
 * (HEAD) every time; a process's first fetch in a repository runs git's automatic
 * maintenance, its later fetches do not (nor does any other git command relay runs).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Git, SAFE_CONFIG } from "../lib/git/git.ts";

const ENV = {
  GIT_AUTHOR_NAME: "T",
  GIT_AUTHOR_EMAIL: "t@test.invalid",
  GIT_COMMITTER_NAME: "T",
  GIT_COMMITTER_EMAIL: "t@test.invalid",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
};

async function sh(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", { args, cwd, env: ENV, stdout: "piped" }).output();
  if (out.code !== 0) throw new Error(`git ${args.join(" ")} exited ${out.code}`);
  return new TextDecoder().decode(out.stdout).trim();
}

/** A Git that writes down the argv of every command it runs. */
class RecordingGit extends Git {
  readonly ran: string[][] = [];
  override run(...args: Parameters<Git["run"]>) {
    this.ran.push([...args[0]]);
    return super.run(...args);
  }
}

async function commit(dir: string, file: string, text: string): Promise<string> {
  await Deno.writeTextFile(join(dir, file), text);
  await sh(dir, "add", "--", file);
  await sh(dir, "commit", "--quiet", "-m", `write ${file}`);
  return await sh(dir, "rev-parse", "HEAD");
}

Deno.test("Git reads a full id's tree and files once, and HEAD's every time", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-fixed-objects-" });
  try {
    await sh(dir, "init", "--quiet", "--initial-branch=main");
    const first = await commit(dir, "REPORT.md", "one\n");
    const git = new RecordingGit(dir);

    assert.equal(await git.showFile(first, "REPORT.md"), "one\n");
    assert.equal(await git.showFile(first, "REPORT.md"), "one\n");
    assert.equal(await git.showFile(first, "MISSING.md"), null);
    assert.equal(await git.showFile(first, "MISSING.md"), null);
    const tree = await sh(dir, "rev-parse", `${first}^{tree}`);
    assert.equal(await git.treeOf(first), tree);
    assert.equal(await git.treeOf(first), tree);
    // Concurrent asks share one read.
    const [a, b] = await Promise.all([git.treeOf(first), git.treeOf(first)]);
    assert.equal(a, tree);
    assert.equal(b, tree);
    assert.equal(git.ran.length, 3, git.ran.map((r) => r.join(" ")).join("\n"));

    // A name that moves is asked again: the new commit's file and tree, not the first's.
    assert.equal(await git.showFile("HEAD", "REPORT.md"), "one\n");
    const second = await commit(dir, "REPORT.md", "two\n");
    assert.equal(await git.showFile("HEAD", "REPORT.md"), "two\n");
    assert.equal(await git.treeOf("HEAD"), await sh(dir, "rev-parse", `${second}^{tree}`));
    assert.equal(git.ran.length, 6);
    // A failure to run git is not kept as an answer.
    await assert.rejects(new Git(join(dir, "no-such-folder")).treeOf(first));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Git runs automatic maintenance on its first fetch in a repository, not after", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-fetch-maintenance-" });
  try {
    const origin = join(dir, "origin.git");
    const work = join(dir, "work");
    const other = join(dir, "other");
    await sh(dir, "init", "--quiet", "--bare", "--initial-branch=main", origin);
    await sh(dir, "clone", "--quiet", `file://${origin}`, work);
    await sh(dir, "clone", "--quiet", `file://${origin}`, other);
    await commit(work, "a.txt", "a\n");
    await sh(work, "push", "--quiet", "origin", "main");

    const maintenance = (argv: string[]) =>
      argv.filter((a) => a.endsWith("auto-maintenance")).join(" ");
    const git = new RecordingGit(work);
    await git.fetch("origin", { maintenance: false });
    await git.fetch("origin");
    await git.fetch("origin");
    assert.deepEqual(git.ran.map(maintenance), [
      "--no-auto-maintenance",
      "--auto-maintenance",
      "--no-auto-maintenance",
    ]);
    // Another repository is another first fetch.
    const elsewhere = new RecordingGit(other);
    await elsewhere.fetch("origin");
    assert.deepEqual(elsewhere.ran.map(maintenance), ["--auto-maintenance"]);
    // Every other command relay runs has it off: git would start it after a commit or merge.
    assert.deepEqual(SAFE_CONFIG.slice(-2), ["-c", "maintenance.auto=false"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
