/**
 * The cheap check the idle tick runs on NEXT-STEPS.md and inbox files: read
 * the first line only and say which status it declares. No imports on purpose.
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
