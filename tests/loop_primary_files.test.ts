/**
 * primaryFiles(): what the executor's guard records of the primary tree's changed paths, before
 * and after a turn. A path that is not a file is told, never read (a named pipe would never end).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Git } from "../lib/git/git.ts";
import { primaryFiles } from "../lib/loop/turn_guard.ts";
import { git, GIT_ENV, initRepo } from "./helpers/git_env.ts";

Deno.test("primaryFiles() tells a tracked file turned into a named pipe, and a link to a folder, without reading them", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-primary-files-" });
  const saved = Object.fromEntries(Object.keys(GIT_ENV).map((k) => [k, Deno.env.get(k)]));
  for (const [k, v] of Object.entries(GIT_ENV)) Deno.env.set(k, v);
  try {
    await initRepo(dir);
    await Deno.writeTextFile(join(dir, "a.txt"), "a\n");
    await git(dir, "add", "a.txt");
    await git(dir, "commit", "--quiet", "-m", "a");
    await Deno.remove(join(dir, "a.txt"));
    const fifo = await new Deno.Command("mkfifo", { args: [join(dir, "a.txt")] }).output();
    assert.equal(fifo.code, 0);
    await Deno.mkdir(join(dir, "folder"));
    await Deno.writeTextFile(join(dir, "folder", "f.txt"), "f\n");
    await Deno.symlink("folder", join(dir, "link"));
    const files = await primaryFiles(new Git(dir));
    assert.deepEqual(files["a.txt"], "(not a file)");
    assert.deepEqual(files["link"], "(symlink) folder");
    assert.match(files["folder/f.txt"] ?? "", /^[0-9a-f]{64}$/);
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) Deno.env.delete(k);
      else Deno.env.set(k, v);
    }
    await Deno.remove(dir, { recursive: true });
  }
});
