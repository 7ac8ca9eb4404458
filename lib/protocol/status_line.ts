/**
 * The cheap checks the idle tick (and anything that must not load the full
 * parsers) runs on NEXT-STEPS.md, COWORK-STATUS.md and inbox files: the
 * status on the first line, and a field of the header. No imports on purpose.
 */

/**
 * Returns the status declared on the first line (`Status: OPEN`, `DONE` or
 * `QUEUED`), or null when the first line is not a Status line. Tolerates a
 * UTF-8 BOM, CRLF, surrounding spaces and any letter case.
 */
export function readStatus(text: string): "OPEN" | "DONE" | "QUEUED" | null {
  const end = text.indexOf("\n");
  let first = end < 0 ? text : text.slice(0, end);
  if (first.charCodeAt(0) === 0xfeff) first = first.slice(1);
  const match = /^\s*status\s*:\s*(open|done|queued)\s*$/i.exec(first);
  if (!match || match[1] === undefined) return null;
  return match[1].toUpperCase() as "OPEN" | "DONE" | "QUEUED";
}

/**
 * The value of a header field (`Task: 3`, `Branch: task-3`, `Kind: fix`) of a
 * brief or report: the lines before the first blank line, key in any letter
 * case. Null when the header has no such field. The full parsers
 * (protocol/brief.ts, protocol/report.ts) check everything else.
 */
export function readHeaderField(text: string | null, key: string): string | null {
  if (text === null) return null;
  const header = text.replace(/^\uFEFF/, "").split(/\r?\n[ \t]*\r?\n/, 1)[0] ?? "";
  for (const line of header.split(/\r?\n/)) {
    const m = /^\s*([A-Za-z][A-Za-z ]*?)\s*:\s*(.*?)\s*$/.exec(line);
    if (m && m[1]!.toLowerCase() === key.toLowerCase()) return m[2]!;
  }
  return null;
}

/** The header's `Task:` number, or null. */
export function readHeaderTask(text: string | null): number | null {
  const value = readHeaderField(text, "task");
  return value !== null && /^\d+$/.test(value) ? Number(value) : null;
}
