/**
 * Markdown helpers shared by the brief and report parsers and writers:
 * normalising text, scanning fenced blocks (``` or ~~~, any length >= 3),
 * splitting ATX-heading sections with 1-based line numbers, and choosing a
 * fence that cannot be closed early by the content it wraps.
 *
 * Fenced content is kept verbatim: the lines between the fences joined by
 * "\n" (no trailing newline). Only CRLF -> LF (see normalizeText) and, for an
 * indented opening fence, up to that many leading spaces per line are lost.
 */
import { InputError } from "../errors.ts";

/** Drops a leading UTF-8 BOM and turns CRLF into LF. Lone CRs are kept. */
export function normalizeText(text: string): string {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return body.replace(/\r\n/g, "\n");
}

/** Splits normalised text into lines; a final newline does not add an empty line. */
export function toLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** A line outside any fenced block. */
export interface TextLine {
  kind: "line";
  /** 1-based line number. */
  line: number;
  text: string;
}

/** A fenced code block. */
export interface FencedBlock {
  kind: "fence";
  /** 1-based line number of the opening fence. */
  line: number;
  /** 1-based line number of the closing fence. */
  endLine: number;
  /** The opening fence run, e.g. "```" or "~~~~". */
  fence: string;
  /** Info string after the opening fence, trimmed. */
  info: string;
  /** Lines between the fences joined by "\n"; "" when there are none. */
  content: string;
  /** The block's lines as written, fences included. */
  raw: string[];
}

export type Block = TextLine | FencedBlock;

const OPEN_FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const CLOSE_FENCE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;

/**
 * Groups lines into text lines and fenced blocks. `doc` names the document
 * in errors ("brief", "report"). Throws InputError on an unterminated fence.
 */
export function scanBlocks(lines: readonly string[], file: string, doc: string): Block[] {
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const text = lines[i] ?? "";
    const open = OPEN_FENCE.exec(text);
    const indent = open?.[1] ?? "";
    const fence = open?.[2] ?? "";
    const info = open?.[3] ?? "";
    if (!open || (fence.startsWith("`") && info.includes("`"))) {
      blocks.push({ kind: "line", line: i + 1, text });
      i++;
      continue;
    }
    let close = -1;
    for (let j = i + 1; j < lines.length; j++) {
      const run = CLOSE_FENCE.exec(lines[j] ?? "")?.[1];
      if (run !== undefined && run[0] === fence[0] && run.length >= fence.length) {
        close = j;
        break;
      }
    }
    if (close < 0) {
      throw new InputError(
        { file, line: i + 1 },
        `Cannot read the ${doc}: the fenced block opened with "${fence}" is never closed`,
        `end the block with a line "${fence}"; when the content itself contains "${fence}", ` +
          `open and close the block with a longer fence such as "${fence}${fence[0]}"`,
      );
    }
    const content = lines.slice(i + 1, close).map((l) => dedent(l, indent.length));
    blocks.push({
      kind: "fence",
      line: i + 1,
      endLine: close + 1,
      fence,
      info: info.trim(),
      content: content.join("\n"),
      raw: lines.slice(i, close + 1),
    });
    i = close + 1;
  }
  return blocks;
}

function dedent(line: string, count: number): string {
  let n = 0;
  while (n < count && line[n] === " ") n++;
  return line.slice(n);
}

/** Parses an ATX heading line (`## Title`, optional closing #s); null otherwise. */
export function atxHeading(text: string): { level: number; title: string } | null {
  const match = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$/.exec(text);
  if (!match || match[1] === undefined) return null;
  const title = (match[2] ?? "").replace(/(?:^|[ \t]+)#+$/, "").trim();
  return { level: match[1].length, title };
}

/** A section: its heading, the heading's 1-based line and the blocks under it. */
export interface MdSection {
  heading: string;
  line: number;
  blocks: Block[];
}

/**
 * Splits blocks at headings of exactly `level` (headings inside fenced
 * blocks do not count). Blocks before the first such heading form the preamble.
 */
export function splitSections(
  blocks: readonly Block[],
  level: number,
): { preamble: Block[]; sections: MdSection[] } {
  const preamble: Block[] = [];
  const sections: MdSection[] = [];
  let current: MdSection | undefined;
  for (const block of blocks) {
    const heading = block.kind === "line" ? atxHeading(block.text) : null;
    if (heading && heading.level === level) {
      current = { heading: heading.title, line: block.line, blocks: [] };
      sections.push(current);
    } else if (current) {
      current.blocks.push(block);
    } else {
      preamble.push(block);
    }
  }
  return { preamble, sections };
}

/** Lower-cased, whitespace-collapsed heading, for matching known section names. */
export function sectionKey(heading: string): string {
  return heading.trim().replace(/\s+/g, " ").toLowerCase();
}

/** How a parser reports a problem: an error naming the line and the fix. */
export type Fail = (line: number, problem: string, fix: string) => Error;

/**
 * The `## ` sections with their keys, in order. A heading with no name and a
 * second section of the same name are errors, in the brief and the report alike.
 */
export function keyedSections(
  sections: readonly MdSection[],
  fail: Fail,
): { key: string; section: MdSection }[] {
  const seen = new Map<string, number>();
  return sections.map((section) => {
    const key = sectionKey(section.heading);
    if (key === "") {
      throw fail(
        section.line,
        'a "## " heading with no name',
        "name the section or delete the heading",
      );
    }
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      throw fail(
        section.line,
        `a second "## ${section.heading}" section (the first is on line ${earlier})`,
        "merge the two sections into one",
      );
    }
    seen.set(key, section.line);
    return { key, section };
  });
}

