/**
 * The planner's side of a task, as pure functions: what the review tick (and
 * `relay merge`) does next, from what it observed and the review record
 * (the review part of `.git/relay/tasks/<n>.json`: verdicts, voids, fix rounds, merge).
 * `reduce` folds a fact into the state, including the record the driver then
 * saves; `next` (lib/task/planner_next.ts) names the one effect. The phases
 * and the facts that move them are the table in lib/task/table.ts.
 */
import type { PrStatus } from "../forge/types.ts";
import type {
  Finding,
  PostStage,
  ReviewRecord,
  StageRun,
  VerdictRecord,
} from "../state/reviews.ts";
import { sendsBack } from "../state/reviews.ts";
import { phaseAfter, type PlannerPhase } from "./table.ts";

/**
 * The gate's decision as the decisions read it (lib/gate's GateDecision has
 * this shape). Declared here so the executor's side, which loads this module
 * through the table, never loads the gate.
 */
export interface GateDecision {
  decision: "MERGE" | "REFUSE" | "HUMAN" | "WAIT";
  checks: {
    name: string;
    result: "PASS" | "REFUSE" | "HUMAN" | "WAIT";
    reason: string;
    files?: string[];
  }[];
  head: string;
  base: string;
}

/** What the planner found on origin/main and the forge this tick. */
export interface Seen {
  remote: string;
  main: string;
  /** origin/main; null when it does not exist. */
  originMain: string | null;
  /** The report and brief on origin/main; null when there is no report. */
  subject: Subject | null;
  /** An executor attempt is journaled (mid-tick, or held). */
  journal: boolean;
  /** The branch of the OPEN brief in the primary tree, if any. */
  openBranch: string | null;
  pr: PrStatus | null;
  /** A head of this PR that origin/main already has: merged, by relay or a person. */
  mergedHead: string | null;
  /** The PR's current head is in origin/main. */
  prHeadInMain: boolean;
  fixRounds: number;
  merge: "auto" | "human";
  /** Every point that would wait for a person is a HOLD with the question in it. */
  handsfree: boolean;
  /** The stages this task runs after review, in order (its frozen configuration's). */
  stages: PostStage[];
  /** A deploy preview is configured: how long to wait for it to answer before a HOLD. */
  preview?: { timeoutMs: number } | null;
}

export interface Subject {
  /** The PR's own task: the brief's `Fixes:` on a fix, else its task. */
  task: number;
  report: { task: number; outcome: "SHIPPED" | "BLOCKED"; head: string };
  brief: { task: number; title: string; branch: string };
}

/**
 * A person's acceptance (`relay accept` / `relay reject`): `expect` null is
 * `--intent-only` (say what would be done, and its digest); otherwise the
 * digest the person saw, which the state must still yield. `reason` is the
 * accept's reason, or the reject's note.
 */
export interface AcceptRequest {
  action: "accept" | "reject";
  expect: string | null;
  reason: string | null;
  /** `--override-rejection`: accept a head a stage after review sent back (with a reason). */
  override?: boolean;
}

/** What an acceptance would act on: everything its digest covers. */
export interface Intent {
  task: number;
  action: "accept" | "reject";
  pr: string;
  head: string;
  tree: string;
  /** origin/main: what the merge lands on. */
  main: string;
  /** The receipts of the head, each with the sha256 of its record. */
  receipts: { stage: string; result: string; digest: string }[];
  /** The findings of the verdict on the head, still open. */
  findings: string[];
  /** Owner-accepted infra the head changes (the human path): accepting merges it. */
  infra: string[];
  /** A person's verifications of this tree (relay attach-verification). */
  verifications: string[];
  reason: string | null;
  /** `--override-rejection`: the stages' rejections of this head the person accepts over. */
  overrides?: string[];
  /** With an override: the stages that never ran on this head (a rejection sent it back first). */
  notRun?: string[];
}

export type PlannerMode =
  | { kind: "tick" }
  | { kind: "merge"; task?: number; accept?: AcceptRequest };

