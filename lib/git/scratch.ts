/**
 * A throwaway detached checkout of one commit, for a command relay runs itself
 * (the bar on a would-be merge, the profile's test_command on a head): hooks
 * off, in a temporary folder, removed afterwards with the folder and
 * `git worktree prune` — never `--force` on a worktree of the user's. Only what
 * the command wrote there is lost; the commit stays where it was.
 */
import { join } from "../path.ts";
import type { Git } from "./git.ts";

export async function inScratchCheckout<T>(
  git: Git,
  commit: string,
  opts: { prefix: string; root?: string },
  body: (path: string) => Promise<T>,
): Promise<T> {
  const scratch = await Deno.makeTempDir({
    prefix: opts.prefix,
    ...(opts.root !== undefined ? { dir: opts.root } : {}),
  });
  const path = join(scratch, "tree");
  try {
    await git.run([
      "-c",
      "core.hooksPath=/dev/null",
      "worktree",
      "add",
      "--detach",
      "--quiet",
      "--",
      path,
      commit,
    ]);
    return await body(path);
  } finally {
    await Deno.remove(scratch, { recursive: true }).catch(() => {});
    await git.run(["worktree", "prune"], { allowFail: true });
  }
}
