/**
 * The merge gate: five checks on a PR head against the current main, each
 * PASS, REFUSE (send it back), HUMAN (route to a person; relay never merges
 * it) or WAIT (not ready yet), and one decision. Any REFUSE refuses; else any
 * WAIT waits; else any HUMAN goes to a person; else MERGE. The gate reads git
 * and relay's records only: it never merges, pushes or writes a ref.
 *
 * How a decision is printed and its exit status: output.ts. Re-running the bar
 * on the would-be merge (the costly part of the verdict check): revalidate.ts.
 */
import type { RepoConfig } from "../config/repo_load.ts";
import type { PrStatus } from "../forge/types.ts";
import { CommandError } from "../errors.ts";
import type { Git, GitObject } from "../git/git.ts";
import { FULL_ID } from "../git/discover.ts";
import { checkReport } from "../protocol/honesty.ts";
import { sameCommand } from "../protocol/bar.ts";
import type { Brief, Report } from "../protocol/types.ts";
import { type ReviewRecord, verdictFor, type VerdictRecord } from "../state/reviews.ts";
import { BRIEF_FILE, RELAY_DIR, REPORT_FILE } from "../state/paths.ts";
import { type Scope, type ScopeConfig, type ScopeItem, scopeOfRawDiff } from "./scope.ts";

export interface GateInput {
  /** The primary repository (its refs/remotes are fresh: the caller fetched). */
  git: Git;
  config: RepoConfig;
  pr: PrStatus;
  /** The report on origin/main. */
  report: Report;
  /** The brief on origin/main: its bar is what the evidence must cover. */
  brief: Brief;
  review: ReviewRecord;
  openPrs: PrStatus[];
  /**
   * origin/main's commit, when the caller has just read it (loadGateInput does); otherwise
   * the gate resolves the ref itself.
   */
  base?: string;
  /** Re-runs the bar on the would-be merge result (see revalidateOnMerge in revalidate.ts). */
  revalidate: (v: VerdictRecord) => Promise<{ passed: boolean; mergeTree: string }>;
  /**
   * The git work of the checks, started early by the caller for the head it expected (the
   * report's): used when `base` and the PR's head are the ones it was started for.
   */
  prepared?: PreparedChecks;
}

/** The checks' git work for one base and head, under way: see prepareChecks. */
export interface PreparedChecks {
  base: string;
  head: string;
  /** The head commit (its tree, for the evidence check), then the objects `also` named. */
  reading: Promise<(GitObject | null)[]>;
  checking: Promise<[scope: GateCheck, mergeable: GateCheck]>;
  /** Resolves once every git process of it has ended, however it ended. */
  settled: Promise<void>;
}

/**
 * Starts the git work of the checks for `head` onto `base`: the head commit's read (with the
 * objects `also` names, in the same `git cat-file --batch`), the scope diff and the
 * merge-tree, side by side. Its failures surface where runGate awaits.
 */
export function prepareChecks(
  git: Git,
  config: ScopeConfig,
  base: string,
  head: string,
  also: readonly string[] = [],
): PreparedChecks {
  // The scope diff first: it takes longest.
  const checking = Promise.all([
    scopeCheck(git, config, base, head),
    mergeableCheck(git, base, head),
  ]);
  const reading = git.readObjects([`${head}^{commit}`, ...also]);
  reading.catch(() => {});
  checking.catch(() => {});
  const settled = Promise.allSettled([reading, checking]).then(() => {});
  return { base, head, reading, checking, settled };
}

/** True when `prepared` is the checks' work for this base and head. */
export function preparedFor(
  prepared: PreparedChecks | undefined,
  base: string,
  head: string,
): prepared is PreparedChecks {
  return prepared !== undefined && prepared.base === base && prepared.head === head;
}

export type GateCheckName = "scope" | "verdict" | "evidence" | "in-flight" | "mergeable";
export type GateResult = "PASS" | "REFUSE" | "HUMAN" | "WAIT";
export type GateDecisionKind = "MERGE" | "REFUSE" | "HUMAN" | "WAIT";

export interface GateCheck {
  name: GateCheckName;
  result: GateResult;
  reason: string;
  files?: string[];
}

export interface GateDecision {
  decision: GateDecisionKind;
  checks: GateCheck[];
  /** The PR head the checks judged. */
  head: string;
  /** origin/main the checks judged against. */
  base: string;
}

