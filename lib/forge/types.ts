/**
 * A forge is where branches are pushed and pull requests live. Its interface
 * is split by authority: the executor's part can push a task branch and open
 * a PR; only the planner's part can merge or close one. Executor code imports
 * `ExecutorForge` factories only, so it cannot reach a merge.
 */

/** A pull request as relay tracks it. */
export interface PrRef {
  /** Forge id: `#12` on GitHub, the branch name on a plain git remote. */
  id: string;
  branch: string;
  /** The head sha the PR was opened or last updated at. */
  head: string;
  url?: string;
}

export interface OpenPrRequest {
  task: number;
  branch: string;
  head: string;
  base: string;
  title: string;
  body: string;
}

/** What the executor may do on a forge. */
export interface ExecutorForge {
  readonly name: string;
  /** Pushes `branch` at `head` to the remote, never forcing. Throws HoldError when the remote refuses. */
  pushBranch(branch: string, head: string): Promise<void>;
  /** Opens a PR for the branch, or returns the one already open (idempotent). */
  openPr(req: OpenPrRequest): Promise<PrRef>;
}
