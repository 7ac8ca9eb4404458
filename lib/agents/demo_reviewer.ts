/**
 * The demo reviewer: a scripted reviewer built into relay. It does not trust
 * the report: it runs the verification bar itself in the PR head's worktree
 * and passes only when every command exits 0.
 */
import { runCommand } from "../loop/evidence.ts";
import { formatVerdict } from "../protocol/verdict.ts";
import type { Finding } from "../state/reviews.ts";

export async function runDemoReviewer(
  opts: { worktree: string; bar: string[]; verdictPath: string; timeoutMs: number },
): Promise<number> {
  const findings: Finding[] = [];
  for (const command of opts.bar) {
    const res = await runCommand(command, opts.worktree, opts.timeoutMs);
    if (res.exit !== 0) {
      findings.push({
        severity: "blocker",
        text: `\`${command}\` ${res.timedOut ? "timed out" : `exits ${res.exit}`} on the PR head`,
      });
    }
  }
  const verdict = formatVerdict({ verdict: findings.length ? "FAIL" : "PASS", findings });
  await Deno.writeTextFile(opts.verdictPath, verdict + "\n");
  return 0;
}
