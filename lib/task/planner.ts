/**
 * The planner's side of a task, as pure functions: what the review tick (and
 * `relay merge`) does next, from what it observed and the review record
 * (the review part of `.git/relay/tasks/<n>.json`: verdicts, voids, fix rounds, merge).
 * `reduce` folds a fact into the state, including the record the driver then
 * saves; `next` names the one effect. The phases and the facts that move them
 * are the table in lib/task/table.ts.
 */
import type { PrStatus } from "../forge/types.ts";
import type { Finding, ReviewRecord, VerdictRecord } from "../state/reviews.ts";
import { blockedOptions } from "./blocked.ts";
import type { PlannerEffect } from "./effects.ts";
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
}

export interface Subject {
  /** The PR's own task: the brief's `Fixes:` on a fix, else its task. */
  task: number;
  report: { task: number; outcome: "SHIPPED" | "BLOCKED"; head: string };
  brief: { task: number; title: string; branch: string };
}

export type PlannerMode = { kind: "tick" } | { kind: "merge"; task?: number };

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
  sentBack: { fix: number } | null;
  /** This tick noticed a merge or close made outside relay (said once, also under --quiet). */
  noticed: boolean;
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
  | { kind: "sent-back"; fix: number; head: string; at: string; why: string; findings: Finding[] }
  | { kind: "routed-to-person"; head: string; files: string[]; at: string }
  /** `task`, `title`: the brief it opened, if any. */
  | { kind: "promoted"; message: string; task?: number; title?: string };

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
  };
}

/** The newest verdict for exactly this head, if any. */
export function verdictOn(record: ReviewRecord, head: string): VerdictRecord | undefined {
  return record.verdicts.filter((v) => v.head === head).at(-1);
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
    if (s.report.task !== fix.task) return "fix-with-executor";
    // The executor answered the fix without a new commit (it pushed back, or found nothing
    // to change): the reviewer reads that answer once. A FAIL after it sends back again.
    if (verdict.at > fix.at) return "failed";
    return "to-review";
  }
  if (!verdict || verdict.stale) return "to-review";
  return "passed";
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
        sentBack: { fix: e.fix },
        record: {
          ...record!,
          fixes: [...record!.fixes, { task: e.fix, at: e.at, head: e.head }],
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
  }
}

const short = (sha: string) => sha.slice(0, 12);

