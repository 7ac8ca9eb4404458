/**
 * The demo reviewer: a scripted reviewer built into relay. It does not trust
 * the report: it runs the verification bar itself in the PR head's worktree
 * and passes only when every command exits 0.
 */
import { runCommand } from "../bar/run.ts";
import { formatVerdict } from "../protocol/verdict.ts";
import type { Finding } from "../state/reviews.ts";

export async function runDemoReviewer(
  opts: {
    worktree: string;
    bar: string[];
    verdictPath: string;
    timeoutMs: number;
    /** `bar_env`: names of relay's environment the commands also get. */
    passEnv?: readonly string[];
  },
): Promise<number> {
  const findings: Finding[] = [];
  for (const command of opts.bar) {
    // Like relay's own run: the minimal environment (see barEnv), output redacted.
    const res = await runCommand(command, opts.worktree, opts.timeoutMs, opts.passEnv);
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
