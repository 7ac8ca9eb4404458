/**
 * commitLeftovers() after an agent's turn, from one `git status`: what the agent left staged,
 * changed or untracked is committed on its branch, build output is left in the worktree (a
 * tracked build file's removal is committed), and the paperwork is put back as the branch's
 * base had it.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { Git } from "../lib/git/git.ts";
import { commitLeftovers } from "../lib/loop/branch_commit.ts";
import { git as sh, initRepo } from "./helpers/git_env.ts";

async function write(dir: string, path: string, text: string): Promise<void> {
  await Deno.mkdir(dirname(join(dir, path)), { recursive: true });
  await Deno.writeTextFile(join(dir, path), text);
}

/** A repository whose one commit, `base` (the branch's base), holds `files`; removed after. */
async function baseRepo(
  files: Record<string, string>,
): Promise<{ dir: string; base: string } & AsyncDisposable> {
  const dir = await Deno.makeTempDir({ prefix: "relay-branch-commit-" });
  const removed = { [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
  try {
    await initRepo(dir);
    for (const [path, text] of Object.entries(files)) await write(dir, path, text);
    await sh(dir, "add", "--all");
    await sh(dir, "commit", "--quiet", "-m", "base");
    return { dir, base: await sh(dir, "rev-parse", "HEAD"), ...removed };
  } catch (err) {
    await removed[Symbol.asyncDispose]();
    throw err;
  }
}

Deno.test("commitLeftovers() commits staged, changed and untracked product files, leaves build output, commits a build file's removal, and puts the paperwork back", async () => {
  await using repo = await baseRepo({
    "src/app.txt": "v1\n",
    "src/old.txt": "old\n",
    "COWORK-STATUS.md": "Task: 0\n",
    // Build output someone committed once: relay commits its removal, never a new version.
    "__pycache__/gone.pyc": "bytes\n",
    "__pycache__/again.pyc": "bytes\n",
  });
  const { dir, base } = repo;
  // The agent's turn, left uncommitted:
  await write(dir, "src/app.txt", "v2\n"); // staged, then changed again (MM)
  await sh(dir, "add", "src/app.txt");
  await write(dir, "src/app.txt", "v3\n");
  await sh(dir, "rm", "--quiet", "src/old.txt"); // a staged removal
  await write(dir, "src/[1].md", "one\n"); // untracked, named like a pattern
  await write(dir, "src/1.md", "plain\n");
  await Deno.remove(join(dir, "__pycache__/gone.pyc")); // a build file deleted (" D")
  await sh(dir, "rm", "--quiet", "--cached", "__pycache__/again.pyc"); // "D " and "??"
  await write(dir, "__pycache__/new.pyc", "bytes\n"); // new build output
  await write(dir, "COWORK-STATUS.md", "Task: 1\nOutcome: SHIPPED\n"); // the report
  await write(dir, "NEXT-STEPS.md", "Status: DONE\n"); // paperwork the base lacks

  const said: string[] = [];
  const head = await commitLeftovers(new Git(dir), base, "Task #1: leftovers", {
    log: { step: (m) => said.push(m) },
  });
  assert.equal(head, await sh(dir, "rev-parse", "HEAD"));
  assert.deepEqual(
    (await sh(dir, "show", "--format=", "--name-status", "--no-renames", "HEAD")).split("\n"),
    [
      "D\t__pycache__/again.pyc",
      "D\t__pycache__/gone.pyc",
      "A\tsrc/1.md",
      "A\tsrc/[1].md",
      "M\tsrc/app.txt",
      "D\tsrc/old.txt",
    ],
  );
  assert.equal(await sh(dir, "show", "HEAD:src/app.txt"), "v3");
  // What is left: build output only, untracked (the recreated file and the new one).
  assert.deepEqual(
    (await sh(dir, "status", "--porcelain", "--untracked-files=all")).split("\n"),
    ["?? __pycache__/again.pyc", "?? __pycache__/new.pyc"],
  );
  assert.equal(await Deno.readTextFile(join(dir, "COWORK-STATUS.md")), "Task: 0\n");
  await assert.rejects(Deno.stat(join(dir, "NEXT-STEPS.md")), Deno.errors.NotFound);
  assert.deepEqual(said, [
    "committing what the agent left uncommitted (6 file(s)): __pycache__/again.pyc, __pycache__/gone.pyc, src/1.md, src/[1].md, src/app.txt, src/old.txt",
    "left out build output (relay never commits it for the agent): __pycache__/new.pyc",
  ]);
  // Nothing left to commit: no commit.
  assert.equal(await commitLeftovers(new Git(dir), base, "again"), null);
});

Deno.test("commitLeftovers() leaves out a git repository made inside the worktree, and one under node_modules/ as build output", async () => {
  await using repo = await baseRepo({ "src/app.txt": "v1\n" });
  const { dir, base } = repo;
  await write(dir, "src/app.txt", "v2\n");
  for (const inner of ["web", "node_modules/dep"]) {
    await Deno.mkdir(join(dir, inner), { recursive: true });
    await sh(join(dir, inner), "init", "--quiet");
    await write(dir, `${inner}/index.js`, "x\n");
  }
  const said: string[] = [];
  await commitLeftovers(new Git(dir), base, "leftovers", { log: { step: (m) => said.push(m) } });
  assert.equal(await sh(dir, "show", "--format=", "--name-only", "HEAD"), "src/app.txt");
  assert.deepEqual(said.slice(1), [
    "left out build output (relay never commits it for the agent): node_modules/dep/",
    "left out a git repository the agent made inside the worktree (relay never commits one repository into another; to commit the files, remove the inner .git folder): web/",
  ]);
});
