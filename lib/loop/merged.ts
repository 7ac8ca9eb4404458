/**
 * Whether a task's branch already reached main outside relay (a person merged
 * it by hand). Both ticks ask before they act on a PR's branch: the executor
 * before a turn on it, the reviewer before a merge. A branch whose work main
 * already has is never worked on or merged again.
 */
import type { Git } from "../git/git.ts";
import { readTask, type RecordDirs } from "../state/tasks.ts";

/**
 * Merged means main has the head, and did not have it when the executor began:
 * a head main already had then (a branch with no new commit) is an empty PR,
 * not a merge. The executor records that starting point (origin/main when the
 * attempt began) in the implementation receipt of the task that shipped the
 * head (any round of `task`, the PR's task). With no receipt for the head (it shipped from another clone), main
 * having it is taken as merged.
 */
export async function mergedIntoMain(
  git: Git,
  head: string,
  originMain: string,
  dirs: RecordDirs,
  task: number,
): Promise<boolean> {
  if (!(await git.isAncestor(head, originMain))) return false;
  const receipt = (await readTask(dirs, task)).rounds.flatMap((r) => r.receipts)
    .filter((r) => r.stage === "implementation" && r.head === head && r.base).at(-1);
  if (receipt?.base) return !(await git.isAncestor(head, receipt.base));
  return true;
}

/** The first of `heads` that is merged into `originMain` (see mergedIntoMain), or null. */
export async function firstMerged(
  git: Git,
  heads: readonly string[],
  originMain: string,
  dirs: RecordDirs,
  task: number,
): Promise<string | null> {
  for (const head of new Set(heads.filter((h) => h !== ""))) {
    if (await mergedIntoMain(git, head, originMain, dirs, task)) return head;
  }
  return null;
}
