/**
 * The plan stage's gate on promotion: with `plan_review` on, a queued brief is
 * promoted only with a plan review PASS for it as it is (lib/loop/plan.ts runs
 * the review). Split from the review itself so that the executor's side, which
 * promotes too, never loads the planner's turn machinery.
 */
import { briefDigest } from "../protocol/brief_write.ts";
import type { Brief } from "../protocol/types.ts";
import { readTask, type RecordDirs } from "../state/tasks.ts";

/** The section of a queued brief that holds its plan review's findings. */
export const PLAN_SECTION = "Plan review";

/** The digest a plan review is for: the brief without its findings section, whatever its Status. */
export function planDigest(brief: Brief): Promise<string> {
  return briefDigest({ ...brief, extra: brief.extra.filter((x) => x.heading !== PLAN_SECTION) });
}

/** Why `brief` may not be promoted yet, or null when it may. */
export type PlanGate = (brief: Brief) => Promise<string | null>;

/**
 * With plan_review on, a brief is promoted only with a plan PASS for it as it
 * is. Fix briefs are relay's own answer to findings on a reviewed PR: no gate.
 */
export function planGate(dirs: RecordDirs, on: boolean): PlanGate | undefined {
  if (!on) return undefined;
  return async (brief) => {
    if (brief.kind === "fix") return null;
    const digest = await planDigest(brief);
    const runs = ((await readTask(dirs, brief.task)).plans ?? []).filter((p) => p.brief === digest);
    if (runs.some((p) => p.result === "PASS")) return null;
    return runs.length
      ? `task ${brief.task} failed its plan review: answer the findings under "## ${PLAN_SECTION}" in its inbox file, then relay plan ${brief.task}`
      : `task ${brief.task} waits for its plan review (plan_review is on): relay plan ${brief.task}`;
  };
}

/** The gate as the repo config sets it now (plan_review is a repo setting, read when promoting). */
export async function planGateFor(root: string, dirs: RecordDirs): Promise<PlanGate | undefined> {
  const { loadRepoConfig } = await import("../config/repo_load.ts");
  return planGate(dirs, (await loadRepoConfig(root)).planReview);
}
