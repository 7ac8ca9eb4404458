/**
 * A submodule in one of relay's worktrees, as an agent or a bar command would initialize it
 * (git refuses to move such a worktree), and the look that it still works after relay moved
 * the worktree.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { Scene } from "./scene.ts";

/**
 * A submodule `lib` added in `worktree` (of the clone at `clone`), with a file of its own
 * committed nowhere (`lib/local.txt`). The clone's .git/config is kept as it was: a change
 * there is one the turn guard refuses (a person who set submodules up did it before the turn;
 * `submodule add` here writes it anew).
 */
export async function addSubmodule(scene: Scene, clone: string, worktree: string): Promise<void> {
  const sub = join(scene.dir, "sub");
  await scene.git(scene.dir, ["init", "--quiet", "-b", "main", sub]);
  await scene.git(sub, ["commit", "--quiet", "--allow-empty", "-m", "sub"]);
  const config = join(clone, ".git", "config");
  const before = await Deno.readTextFile(config);
  const add = ["-c", "protocol.file.allow=always", "submodule", "add", "--quiet", sub, "lib"];
  await scene.git(worktree, add);
  await Deno.writeTextFile(config, before);
  await Deno.writeTextFile(join(worktree, "lib", "local.txt"), "only here\n");
}

/** The worktree at `dir` (moved by relay) and its submodule `lib` work, nothing of it lost. */
export async function assertSubmoduleWorks(scene: Scene, dir: string): Promise<void> {
  const status = await scene.git(dir, ["status", "--porcelain"]);
  assert.match(status.stdout, /^A {2}\.gitmodules$/m, status.stdout);
  assert.equal(await Deno.readTextFile(join(dir, "lib", "local.txt")), "only here\n");
  const inSub = await scene.git(join(dir, "lib"), ["status", "--porcelain"]);
  assert.equal(inSub.stdout, "?? local.txt\n");
  assert.equal(
    await scene.out(["rev-parse", "--show-toplevel"], join(dir, "lib")),
    join(dir, "lib"),
  );
}