export function nextPlanner(s: PlannerState): PlannerEffect {
  if (s.hold) return { kind: "stop-on-hold" };
  const seen = s.seen;
  if (!seen) return { kind: "observe" };
  const sub = seen.subject!;
  const pr = seen.pr!;
  const record = s.record!;
  const done = (kind: string, message: string, more: Record<string, unknown> = {}) => ({
    kind: "done" as const,
    result: { kind, message, ...more },
  });
  const wait = (
    what: "executor" | "fix-with-executor" | "gate" | "merge" | "orphan-turn",
    message: string,
    kind = "waiting",
  ) => ({ kind: "wait" as const, for: what, result: { kind, message } });
  switch (s.phase) {
    case "start":
      return { kind: "observe" };
    case "no-main":
      return done("idle", `idle: ${seen.remote}/${seen.main} does not exist`);
    case "no-report":
      return done("idle", `idle: no report on ${seen.remote}/${seen.main}`);
    case "executor-mid-tick":
      return wait("executor", "waiting: the executor is mid-tick");
    case "blocked":
      return { kind: "hand-blocked-over" };
    case "blocked-handed":
      return wait(
        "executor",
        `waiting: task ${sub.report.task} is BLOCKED and was handed to a person`,
      );
    case "blocked-hold":
      return {
        kind: "record-hold",
        reason: `task ${sub.report.task} is BLOCKED: the executor could not finish it`,
        next: blockedOptions(sub.task),
        task: sub.report.task,
      };
    case "no-pr":
      return done("idle", `idle: no PR for ${sub.brief.branch}`);
    case "merged-unnoticed":
      return { kind: "note-merge" };
    case "merged-moved":
      return {
        kind: "record-hold",
        reason: `${pr.id} was merged outside relay at ${
          short(seen.mergedHead!)
        }, but ${pr.branch} has moved on to ${
          short(pr.head)
        } since: those commits are not in ${seen.main}`,
        next:
          `To keep them, merge ${pr.branch} by hand, or queue a brief for them (relay inbox add); to drop them, do nothing. Then run "relay resume": relay treats task ${sub.task} as merged and moves on.`,
      };
    case "merged-first":
    case "merged":
      return {
        kind: "promote",
        done: s.phase === "merged-first"
          ? `task ${sub.task}: ${pr.id} was merged outside relay`
          : `task ${sub.task} is merged`,
        retire: `${pr.id} (task ${sub.task}) was merged outside relay: ${
          short(seen.mergedHead!)
        } is in ${seen.main}. Nothing was launched for this fix.`,
      };
    case "closed-unnoticed":
      return { kind: "note-close" };
    case "closed-first":
    case "closed":
      return {
        kind: "promote",
        done: `task ${sub.task}: ${pr.id} is closed`,
        retire:
          `${pr.id} (task ${sub.task}) was closed outside relay. Nothing was launched for this fix.`,
      };
    case "executor-first":
      return wait("executor", "waiting: a brief is open in NEXT-STEPS.md; the executor goes first");
    case "moved-outside":
      return {
        kind: "record-hold",
        reason: `${pr.id} moved to ${short(pr.head)} outside relay; the report on main is for ${
          short(sub.report.head)
        }`,
        next:
          `Find out who pushed to ${pr.branch}. To keep the new commits, queue a fix brief for task ${sub.task} (Kind: fix, Fixes: ${sub.task}, Branch: ${pr.branch}) so the executor reports on them; otherwise move them off the branch. Then run "relay resume". To give up on the task instead: relay close ${sub.task} --reason "…".`,
      };
    case "failed":
      return sendBack(s, verdictOn(record, pr.head)!.findings, "The reviewer failed this PR.");
    case "fix-with-executor": {
      const fix = record.fixes.filter((f) => f.head === pr.head).at(-1)!;
      return wait(
        "fix-with-executor",
        `waiting: the fix brief (task ${fix.task}) for ${pr.id} is with the executor`,
      );
    }
    case "to-review":
      return { kind: "check-scope" };
    case "scope-refused":
      return sendBack(
        s,
        [{ severity: "blocker", text: s.scope!.finding }],
        "The merge gate refused this PR (checked before review).",
      );
    case "scope-human":
      return { kind: "route-to-person", files: s.scope!.files };
    case "gate-human":
      return { kind: "route-to-person", files: humanFiles(s.decision) };
    case "scope-passed":
      return { kind: "run-turn", role: "reviewer" };
    case "reviewer-busy":
      return wait("orphan-turn", s.said!, "busy");
    case "review-held":
      return { kind: "record-hold", ...s.held! };
    case "review-failed":
      return sendBack(s, s.findings, "The reviewer failed this PR.");
    case "passed":
      return { kind: "gate" };
    case "gate-stale":
      return { kind: "mark-stale" };
    case "stale-twice":
      return sendBack(s, [{
        severity: "blocker",
        text: `the verification bar fails on the merge of ${pr.branch} with ${seen.main} (${
          short(s.decision!.base)
        }); bring the branch up to date with ${seen.main} and make the bar pass`,
      }], "The PR no longer passes its bar once merged with main.");
    case "gate-wait":
      return wait("gate", `waiting: ${waitReasons(s.decision!)}`);
    case "gate-refused":
      return sendBack(s, refusals(s.decision!), "The merge gate refused this PR.");
    case "ready-for-person":
      return done(
        "human",
        `ready: ${pr.id} passed review and the gate; merge policy is "${seen.merge}": a person merges it`,
        { files: [] },
      );
    case "mergeable":
      return { kind: "merge" };
    case "merge-missed":
      return s.mode.kind === "merge"
        ? done("waiting", `not merged: ${s.said}`, { decision: s.decision })
        : wait(
          "merge",
          `waiting: merge of ${pr.id} did not land: ${s.said}; the next tick tries again`,
        );
    case "merged-now":
      return {
        kind: "promote",
        done: s.mode.kind === "merge"
          ? `merged ${pr.id} as ${short(s.merged!.sha)}`
          : `task ${sub.task} merged (${short(s.merged!.sha)})`,
      };
    case "sent-back":
      return done(
        "fix",
        `task ${sub.task}: sent back — fix brief ${
          s.sentBack!.fix
        } is open in NEXT-STEPS.md (round ${record.fixes.length}/${seen.fixRounds})`,
        { task: sub.task, fixTask: s.sentBack!.fix },
      );
    case "with-person":
      return done(
        "human",
        `human path: ${pr.id} changes owner-accepted infra (${
          s.scope!.files.join(", ")
        }); a person reviews and merges it — relay never will`,
        { files: s.scope!.files },
      );
    case "promoted":
      return promotedEnd(s);
    case "nothing-to-merge": {
      const task = s.mode.kind === "merge" ? s.mode.task : undefined;
      return done(
        "idle",
        `nothing to merge: no report ${
          task === undefined ? "" : `for task ${task} `
        }on ${seen.remote}/${seen.main}; "relay status" shows which task is in flight`,
      );
    }
    case "merge-blocked":
      return done(
        "idle",
        `nothing to merge: task ${sub.report.task} is BLOCKED; "relay status" shows the options`,
      );
    case "merge-no-pr":
      return done(
        "idle",
        `nothing to merge: ${
          seen.pr ? `${seen.pr.id} is ${seen.pr.state}` : `no PR for ${sub.brief.branch}`
        }`,
      );
    case "merge-refused":
      return done(
        "waiting",
        `not merging ${pr.id}: the gate says ${s.decision!.decision}\n${s.gateText}`,
        { decision: s.decision },
      );
  }
}

