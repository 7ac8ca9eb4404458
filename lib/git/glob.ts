/**
 * Repo-relative globs, gitignore-like and case-insensitive, for the gate's
 * lists (built-in refusals, `gate.product`, `gate.refuse`, `accepted_infra`):
 *
 * - `*` matches within one path segment, `?` one character other than `/`,
 *   `[abc]` / `[!abc]` / `[a-z]` a character class, `\x` a literal `x`;
 * - `**` as a whole segment matches any number of folders, zero included,
 *   so a leading or inner `**` segment matches at any depth and a trailing
 *   one matches everything below;
 * - a trailing `/` means the folder and everything below it;
 * - a pattern with no `/` (other than a trailing one) matches the basename,
 *   or for a folder pattern any folder, at any depth;
 * - a pattern with a `/` (a leading one included) is anchored at the root.
 *
 * Matching is on the whole path; a plain pattern does not also match every
 * file below a folder of that name (write `name/` for that).
 */

/** Compiles a glob into an anchored, case-insensitive RegExp over repo-relative paths. */
export function globToRegExp(glob: string): RegExp {
  let pattern = glob.trim();
  if (pattern === "" || pattern === "/") {
    throw new Error(`Cannot use glob ${JSON.stringify(glob)}: it is empty`);
  }
  const folder = pattern.endsWith("/");
  if (folder) pattern = pattern.replace(/\/+$/, "");
  const anchored = pattern.includes("/");
  pattern = pattern.replace(/^\/+/, "");
  if (pattern === "") throw new Error(`Cannot use glob ${JSON.stringify(glob)}: it is empty`);
  const body = translate(pattern);
  const prefix = anchored ? "^" : "^(?:.*/)?";
  const suffix = folder ? "(?:/.*)?$" : "$";
  return new RegExp(prefix + body + suffix, "i");
}

/** True when the repo-relative `path` matches `glob` (see the file comment). */
export function matchGlob(path: string, glob: string): boolean {
  return globToRegExp(glob).test(normalizePath(path));
}

/** A repo-relative path without a leading `./` or `/`. */
export function normalizePath(path: string): string {
  return path.replace(/^(?:\.\/|\/)+/, "");
}

const SPECIAL = /[.+^${}()|[\]\\*?]/;

function translate(pattern: string): string {
  let out = "";
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === "*") {
      let j = i;
      while (pattern[j] === "*") j++;
      const run = j - i;
      const segmentStart = i === 0 || pattern[i - 1] === "/";
      const segmentEnd = j === pattern.length || pattern[j] === "/";
      if (run >= 2 && segmentStart && segmentEnd) {
        if (j === pattern.length) {
          out += ".*";
        } else {
          out += "(?:.*/)?";
          j++; // the "/" after "**" is part of the any-depth group
        }
      } else {
        out += "[^/]*";
      }
      i = j;
    } else if (c === "?") {
      out += "[^/]";
      i++;
    } else if (c === "[") {
      const cls = readClass(pattern, i);
      if (cls) {
        out += cls.regex;
        i = cls.end;
      } else {
        out += "\\[";
        i++;
      }
    } else if (c === "\\" && i + 1 < pattern.length) {
      out += escapeChar(pattern[i + 1]!);
      i += 2;
    } else {
      out += escapeChar(c);
      i++;
    }
  }
  return out;
}

function escapeChar(c: string): string {
  return SPECIAL.test(c) ? `\\${c}` : c;
}

/** A `[...]` class starting at `start`, or null when it is not closed (then `[` is literal). */
function readClass(pattern: string, start: number): { regex: string; end: number } | null {
  let i = start + 1;
  let negate = false;
  if (pattern[i] === "!" || pattern[i] === "^") {
    negate = true;
    i++;
  }
  let body = "";
  let first = true;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === "]" && !first) {
      if (body === "") return null;
      return { regex: negate ? `[^/${body}]` : `(?!/)[${body}]`, end: i + 1 };
    }
    if (c === "/") return null;
    if (c === "\\" && i + 1 < pattern.length) {
      body += `\\${pattern[i + 1]!}`;
      i += 2;
    } else {
      body += /[\]\\^]/.test(c) ? `\\${c}` : c;
      i++;
    }
    first = false;
  }
  return null;
}
