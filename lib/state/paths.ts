/**
 * Where relay keeps its own state: under the repository's git common dir, so
 * it is shared by every worktree, never committed, and out of agents' reach
 * (their sandboxes treat `.git` as read-only).
 */
import { join } from "../path.ts";

export interface StatePaths {
  /** `<common>/relay` */
  dir: string;
  /** Kernel lock for the executor tick. Never deleted. */
  pollLock: string;
  /** Kernel lock for the reviewer tick. Never deleted. */
  reviewLock: string;
  /** The journal of the tick in progress (one task at a time). */
  journal: string;
  /** A HOLD that waits for a person. */
  hold: string;
  /** `relay pause`: no tick starts anything while it exists. */
  pause: string;
  /** Per-run folders: logs, brief copy, report, evidence. */
  runs: string;
  /** Per-task records: attempts, results. */
  tasks: string;
  /** The plain-git forge's PR records. */
  prs: string;
  /** Verdicts and what the planner did with them. */
  reviews: string;
  /** The reviewer tick's journal. */
  reviewJournal: string;
  /**
   * `machines: split`: a journaled run another machine did instead, being set aside
   * (lib/loop/supersede.ts). Written before anything is done, removed once it is all done.
   */
  setAside: string;
}

export function statePaths(commonDir: string): StatePaths {
  const dir = join(commonDir, "relay");
  return {
    dir,
    pollLock: join(dir, "poll.lock"),
    reviewLock: join(dir, "review.lock"),
    journal: join(dir, "journal.json"),
    hold: join(dir, "hold.json"),
    pause: join(dir, "paused.json"),
    runs: join(dir, "runs"),
    tasks: join(dir, "tasks"),
    prs: join(dir, "prs"),
    reviews: join(dir, "reviews"),
    reviewJournal: join(dir, "review-journal.json"),
    setAside: join(dir, "set-aside.json"),
  };
}

export { beat, heartbeatPath } from "./heartbeat.ts";

/** The protocol files, relative to a tree's root. */
export const BRIEF_FILE = "NEXT-STEPS.md";
export const REPORT_FILE = "COWORK-STATUS.md";
export const RELAY_DIR = ".relay";
export const INBOX_DIR = ".relay/inbox";
export const CONFIG_FILE = ".relay/config.yaml";

/**
 * The procedure a reviewer-side turn reads from main: the reviewer's `REVIEWER.md`, a stage's
 * `.relay/<STAGE>.md` (relay init installs them).
 */
export function procedureOnMain(stage: "polish" | "docs" | "security" | "plan" | null): string {
  return stage ? `${RELAY_DIR}/${stage.toUpperCase()}.md` : "REVIEWER.md";
}

/** Every procedure a review tick may read from main: read with the report, in one git call. */
export const REVIEW_PROCEDURES: readonly string[] = [null, "polish", "docs", "security", "plan"]
  .map((s) => procedureOnMain(s as "polish" | null));

/** Paths that are paperwork: never on a task branch, committed to main on their own. */
export const PAPERWORK_PATHS = [BRIEF_FILE, REPORT_FILE, RELAY_DIR] as const;

/**
 * The paperwork relay itself commits to main (lib/loop/paperwork.ts commitPaperwork is its one
 * commit there): the brief, the report and the inbox. The rest of `.relay/` (config.yaml, the
 * stage procedures) is relay's settings, which a person changes; a commit that touches them is
 * not relay's paperwork even though a task branch may not touch them either.
 */
export const RELAY_PAPERWORK_PATHS = [BRIEF_FILE, REPORT_FILE, INBOX_DIR] as const;

/**
 * Refs relay writes. Anchors keep every agent turn's starting point reachable (`before`), its
 * branch after it (`after`), and what main held when the turn moved it (`main`).
 */
export function anchorRef(
  task: number,
  runId: string,
  when: "before" | "after" | "main",
): string {
  return `refs/relay/anchors/task-${task}/${runId}-${when}`;
}

/**
 * Start of the anchors of the commits a turn made (`<run>-after-1`, `-after-2`, …), written
 * right after the turn, before any guard can HOLD: also commits on no branch are kept.
 */
export function turnAnchorPrefix(task: number, runId: string): string {
  return `${anchorRef(task, runId, "after")}-`;
}
