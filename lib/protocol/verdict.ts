/**
 * The reviewer's verdict: a line `Verdict: PASS` or `Verdict: FAIL`, then
 * findings as `- [blocker|major|minor] text`. Anything else is invalid —
 * never a pass. Claude Code's `--output-format json` wraps the final message
 * in `{"result": …}`; that wrapper is unwrapped first.
 */
import type { Finding, Severity } from "../state/reviews.ts";

export interface Verdict {
  verdict: "PASS" | "FAIL";
  findings: Finding[];
}

export type VerdictParse = { ok: true; value: Verdict } | { ok: false; problem: string };

/** The final message inside a Claude Code JSON result, or the text itself. */
export function unwrapAgentOutput(text: string): string {
  const trimmed = text.trim();
  if (!trimmed.startsWith("{")) return text;
  try {
    const data = JSON.parse(trimmed);
    if (data && typeof data === "object" && typeof data.result === "string") return data.result;
  } catch {
    // Not JSON: take the text as it is.
  }
  return text;
}

const VERDICT_LINE = /^\s*\**verdict\**\s*:\s*\**\s*(pass|fail)\s*\**\s*$/i;
const FINDING_LINE = /^\s*[-*]\s*\[(blocker|major|minor)\]\s*(.+?)\s*$/i;

export function parseVerdict(raw: string): VerdictParse {
  const text = unwrapAgentOutput(raw).replace(/\r\n?/g, "\n");
  const lines = text.split("\n");
  const verdictLines = lines.map((l, i) => ({ m: VERDICT_LINE.exec(l), i })).filter((x) => x.m);
  if (verdictLines.length === 0) {
    return { ok: false, problem: 'no "Verdict: PASS" or "Verdict: FAIL" line' };
  }
  const values = new Set(verdictLines.map((x) => x.m![1]!.toUpperCase()));
  if (values.size > 1) return { ok: false, problem: "both PASS and FAIL verdict lines" };
  const verdict = [...values][0] as "PASS" | "FAIL";
  const findings: Finding[] = [];
  for (const line of lines.slice(verdictLines[0]!.i + 1)) {
    const m = FINDING_LINE.exec(line);
    if (m) findings.push({ severity: m[1]!.toLowerCase() as Severity, text: m[2]! });
  }
  if (verdict === "FAIL" && findings.length === 0) {
    return { ok: false, problem: "a FAIL verdict with no findings (- [blocker|major|minor] …)" };
  }
  const serious = findings.find((f) => f.severity !== "minor");
  if (verdict === "PASS" && serious) {
    return {
      ok: false,
      problem:
        `a PASS verdict with a ${serious.severity} finding (a PASS carries minor findings only)`,
    };
  }
  return { ok: true, value: { verdict, findings } };
}

export function formatVerdict(v: Verdict): string {
  return [`Verdict: ${v.verdict}`, ...v.findings.map((f) => `- [${f.severity}] ${f.text}`)].join(
    "\n",
  );
}