/** Paths whose changes on main never invalidate a PASS: relay's paperwork. */
const PAPERWORK_EXCLUDES = [BRIEF_FILE, REPORT_FILE, RELAY_DIR].map((p) => `:(exclude)${p}`);

function short(sha: string): string {
  return sha.slice(0, 12);
}

function check(
  name: GateCheckName,
  result: GateResult,
  reason: string,
  files?: string[],
): GateCheck {
  return files === undefined ? { name, result, reason } : { name, result, reason, files };
}

/** A scope with no path in it: the diff it was read from was empty. */
function isEmpty(scope: Scope): boolean {
  return scope.product.length + scope.refused.length + scope.accepted.length === 0;
}

function listItems(items: readonly ScopeItem[]): string {
  return items.map((i) => `${i.path} (${i.why})`).join("; ");
}

/** Runs every check and decides. Throws only when git cannot answer at all. */
export async function runGate(input: GateInput): Promise<GateDecision> {
  try {
    return await judge(input);
  } finally {
    // Checks started for another head are not used, and not waited for before the right ones
    // start; whatever happens, they have ended before the gate returns or throws.
    await input.prepared?.settled;
  }
}

async function judge(input: GateInput): Promise<GateDecision> {
  const { git, config, pr } = input;
  const mainName = `${config.remote}/${config.main}`;
  const early = input.prepared;
  const base = input.base ?? await git.resolve(`refs/remotes/${mainName}`);
  if (base === null) {
    throw new Error(
      `Cannot run the gate: "${mainName}" does not exist (fetch "${config.remote}" first)`,
    );
  }
  const notACommit = () =>
    new Error(
      `Cannot run the gate: the head of PR "${pr.id}" ("${pr.head}") is not a commit in ${git.cwd} (fetch it first)`,
    );
  if (!FULL_ID.test(pr.head)) throw notACommit();
  const head = pr.head;

  // The git work of the checks is independent: it runs side by side, beside the read of
  // the head commit (its tree, for the evidence check), which is looked at first — unless
  // the caller started it already for this base and head. Whether main moved only by
  // paperwork is asked only when the verdict check will need it (a PASS, not stale, given
  // on another main).
  const { reading, checking, settled } = preparedFor(early, base, head)
    ? early
    : prepareChecks(git, config, base, head);
  const v = verdictFor(input.review, head);
  const movedAsked = v !== undefined && v.verdict !== "FAIL" && !v.stale && v.main !== base;
  const moving = movedAsked ? movedOnlyByPaperwork(git, v.main, base) : Promise.resolve(false);
  moving.catch(() => {});
  const allSettled = Promise.allSettled([settled, moving]);
  const [commit] = await reading.catch(async (err) => {
    await allSettled; // no git of the checks left running (or its temp file) past an error
    throw err;
  });
  const headTree = commit?.oid === head
    ? /^tree ([0-9a-f]+)$/m.exec(commit.content)?.[1]
    : undefined;
  if (headTree === undefined) {
    await allSettled;
    throw notACommit();
  }
  const [[scope, mergeable], moved] = await Promise.all([checking, moving]).catch(async (err) => {
    await allSettled;
    throw err;
  });

  const evidence = evidenceCheck(input, headTree);
  const inFlight = inFlightCheck(pr, input.openPrs);
  const othersOk = [scope, evidence, inFlight].every((c) => c.result !== "REFUSE") &&
    mergeable.result === "PASS";
  const verdict = scope.result === "HUMAN" && v === undefined
    // The review tick sends owner-accepted infra to a person without a reviewer's turn.
    ? check("verdict", "HUMAN", "not reviewed by relay: a person reviews owner-accepted infra")
    : await verdictCheck(input, base, head, othersOk, moved);

  const checks = [scope, verdict, evidence, inFlight, mergeable];
  return { decision: decide(checks), checks, head, base };
}

/** True when nothing but relay's paperwork differs between two commits of main. */
async function movedOnlyByPaperwork(git: Git, from: string, to: string): Promise<boolean> {
  const res = await git.run(
    [
      "diff",
      "--quiet",
      "--no-ext-diff",
      "--ignore-submodules=none",
      from,
      to,
      "--",
      ".",
      ...PAPERWORK_EXCLUDES,
    ],
    { allowFail: true },
  );
  return res.code === 0;
}

