/**
 * The demo reviewer: a scripted reviewer built into relay. It does not trust
 * the report: it runs the verification bar itself in the PR head's worktree
 * and passes only when every command exits 0.
 */
import { run } from "../proc/run.ts";
import { parseBarCommand } from "../protocol/bar.ts";
import { formatVerdict } from "../protocol/verdict.ts";
import type { Finding } from "../state/reviews.ts";

export async function runDemoReviewer(
  opts: { worktree: string; bar: string[]; verdictPath: string },
): Promise<number> {
  const findings: Finding[] = [];
  for (const command of opts.bar) {
    const res = await run(parseBarCommand(command), {
      cwd: opts.worktree,
      allowFail: true,
      timeoutMs: 120_000,
    });
    if (res.code !== 0) {
      findings.push({
        severity: "blocker",
        text: `\`${command}\` exits ${res.code} on the PR head`,
      });
    }
  }
  const verdict = formatVerdict({ verdict: findings.length ? "FAIL" : "PASS", findings });
  await Deno.writeTextFile(opts.verdictPath, verdict + "\n");
  return 0;
}