export interface PlannerState {
  mode: PlannerMode;
  hold: boolean;
  phase: PlannerPhase;
  seen: Seen | null;
  record: ReviewRecord | null;
  /** The fact that moved the phase last, for the effect's message. */
  scope: { finding: string; files: string[] } | null;
  findings: Finding[];
  decision: GateDecision | null;
  /** The gate's decision as printed, for `relay merge`. */
  gateText: string;
  merged: { sha: string } | null;
  /** The line of the promotion (or of a HOLD raised by a turn). */
  said: string | null;
  held: { reason: string; next: string; runId?: string } | null;
  /** The fix brief a send-back opened, and why (the gate's refusal, the verdict's FAIL, a stage's). */
  sentBack: { fix: number; why: string } | null;
  /** This tick noticed a merge or close made outside relay (said once, also under --quiet). */
  noticed: boolean;
  /** `relay accept`/`reject`: what it would act on, its digest, and what changed since `expect`. */
  intent: { intent: Intent; digest: string; changed: string[] } | null;
  /** The deploy preview as this tick checked it before the review turn. */
  preview: { url: string; ready: boolean; seen: string; since: string; at: string } | null;
}

export type PlannerEvent =
  | { kind: "observed"; seen: Seen; record: ReviewRecord | null }
  | { kind: "blocked-handed-over"; runId: string; at: string }
  | { kind: "merge-noted"; sha: string; at: string }
  | { kind: "close-noted"; head: string; at: string; reason: string }
  /** `finding`: the check's name and reason, as a send-back quotes it. */
  | {
    kind: "scope-checked";
    result: "PASS" | "REFUSE" | "HUMAN";
    finding: string;
    reason: string;
    files: string[];
  }
  | { kind: "review-void"; runId: string; at: string; why: string }
  | { kind: "verdict"; verdict: VerdictRecord }
  | { kind: "stage-ran"; run: StageRun }
  | { kind: "review-held"; reason: string; next: string; runId: string }
  | { kind: "reviewer-still-running"; message: string }
  | {
    kind: "revalidated";
    head: string;
    main: string;
    mergeTree: string;
    passed: boolean;
    at: string;
  }
  /** `text`: the decision as `relay gate` prints it. */
  | { kind: "gate-decided"; decision: GateDecision; text: string }
  | { kind: "verdict-marked-stale"; head: string }
  | { kind: "merge-landed"; sha: string; at: string }
  | { kind: "merge-missed"; why: string }
  /** `replaces`: the number of the missing fix brief this one was written again for. */
  | {
    kind: "sent-back";
    fix: number;
    head: string;
    at: string;
    why: string;
    findings: Finding[];
    replaces?: number;
  }
  | { kind: "routed-to-person"; head: string; files: string[]; at: string }
  /** `task`, `title`: the brief it opened, if any. */
  | { kind: "promoted"; message: string; task?: number; title?: string }
  /** `changed`: how the state differs from the intent `expect` named, when it does. */
  | { kind: "acceptance-weighed"; intent: Intent; digest: string; changed: string[] }
  /** The deploy preview of `head` answered (ready) or not; `seen` says what came back. */
  | {
    kind: "preview-checked";
    head: string;
    url: string;
    ready: boolean;
    seen: string;
    at: string;
  };

export function initialPlanner(mode: PlannerMode, hold: boolean): PlannerState {
  return {
    mode,
    hold,
    phase: "start",
    seen: null,
    record: null,
    scope: null,
    findings: [],
    decision: null,
    gateText: "",
    merged: null,
    said: null,
    held: null,
    sentBack: null,
    noticed: false,
    intent: null,
    preview: null,
  };
}

/** The newest verdict for exactly this head, if any. */
export function verdictOn(record: ReviewRecord, head: string): VerdictRecord | undefined {
  return record.verdicts.filter((v) => v.head === head).at(-1);
}

/**
 * The stages still to run on this head, in order: those with no run since its
 * newest verdict. A new head, or a new review of this one, runs them all again.
 */
export function stagesDue(seen: Seen, record: ReviewRecord, head: string): PostStage[] {
  const ran = new Set(stageRunsSince(record, head).map((r) => r.stage));
  return seen.stages.filter((stage) => !ran.has(stage));
}

