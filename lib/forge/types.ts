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
  /** Open PRs (reading is not merging): the executor does not start while another is in flight. */
  listOpen(): Promise<PrRef[]>;
  /**
   * Whether the PR for `branch` was merged or closed (by relay or a person), or null when it
   * is open or there is none: the executor never works on a branch whose PR is settled.
   */
  settled(branch: string): Promise<"merged" | "closed" | null>;
}

/** A PR's state as the planner sees it on the forge. */
export interface PrStatus {
  id: string;
  branch: string;
  /** The head sha the forge has for the PR now. */
  head: string;
  state: "open" | "merged" | "closed";
  url?: string;
  /**
   * `machines: split`: relay merged it, on whichever reviewer machine (the PR record on the
   * remote says so), so another reviewer machine does not take it for a person's merge.
   */
  mergedBy?: "relay";
}

/** What the planner (reviewer) may do on a forge. Executor code never imports this. */
export interface PlannerForge {
  readonly name: string;
  /** The PR for a branch, or null when there is none. */
  find(branch: string): Promise<PrStatus | null>;
  /** Every open PR relay knows of: the gate allows one in flight. */
  listOpen(): Promise<PrStatus[]>;
  /**
   * Merges the PR server side only if its head is still `head` (compare-and-swap).
   * Returns the merge commit sha, or "moved" when the head or the base moved under it.
   */
  merge(
    pr: PrStatus,
    head: string,
    message: string,
    /** origin/main as the gate saw it: a merge onto a main moved by product code since is refused. */
    gatedBase?: string,
  ): Promise<{ merged: true; sha: string } | { merged: false; why: string }>;
  /** Records a verdict where people look (a PR review on GitHub; the PR record on plain git). */
  recordVerdict(pr: PrStatus, head: string, text: string): Promise<void>;
  /** Marks a PR merged out of band as merged (plain git needs the record updated). */
  noteMerged(pr: PrStatus): Promise<void>;
  /** Closes a PR without merging it; the branch and its commits stay. A person's decision. */
  close(pr: PrStatus, comment: string): Promise<void>;
}
