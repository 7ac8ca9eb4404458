/**
 * primaryFiles(): what the executor's guard records of the primary tree's changed paths, before
 * and after a turn. A path that is not a file is told, never read (a named pipe would never end);
 * a repository inside the tree is read file by file, a submodule's own git folder included.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Git } from "../lib/git/git.ts";
import { HIDDEN_FILES, primaryFiles } from "../lib/loop/turn_guard.ts";
import { git, GIT_ENV, identify, initRepo } from "./helpers/git_env.ts";

/** A new repository in a new folder. */
async function repoAt(path: string): Promise<void> {
  await Deno.mkdir(path);
  await initRepo(path);
}

/** A repository at `<dir>/primary` (the primary tree), its git run in the tests' pinned environment. */
async function inRepo(fn: (primary: string, dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "relay-primary-files-" });
  const saved = Object.fromEntries(Object.keys(GIT_ENV).map((k) => [k, Deno.env.get(k)]));
  for (const [k, v] of Object.entries(GIT_ENV)) Deno.env.set(k, v);
  try {
    const primary = join(dir, "primary");
    await repoAt(primary);
    await git(primary, "commit", "--quiet", "--allow-empty", "-m", "start");
    await fn(primary, dir);
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) Deno.env.delete(k);
      else Deno.env.set(k, v);
    }
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("primaryFiles() tells a tracked file turned into a named pipe, and a link to a folder, without reading them", async () => {
  await inRepo(async (primary) => {
    await Deno.writeTextFile(join(primary, "a.txt"), "a\n");
    await git(primary, "add", "a.txt");
    await git(primary, "commit", "--quiet", "-m", "a");
    await Deno.remove(join(primary, "a.txt"));
    const fifo = await new Deno.Command("mkfifo", { args: [join(primary, "a.txt")] }).output();
    assert.equal(fifo.code, 0);
    await Deno.mkdir(join(primary, "folder"));
    await Deno.writeTextFile(join(primary, "folder", "f.txt"), "f\n");
    await Deno.symlink("folder", join(primary, "link"));
    const files = await primaryFiles(new Git(primary));
    assert.deepEqual(files["a.txt"], "(not a file)");
    assert.deepEqual(files["link"], "(symlink) folder");
    assert.match(files["folder/f.txt"] ?? "", /^[0-9a-f]{64}$/);
  });
});

Deno.test("primaryFiles() reads a file git is told not to look at (assume-unchanged, skip-worktree): setting the flag or editing the file under it is a change", async () => {
  await inRepo(async (primary) => {
    for (const name of ["hook.sh", "other.sh"]) {
      await Deno.writeTextFile(join(primary, name), "echo hook\n");
    }
    await git(primary, "add", "hook.sh", "other.sh");
    await git(primary, "commit", "--quiet", "-m", "hooks");
    const before = await primaryFiles(new Git(primary));
    assert.deepEqual(Object.keys(before), []);
    await git(primary, "update-index", "--assume-unchanged", "hook.sh");
    await git(primary, "update-index", "--skip-worktree", "other.sh");
    const flagged = await primaryFiles(new Git(primary));
    assert.deepEqual(Object.keys(flagged), [HIDDEN_FILES]);
    await git(primary, "update-index", "--no-skip-worktree", "other.sh");
    const one = await primaryFiles(new Git(primary));
    assert.notEqual(one[HIDDEN_FILES], flagged[HIDDEN_FILES], "a flag cleared");
    // An edit git's status does not show.
    await Deno.writeTextFile(join(primary, "hook.sh"), "touch /tmp/evil\n");
    assert.equal(await git(primary, "status", "--porcelain"), "");
    const edited = await primaryFiles(new Git(primary));
    assert.notEqual(edited[HIDDEN_FILES], one[HIDDEN_FILES], "an edit under the flag");
  });
});

Deno.test("primaryFiles() reads a clone inside the tree without reading a named pipe in it", async () => {
  await inRepo(async (primary) => {
    const nested = join(primary, "vendor");
    await repoAt(nested);
    await Deno.writeTextFile(join(nested, "f.txt"), "f\n");
    const fifo = await new Deno.Command("mkfifo", { args: [join(nested, "pipe")] }).output();
    assert.equal(fifo.code, 0);
    const before = await primaryFiles(new Git(primary));
    assert.match(before["vendor/"] ?? "", /^\(repository\) [0-9a-f]{64}$/);
    await Deno.writeTextFile(join(nested, "f.txt"), "g\n");
    assert.notEqual((await primaryFiles(new Git(primary)))["vendor/"], before["vendor/"]);
  });
});

