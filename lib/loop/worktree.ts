/**
 * The task worktree: a linked git worktree on branch `task-<n>`, outside the
 * primary tree and outside `.git`, so the primary tree stays on main and
 * agents' sandboxes (which treat `.git` as read-only) can write to it.
 */
import { basename, dirname, join, relative, resolve } from "node:path";
import { HoldError } from "../errors.ts";
import type { Git } from "../git/git.ts";

export interface WorktreeEntry {
  path: string;
  head: string | null;
  branch: string | null;
}

/** Parses `git worktree list --porcelain -z`. */
export function parseWorktreeList(out: string): WorktreeEntry[] {
  const entries: WorktreeEntry[] = [];
  let current: WorktreeEntry | null = null;
  for (const field of out.split("\0")) {
    if (field === "") {
      if (current) entries.push(current);
      current = null;
      continue;
    }
    const space = field.indexOf(" ");
    const key = space === -1 ? field : field.slice(0, space);
    const value = space === -1 ? "" : field.slice(space + 1);
    if (key === "worktree") current = { path: value, head: null, branch: null };
    else if (current && key === "HEAD") current.head = value;
    else if (current && key === "branch") current.branch = value.replace(/^refs\/heads\//, "");
  }
  if (current) entries.push(current);
  return entries;
}

/** Default home for task worktrees: a sibling folder of the repo, `<repo>.relay-worktrees/`. */
export function defaultWorktreeRoot(repoRoot: string): string {
  return join(dirname(repoRoot), `${basename(repoRoot)}.relay-worktrees`);
}

function isInside(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !rel.startsWith("/"));
}

/** Refuses a worktree root inside the primary tree or the git dir. */
export function checkWorktreeRoot(root: string, repoRoot: string, commonDir: string): void {
  const abs = resolve(root);
  if (isInside(abs, repoRoot) || isInside(abs, commonDir)) {
    throw new HoldError(
      `Cannot use "${abs}" for task worktrees: it is inside the repository`,
      `Set worktree_root in the operator profile to a folder outside "${repoRoot}".`,
      { recheck: true },
    );
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes sure the worktree for `branch` exists at `path` and is on that branch.
 * Creates the branch from `start` when neither a local nor a remote branch exists.
 */
export async function ensureWorktree(
  primary: Git,
  opts: { path: string; branch: string; remote: string; start: string },
): Promise<"created" | "reused"> {
  const { path, branch, remote, start } = opts;
  const list = parseWorktreeList(
    await primary.out(["worktree", "list", "--porcelain", "-z"]),
  );
  const here = list.find((w) => resolve(w.path) === resolve(path));
  if (here) {
    // Missing first: a folder moved aside, as the advice below says, is not "on" any branch.
    if (!(await exists(path))) {
      throw new HoldError(
        `The task worktree "${path}" is registered but its folder is missing`,
        `Run "git worktree prune" in the repository, then rerun (relay keeps the commits of every agent turn under refs/relay/anchors/).`,
        { recheck: true },
      );
    }
    if (here.branch !== branch) {
      throw new HoldError(
        `The task worktree "${path}" is on "${here.branch ?? "a detached HEAD"}", not "${branch}"`,
        `Check out "${branch}" there (git -C "${path}" switch ${branch}) or move the folder aside, then rerun (relay keeps the commits of every agent turn under refs/relay/anchors/).`,
        { recheck: true },
      );
    }
    return "reused";
  }
  const elsewhere = list.find((w) => w.branch === branch);
  if (elsewhere) {
    throw new HoldError(
      `Branch "${branch}" is checked out in "${elsewhere.path}", not in the task worktree "${path}"`,
      `Switch that tree to another branch, or remove that worktree (keeping its work), then rerun.`,
      { recheck: true },
    );
  }
  if (await exists(path)) {
    throw new HoldError(
      `Cannot create the task worktree: "${path}" already exists and is not a worktree of this repository`,
      `Move "${path}" aside, then rerun.`,
      { recheck: true },
    );
  }
  const local = await primary.resolve(`refs/heads/${branch}`);
  const remoteBranch = await primary.resolve(`refs/remotes/${remote}/${branch}`);
  if (local) {
    await primary.run(["worktree", "add", "--quiet", "--", path, branch]);
  } else if (remoteBranch) {
    await primary.run([
      "worktree",
      "add",
      "--quiet",
      "--no-track",
      "-b",
      branch,
      "--",
      path,
      remoteBranch,
    ]);
  } else {
    await primary.run([
      "worktree",
      "add",
      "--quiet",
      "--no-track",
      "-b",
      branch,
      "--",
      path,
      start,
    ]);
  }
  return "created";
}