function promotedEnd(s: PlannerState): PlannerEffect {
  const message = s.said!;
  if (s.merged) {
    return {
      kind: "done",
      result: {
        kind: "merged",
        task: s.seen!.subject!.task,
        sha: s.merged.sha,
        message,
        ...(s.mode.kind === "merge" ? { decision: s.decision } : {}),
      },
    };
  }
  // Said once, also under --quiet: a person merged or closed a PR and relay moved on.
  return { kind: "done", result: { kind: s.noticed ? "settled" : "idle", message } };
}

/** A send-back, or the HOLD once the task has had its fix rounds. */
function sendBack(s: PlannerState, findings: Finding[], why: string): PlannerEffect {
  const record = s.record!;
  const seen = s.seen!;
  const task = seen.subject!.task;
  const pr = seen.pr!;
  if (record.fixes.length >= seen.fixRounds) {
    return {
      kind: "record-hold",
      reason:
        `task ${task} was sent back ${record.fixes.length} time(s) and still does not pass (${why.trim()})`,
      next:
        `Read the findings (relay show ${task}) and the report on main. Either fix ${pr.branch} by hand and queue a fix brief (Kind: fix, Fixes: ${task}, Branch: ${pr.branch}), then run "relay resume"; or give up with relay close ${task} --reason "…" (closes ${pr.id} unmerged, promotes the next brief, clears this HOLD).`,
    };
  }
  return { kind: "send-back", findings, why };
}

function humanFiles(decision: GateDecision | null): string[] {
  return decision?.checks.flatMap((c) => c.result === "HUMAN" ? c.files ?? [] : []) ?? [];
}

function waitReasons(decision: GateDecision): string {
  return decision.checks.filter((c) => c.result === "WAIT").map((c) => c.reason).join("; ");
}

function refusals(decision: GateDecision): Finding[] {
  return decision.checks.filter((c) => c.result === "REFUSE").map((c) => ({
    severity: "blocker" as const,
    text: `${c.name}: ${c.reason}`,
  }));
}

/** The gate said WAIT because the PASS went stale on a moved main. */
export function staleWait(decision: GateDecision): boolean {
  return decision.checks.some((c) =>
    c.name === "verdict" && c.result === "WAIT" && /stale/i.test(c.reason)
  );
}
