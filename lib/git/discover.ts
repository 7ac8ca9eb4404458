/**
 * Finds the repository around a folder by reading files only: no git process.
 * This is what lets the idle tick finish without starting anything.
 */
import { dirname, isAbsolute, join, resolve } from "../path.ts";

export interface RepoPaths {
  /** The working tree root (the folder holding `.git`). */
  root: string;
  /** This tree's git dir (`.git`, or `.git/worktrees/<name>` for a linked worktree). */
  gitDir: string;
  /** The common git dir shared by all worktrees. */
  commonDir: string;
}

function readTextOrNull(path: string): string | null {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return null;
  }
}

function isDir(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/** Walks up from `start` to the first folder with a `.git` dir or file. Returns null outside a repo. */
export function discoverRepo(start: string): RepoPaths | null {
  let dir = resolve(start);
  while (true) {
    const dotGit = join(dir, ".git");
    if (isDir(dotGit)) return { root: dir, gitDir: dotGit, commonDir: dotGit };
    const pointer = readTextOrNull(dotGit);
    if (pointer !== null) {
      const match = /^gitdir:\s*(.+?)\s*$/m.exec(pointer);
      if (match?.[1]) {
        const gitDir = isAbsolute(match[1]) ? match[1] : resolve(dir, match[1]);
        const common = readTextOrNull(join(gitDir, "commondir"))?.trim();
        const commonDir = common ? resolve(gitDir, common) : gitDir;
        return { root: dir, gitDir, commonDir };
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/**
 * HEAD of the tree around `dir` as git's files say it plainly: a detached commit id (`id`), or
 * the branch's ref and, when its loose or packed ref file holds one, its commit id. Null when
 * they say anything else (no repository, a symbolic ref to another symbolic ref, another ref
 * backend): then git is asked. Git reads the same files, and writes a ref by renaming a lock
 * file over it, so a read never sees half of one.
 */
export function headFromFiles(
  dir: string,
): { id: string; branch: null } | { id: string | null; branch: string } | null {
  const repo = discoverRepo(dir);
  const head = repo && readHead(repo.gitDir);
  if (!head) return null;
  if (head.branch === null) return head;
  return { id: readRefFile(repo.commonDir, `refs/heads/${head.branch}`), branch: head.branch };
}

/** What `<gitDir>/HEAD` says plainly: a detached commit id, or a branch; null for anything else. */
function readHead(gitDir: string): { id: string; branch: null } | { branch: string } | null {
  const head = readTextOrNull(join(gitDir, "HEAD"))?.trimEnd();
  if (head === undefined) return null;
  if (FULL_ID.test(head)) return { id: head, branch: null };
  const branch = /^ref: refs\/heads\/(\S+)$/.exec(head)?.[1];
  return branch === undefined ? null : { branch };
}

/** The branch HEAD points at (`main`), or null when detached. Reads `.git/HEAD` directly. */
export function currentBranch(gitDir: string): string | null {
  return readHead(gitDir)?.branch ?? null;
}

/** Names the merge, rebase, cherry-pick or revert in progress in this tree, or null. */
export function operationInProgress(gitDir: string): string | null {
  const markers: [string, string][] = [
    ["MERGE_HEAD", "a merge"],
    ["rebase-merge", "a rebase"],
    ["rebase-apply", "a rebase or am"],
    ["CHERRY_PICK_HEAD", "a cherry-pick"],
    ["REVERT_HEAD", "a revert"],
    ["BISECT_LOG", "a bisect"],
  ];
  for (const [file, what] of markers) {
    try {
      Deno.statSync(join(gitDir, file));
      return what;
    } catch {
      // not present
    }
  }
  return null;
}

/**
 * A full object id (SHA-1 or SHA-256), as git writes one: what it names never changes, so
 * what git said of it can be kept. (A 64-hex string in a SHA-1 repository would be read as a
 * ref name; relay passes only ids git gave it.)
 */
export const FULL_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/**
 * The object id a ref holds, read from the ref files in `commonDir` (a loose ref, else
 * packed-refs), or null: no such ref, a symbolic ref, a ref store relay cannot read this way
 * (reftable). For a guess only — what git answers is what counts: a caller checks the id
 * against git's before it relies on anything it did with it.
 */
export function readRefFile(commonDir: string, ref: string): string | null {
  const loose = readTextOrNull(join(commonDir, ref));
  if (loose !== null) {
    const id = loose.trim();
    return FULL_ID.test(id) ? id : null;
  }
  const packed = readTextOrNull(join(commonDir, "packed-refs"));
  if (packed === null) return null;
  for (const line of packed.split("\n")) {
    const space = line.indexOf(" ");
    if (space > 0 && line.slice(space + 1).trimEnd() === ref) {
      const id = line.slice(0, space);
      return FULL_ID.test(id) ? id : null;
    }
  }
  return null;
}
