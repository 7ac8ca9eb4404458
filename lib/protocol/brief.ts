/**
 * NEXT-STEPS.md and inbox entries (the brief): parse tolerant input into a
 * Brief. Pure: text in, value out. Prose sections are stored without leading
 * or trailing blank lines and without trailing spaces on lines outside fences.
 * brief_write.ts writes the canonical form back.
 */
import { InputError } from "../errors.ts";
import { barCommandProblem } from "./bar.ts";
import {
  type Block,
  blocksText,
  type FencedBlock,
  isBlank,
  keyedSections,
  type MdSection,
  normalizeText,
  parseHeaderLine,
  scanBlocks,
  splitSections,
  toLines,
} from "./markdown.ts";
import type { Brief, BriefKind, BriefStatus, Section } from "./types.ts";

export interface ParseBriefOptions {
  /** A missing `Task:` line gives task 0 instead of an error (inbox entries). */
  allowMissingTask?: boolean;
  /** A missing `Branch:` line gives the default branch instead of an error. */
  allowMissingBranch?: boolean;
  /** A missing `Kind:` line means `feature` instead of an error (inbox entries). */
  allowMissingKind?: boolean;
}

const HEADER_KEYS = ["status", "task", "title", "branch", "kind", "fixes", "acceptance"] as const;
type HeaderKey = (typeof HEADER_KEYS)[number];
const HEADER_HINT =
  'use only "Status", "Task", "Title", "Branch", "Kind", "Fixes" and "Acceptance" ' +
  'header lines, and put other text under a "## " section';
const STATUSES: readonly BriefStatus[] = ["OPEN", "DONE", "QUEUED"];
const KINDS: readonly BriefKind[] = ["feature", "fix"];
const GOAL = "goal";
const DONE_WHEN = "done when";
const BAR = "verification bar";
const OUT_OF_SCOPE = "out of scope";

interface HeaderValue {
  value: string;
  line: number;
}

/**
 * Parses a brief. Throws InputError naming `file`, the 1-based line and the
 * fix for anything malformed, including bar commands that need a shell.
 */
