/**
 * Relay's own evidence against the report: where the agent's pasted runs and
 * relay's own runs of the bar (lib/bar/run.ts) disagree.
 */
import { sameCommand } from "../protocol/bar.ts";
import type { Evidence, Report } from "../protocol/types.ts";

/**
 * Lines for the top of the report where the agent's pasted runs and relay's
 * own runs disagree on pass/fail. A pasted run without an `Exit:` line claims
 * a pass when the report says SHIPPED.
 */
export function disagreements(report: Report, evidence: readonly Evidence[]): string[] {
  const lines: string[] = [];
  for (const ev of evidence) {
    const pasted = report.verification.find((p) => sameCommand(p.command, ev.command));
    const relayPass = ev.exit === 0;
    if (!pasted) {
      if (!relayPass) lines.push(`\`${ev.command}\` fails when relay runs it (exit ${ev.exit}).`);
      continue;
    }
    const claimedPass = pasted.exit !== undefined
      ? pasted.exit === 0
      : report.outcome === "SHIPPED";
    if (claimedPass && !relayPass) {
      lines.push(
        `DISAGREEMENT: the report shows \`${ev.command}\` passing, but relay's own run exited ${ev.exit}${
          ev.timedOut ? " (timed out)" : ""
        }.`,
      );
    } else if (!claimedPass && relayPass) {
      lines.push(
        `DISAGREEMENT: the report shows \`${ev.command}\` failing (exit ${pasted.exit}), but relay's own run passed.`,
      );
    }
  }
  return lines;
}
