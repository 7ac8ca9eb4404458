/**
 * primaryFiles(): what the executor's guard records of the primary tree's changed paths, before
 * and after a turn. A path that is not a file is told, never read (a named pipe would never end);
 * a repository inside the tree is read file by file, a submodule's own git folder included.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Git } from "../lib/git/git.ts";
import { primaryFiles } from "../lib/loop/turn_guard.ts";
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
    const sub = join(dir, "sub");
    await repoAt(sub);
    await Deno.writeTextFile(join(sub, "f.txt"), "f\n");
    await git(sub, "add", "f.txt");
    await git(sub, "commit", "--quiet", "-m", "sub");
    await git(
      primary,
      "-c",
      "protocol.file.allow=always",
      "submodule",
      "add",
      "--quiet",
      sub,
      "lib",
    );
    await git(primary, "commit", "--quiet", "-m", "lib");
    await identify(join(primary, "lib"));
    await Deno.writeTextFile(join(primary, "lib", "f.txt"), "changed\n");
    const before = await primaryFiles(new Git(primary));
    assert.ok(before["lib"], JSON.stringify(before));
    await git(join(primary, "lib"), "commit", "--quiet", "-am", "the agent's");
    const after = await primaryFiles(new Git(primary));
    assert.notEqual(after["lib"], before["lib"], "the commit changed the submodule's git folder");
  });
});
