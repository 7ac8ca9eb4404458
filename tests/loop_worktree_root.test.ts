/**
 * The worktree root relay compares git's worktree paths with: the real folder, links resolved,
 * as git names it, also when the folder does not exist yet.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { HoldError } from "../lib/errors.ts";
import { checkWorktreeRoot, defaultWorktreeRoot, worktreeRootOf } from "../lib/loop/worktree.ts";

Deno.test("worktreeRootOf() resolves links in the profile's worktree_root, as far as the folder exists, and in the default", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "relay-wt-root-" }));
  try {
    await Deno.mkdir(join(dir, "real"));
    await Deno.symlink(join(dir, "real"), join(dir, "link"));
    assert.equal(worktreeRootOf(join(dir, "link"), "/x/repo"), join(dir, "real"));
    // Not made yet: the part that exists resolved, the rest kept.
    assert.equal(
      worktreeRootOf(join(dir, "link", "a", "b"), "/x/repo"),
      join(dir, "real", "a", "b"),
    );
    assert.equal(
      worktreeRootOf(join(dir, "link", "..", "link", "c"), "/x/repo"),
      join(dir, "real", "c"),
    );
    // No worktree_root: beside the repository, through a linked parent too.
    await Deno.mkdir(join(dir, "real", "repo"));
    assert.equal(
      worktreeRootOf(undefined, join(dir, "link", "repo")),
      join(dir, "real", "repo.relay-worktrees"),
    );
    assert.equal(worktreeRootOf(undefined, "/nowhere/repo"), defaultWorktreeRoot("/nowhere/repo"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a worktree_root that is a link into the repository is refused as inside it", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "relay-wt-root-" }));
  try {
    const repo = join(dir, "repo");
    await Deno.mkdir(join(repo, ".git"), { recursive: true });
    await Deno.mkdir(join(repo, "wt"));
    await Deno.symlink(join(repo, "wt"), join(dir, "outside"));
    const root = worktreeRootOf(join(dir, "outside"), repo);
    assert.throws(
      () => checkWorktreeRoot(root, repo, join(repo, ".git")),
      (e: unknown) => e instanceof HoldError && /inside the repository/.test(e.message),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