/**
 * The markdown text of some blocks: trailing whitespace removed from lines
 * outside fences, fenced blocks as written, leading and trailing blank lines
 * dropped.
 */
export function blocksText(blocks: readonly Block[]): string {
  const lines = blocks.flatMap((b) => (b.kind === "line" ? [b.text.trimEnd()] : b.raw));
  let start = 0;
  let end = lines.length;
  while (start < end && (lines[start] ?? "").trim() === "") start++;
  while (end > start && (lines[end - 1] ?? "").trim() === "") end--;
  return lines.slice(start, end).join("\n");
}

/** Whether a block is a text line holding only whitespace. */
export function isBlank(block: Block): boolean {
  return block.kind === "line" && block.text.trim() === "";
}

function longestBacktickRun(text: string): number {
  let longest = 0;
  for (const match of text.matchAll(/`+/g)) longest = Math.max(longest, match[0].length);
  return longest;
}

/** A backtick fence longer than any backtick run in `content` (at least ```). */
export function fenceFor(content: string): string {
  return "`".repeat(Math.max(3, longestBacktickRun(content) + 1));
}

/**
 * Renders `content` in a fenced block that scanBlocks reads back as exactly
 * `content` (for any string without "\r\n"). No trailing newline.
 */
export function renderFence(content: string): string {
  const fence = fenceFor(content);
  return content === "" ? `${fence}\n${fence}` : `${fence}\n${content}\n${fence}`;
}

/** Renders `text` as an inline code span, with enough backticks to hold it. */
export function codeSpan(text: string): string {
  const ticks = "`".repeat(longestBacktickRun(text) + 1);
  const pad = text.startsWith("`") || text.endsWith("`") ||
      (text.startsWith(" ") && text.endsWith(" ") && text.trim() !== "")
    ? " "
    : "";
  return `${ticks}${pad}${text}${pad}${ticks}`;
}

/**
 * The inverse of codeSpan: when `text` is exactly one code span, returns its
 * content; otherwise returns `text` unchanged.
 */
export function stripCodeSpan(text: string): string {
  const match = /^(`+)([\s\S]+)\1$/.exec(text);
  if (!match || match[1] === undefined || match[2] === undefined) return text;
  const ticks = match[1].length;
  let inner = match[2];
  for (const run of inner.matchAll(/`+/g)) if (run[0].length === ticks) return text;
  if (inner.startsWith("`") || inner.endsWith("`")) return text;
  if (inner.length >= 2 && inner.startsWith(" ") && inner.endsWith(" ") && inner.trim() !== "") {
    inner = inner.slice(1, -1);
  }
  return inner;
}

/** Parses a `Key: value` header line (key lower-cased); null when it is not one. */
export function parseHeaderLine(text: string): { key: string; value: string } | null {
  const match = /^([A-Za-z][A-Za-z -]*?)[ \t]*:[ \t]*(.*?)[ \t]*$/.exec(text.trim());
  if (!match || match[1] === undefined || match[2] === undefined) return null;
  return { key: match[1].toLowerCase().replace(/\s+/g, " "), value: match[2] };
}

/** Renders a header line; an empty value leaves no trailing space. */
export function headerLine(key: string, value: string | number): string {
  const text = String(value);
  return text === "" ? `${key}:` : `${key}: ${text}`;
}

/** Renders a `## ` section: heading, blank line, body, newline. */
export function renderSection(heading: string, body: string): string {
  return body === "" ? `## ${heading}\n` : `## ${heading}\n\n${body}\n`;
}
