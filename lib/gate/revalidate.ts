/**
 * Re-verifying a PASS after main moved by product code: the bar runs again on
 * what the merge would produce, in a throwaway worktree. The gate's verdict
 * check calls it (through GateInput.revalidate) only when every other check
 * passes, since it is the one costly step.
 */
import { runBar } from "../bar/run.ts";
import { Git } from "../git/git.ts";
import { inScratchCheckout } from "../git/scratch.ts";
import type { Evidence } from "../protocol/types.ts";

/** A pinned identity for the throwaway preview commit: it is never pushed or kept. */
const PREVIEW_IDENTITY = {
  GIT_AUTHOR_NAME: "relay",
  GIT_AUTHOR_EMAIL: "relay@localhost",
  GIT_COMMITTER_NAME: "relay",
  GIT_COMMITTER_EMAIL: "relay@localhost",
};

export interface RevalidateOptions {
  /** The origin/main sha to merge into. */
  originMain: string;
  head: string;
  bar: readonly string[];
  timeoutMs: number;
  maxBytes: number;
  /** Names of relay's environment the bar commands also get (`bar_env`). */
  passEnv?: readonly string[];
  /**
   * A folder for the scratch worktree (a temp dir; by default the system's); relay makes and
   * removes its own folder inside.
   */
  scratchRoot?: string;
}

export interface Revalidation {
  passed: boolean;
  /** The merge result's tree; "" when main and head conflict (nothing to run the bar on). */
  mergeTree: string;
  evidence: Evidence[];
}

/**
 * Runs the bar on what merging `head` into `originMain` would produce: the
 * merge tree wrapped in a throwaway commit, checked out in a detached scratch
 * worktree (hooks off), removed afterwards without `--force`.
 */
export async function revalidateOnMerge(git: Git, opts: RevalidateOptions): Promise<Revalidation> {
  const merge = await git.mergeTree(opts.originMain, opts.head);
  if (merge.code !== 0) return { passed: false, mergeTree: "", evidence: [] };
  const mergeTree = merge.tree;
  const commit = await git.out(
    [
      "commit-tree",
      mergeTree,
      "-p",
      opts.originMain,
      "-p",
      opts.head,
      "-m",
      "relay: merge preview",
    ],
    { env: PREVIEW_IDENTITY },
  );
  return await inScratchCheckout(
    git,
    commit,
    {
      prefix: "relay-merge-preview-",
      ...(opts.scratchRoot === undefined ? {} : { root: opts.scratchRoot }),
    },
    async (path) => {
      const evidence = await runBar(new Git(path, git.networkTimeoutMs), opts.bar, {
        timeoutMs: opts.timeoutMs,
        maxBytes: opts.maxBytes,
        ...(opts.passEnv ? { passEnv: opts.passEnv } : {}),
      });
      const passed = evidence.length > 0 && evidence.every((e) => e.exit === 0);
      return { passed, mergeTree, evidence };
    },
  );
}
