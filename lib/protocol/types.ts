/**
 * The protocol's data: what NEXT-STEPS.md (the brief), inbox entries and
 * COWORK-STATUS.md (the report) hold once parsed. Parsers and writers live
 * beside this file; they are pure (text in, value out) and round-trip.
 */

export type BriefStatus = "OPEN" | "DONE" | "QUEUED";
export type BriefKind = "feature" | "fix";

/** A markdown section relay does not interpret, kept in order for the round trip. */
export interface Section {
  heading: string;
  body: string;
}

export interface Brief {
  status: BriefStatus;
  task: number;
  title: string;
  /** `task-<n>`; for a fix, the branch of the task it fixes. */
  branch: string;
  kind: BriefKind;
  /** Set on a fix: the task whose PR this brief fixes. */
  fixes?: number;
  /** `Acceptance: human`: a person accepts this task, whatever the merge policy. */
  acceptance?: "human";
  /** Markdown under `## Goal`, trimmed. */
  goal: string;
  /** Markdown under `## Done when`, trimmed. */
  doneWhen: string;
  /** The verification bar: one command per line of its fenced block. */
  bar: string[];
  /** Markdown under `## Out of scope`, trimmed; absent when the section is. */
  outOfScope?: string;
  /** Any other `## ` sections, in order. */
  extra: Section[];
}

export type Outcome = "SHIPPED" | "BLOCKED";

/** One bar command's output as the agent pasted it. */
export interface PastedRun {
  command: string;
  /** The fenced block's content, verbatim. Empty string when the block is empty. */
  output: string;
  /** `Exit: <n>` line after the block, when the agent wrote one. */
  exit?: number;
}

/** One bar command as relay itself ran it. */
export interface Evidence {
  command: string;
  exit: number;
  /** Tree sha of the head the command ran on. */
  tree: string;
  durationMs: number;
  /** Combined stdout+stderr, possibly truncated by relay (it says so inside). */
  output: string;
  timedOut?: boolean;
}

export interface Report {
  task: number;
  outcome: Outcome;
  branch: string;
  /** Filled by relay; empty in what the agent writes. */
  head: string;
  /** Filled by relay: forge id or branch; empty in what the agent writes. */
  pr: string;
  /** Lines relay puts at the top (disagreements between pasted and real runs). */
  warnings: string[];
  whatShipped: string;
  /**
   * Prose under `## Verification` before the first `### ` command heading;
   * absent when there is none. Kept so the honesty check can read its claims.
   */
  verificationNote?: string;
  verification: PastedRun[];
  beyond: string;
  pushback: string;
  /** `## Relay evidence`, written by relay only. */
  evidence: Evidence[];
  extra: Section[];
}
