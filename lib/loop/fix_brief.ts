/**
 * Fix briefs: what the planner writes when a review fails or the gate sends a
 * PR back. Same branch, the findings, the original verification bar, and
 * `Kind: fix` / `Fixes: <n>` so the executor works on the PR's branch.
 */
import type { Brief } from "../protocol/types.ts";
import type { Finding } from "../state/reviews.ts";
import { redact } from "../proc/redact.ts";

const FIXED = "- Every blocker and major finding above is fixed, and the report says how.";

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
    title: `Fix task ${opts.originalTask}: ${original.title.replace(/^Fix task \d+: /, "")}`,
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
    extra: [],
  };
}
