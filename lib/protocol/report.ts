/**
 * COWORK-STATUS.md (the report): parse what the executor wrote, and write the
 * canonical form relay commits (with its warnings and evidence). Pure: text
 * in, value out. The honesty rule a report must meet is in honesty.ts.
 *
 * Canonical form: LF, no BOM; header lines Task, Outcome, Branch, Head, PR
 * (an empty value is written as `Head:`); relay warnings as `> relay: <text>`
 * lines separated by blank lines; then `## What shipped`, `## Verification`,
 * `## Beyond the brief`, `## Pushback`, extra sections, and `## Relay evidence`
 * last when there is evidence; one trailing newline.
 *
 * Command output in fenced blocks round-trips exactly (leading and trailing
 * blank lines, backtick runs, tildes, lone CRs included) as long as it holds
 * no "\r\n": parsing turns CRLF into LF. The writer picks a fence longer than
 * any backtick run in the output. Evidence durations are whole milliseconds;
 * warnings are single lines (the writer joins lines with spaces).
 */
import { InputError } from "../errors.ts";
import {
  blocksText,
  codeSpan,
  type FencedBlock,
  headerLine,
  isBlank,
  keyedSections,
  type MdSection,
  normalizeText,
  parseHeaderLine,
  renderFence,
  renderSection,
  scanBlocks,
  splitSections,
  stripCodeSpan,
  toLines,
} from "./markdown.ts";
import type { Evidence, Outcome, PastedRun, Report, Section } from "./types.ts";

const HEADER_KEYS = ["task", "outcome", "branch", "head", "pr"] as const;
type HeaderKey = (typeof HEADER_KEYS)[number];
const HEADER_NAMES: Record<HeaderKey, string> = {
  task: "Task",
  outcome: "Outcome",
  branch: "Branch",
  head: "Head",
  pr: "PR",
};
const HEADER_HINT = 'use only "Task", "Outcome", "Branch", "Head" and "PR" header lines, ' +
  'and put other text under a "## " section';
const OUTCOMES: readonly Outcome[] = ["SHIPPED", "BLOCKED"];
const WARNING = /^>[ \t]*relay:[ \t]*(.*)$/i;
const EXIT = /^exit(?:[ \t]+code)?[ \t]*:[ \t]*(.*)$/i;
const EVIDENCE_LINE =
  /^exit[ \t]*:[ \t]*(-?\d+)[ \t]*·[ \t]*tree[ \t]+(\S+)[ \t]*·[ \t]*(\d+(?:\.\d+)?)s([ \t]*·[ \t]*timed out)?$/i;

type Fail = (line: number, problem: string, fix: string) => InputError;

