/**
 * Build output and caches: what a test run or an install leaves in a tree and
 * nobody means to commit. relay never commits these on the agent's behalf
 * (the repo config's `never_commit` adds globs), and a reviewer's run that
 * only adds such files to its worktree does not void its turn.
 *
 * Only unambiguous names are built in. Left out on purpose, because some
 * products commit them or use the name for source: `dist/`, `build/`, `out/`,
 * `target/`, `bin/`, `lib/`, `vendor/`, `venv/`, `*.obj` (also a 3D model
 * format), `*.so`/`*.a`/`*.dll` (prebuilt libraries), `.idea/`, `.vscode/`.
 * `coverage/` is built in at the root only (where jest, nyc and c8 write it).
 */
import { join } from "../path.ts";
import { normalizePath } from "../git/glob.ts";
import { type BuildOutputMatcher } from "../git/build_output.ts";
import { type Git, NO_SUBMODULE_STATUS } from "../git/git.ts";

/**
 * Paths named for a message: one entry per folder a folder glob matched (with
 * its file count; a folder with one file is named by that file), at most
 * `max` entries, then how many more.
 */
export function describePaths(
  paths: readonly string[],
  matcher: BuildOutputMatcher,
  max = 10,
): string {
  const groups = new Map<string, string[]>();
  for (const path of paths) {
    const entry = matcher.entry(path);
    groups.set(entry, [...(groups.get(entry) ?? []), normalizePath(path)]);
  }
  const entries = [...groups].map(([entry, files]) =>
    files.length === 1 ? files[0]! : `${entry} (${files.length} files)`
  );
  const shown = entries.slice(0, max).join(", ");
  return entries.length > max ? `${shown} and ${entries.length - max} more` : shown;
}

/** The path of a `git status --porcelain=v1` line (quotes of unusual names dropped). */
function statusPath(line: string): string {
  const path = line.slice(3);
  const arrow = path.indexOf(" -> ");
  const last = arrow === -1 ? path : path.slice(arrow + 4);
  return last.startsWith('"') && last.endsWith('"') ? last.slice(1, -1) : last;
}

/**
 * `git status --porcelain=v1` output without untracked build output: a
 * reviewer that runs the tests leaves `__pycache__/` or `.pytest_cache/`
 * behind, relay never commits those, and the turn is not void for them.
 */
export function withoutUntrackedBuildOutput(status: string, matcher: BuildOutputMatcher): string {
  return status.split("\n").filter((line) =>
    !(line.startsWith("?? ") && matcher.match(statusPath(line)) !== undefined)
  ).join("\n");
}

/**
 * Why a reviewer's turn is void, from its worktree's status before and after
 * (`git status --porcelain=v1`): when it rewrote build output the branch
 * tracks, that cause and the fix (the reviewer did nothing wrong: the branch
 * carries files a test run rewrites); otherwise the reviewer changed its worktree.
 */
export function voidCause(
  before: string,
  after: string,
  matcher: BuildOutputMatcher,
  pr: { task: number; branch: string },
  /** Who took the turn, as the reason names it: "the reviewer", "the security stage", … */
  who = "the reviewer",
): { cause: string; twice: string; next?: string } {
  const lines = (s: string) => new Set(s.split("\n").filter((l) => l !== ""));
  const was = lines(before);
  const now = lines(after);
  const changed = [...now].filter((l) => !was.has(l)).concat([...was].filter((l) => !now.has(l)));
  const rewritten = [
    ...new Set(
      changed.filter((l) => !l.startsWith("?? ")).map(statusPath).filter((p) =>
        matcher.match(p) !== undefined
      ),
    ),
  ].sort();
  if (rewritten.length === 0) {
    return {
      cause: `${who} changed its worktree`,
      twice: `${who} changed its worktree twice`,
    };
  }
  const named = describePaths(rewritten, matcher);
  const entries = [...new Set(rewritten.map((p) => matcher.entry(p)))];
  const ignore = [...new Set(rewritten.map((p) => matcher.match(p)!))];
  return {
    cause: `${who}'s run rewrote tracked build output: ${named}`,
    twice: `${who}'s run rewrote tracked build output twice: ${named}`,
    next: `${pr.branch} tracks build output that running its checks rewrites. Remove it from ` +
      `the branch and add it to .gitignore (relay never commits these on the agent's behalf): ` +
      `queue a fix brief (Kind: fix, Fixes: ${pr.task}, Branch: ${pr.branch}) whose goal is ` +
      `"git rm -r --cached -- ${entries.join(" ")}" and ${
        ignore.map((g) => `"${g}"`).join(", ")
      } in .gitignore (relay inbox add, then relay promote), then run "relay resume".`,
  };
}

/**
 * Before a finished task's worktree is removed: when the only things in it
 * that git would keep are untracked build output (which relay left there,
 * never committing it), deletes those, so plain `git worktree remove` (never
 * forced) can go ahead. Anything else untracked or changed: nothing is
 * deleted, and the worktree stays for a person. Returns what was deleted, and whether status
 * listed nothing at all (then nothing was).
 */
export async function clearUntrackedBuildOutput(
  wt: Git,
  matcher: BuildOutputMatcher,
): Promise<{ removed: string[]; clean: boolean }> {
  // "normal" lists a wholly untracked folder once (node_modules/), not file by file.
  const entries = (await wt.out([
    "status",
    "--porcelain=v1",
    "-z",
    "--untracked-files=normal",
    NO_SUBMODULE_STATUS,
  ]))
    .split("\0").filter((e) => e !== "");
  if (entries.length === 0) return { removed: [], clean: true };
  const paths = entries.map((e) => e.startsWith("?? ") ? e.slice(3) : null);
  if (paths.some((p) => p === null || matcher.match(p) === undefined)) {
    return { removed: [], clean: false };
  }
  for (const path of paths as string[]) {
    await Deno.remove(join(wt.cwd, path), { recursive: true });
  }
  return { removed: paths as string[], clean: false };
}