/** Any REFUSE → REFUSE; else any WAIT → WAIT; else any HUMAN → HUMAN; else MERGE. */
export function decide(checks: readonly GateCheck[]): GateDecisionKind {
  const has = (r: GateResult) => checks.some((c) => c.result === r);
  if (has("REFUSE")) return "REFUSE";
  if (has("WAIT")) return "WAIT";
  if (has("HUMAN")) return "HUMAN";
  return "MERGE";
}

/** What the scope check reads: every change, renames found, in full, no external tools. */
const RAW_DIFF = ["--raw", "-z", "-M", "--no-abbrev", "--no-ext-diff", "--ignore-submodules=none"];

/**
 * The scope check: the head shares history with main, changes something
 * relative to the merge base, and touches product code only (or owner-accepted
 * infra: HUMAN). Cheap (git diff only): the review tick runs it before it pays
 * for a reviewer's turn.
 */
export async function scopeCheck(
  git: Git,
  config: ScopeConfig,
  base: string,
  head: string,
): Promise<GateCheck> {
  // The usual case in one git call: the diff against the merge base git finds itself. When
  // git cannot (no shared history, several merge bases) or the branch changes nothing,
  // `git merge-base` names the base and the answer is as it always was.
  const direct = await git.outViaFile("diff", [...RAW_DIFF, "--merge-base", base, head, "--"], [
    base,
    head,
  ])
    .catch((err) => {
      if (err instanceof CommandError) return null;
      throw err;
    });
  let scope = direct === null ? null : scopeOfRawDiff(direct, config);
  if (scope === null || isEmpty(scope)) {
    const mb = await git.run(["merge-base", base, head], { allowFail: true });
    if (mb.code === 1) {
      return check("scope", "REFUSE", `the PR head shares no history with main ${short(base)}`);
    }
    if (mb.code !== 0) {
      return check("scope", "WAIT", `git merge-base failed (exit ${mb.code}): ${mb.stderr.trim()}`);
    }
    const mergeBase = mb.stdout.trim();
    scope ??= scopeOfRawDiff(
      await git.outViaFile("diff", [...RAW_DIFF, mergeBase, head, "--"], [mergeBase, head]),
      config,
    );
    if (isEmpty(scope)) {
      return check(
        "scope",
        "REFUSE",
        `the branch changes nothing relative to main (merge base ${short(mergeBase)})`,
      );
    }
  }
  if (scope.refused.length > 0) {
    const accepted = scope.accepted.length > 0
      ? `; owner-accepted but also on it: ${listItems(scope.accepted)}`
      : "";
    return check(
      "scope",
      "REFUSE",
      `not product code: ${listItems(scope.refused)}${accepted}`,
      scope.refused.map((i) => i.path),
    );
  }
  if (scope.accepted.length > 0) {
    return check(
      "scope",
      "HUMAN",
      `human path: an owner-accepted infra change; relay never merges it: ${
        listItems(scope.accepted)
      }`,
      scope.accepted.map((i) => i.path),
    );
  }
  const n = scope.product.length;
  return check("scope", "PASS", `${n} product file${n === 1 ? "" : "s"} changed`);
}

async function verdictCheck(
  input: GateInput,
  base: string,
  head: string,
  othersOk: boolean,
  /** Whether main moved only by paperwork since the PASS (asked when the PASS was on another main). */
  movedOnlyPaperwork: boolean,
): Promise<GateCheck> {
  const v = verdictFor(input.review, head);
  if (v === undefined) {
    const last = input.review.verdicts.at(-1);
    const before = last ? ` (the last verdict, ${last.verdict}, was for ${short(last.head)})` : "";
    return check("verdict", "WAIT", `no verdict for this head yet${before}`);
  }
  if (v.verdict === "FAIL") {
    const n = v.findings.length;
    return check(
      "verdict",
      "REFUSE",
      `the verdict for ${short(head)} is FAIL (${n} finding${n === 1 ? "" : "s"})`,
    );
  }
  if (v.stale) {
    return check(
      "verdict",
      "WAIT",
      "the PASS for this head is marked stale; the next review tick reviews again",
    );
  }
  if (v.main === base) {
    return check("verdict", "PASS", `PASS for ${short(head)} on main ${short(base)}`);
  }
  if (movedOnlyPaperwork) {
    return check(
      "verdict",
      "PASS",
      `main moved only by paperwork since the PASS (${short(v.main)} → ${short(base)})`,
    );
  }
  const stale =
    "stale: main moved by product code and the bar fails on the merge; the next review tick reviews again";
  const recorded = v.revalidations?.findLast((r) => r.main === base);
  if (recorded) {
    return recorded.passed
      ? check("verdict", "PASS", `re-verified on the merge with main ${short(base)} (recorded)`)
      : check("verdict", "WAIT", stale);
  }
  if (!othersOk) {
    return check(
      "verdict",
      "WAIT",
      `main moved by product code since the PASS (${short(v.main)} → ${
        short(base)
      }); not re-verified while another check fails`,
    );
  }
  const result = await input.revalidate(v);
  return result.passed
    ? check("verdict", "PASS", `re-verified on the merge with main ${short(base)}`)
    : check("verdict", "WAIT", stale);
}