/** Parses a report. Throws InputError naming `file`, the 1-based line and the fix. */
export function parseReport(text: string, file: string): Report {
  const lines = toLines(normalizeText(text));
  const fail: Fail = (line, problem, fix) =>
    new InputError({ file, line }, `Cannot read the report: ${problem}`, fix);
  const { preamble, sections } = splitSections(scanBlocks(lines, file, "report"), 2);

  const warnings: string[] = [];
  const header = new Map<HeaderKey, { value: string; line: number }>();
  for (const block of preamble) {
    if (block.kind === "fence") {
      throw fail(
        block.line,
        'a fenced block before the first "## " section',
        'move it under "## Verification"',
      );
    }
    const text = block.text.trim();
    if (text === "") continue;
    const warning = WARNING.exec(text);
    if (warning) {
      warnings.push((warning[1] ?? "").trim());
      continue;
    }
    const pair = parseHeaderLine(text);
    if (!pair) throw fail(block.line, `unexpected line "${text}" in the header`, HEADER_HINT);
    if (!isOneOf(HEADER_KEYS, pair.key)) {
      throw fail(
        block.line,
        `unknown header key "${text.slice(0, text.indexOf(":")).trim()}"`,
        HEADER_HINT,
      );
    }
    const earlier = header.get(pair.key);
    if (earlier) {
      throw fail(
        block.line,
        `a second "${HEADER_NAMES[pair.key]}:" line (the first is on line ${earlier.line})`,
        "keep one and delete the other",
      );
    }
    header.set(pair.key, { value: pair.value, line: block.line });
  }

  const taskLine = header.get("task");
  if (!taskLine) {
    throw fail(1, 'the header has no "Task:" line', 'add a line "Task: <number of the brief>"');
  }
  if (!/^\d+$/.test(taskLine.value) || Number(taskLine.value) < 1) {
    throw fail(
      taskLine.line,
      `Task is "${taskLine.value}", not a task number`,
      'write the brief\'s number, e.g. "Task: 12"',
    );
  }
  const outcomeLine = header.get("outcome");
  if (!outcomeLine) {
    throw fail(
      1,
      'the header has no "Outcome:" line',
      'add a line "Outcome: SHIPPED" or "Outcome: BLOCKED"',
    );
  }
  const outcome = outcomeLine.value.toUpperCase();
  if (!isOneOf(OUTCOMES, outcome)) {
    throw fail(
      outcomeLine.line,
      `unknown outcome "${outcomeLine.value}"`,
      'write "Outcome: SHIPPED" or "Outcome: BLOCKED"',
    );
  }

  const report: Report = {
    task: Number(taskLine.value),
    outcome,
    branch: header.get("branch")?.value ?? "",
    head: header.get("head")?.value ?? "",
    pr: header.get("pr")?.value ?? "",
    warnings,
    whatShipped: "",
    verification: [],
    beyond: "",
    pushback: "",
    evidence: [],
    extra: [],
  };
  readSections(report, sections, fail);
  return report;
}

function readSections(report: Report, sections: readonly MdSection[], fail: Fail): void {
  const extra: Section[] = [];
  for (const { key, section } of keyedSections(sections, fail)) {
    switch (key) {
      case "what shipped":
        report.whatShipped = blocksText(section.blocks);
        break;
      case "verification": {
        const { note, runs } = readVerification(section, fail);
        if (note !== "") report.verificationNote = note;
        report.verification = runs;
        break;
      }
      case "beyond the brief":
        report.beyond = blocksText(section.blocks);
        break;
      case "pushback":
        report.pushback = blocksText(section.blocks);
        break;
      case "relay evidence":
        report.evidence = readEvidence(section, fail);
        break;
      default:
        extra.push({ heading: section.heading.trim(), body: blocksText(section.blocks) });
    }
  }
  report.extra = extra;
}

function readVerification(section: MdSection, fail: Fail): { note: string; runs: PastedRun[] } {
  const { preamble, sections } = splitSections(section.blocks, 3);
  const runs: PastedRun[] = [];
  for (const sub of sections) {
    const command = commandOf(sub, fail);
    let output: FencedBlock | undefined;
    let exit: number | undefined;
    let exitLine = 0;
    for (const block of sub.blocks) {
      if (isBlank(block)) continue;
      if (block.kind === "fence") {
        if (output) {
          throw fail(
            block.line,
            `a second fenced block under "### ${sub.heading}"`,
            "paste the whole output in one fenced block; when the output contains ``` use a longer fence (````)",
          );
        }
        output = block;
        continue;
      }
      const text = block.text.trim();
      const exitMatch = EXIT.exec(text);
      if (exitMatch && exit === undefined) {
        exit = exitCode(exitMatch[1] ?? "", block.line, fail);
        exitLine = block.line;
        continue;
      }
      throw fail(
        block.line,
        exitMatch
          ? `a second "Exit:" line under "### ${sub.heading}" (the first is on line ${exitLine})`
          : `unexpected text "${text}" under "### ${sub.heading}"`,
        "under each command heading put only its output in a fenced block and an optional " +
          '"Exit: <n>" line; put comments above the first "### " heading of "## Verification"',
      );
    }
    const run: PastedRun = { command, output: output?.content ?? "" };
    if (exit !== undefined) run.exit = exit;
    runs.push(run);
  }
  return { note: blocksText(preamble), runs };
}