/** Where the task stands once observed: the phase `next` starts from. */
export function classify(mode: PlannerMode, seen: Seen, record: ReviewRecord | null): PlannerPhase {
  const s = seen.subject;
  if (seen.originMain === null) return mode.kind === "merge" ? "nothing-to-merge" : "no-main";
  if (!s || !record) return mode.kind === "merge" ? "nothing-to-merge" : "no-report";
  if (mode.kind === "merge") {
    if (mode.task !== undefined && mode.task !== s.task && mode.task !== s.report.task) {
      return "nothing-to-merge";
    }
    if (s.report.outcome === "BLOCKED") return "merge-blocked";
    if (!seen.pr || seen.pr.state !== "open") return "merge-no-pr";
    // A person's acceptance waits for the executor like the review tick does: never while an
    // attempt is journaled, nor while a fix brief is open on the PR's branch.
    if (mode.accept) {
      if (seen.journal) return "executor-mid-tick";
      // The fix brief a stage's rejection wrote for this very head (not yet started) does not
      // stop an accept: a plain one is refused naming the rejection, an override retires it.
      const answers = mode.accept.action === "accept" &&
        record.fixes.at(-1)?.head === seen.pr.head &&
        stageRunsSince(record, seen.pr.head).some(sendsBack);
      if (seen.openBranch === seen.pr.branch && !answers) return "executor-first";
    }
    return "passed";
  }
  // Nothing while an executor attempt is open: its guard HOLDs on any change to relay's
  // records during its agent's turn, and cannot tell this tick's writes from a forged verdict.
  if (seen.journal) return "executor-mid-tick";
  if (s.report.outcome === "BLOCKED") {
    return record.voids.some((v) => v.runId === blockedMarker(s)) ? "blocked-handed" : "blocked";
  }
  const pr = seen.pr;
  if (!pr) return "no-pr";
  if (seen.mergedHead !== null) return record.merged ? "merged" : "merged-unnoticed";
  if (pr.state === "closed") return record.closed ? "closed" : "closed-unnoticed";
  // The executor goes first when it is on this PR's branch (a fix brief).
  if (seen.openBranch === pr.branch) return "executor-first";
  // Nobody in the loop pushed this: relay neither reviews nor merges code no report stands behind.
  if (pr.head !== s.report.head) return "moved-outside";
  const verdict = verdictOn(record, pr.head);
  if (verdict?.verdict === "FAIL") {
    const fix = record.fixes.filter((f) => f.head === pr.head).at(-1);
    if (!fix) return "failed";
    // Not answered, and not open here either (that is executor-first, above): the fix brief
    // is gone from NEXT-STEPS.md (set aside with paperwork that never reached the remote, or
    // replaced by a person's promotion), so it is written again. A report of a later brief
    // answers a round written elsewhere (another reviewer machine's, a person's fix brief).
    if (s.report.task < fix.task) return "fix-lost";
    // The executor answered the fix without a new commit (it pushed back, or found nothing
    // to change): the reviewer reads that answer once. A FAIL after it sends back again.
    if (verdict.at > fix.at) return "failed";
    return "to-review";
  }
  if (!verdict || verdict.stale) return "to-review";
  // A stage after review (or a person's rejection) sent this head back after its PASS.
  const fix = record.fixes.filter((f) => f.head === pr.head).at(-1);
  if (fix && fix.at > verdict.at) {
    if (s.report.task < fix.task) return "fix-lost";
    // Answered without a new commit: reviewed again, and the stages run again from there.
    return "to-review";
  }
  if (stageRunsSince(record, pr.head).some(sendsBack)) return "stage-failed";
  return "passed";
}

/**
 * The findings still open on this head: its verdict's, and those of the
 * stages that ran on it since, each named after its stage.
 */
export function openFindings(record: ReviewRecord, head: string): Finding[] {
  return [
    ...verdictOn(record, head)?.findings ?? [],
    ...stageRunsSince(record, head).flatMap((r) =>
      r.findings.map((f) => ({ severity: f.severity, text: `${f.text} (${r.stage} stage)` }))
    ),
  ];
}

/** The runs of the stages on this head since its newest verdict: a new review starts them over. */
export function stageRunsSince(record: ReviewRecord, head: string): StageRun[] {
  const since = verdictOn(record, head)?.at ?? "";
  return (record.stages ?? []).filter((r) => r.head === head && r.at >= since);
}

/** The void entry that marks a BLOCKED report as handed to a person. */
export function blockedMarker(s: Subject): string {
  return `blocked-${s.report.head}-${s.report.task}`;
}

