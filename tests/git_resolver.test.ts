/**
 * lib/git/resolver.ts: a tick resolves refs through one `git cat-file
 * --batch-check` per repository. It must answer what `git rev-parse` answers
 * at that moment, however other processes moved the refs and objects since it
 * started, and start no process more than that one.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CommandError } from "../lib/errors.ts";
import { Git } from "../lib/git/git.ts";
import { batchResolves, endResolvers } from "../lib/git/resolver.ts";
import { run } from "../lib/proc/run.ts";
import { ROOT } from "./helpers/scene.ts";
import { git as sh } from "./helpers/git_env.ts";

/** rev-parse's answer, as Git.resolve() gives it when the resolvers are off. */
async function revParse(dir: string, rev: string): Promise<string | null> {
  return await new Git(dir).resolve(rev);
}

/** A repository with a commit on main, a bare origin it pushed to, and a linked worktree. */
async function repo(dir: string): Promise<{ work: string; origin: string; linked: string }> {
  const work = join(dir, "work");
  const origin = join(dir, "origin.git");
  const linked = join(dir, "linked");
  await sh(dir, "init", "--quiet", "--bare", "--initial-branch=main", origin);
  await sh(dir, "init", "--quiet", "--initial-branch=main", work);
  await sh(work, "commit", "--quiet", "--allow-empty", "-m", "one");
  await sh(work, "remote", "add", "origin", `file://${origin}`);
  await sh(work, "push", "--quiet", "origin", "main");
  await sh(work, "fetch", "--quiet", "origin");
  await sh(work, "worktree", "add", "--quiet", "--detach", linked);
  return { work, origin, linked };
}