export function parseBrief(text: string, file: string, opts: ParseBriefOptions = {}): Brief {
  const lines = toLines(normalizeText(text));
  const fail = (line: number, problem: string, fix: string) =>
    new InputError({ file, line }, `Cannot read the brief: ${problem}`, fix);
  const { preamble, sections } = splitSections(scanBlocks(lines, file, "brief"), 2);
  const header = readHeader(preamble, fail);

  const status = header.get("status");
  if (!status) {
    throw fail(
      1,
      'the first line is not a "Status:" line',
      'make line 1 "Status: OPEN" ("Status: DONE" for a task that has run, "Status: QUEUED" in the inbox)',
    );
  }
  if (status.line !== 1) {
    throw fail(
      status.line,
      'the "Status:" line is not the first line',
      "move it to line 1; relay reads only the first line to decide whether to act",
    );
  }
  const statusValue = status.value.toUpperCase();
  if (!isOneOf(STATUSES, statusValue)) {
    throw fail(
      status.line,
      `unknown status "${status.value}"`,
      'write "Status: OPEN", "Status: DONE" or (in the inbox) "Status: QUEUED"',
    );
  }

  const taskLine = header.get("task");
  let task = 0;
  if (taskLine) {
    task = positiveNumber(taskLine, "Task", fail);
  } else if (!opts.allowMissingTask) {
    throw fail(
      1,
      'the header has no "Task:" line',
      'add a line "Task: <number>" after the Status line',
    );
  }

  const title = header.get("title");
  if (!title || title.value === "") {
    throw fail(
      title?.line ?? 1,
      title ? 'the "Title:" line is empty' : 'the header has no "Title:" line',
      'add a line "Title: <one line saying what the task does>"',
    );
  }

  const kindLine = header.get("kind");
  if (!kindLine && !opts.allowMissingKind) {
    throw fail(1, 'the header has no "Kind:" line', 'add a line "Kind: feature" (or "Kind: fix")');
  }
  const kind = kindLine ? kindLine.value.toLowerCase() : "feature";
  if (!isOneOf(KINDS, kind)) {
    throw fail(
      kindLine?.line ?? 1,
      `unknown kind "${kindLine?.value}"`,
      'write "Kind: feature" or "Kind: fix"',
    );
  }

  const fixesLine = header.get("fixes");
  let fixes: number | undefined;
  if (kind === "fix") {
    if (!fixesLine) {
      throw fail(
        kindLine?.line ?? 1,
        'a fix brief has no "Fixes:" line',
        'add a line "Fixes: <number of the task whose PR this fixes>"',
      );
    }
    fixes = positiveNumber(fixesLine, "Fixes", fail);
  } else if (fixesLine) {
    throw fail(
      fixesLine.line,
      'a "Fixes:" line on a brief whose kind is "feature"',
      'delete the "Fixes:" line, or change the kind to "Kind: fix"',
    );
  }

  const branchLine = header.get("branch");
  let branch: string;
  if (branchLine) {
    branch = branchLine.value;
    // Task branches are named for their task: the forge's one-in-flight rule and the gate
    // recognise relay's PRs by that name, and a fix works on the branch of the task it fixes.
    const owner = fixes ?? task;
    const m = /^task-(\d+)$/.exec(branch);
    if (!m || (owner > 0 && Number(m[1]) !== owner)) {
      throw fail(
        branchLine.line,
        m
          ? `branch "${branch}" does not belong to task ${owner}${
            fixes ? ` (the task this brief fixes)` : ""
          }`
          : `branch "${branch}" is not a task branch`,
        `write "Branch: task-${owner || "<n>"}", or leave the line out`,
      );
    }
  } else if (opts.allowMissingBranch) {
    const owner = fixes ?? task;
    branch = owner > 0 ? `task-${owner}` : "";
  } else {
    throw fail(
      1,
      'the header has no "Branch:" line',
      `add a line "Branch: task-${fixes ?? (task || "<n>")}"`,
    );
  }

  // A judgment call: the brief asks a person to accept it, whatever the merge policy. A brief
  // can ask for a person, never waive one (merge_policy is the operator profile's).
  const acceptanceLine = header.get("acceptance");
  if (acceptanceLine && acceptanceLine.value.toLowerCase() !== "human") {
    throw fail(
      acceptanceLine.line,
      `unknown acceptance "${acceptanceLine.value}"`,
      'write "Acceptance: human" to have a person accept this task, or delete the line (merge_policy in the operator profile decides)',
    );
  }

  const body = readSections(sections, lines.length, file, fail);
  const brief: Brief = {
    status: statusValue,
    task,
    title: title.value,
    branch,
    kind,
    goal: body.goal,
    doneWhen: body.doneWhen,
    bar: body.bar,
    extra: body.extra,
  };
  if (fixes !== undefined) brief.fixes = fixes;
  if (acceptanceLine) brief.acceptance = "human";
  if (body.outOfScope !== undefined) brief.outOfScope = body.outOfScope;
  return brief;
}

type Fail = (line: number, problem: string, fix: string) => InputError;

function readHeader(preamble: readonly Block[], fail: Fail): Map<HeaderKey, HeaderValue> {
  const header = new Map<HeaderKey, HeaderValue>();
  for (const block of preamble) {
    if (block.kind === "fence") {
      throw fail(
        block.line,
        'a fenced block before the first "## " section',
        'move it under "## Goal" or another section',
      );
    }
    const text = block.text.trim();
    if (text === "") continue;
    const pair = parseHeaderLine(text);
    if (!pair) {
      throw fail(block.line, `unexpected line "${text}" in the header`, HEADER_HINT);
    }
    if (!isOneOf(HEADER_KEYS, pair.key)) {
      throw fail(
        block.line,
        `unknown header key "${text.slice(0, text.indexOf(":")).trim()}"`,
        HEADER_HINT,
      );
    }
    const earlier = header.get(pair.key);
    if (earlier) {
      const name = pair.key === "status" ? "Status" : capitalise(pair.key);
      throw fail(
        block.line,
        `a second "${name}:" line (the first is on line ${earlier.line})`,
        `keep one "${name}:" line${
          pair.key === "status" ? ", on line 1," : ""
        } and delete the other`,
      );
    }
    header.set(pair.key, { value: pair.value, line: block.line });
  }
  return header;
}