export function reducePlanner(s: PlannerState, e: PlannerEvent): PlannerState {
  const record = s.record;
  const r = (change: Partial<PlannerState>): PlannerState => ({
    ...s,
    ...change,
    phase: phaseAfter(s, e, { ...s, ...change }),
  });
  switch (e.kind) {
    case "observed":
      return r({ seen: e.seen, record: e.record });
    case "blocked-handed-over":
      return r({
        record: {
          ...record!,
          voids: [...record!.voids, { runId: e.runId, at: e.at, why: "executor reported BLOCKED" }],
        },
      });
    case "merge-noted":
      return r({
        noticed: true,
        record: { ...record!, merged: { sha: e.sha, at: e.at, by: "out-of-band" } },
      });
    case "close-noted":
      return r({
        noticed: true,
        record: { ...record!, closed: { head: e.head, at: e.at, reason: e.reason } },
      });
    case "scope-checked":
      return r({ scope: { finding: e.finding, files: e.files } });
    case "review-void":
      return r({
        record: { ...record!, voids: [...record!.voids, { runId: e.runId, at: e.at, why: e.why }] },
      });
    case "verdict":
      return r({
        record: { ...record!, verdicts: [...record!.verdicts, e.verdict] },
        findings: e.verdict.findings,
      });
    case "stage-ran":
      return r({
        record: { ...record!, stages: [...record!.stages ?? [], e.run] },
        findings: e.run.findings,
      });
    case "review-held":
      return r({ held: { reason: e.reason, next: e.next, runId: e.runId } });
    case "reviewer-still-running":
      return r({ said: e.message });
    case "revalidated":
      return r({
        record: {
          ...record!,
          verdicts: record!.verdicts.map((v) =>
            v === verdictOn(record!, e.head)
              ? {
                ...v,
                revalidations: [...(v.revalidations ?? []), {
                  main: e.main,
                  mergeTree: e.mergeTree,
                  passed: e.passed,
                  at: e.at,
                }],
              }
              : v
          ),
        },
      });
    case "gate-decided":
      return r({ decision: e.decision, gateText: e.text });
    case "verdict-marked-stale":
      return r({
        record: {
          ...record!,
          verdicts: record!.verdicts.map((v) =>
            v === verdictOn(record!, e.head) ? { ...v, stale: true } : v
          ),
        },
      });
    case "merge-landed":
      return r({
        merged: { sha: e.sha },
        record: { ...record!, merged: { sha: e.sha, at: e.at, by: "relay" } },
      });
    case "merge-missed":
      return r({ said: e.why });
    case "sent-back":
      return r({
        sentBack: { fix: e.fix, why: e.why },
        record: {
          ...record!,
          // A fix brief written again (fix-lost) is the same round, not a new one, under a new
          // number only when its own was taken meanwhile.
          fixes: e.replaces !== undefined
            ? record!.fixes.map((f) =>
              f.task === e.replaces && f.head === e.head ? { ...f, task: e.fix } : f
            )
            : record!.fixes.some((f) => f.task === e.fix && f.head === e.head)
            ? record!.fixes
            : [
              ...record!.fixes,
              { task: e.fix, at: e.at, head: e.head, why: e.why, findings: e.findings },
            ],
        },
      });
    case "routed-to-person":
      return r({
        scope: { finding: "", files: e.files },
        record: record!.human?.head === e.head
          ? record!
          : { ...record!, human: { head: e.head, at: e.at, files: e.files } },
      });
    case "promoted":
      return r({ said: e.message });
    case "acceptance-weighed":
      return r({ intent: { intent: e.intent, digest: e.digest, changed: e.changed } });
    case "preview-checked": {
      // The wait runs from the first tick that found this head's preview not answering. Past
      // preview_timeout it is a HOLD, and the wait is let go: after "relay resume" the next
      // tick waits afresh.
      const kept = record!.previewWait?.head === e.head ? record!.previewWait : undefined;
      const since = kept?.since ?? e.at;
      const over = !e.ready &&
        Date.parse(e.at) - Date.parse(since) >= (s.seen?.preview?.timeoutMs ?? 0);
      const { previewWait: _, ...rest } = record!;
      return r({
        preview: { url: e.url, ready: e.ready, seen: e.seen, since, at: e.at },
        record: e.ready || over ? (kept ? rest : record!) : kept ? record! : {
          ...record!,
          previewWait: { head: e.head, since },
        },
      });
    }
  }
}

/** The gate said WAIT because the PASS went stale on a moved main. */
export function staleWait(decision: GateDecision): boolean {
  return decision.checks.some((c) =>
    c.name === "verdict" && c.result === "WAIT" && /stale/i.test(c.reason)
  );
}
