/**
 * What a person needs on one screen when a task is DONE awaiting acceptance:
 * the head, the receipts of that head, the open findings, the person's
 * verifications still valid for its tree, and what accepting does. Read from
 * relay's records and git (no network, no lock): `relay status`, `relay status
 * <task>` and `relay show <task>` print it.
 */
import type { RepoPaths } from "../git/discover.ts";
import type { StatePaths } from "../state/paths.ts";
import type { TaskRecord } from "../state/tasks.ts";

/** The block's lines, or null when the task is not DONE awaiting acceptance. */
export async function acceptanceSummary(
  repo: RepoPaths,
  state: StatePaths,
  task: number,
): Promise<string[] | null> {
  const { readTask } = await import("../state/tasks.ts");
  const record = await readTask(state, task);
  const review = record.review;
  const merge = (record.config as { merge?: { value?: string } } | undefined)?.merge?.value;
  if (!review || review.merged || merge !== "human") return null;
  const { Git } = await import("../git/git.ts");
  const { loadRepoConfig } = await import("../config/repo_load.ts");
  const config = await loadRepoConfig(repo.root);
  const git = new Git(repo.root, config.timeouts.networkMs);
  const head = await git.resolve(`refs/remotes/${config.remote}/${review.branch}`) ??
    await git.resolve(`refs/heads/${review.branch}`);
  if (!head || review.closed?.head === head) return null;
  const verdict = review.verdicts.filter((v) => v.head === head).at(-1);
  if (verdict?.verdict !== "PASS" || verdict.stale) return null;
  const tree = await git.out(["rev-parse", "--verify", "--end-of-options", `${head}^{tree}`]);
  const { verificationLine } = await import("../loop/effects/acceptance.ts");
  const { openFindings } = await import("../task/planner.ts");
  return summaryLines(task, review.branch, head, record, openFindings(review, head), {
    verified: (record.verifications ?? []).filter((v) => v.tree === tree).map(verificationLine),
  });
}

/** The block itself, from what the caller already read. */
export function summaryLines(
  task: number,
  pr: string,
  head: string,
  record: TaskRecord,
  findings: { severity: string; text: string }[],
  opts: { verified: string[] },
): string[] {
  const receipts = record.rounds.flatMap((r) => r.receipts).filter((r) => r.head === head);
  return [
    `task ${task} is DONE awaiting acceptance (${pr} at ${head.slice(0, 12)})`,
    ...receipts.map((r) => `  receipt ${r.stage}: ${r.result}${r.detail ? ` (${r.detail})` : ""}`),
    ...(findings.length
      ? findings.map((f) => `  open finding: [${f.severity}] ${f.text}`)
      : ["  open findings: none"]),
    ...opts.verified.map((v) => `  verified by a person: ${v}`),
    `  accepting merges ${pr} through the gate and promotes the next brief: relay accept ${task} --intent-only, then relay accept ${task} --expect <digest>; or relay reject ${task} --intent-only --text "…"`,
  ];
}