Deno.test("Git.resolve() through the shared resolver answers what rev-parse answers, as other processes move refs and objects", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-resolver-" });
  const { work, origin, linked } = await repo(dir);
  const names = [
    "refs/heads/main",
    "refs/remotes/origin/main",
    "refs/heads/nope",
    "refs/tags/v1",
    "refs/heads/side",
    "refs/relay/anchors/x",
    "refs/notes/relay",
  ];
  /** What rev-parse says of each name now (the resolvers off). */
  const expected = async () => {
    batchResolves(false);
    try {
      return await Promise.all(names.map((n) => revParse(work, n)));
    } finally {
      batchResolves(true);
    }
  };
  const ask = (cwd: string) => Promise.all(names.map((n) => new Git(cwd).resolve(n)));
  const check = async (what: string) => {
    const want = await expected();
    assert.deepEqual(await ask(work), want, what);
    assert.deepEqual(await ask(linked), want, `${what}, from the linked worktree`);
  };
  try {
    batchResolves(true);
    await check("at the start");
    // A commit's full id is itself; a tree's is no commit: null, as rev-parse says.
    const head = await sh(work, "rev-parse", "HEAD");
    const tree = await sh(work, "rev-parse", "HEAD^{tree}");
    assert.equal(await new Git(work).resolve(head), head);
    assert.equal(await new Git(work).resolve(tree), null);
    // A commit's tree, and a name that is no object: the error rev-parse gives.
    assert.equal(await new Git(linked).treeOf(head), tree);
    assert.equal(await new Git(work).treeOf("refs/heads/main"), tree);
    await assert.rejects(new Git(work).treeOf("f".repeat(40)), CommandError);

    await sh(work, "commit", "--quiet", "--allow-empty", "-m", "two");
    await sh(work, "tag", "-a", "-m", "annotated", "v1");
    await sh(work, "branch", "side");
    await sh(work, "update-ref", "refs/relay/anchors/x", "HEAD~1");
    await check("after a commit, an annotated tag, a branch and an anchor");

    await sh(work, "pack-refs", "--all");
    await sh(work, "commit", "--quiet", "--allow-empty", "-m", "three");
    await sh(work, "branch", "-D", "side");
    await check("after pack-refs, a commit on a packed ref and a deleted branch");

    // Another clone pushes: the fetch brings a commit this repository never had, in a pack.
    const other = join(dir, "other");
    await sh(dir, "clone", "--quiet", `file://${origin}`, other);
    await sh(other, "commit", "--quiet", "--allow-empty", "-m", "from elsewhere");
    await sh(other, "push", "--quiet", "origin", "main");
    await sh(work, "fetch", "--quiet", "origin");
    await check("after a fetch that brought a new pack");
    await sh(work, "repack", "-adq");
    await check("after a repack");
  } finally {
    batchResolves(false);
    await endResolvers();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Git.sharedPathType() and sharedCommit() answer what git answers, through the resolver only", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-resolver-path-" });
  const { work, linked } = await repo(dir);
  try {
    // Off (a person's command): no answer, so the caller asks git.
    assert.equal(await new Git(work).sharedPathType("refs/heads/main:a.txt"), undefined);
    assert.equal(await new Git(work).sharedCommit("refs/heads/main"), undefined);
    batchResolves(true);
    await Deno.mkdir(join(work, "dir"));
    await Deno.writeTextFile(join(work, "dir", "a.txt"), "a\n");
    await sh(work, "add", "dir");
    await sh(work, "commit", "--quiet", "-m", "a file");
    await sh(work, "tag", "-a", "-m", "annotated", "v2");
    const head = await sh(work, "rev-parse", "HEAD");
    const tag = await sh(work, "rev-parse", "v2");
    for (const cwd of [work, linked]) {
      const git = new Git(cwd);
      assert.equal(await git.sharedPathType("refs/heads/main:dir/a.txt"), "blob");
      assert.equal(await git.sharedPathType("refs/heads/main:dir"), "tree");
      assert.equal(await git.sharedPathType(`${head}:dir/a.txt`), "blob");
      assert.equal(await git.sharedPathType("refs/heads/main:missing.txt"), null);
      assert.equal(await git.sharedPathType("refs/heads/nope:dir/a.txt"), null);
      // Not a shared name (HEAD is each worktree's own): left to git.
      assert.equal(await git.sharedPathType("HEAD:dir/a.txt"), undefined);
      assert.equal(await git.sharedCommit(head), head);
      // A tag's id names its commit, not itself; a name that is no object, nothing.
      assert.equal(await git.sharedCommit(tag), head);
      assert.equal(await git.sharedCommit("f".repeat(40)), null);
    }
    // A file committed after the resolver started is seen.
    await Deno.writeTextFile(join(work, "b.txt"), "b\n");
    await sh(work, "add", "b.txt");
    await sh(work, "commit", "--quiet", "-m", "b");
    assert.equal(await new Git(work).sharedPathType("refs/heads/main:b.txt"), "blob");
  } finally {
    batchResolves(false);
    await endResolvers();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Git.resolve() asks HEAD of its own worktree, never the shared resolver", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-resolver-head-" });
  const { work, linked } = await repo(dir);
  try {
    batchResolves(true);
    await sh(linked, "commit", "--quiet", "--allow-empty", "-m", "linked only");
    const linkedHead = await sh(linked, "rev-parse", "HEAD");
    assert.equal(
      await new Git(work).resolve("refs/heads/main"),
      await sh(work, "rev-parse", "HEAD"),
    );
    assert.equal(await new Git(linked).resolve("HEAD"), linkedHead);
    assert.notEqual(await new Git(work).resolve("HEAD"), linkedHead);
  } finally {
    batchResolves(false);
    await endResolvers();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the shared resolver is one git process for all of a repository's refs, and keeps no command alive", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-resolver-count-" });
  const { work, linked } = await repo(dir);
  const trace = join(dir, "trace");
  try {
    const gitModule = new URL("../lib/git/git.ts", import.meta.url).href;
    const resolverModule = new URL("../lib/git/resolver.ts", import.meta.url).href;
    const script = join(dir, "resolve.ts");
    await Deno.writeTextFile(
      script,
      `import { Git } from "${gitModule}";\nimport { batchResolves } from "${resolverModule}";\n` +
        `batchResolves(true);\nconst out = [];\n` +
        `for (const cwd of ${JSON.stringify([work, linked])}) {\n` +
        `  for (const n of ["refs/heads/main", "refs/remotes/origin/main", "refs/heads/nope"]) {\n` +
        `    out.push(await new Git(cwd).resolve(n));\n  }\n}\n` +
        `console.log(JSON.stringify(out));\n`,
    );
    // No Deno.exit in the script: it ends only if the resolver's git does not hold it. The
    // timeout is a cap for a busy machine.
    const res = await run([Deno.execPath(), "run", "--quiet", "-A", "--no-config", script], {
      cwd: ROOT,
      env: { GIT_TRACE2_EVENT: trace },
      timeoutMs: 60_000,
    });
    const main = await sh(work, "rev-parse", "HEAD");
    assert.deepEqual(JSON.parse(res.stdout), [main, main, null, main, main, null]);
    const starts = (await Deno.readTextFile(trace)).trim().split("\n").map((l) => JSON.parse(l))
      .filter((e) => e.event === "start" && e.argv?.[2] === "core.fsmonitor=false")
      .map((e) => e.argv.slice(7).join(" "));
    assert.deepEqual(starts, [
      `--git-dir=${join(work, ".git")} cat-file --batch-check=%(objectname) %(objecttype)`,
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the shared resolver reads a repository removed and made again at the same path", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-resolver-again-" });
  const work = join(dir, "work");
  try {
    batchResolves(true);
    await sh(dir, "init", "--quiet", "--initial-branch=main", work);
    await sh(work, "commit", "--quiet", "--allow-empty", "-m", "one");
    assert.equal(
      await new Git(work).resolve("refs/heads/main"),
      await sh(work, "rev-parse", "HEAD"),
    );
    await Deno.remove(work, { recursive: true });
    await sh(dir, "init", "--quiet", "--initial-branch=main", work);
    await sh(work, "commit", "--quiet", "--allow-empty", "-m", "two");
    assert.equal(
      await new Git(work).resolve("refs/heads/main"),
      await sh(work, "rev-parse", "HEAD"),
    );
  } finally {
    batchResolves(false);
    await endResolvers();
    await Deno.remove(dir, { recursive: true });
  }
});