Deno.test("primaryFiles() sees a commit in a submodule that was already changed: its git folder, named by its .git file, is read too", async () => {
  await inRepo(async (primary, dir) => {
    await addSubmodule(primary, dir, "f\n");
    await identify(join(primary, "lib"));
    await Deno.writeTextFile(join(primary, "lib", "f.txt"), "changed\n");
    const before = await primaryFiles(new Git(primary));
    assert.ok(before["lib"], JSON.stringify(before));
    await git(join(primary, "lib"), "commit", "--quiet", "-am", "the agent's");
    const after = await primaryFiles(new Git(primary));
    assert.notEqual(after["lib"], before["lib"], "the commit changed the submodule's git folder");
  });
});

/** Makes `<dir>/sub` (one file, f.txt, holding `text`) the primary tree's submodule `lib`, committed. */
async function addSubmodule(primary: string, dir: string, text: string): Promise<void> {
  const sub = join(dir, "sub");
  await repoAt(sub);
  await Deno.writeTextFile(join(sub, "f.txt"), text);
  await git(sub, "add", "f.txt");
  await git(sub, "commit", "--quiet", "-m", "sub");
  await git(primary, "-c", "protocol.file.allow=always", "submodule", "add", "--quiet", sub, "lib");
  await git(primary, "commit", "--quiet", "-m", "lib");
}

/**
 * A primary tree with a submodule `lib` (from `<dir>/sub`) whose git folder has a clean filter
 * planted in it, as an agent would: the filter leaves `<dir>/ran` if git ever runs it. Its file
 * is then rewritten at the same size with a new time, so that a status inside the submodule
 * would run the filter to tell whether the file changed.
 */
async function withPlantedSubmodule(
  fn: (primary: string, dir: string, ran: string) => Promise<void>,
): Promise<void> {
  await inRepo(async (primary, dir) => {
    await addSubmodule(primary, dir, "one\n");
    const ran = join(dir, "ran");
    await fn(primary, dir, ran);
  });
}

/** Plants a clean filter, for every file, in the git folder `gitDir`. */
async function plantFilter(gitDir: string, ran: string): Promise<void> {
  await git(
    gitDir,
    "config",
    "--file",
    join(gitDir, "config"),
    "filter.x.clean",
    `sh -c 'echo ran >> "${ran}"; cat'`,
  );
  await Deno.mkdir(join(gitDir, "info"), { recursive: true });
  await Deno.writeTextFile(join(gitDir, "info", "attributes"), "* filter=x\n");
}

/** The same size, another content, another time: git must read the file to tell. */
async function sameSizeEdit(file: string): Promise<void> {
  await Deno.writeTextFile(file, "two\n");
  await Deno.utime(file, 946684800, 946684800);
}

Deno.test("primaryFiles() never runs git inside a submodule: a filter planted in its git folder does not run, and the edit is seen", async () => {
  await withPlantedSubmodule(async (primary, _dir, ran) => {
    const before = await primaryFiles(new Git(primary));
    assert.match(
      before["lib"] ?? "",
      /^\(repository\) [0-9a-f]{64}$/,
      "an unchanged submodule is read too",
    );
    await plantFilter(join(primary, ".git", "modules", "lib"), ran);
    await sameSizeEdit(join(primary, "lib", "f.txt"));
    // .gitmodules' own `ignore` does not hide it either.
    await git(primary, "config", "--file", ".gitmodules", "submodule.lib.ignore", "none");
    const after = await primaryFiles(new Git(primary));
    assert.equal(await Deno.stat(ran).then(() => "ran", () => "never ran"), "never ran");
    assert.notEqual(after["lib"], before["lib"]);
  });
});

Deno.test("primaryFiles() never runs git in the git folder a submodule's .git file is turned to, and sees the turn", async () => {
  await withPlantedSubmodule(async (primary, dir, ran) => {
    const before = await primaryFiles(new Git(primary));
    // A clone of its own, whose index knows f.txt: a status there would hash the file.
    const clone = join(dir, "elsewhere");
    await git(dir, "clone", "--quiet", join(dir, "sub"), clone);
    const elsewhere = join(clone, ".git");
    await plantFilter(elsewhere, ran);
    await Deno.writeTextFile(join(primary, "lib", ".git"), `gitdir: ${elsewhere}\n`);
    await sameSizeEdit(join(primary, "lib", "f.txt"));
    const after = await primaryFiles(new Git(primary));
    assert.equal(await Deno.stat(ran).then(() => "ran", () => "never ran"), "never ran");
    assert.notEqual(after["lib"], before["lib"]);
  });
});