interface Body {
  goal: string;
  doneWhen: string;
  bar: string[];
  outOfScope?: string;
  extra: Section[];
}

function readSections(
  sections: readonly MdSection[],
  lastLine: number,
  file: string,
  fail: Fail,
): Body {
  let goal: string | undefined;
  let doneWhen: string | undefined;
  let bar: string[] | undefined;
  let outOfScope: string | undefined;
  const extra: Section[] = [];
  for (const { key, section } of keyedSections(sections, fail)) {
    if (key === GOAL) goal = requireText(section, fail);
    else if (key === DONE_WHEN) doneWhen = requireText(section, fail);
    else if (key === BAR) bar = readBar(section, file, fail);
    else if (key === OUT_OF_SCOPE) outOfScope = blocksText(section.blocks);
    else extra.push({ heading: section.heading.trim(), body: blocksText(section.blocks) });
  }
  const end = Math.max(lastLine, 1);
  if (goal === undefined) {
    throw fail(
      end,
      'no "## Goal" section',
      'add a "## Goal" section saying what the task achieves',
    );
  }
  if (doneWhen === undefined) {
    throw fail(
      end,
      'no "## Done when" section',
      'add a "## Done when" section with checkable terms',
    );
  }
  if (bar === undefined) {
    throw fail(
      end,
      'no "## Verification bar" section',
      'add a "## Verification bar" section with one fenced block, one command per line',
    );
  }
  const body: Body = { goal, doneWhen, bar, extra };
  if (outOfScope !== undefined) body.outOfScope = outOfScope;
  return body;
}

function requireText(section: MdSection, fail: Fail): string {
  const text = blocksText(section.blocks);
  if (text === "") {
    throw fail(
      section.line,
      `the "## ${section.heading}" section is empty`,
      "write its content under the heading",
    );
  }
  return text;
}

function readBar(section: MdSection, file: string, fail: Fail): string[] {
  let block: FencedBlock | undefined;
  for (const b of section.blocks) {
    if (isBlank(b)) continue;
    if (b.kind === "line") {
      throw fail(
        b.line,
        'text outside the fenced block in "## Verification bar"',
        'put only the fenced block of commands in this section; move explanations to "## Done when"',
      );
    }
    if (block) {
      throw fail(
        b.line,
        'a second fenced block in "## Verification bar"',
        "put all commands in one fenced block, one command per line",
      );
    }
    block = b;
  }
  if (!block) {
    throw fail(
      section.line,
      '"## Verification bar" has no fenced block',
      "add a fenced block (```) under the heading with one command per line",
    );
  }
  const commands: string[] = [];
  block.content.split("\n").forEach((raw, index) => {
    const command = raw.trim();
    if (command === "") return;
    const problem = barCommandProblem(command);
    if (problem) {
      throw new InputError({ file, line: block.line + 1 + index }, problem.problem, problem.fix);
    }
    commands.push(command);
  });
  if (commands.length === 0) {
    throw fail(
      block.line,
      'the fenced block in "## Verification bar" is empty',
      "list the commands that prove the task is done, one per line",
    );
  }
  return commands;
}

function positiveNumber(entry: HeaderValue, name: string, fail: Fail): number {
  if (!/^\d+$/.test(entry.value) || Number(entry.value) < 1) {
    throw fail(
      entry.line,
      `${name} is "${entry.value}", not a task number`,
      `write a whole number from 1 up, e.g. "${name}: 12"`,
    );
  }
  return Number(entry.value);
}

function isOneOf<T extends string>(values: readonly T[], value: string): value is T {
  return (values as readonly string[]).includes(value);
}

function capitalise(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