function readEvidence(section: MdSection, fail: Fail): Evidence[] {
  const { preamble, sections } = splitSections(section.blocks, 3);
  const stray = preamble.find((b) => !isBlank(b));
  if (stray) {
    throw fail(
      stray.line,
      'text before the first command in "## Relay evidence"',
      "leave this section to relay",
    );
  }
  const evidence: Evidence[] = [];
  for (const sub of sections) {
    const command = commandOf(sub, fail);
    const blocks = sub.blocks.filter((b) => !isBlank(b));
    const [first, second, third] = blocks;
    const match = first?.kind === "line" ? EVIDENCE_LINE.exec(first.text.trim()) : null;
    if (!first || first.kind !== "line" || !match) {
      throw fail(
        first?.line ?? sub.line,
        `no "Exit: <n> · tree <sha> · <seconds>s" line under "### ${sub.heading}" in "## Relay evidence"`,
        "leave this section to relay, or delete it; relay writes it again",
      );
    }
    if (!second || second.kind !== "fence" || third) {
      throw fail(
        (third ?? second)?.line ?? first.line,
        `"### ${sub.heading}" in "## Relay evidence" does not hold exactly one fenced block after its Exit line`,
        "leave this section to relay, or delete it; relay writes it again",
      );
    }
    const item: Evidence = {
      command,
      exit: Number(match[1]),
      tree: match[2] ?? "",
      durationMs: Math.round(Number(match[3]) * 1000),
      output: second.content,
    };
    if (match[4] !== undefined) item.timedOut = true;
    evidence.push(item);
  }
  return evidence;
}

function commandOf(sub: MdSection, fail: Fail): string {
  const command = stripCodeSpan(sub.heading.trim()).trim();
  if (command === "") {
    throw fail(
      sub.line,
      'a "### " heading with no command',
      "write the bar command in the heading, e.g. ### `deno task test`",
    );
  }
  return command;
}

function exitCode(value: string, line: number, fail: Fail): number {
  if (!/^-?\d+$/.test(value.trim())) {
    throw fail(
      line,
      `the Exit line says "${value.trim()}", not a number`,
      'write the exit status as a number, e.g. "Exit: 0"',
    );
  }
  return Number(value.trim());
}

function isOneOf<T extends string>(values: readonly T[], value: string): value is T {
  return (values as readonly string[]).includes(value);
}

/** Writes the canonical form of a report (see the file comment). */
export function writeReport(report: Report): string {
  const header = [
    headerLine("Task", report.task),
    headerLine("Outcome", report.outcome),
    headerLine("Branch", report.branch),
    headerLine("Head", report.head),
    headerLine("PR", report.pr),
  ].join("\n");
  const warnings = report.warnings.map((w) =>
    `> relay: ${w.replace(/\s*\n\s*/g, " ").trim()}`.trimEnd()
  );
  const sections = [
    renderSection("What shipped", report.whatShipped),
    renderSection("Verification", renderVerification(report)),
    renderSection("Beyond the brief", report.beyond),
    renderSection("Pushback", report.pushback),
    ...report.extra.map((s) => renderSection(s.heading, s.body)),
  ];
  if (report.evidence.length > 0) {
    sections.push(renderSection("Relay evidence", renderEvidence(report.evidence)));
  }
  const top = warnings.length > 0 ? `${header}\n\n${warnings.join("\n\n")}` : header;
  return `${top}\n\n${sections.join("\n")}`;
}

function renderVerification(report: Report): string {
  const parts: string[] = [];
  if (report.verificationNote !== undefined && report.verificationNote !== "") {
    parts.push(report.verificationNote);
  }
  for (const run of report.verification) {
    let part = `### ${codeSpan(run.command)}\n\n${renderFence(run.output)}`;
    if (run.exit !== undefined) part += `\n\nExit: ${run.exit}`;
    parts.push(part);
  }
  return parts.join("\n\n");
}

function renderEvidence(evidence: readonly Evidence[]): string {
  return evidence.map((e) => {
    const seconds = Math.round(e.durationMs) / 1000;
    const line = `Exit: ${e.exit} · tree ${e.tree} · ${seconds}s${
      e.timedOut ? " · timed out" : ""
    }`;
    return `### ${codeSpan(e.command)}\n\n${line}\n\n${renderFence(e.output)}`;
  }).join("\n\n");
}
