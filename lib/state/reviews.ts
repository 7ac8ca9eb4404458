/**
 * The planner's part of a task's record (lib/state/tasks.ts): every verdict
 * with the PR head and the trees it judged, revalidations of a PASS after
 * main moved, and what the planner did with it. The gate reads it; so does
 * `relay status`.
 */

export type Severity = "blocker" | "major" | "minor";

export interface Finding {
  severity: Severity;
  text: string;
}

export interface VerdictRecord {
  runId: string;
  at: string;
  /** The task whose report was reviewed (a fix brief has its own task number). */
  reportTask: number;
  /** The PR head sha the reviewer judged. */
  head: string;
  /** That head's tree. */
  tree: string;
  /** origin/main when the review ran: its product tree is what the PASS assumed. */
  main: string;
  verdict: "PASS" | "FAIL";
  findings: Finding[];
  /** Set when a later check found the PASS no longer holds on a moved main. */
  stale?: boolean;
  /** Re-runs of the bar on the would-be merge after main moved by product code. */
  revalidations?: { main: string; mergeTree: string; passed: boolean; at: string }[];
}

/** The stages after review, in order: relay's own checks, then reviewer-style turns. */
export const POST_STAGES = ["finish", "polish", "docs", "security"] as const;
export type PostStage = typeof POST_STAGES[number];

/** One run of a post-review stage on a head: its result and what it found. */
export interface StageRun {
  /** "plan" only for a plan review, which is kept apart (lib/state/tasks.ts PlanRun). */
  stage: PostStage | "plan";
  runId: string;
  at: string;
  /** The task whose report was on main (a fix brief has its own number). */
  reportTask?: number;
  head: string;
  tree: string;
  /** SKIPPED: the stage had nothing to run (e.g. finish with no test_command); `detail` says why. */
  result: "PASS" | "FAIL" | "SKIPPED";
  findings: Finding[];
  detail?: string;
}

/** A stage's run sends the PR back: it failed it, or named a blocker. */
export function sendsBack(run: StageRun): boolean {
  return run.result === "FAIL" || run.findings.some((f) => f.severity === "blocker");
}

export interface ReviewRecord {
  /** The original task (the PR's task); fix briefs point back to it. */
  task: number;
  branch: string;
  verdicts: VerdictRecord[];
  /** Void reviewer turns (the reviewer changed its worktree) and invalid verdicts. */
  voids: { runId: string; at: string; why: string }[];
  /**
   * Fix briefs written for this task; `why` and `findings` as the brief said them (a brief
   * written again when it went missing says the same; records before them have neither).
   */
  fixes: { task: number; at: string; head: string; why?: string; findings?: Finding[] }[];
  merged?: { sha: string; at: string; by: "relay" | "out-of-band" };
  /** Closed without merging by a person (`relay close`). */
  closed?: { head: string; at: string; reason: string };
  /** When relay first found the deploy preview of a head not answering (preview_timeout runs from it). */
  previewWait?: { head: string; since: string };
  /** Runs of the stages after review (finish, polish, docs, security), each on one head. */
  stages?: StageRun[];
  /** The last gate decision that routed this PR to a person. */
  human?: { head: string; at: string; files: string[] };
}

/** The newest verdict for exactly this head, if any. */
export function verdictFor(record: ReviewRecord, head: string): VerdictRecord | undefined {
  return record.verdicts.filter((v) => v.head === head).at(-1);
}