function evidenceCheck(input: GateInput, headTree: string): GateCheck {
  const { report, brief, pr } = input;
  const problems: string[] = [];
  if (report.head !== pr.head) {
    problems.push(
      `The report on main is for head ${
        report.head ? short(report.head) : "(none)"
      }, but the PR head is ${short(pr.head)}.`,
    );
  }
  if (report.branch !== pr.branch) {
    problems.push(
      `The report on main is for branch "${report.branch}", but the PR is "${pr.branch}".`,
    );
  }
  if (report.outcome !== "SHIPPED") problems.push(`The report says ${report.outcome}.`);
  problems.push(...checkReport(report, brief));
  for (const command of brief.bar) {
    const runs = report.evidence.filter((e) => sameCommand(e.command, command));
    if (runs.some((e) => e.exit === 0 && e.tree === headTree)) continue;
    if (runs.length === 0) {
      problems.push(`Relay's evidence has no run of \`${command}\`.`);
    } else if (!runs.some((e) => e.tree === headTree)) {
      problems.push(
        `Relay ran \`${command}\` on tree ${short(runs.at(-1)!.tree)}, not on the head's tree ${
          short(headTree)
        }.`,
      );
    } else {
      const failed = runs.filter((e) => e.tree === headTree).at(-1)!;
      problems.push(
        `Relay's run of \`${command}\` exited ${failed.exit}${
          failed.timedOut ? " (timed out)" : ""
        }.`,
      );
    }
  }
  if (problems.length > 0) return check("evidence", "REFUSE", problems.join(" "));
  const n = brief.bar.length;
  return check(
    "evidence",
    "PASS",
    `report for task ${report.task} at ${short(pr.head)}; relay's own run of ${n} bar command${
      n === 1 ? "" : "s"
    } passed on its tree`,
  );
}

function inFlightCheck(pr: PrStatus, openPrs: readonly PrStatus[]): GateCheck {
  const isThis = (p: PrStatus) => p.id === pr.id || p.branch === pr.branch;
  const others = openPrs.filter((p) => !isThis(p));
  if (pr.state !== "open") return check("in-flight", "REFUSE", `PR ${pr.id} is ${pr.state}`);
  if (others.length > 0) {
    const all = openPrs.map((p) => p.id).join(", ");
    return check(
      "in-flight",
      "REFUSE",
      `${openPrs.length} PRs are open (${all}); relay allows one in flight`,
    );
  }
  if (!openPrs.some(isThis)) {
    return check("in-flight", "REFUSE", `PR ${pr.id} is not among the open PRs`);
  }
  return check("in-flight", "PASS", `PR ${pr.id} is the only open PR`);
}

async function mergeableCheck(git: Git, base: string, head: string): Promise<GateCheck> {
  const res = await git.mergeTree(base, head);
  if (res.code === 0) return check("mergeable", "PASS", `merges cleanly with main ${short(base)}`);
  if (res.code === 1) {
    const files = res.conflicts;
    const named = files.length > 0 ? `: ${files.join(", ")}` : "";
    return check("mergeable", "REFUSE", `conflicts with main ${short(base)}${named}`, files);
  }
  const why = (res.stderr.trim().split("\n")[0] ?? "").trim();
  return check(
    "mergeable",
    "WAIT",
    `git merge-tree failed (exit ${res.code})${why ? `: ${why}` : ""}`,
  );
}
