/**
 * The honesty rule: what makes a parsed report unacceptable for its brief.
 * Separate from the report's parser and writer (report.ts) because it judges
 * content, not form: the poll checks the report the agent wrote, the gate the
 * report on main. Pure: values in, problems out.
 */
import { sameCommand } from "./bar.ts";
import type { Brief, Report } from "./types.ts";

/** Words in prose that claim success; they need pasted output to back them. */
const CLAIM =
  /\b(verified|tests? (?:all )?pass(?:es|ed)?|all (?:tests? )?(?:good|green|pass(?:es|ed|ing)?)|works|passes|passing|succeeds|succeeded|lgtm)\b/i;

/**
 * The honesty rule: returns the problems that make `report` unacceptable for
 * `brief` (empty when it is valid). A SHIPPED report must paste non-empty
 * output for every bar command; any report whose prose claims success must
 * back it with output for every bar command; a BLOCKED report must say why.
 */
export function checkReport(report: Report, brief: Brief): string[] {
  const problems: string[] = [];
  if (report.task !== brief.task) {
    problems.push(`The report is for task ${report.task} but the brief is task ${brief.task}.`);
  }
  if (report.branch !== "" && brief.branch !== "" && report.branch !== brief.branch) {
    problems.push(
      `The report names branch "${report.branch}" but the brief's branch is "${brief.branch}".`,
    );
  }
  const missing: string[] = [];
  for (const command of brief.bar) {
    const run = report.verification.find((r) => sameCommand(r.command, command));
    // A command that prints nothing (tsc --noEmit, test -f …) is answered by an empty block
    // with its Exit line; relay's own evidence shows the same run.
    if (!run || (run.output.trim() === "" && run.exit === undefined)) {
      missing.push(command);
      continue;
    }
    if (report.outcome === "SHIPPED" && run.exit !== undefined && run.exit !== 0) {
      problems.push(
        `The report says SHIPPED but its pasted run of \`${command}\` ends with Exit: ${run.exit}.`,
      );
    }
  }
  if (report.outcome === "SHIPPED") {
    if (report.whatShipped.trim() === "") {
      problems.push('The report says SHIPPED but "## What shipped" is empty.');
    }
    for (const command of missing) {
      problems.push(
        `No pasted output for \`${command}\`: add "### \`${command}\`" under "## Verification" ` +
          "with the command's real output in a fenced block, then its `Exit: <code>` line.",
      );
    }
  }
  const claims: [string, string][] = [
    ["What shipped", report.whatShipped],
    ["Verification", report.verificationNote ?? ""],
  ];
  for (const [name, prose] of claims) {
    const claim = CLAIM.exec(prose);
    if (claim && missing.length > 0) {
      problems.push(
        `"## ${name}" claims "${claim[0]}" without pasted output for ${
          missing.map((c) => `\`${c}\``).join(", ")
        }; a claim counts only with each bar command's output in a fenced block.`,
      );
    }
  }
  if (
    report.outcome === "BLOCKED" && report.whatShipped.trim() === "" &&
    report.pushback.trim() === ""
  ) {
    problems.push(
      'The report says BLOCKED but explains nothing: say why under "## Pushback" or "## What shipped".',
    );
  }
  return problems;
}
