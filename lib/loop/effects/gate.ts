/**
 * The planner's effects through the merge gate: the scope check before a
 * reviewer's paid turn, the whole gate once a PASS stands, and the merge
 * itself — the one effect only the planner side may perform.
 */
import { REUSE_FETCH_MS } from "../../git/git.ts";
import { revalidateOnMerge } from "../../gate/revalidate.ts";
import { runGate, scopeCheck } from "../../gate/gate.ts";
import { formatGate } from "../../gate/output.ts";
import type { Brief } from "../../protocol/types.ts";
import type { PlannerEvent, PlannerMode, PlannerState } from "../../task/planner.ts";
import { taskTitle } from "../fix_brief.ts";
import { forgeOf, type PlanContext, prOf, ready, subjectOf } from "./context.ts";

function now(): string {
  return new Date().toISOString();
}

/**
 * The gate's scope check, before a reviewer's paid turn: a PR that changes
 * nothing (an empty diff against its merge base with main, or a head main
 * already has) or touches paths the gate refuses goes back now with the gate's
 * finding, as a gate REFUSE after review would; owner-accepted infra goes to a
 * person, who reviews it. Anything else (or a head git cannot find) is reviewed.
 */
export async function checkScope(tick: PlanContext): Promise<PlannerEvent> {
  const { primary, config } = ready(tick);
  const pr = prOf(tick);
  const head = await primary.resolve(pr.head);
  if (!head) {
    return {
      kind: "scope-checked",
      result: "PASS",
      finding: "",
      reason: "the head is not here yet: the reviewer looks",
      files: [],
    };
  }
  const scope = await scopeCheck(primary, config, subjectOf(tick).originMain, head);
  if (scope.result === "REFUSE") {
    tick.log.step(`gate for ${pr.id}, before review: ${scope.result} ${scope.reason}`);
  }
  return {
    kind: "scope-checked",
    result: scope.result === "REFUSE" || scope.result === "HUMAN" ? scope.result : "PASS",
    finding: `${scope.name}: ${scope.reason}`,
    reason: scope.reason,
    files: scope.files ?? [],
  };
}

/**
 * Runs the gate on the PR head against origin/main as it is now (the reviewer
 * may have taken many minutes: in a tick, main is fetched again first).
 */
export async function gate(
  tick: PlanContext,
  s: PlannerState,
  mode: PlannerMode,
  emit: (e: PlannerEvent) => Promise<void>,
): Promise<PlannerEvent> {
  const { primary, config } = ready(tick);
  const pr = prOf(tick);
  const subject = subjectOf(tick);
  // The main the gate judges against: as this fetch left it (not asked of git twice).
  let base: string | undefined;
  if (mode.kind === "tick") {
    // Real after any turn (a turn forgets fetches); a tick that ran none reuses its own.
    await primary.fetch(config.remote, { reuseMs: REUSE_FETCH_MS });
    const mainNow = await primary.resolve(`refs/remotes/${config.remote}/${config.main}`);
    if (mainNow && mainNow !== subject.originMain) {
      tick.subject = { ...subject, originMain: mainNow };
    }
    if (mainNow) base = mainNow;
  }
  const { originMain, report, brief } = subjectOf(tick);
  const scratchRoot = await Deno.makeTempDir({ prefix: "relay-merge-preview-" });
  try {
    const decision = await runGate({
      git: primary,
      ...(base !== undefined ? { base } : {}),
      config,
      pr,
      report,
      brief,
      review: s.record!,
      openPrs: await forgeOf(tick).listOpen(),
      revalidate: async (v) => {
        const res = await revalidateOnMerge(primary, {
          originMain,
          head: v.head,
          bar: brief.bar,
          timeoutMs: config.timeouts.barMs,
          maxBytes: config.evidenceMaxBytes,
          passEnv: config.barEnv,
          scratchRoot,
        });
        // Recorded, so the next tick (and relay status) reuse it instead of re-running the bar.
        await emit({
          kind: "revalidated",
          head: v.head,
          main: originMain,
          mergeTree: res.mergeTree,
          passed: res.passed,
          at: now(),
        });
        return res;
      },
    });
    const text = formatGate(decision);
    if (mode.kind === "tick") tick.log.step(`gate for ${pr.id}:\n${text}`);
    return { kind: "gate-decided", decision, text };
  } finally {
    await Deno.remove(scratchRoot, { recursive: true }).catch(() => {});
  }
}

/** A merge is the task's: its own title, not the "Fix task <n>: …" of a fix brief in flight. */
function mergeSubject(branch: string, brief: Brief, task: number): string {
  return `Merge ${branch}: ${taskTitle(brief)} (task ${task}, reviewed by relay)`;
}

export async function merge(
  tick: PlanContext,
  s: PlannerState,
  mode: PlannerMode,
): Promise<PlannerEvent> {
  const pr = prOf(tick);
  const subject = subjectOf(tick);
  const res = await forgeOf(tick).merge(
    pr,
    pr.head,
    mergeSubject(pr.branch, subject.brief, subject.task),
    s.decision!.base,
  );
  if (!res.merged) return { kind: "merge-missed", why: res.why };
  if (mode.kind === "tick") {
    tick.log.step(`task ${subject.task}: merged ${pr.id} as ${res.sha.slice(0, 12)}`);
  }
  return { kind: "merge-landed", sha: res.sha, at: now() };
}
