/**
 * After the agent's turn: commit what it left uncommitted on the task branch
 * (product files only), and make sure the branch's net diff never touches the
 * paperwork, whatever the agent committed.
 */
import { join } from "node:path";
import type { Git } from "../git/git.ts";
import { PAPERWORK_PATHS } from "../state/paths.ts";

/** Pathspecs that exclude the paperwork from `git add`. */
const EXCLUDE_PAPERWORK = PAPERWORK_PATHS.map((p) => `:(exclude,top)${p}`);

/**
 * Copies every paperwork file that differs from HEAD in the worktree (the
 * agent's report above all) into `saveDir`, so nothing an agent wrote is lost
 * when the worktree is cleaned. Returns the relative paths saved.
 */
export async function savePaperwork(wt: Git, saveDir: string): Promise<string[]> {
  const out = await wt.out([
    "status",
    "--porcelain=v1",
    "-z",
    "--untracked-files=all",
    "--",
    ...PAPERWORK_PATHS,
  ]);
  const saved: string[] = [];
  for (const entry of out.split("\0")) {
    if (entry.length < 4) continue;
    const path = entry.slice(3);
    try {
      const data = await Deno.readFile(join(wt.cwd, path));
      const dest = join(saveDir, "worktree-paperwork", path);
      await Deno.mkdir(join(dest, ".."), { recursive: true });
      await Deno.writeFile(dest, data);
      saved.push(path);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound) && !(err instanceof Deno.errors.IsADirectory)) {
        throw err;
      }
    }
  }
  return saved;
}

/**
 * Restores every paperwork path to its version at `base` (index and working
 * tree), stages all other changes, and commits them in one commit when there
 * is anything to commit. Returns the new head, or null when nothing changed.
 * Untracked paperwork files are deleted: `savePaperwork` has kept a copy.
 */
export async function commitLeftovers(
  wt: Git,
  base: string,
  message: string,
): Promise<string | null> {
  // Paperwork the branch changed, committed or not.
  const changed =
    (await wt.out(["diff", "--name-only", "--no-renames", "-z", base, "--", ...PAPERWORK_PATHS]))
      .split("\0").filter((p) => p !== "");
  for (const path of changed) {
    const atBase = await wt.ok(["cat-file", "-e", `${base}:${path}`]);
    if (atBase) {
      await wt.run(["checkout", "--quiet", base, "--", path]);
    } else {
      await wt.run(["rm", "--quiet", "--cached", "--ignore-unmatch", "--", path]);
      await Deno.remove(join(wt.cwd, path)).catch(() => {});
    }
  }
  const untracked =
    (await wt.out(["ls-files", "--others", "--exclude-standard", "-z", "--", ...PAPERWORK_PATHS]))
      .split("\0").filter((p) => p !== "");
  for (const path of untracked) await Deno.remove(join(wt.cwd, path)).catch(() => {});

  await wt.run(["add", "--all", "--", ".", ...EXCLUDE_PAPERWORK]);
  const staged = await wt.run(["diff", "--cached", "--quiet"], { allowFail: true });
  if (staged.code === 0) return null;
  await wt.run(["commit", "--quiet", "--no-verify", "-m", message]);
  return await wt.head();
}
