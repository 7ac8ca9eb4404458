/**
 * Git.readObjects: several objects in one `git cat-file --batch`, each with
 * its id, type and whole content (sizes are bytes, so text beyond ASCII must
 * not shift the objects after it), and null for a name that names nothing;
 * Git.outViaFile: a log or diff read from the file git wrote, the same text.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Git } from "../lib/git/git.ts";
import { headFromFiles, readRefFile } from "../lib/git/discover.ts";
import { git as sh } from "./helpers/git_env.ts";

Deno.test("Git.readObjects() reads commits and blobs in one call, null for what is not there", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-read-objects-" });
  try {
    await sh(dir, "init", "--quiet", "--initial-branch=main");
    const report = "Täsk: 1 — “shipped” ✓\nno newline at the end";
    await Deno.writeTextFile(join(dir, "REPORT.md"), report);
    await Deno.mkdir(join(dir, "sub"));
    await Deno.writeTextFile(join(dir, "sub", "x.txt"), "x\n");
    await Deno.writeTextFile(join(dir, "empty"), "");
    await sh(dir, "add", ".");
    await sh(dir, "commit", "--quiet", "-m", "one");
    const head = await sh(dir, "rev-parse", "HEAD");
    const tree = await sh(dir, "rev-parse", "HEAD^{tree}");

    const [commit, blob, missing, folder, empty, after, none] = await new Git(dir).readObjects([
      "refs/heads/main^{commit}",
      "refs/heads/main:REPORT.md",
      "refs/heads/main:NOT-THERE.md",
      "refs/heads/main:sub",
      "refs/heads/main:empty",
      "refs/heads/main:sub/x.txt",
      "refs/heads/nope^{commit}",
    ]);
    assert.equal(commit?.oid, head);
    assert.equal(commit?.type, "commit");
    assert.match(commit!.content, new RegExp(`^tree ${tree}$`, "m"));
    assert.deepEqual(blob && { type: blob.type, content: blob.content }, {
      type: "blob",
      content: report,
    });
    assert.equal(missing, null);
    assert.equal(folder?.type, "tree");
    assert.equal(empty?.content, "");
    assert.equal(after?.content, "x\n");
    assert.equal(none, null);
    await assert.rejects(new Git(dir).readObjects(["a\nb"]), /one-line name/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Git.outViaFile() gives what Git.out() gives for a log and a diff", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-out-via-file-" });
  try {
    await sh(dir, "init", "--quiet", "--initial-branch=main");
    for (const [i, name] of ["a.txt", "ünïcode.txt", "sub/b.txt"].entries()) {
      await Deno.mkdir(join(dir, "sub"), { recursive: true });
      await Deno.writeTextFile(join(dir, name), `${i}\n`);
      await sh(dir, "add", ".");
      await sh(dir, "commit", "--quiet", "-m", `commit ${i} — “${name}”`);
    }
    const git = new Git(dir);
    const log = ["--first-parent", "--name-status", "-z", "--format=%x1e%H%x1f%s", "HEAD", "--"];
    const diff = ["--raw", "-z", "-M", "--no-abbrev", "HEAD~2", "HEAD", "--"];
    const viaLog = await git.outViaFile("log", log);
    assert.equal(viaLog, await git.out(["log", ...log]));
    assert.match(viaLog, /ünïcode\.txt/);
    const viaDiff = await git.outViaFile("diff", diff);
    assert.equal(viaDiff, await git.out(["diff", ...diff]));
    assert.equal(viaDiff.split("\0").filter((f) => f.startsWith(":")).length, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readRefFile() reads a loose or packed ref as git does, and gives no guess for anything else", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-ref-file-" });
  try {
    await sh(dir, "init", "--quiet", "--initial-branch=main");
    await sh(dir, "commit", "--quiet", "--allow-empty", "-m", "one");
    await sh(dir, "tag", "-a", "-m", "annotated", "v1");
    await sh(dir, "branch", "packed");
    await sh(dir, "pack-refs", "--all");
    await sh(dir, "commit", "--quiet", "--allow-empty", "-m", "two");
    await sh(dir, "symbolic-ref", "refs/heads/alias", "refs/heads/main");
    const gitDir = join(dir, ".git");
    for (const ref of ["refs/heads/main", "refs/heads/packed", "refs/tags/v1"]) {
      assert.equal(readRefFile(gitDir, ref), await sh(dir, "rev-parse", ref), ref);
    }
    assert.equal(readRefFile(gitDir, "refs/heads/alias"), null, "a symbolic ref");
    assert.equal(readRefFile(gitDir, "refs/heads/nope"), null);
    assert.equal(readRefFile(gitDir, "refs/heads"), null, "a folder");
    await Deno.writeTextFile(join(gitDir, "refs", "heads", "junk"), "not an id\n");
    assert.equal(readRefFile(gitDir, "refs/heads/junk"), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test('headFromFiles() and Git.head()/branch()/resolve("HEAD")/treeOf("HEAD") give what git gives: on a branch (loose or packed), detached, in a linked worktree, unborn, and a HEAD it does not read plainly', async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-head-files-" });
  try {
    const repo = join(dir, "repo");
    await Deno.mkdir(repo);
    await sh(repo, "init", "--quiet", "--initial-branch=main");
    await sh(repo, "commit", "--quiet", "--allow-empty", "-m", "one");
    await Deno.mkdir(join(repo, "sub"));
    const git = new Git(repo);
    // What git says, for each state the tree is put in below.
    const same = async (cwd: string, what: string) => {
      const head = await sh(cwd, "rev-parse", "HEAD");
      const branch = await new Git(cwd).run(["symbolic-ref", "--quiet", "--short", "HEAD"], {
        allowFail: true,
      });
      const files = headFromFiles(cwd);
      assert.equal(files?.id, head, `${what}: the id`);
      assert.equal(files?.branch, branch.code === 0 ? branch.stdout.trim() : null, what);
      const g = new Git(cwd);
      assert.equal(await g.head(), head, what);
      assert.equal(await g.branch(), files?.branch, what);
      assert.equal(await g.resolve("HEAD"), head, what);
      assert.equal(await g.treeOf("HEAD"), await sh(cwd, "rev-parse", "HEAD^{tree}"), what);
    };
    await same(repo, "a loose branch ref");
    await same(join(repo, "sub"), "from a folder of the tree");
    await sh(repo, "pack-refs", "--all");
    await same(repo, "a packed branch ref");
    await sh(repo, "commit", "--quiet", "--allow-empty", "-m", "two");
    await same(repo, "a loose ref over a packed one");
    await sh(repo, "switch", "--quiet", "--detach", "HEAD~1");
    await same(repo, "detached");
    await sh(repo, "switch", "--quiet", "main");
    const wt = join(dir, "wt");
    await sh(repo, "worktree", "add", "--quiet", "-b", "task-1", wt, "HEAD~1");
    await same(wt, "a linked worktree's own HEAD");
    assert.equal(headFromFiles(repo)?.branch, "main", "the primary's HEAD is its own");

    // Unborn: the branch is named, there is no id, and git is asked (and fails, as ever).
    await sh(repo, "switch", "--quiet", "--orphan", "fresh");
    assert.deepEqual(headFromFiles(repo), { id: null, branch: "fresh" });
    await assert.rejects(git.head());
    assert.equal(await git.branch(), "fresh");
    await sh(repo, "switch", "--quiet", "main");
    // HEAD on a ref outside refs/heads/ (git allows it): not read plainly, git answers.
    await sh(repo, "symbolic-ref", "HEAD", "refs/remotes/x");
    assert.equal(headFromFiles(repo), null);
    await sh(repo, "symbolic-ref", "HEAD", "refs/heads/main");
    assert.equal(headFromFiles(join(dir, "nowhere")), null, "no repository");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
