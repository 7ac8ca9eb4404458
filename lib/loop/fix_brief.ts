/**
 * Fix briefs: what the planner writes when a review fails or the gate sends a
 * PR back. Same branch, the findings, the original verification bar, and
 * `Kind: fix` / `Fixes: <n>` so the executor works on the PR's branch.
 */
import type { Brief } from "../protocol/types.ts";
import type { Finding } from "../state/reviews.ts";
import { redact } from "../proc/redact.ts";

const FIXED = "- Every blocker and major finding above is fixed, and the report says how.";

/** A fix brief's title is "Fix task <n>: <the task's own title>". */
const FIX_PREFIX = /^Fix task \d+: /;

/** The task's own title: a fix brief's without its "Fix task <n>: " prefix (merge commits use it). */
export function taskTitle(brief: Brief): string {
  return brief.kind === "fix" ? brief.title.replace(FIX_PREFIX, "") : brief.title;
}

export function fixBrief(opts: {
  task: number;
  original: Brief;
  originalTask: number;
  head: string;
  findings: Finding[];
  why: string;
}): Brief {
  const { original } = opts;
  // A reviewer's finding may quote output it saw; the brief lands on main.
  const list = opts.findings.map((f) => `- [${f.severity}] ${redact(f.text)}`).join("\n");
  return {
    status: "OPEN",
    task: opts.task,
    title: `Fix task ${opts.originalTask}: ${original.title.replace(FIX_PREFIX, "")}`,
    branch: original.branch,
    kind: "fix",
    fixes: opts.originalTask,
    goal:
      `${opts.why} Fix what the findings below name, on the same branch (${original.branch}), on top of ${
        opts.head.slice(0, 12)
      }. Do not start over and do not rewrite history.\n\n${list}`,
    // The original's own terms, once: a fix of a fix does not stack the line above again.
    doneWhen: [FIXED, ...original.doneWhen.split("\n").filter((l) => l.trim() !== FIXED)].join(
      "\n",
    ),
    bar: original.bar,
    ...(original.outOfScope !== undefined ? { outOfScope: original.outOfScope } : {}),
    // A judgment call stays one through its fix rounds.
    ...(original.acceptance ? { acceptance: original.acceptance } : {}),
    extra: [],
  };
}
