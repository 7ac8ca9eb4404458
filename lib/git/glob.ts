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

/** A glob taken apart: the RegExp body of its pattern, and how the body applies to a path. */
interface ParsedGlob {
  /** The pattern without its leading and trailing `/`. */
  pattern: string;
  /** The pattern as a RegExp body (no anchors). */
  body: string;
  /** A trailing `/`: the folder and everything below it. */
  folder: boolean;
  /** A `/` in the pattern: matched from the root; else at any depth. */
  anchored: boolean;
}

function parseGlob(glob: string): ParsedGlob {
  let pattern = glob.trim();
  if (pattern === "" || pattern === "/") {
    throw new Error(`Cannot use glob ${JSON.stringify(glob)}: it is empty`);
  }
  const folder = pattern.endsWith("/");
  if (folder) pattern = pattern.replace(/\/+$/, "");
  const anchored = pattern.includes("/");
  pattern = pattern.replace(/^\/+/, "");
  if (pattern === "") throw new Error(`Cannot use glob ${JSON.stringify(glob)}: it is empty`);
  return { pattern, body: translate(pattern), folder, anchored };
}

function toRegExp(g: ParsedGlob): RegExp {
  const prefix = g.anchored ? "^" : "^(?:.*/)?";
  const suffix = g.folder ? "(?:/.*)?$" : "$";
  return new RegExp(prefix + g.body + suffix, "i");
}

/** Compiles a glob into an anchored, case-insensitive RegExp over repo-relative paths. */
export function globToRegExp(glob: string): RegExp {
  return toRegExp(parseGlob(glob));
}

/** True when the repo-relative `path` matches `glob` (see the file comment). */
export function matchGlob(path: string, glob: string): boolean {
  return globToRegExp(glob).test(normalizePath(path));
}

/** A repo-relative path without a leading `./` or `/`. */
export function normalizePath(path: string): string {
  return path.replace(/^(?:\.\/|\/)+/, "");
}

// deno-lint-ignore no-control-regex
const ASCII = /^[\x00-\x7f]*$/;

/**
 * Globs that each match one whole path segment, indexed so a segment is tested against
 * the few that can match it: a plain name by lookup, a `*`/`?` pattern with a literal
 * first (or else last) character only against segments that start (end) with it.
 */
class SegmentGlobs {
  readonly #names = new Map<string, number[]>();
  readonly #byFirst = new Map<string, { index: number; re: RegExp }[]>();
  readonly #byLast = new Map<string, { index: number; re: RegExp }[]>();
  readonly #always: { index: number; re: RegExp }[] = [];

  add(index: number, g: ParsedGlob): void {
    const p = g.pattern;
    if (!ASCII.test(p) || /[[\\]/.test(p) || p.includes("**")) {
      this.#always.push({ index, re: new RegExp(`^(?:${g.body})$`, "i") });
      return;
    }
    const key = p.toLowerCase();
    if (!/[*?]/.test(p)) {
      this.#names.set(key, [...(this.#names.get(key) ?? []), index]);
      return;
    }
    const entry = { index, re: new RegExp(`^(?:${g.body})$`, "i") };
    const [first, last] = [key[0]!, key[key.length - 1]!];
    const bucket = !/[*?]/.test(first)
      ? this.#bucket(this.#byFirst, first)
      : !/[*?]/.test(last)
      ? this.#bucket(this.#byLast, last)
      : this.#always;
    bucket.push(entry);
  }

  #bucket<T>(map: Map<string, T[]>, key: string): T[] {
    const list = map.get(key) ?? [];
    map.set(key, list);
    return list;
  }

  /** Adds the indexes of the globs the lower-cased ASCII `segment` matches to `found`. */
  collect(segment: string, found: number[]): void {
    // Called for every segment of every path a PR touches: no allocation on a miss.
    const named = this.#names.get(segment);
    if (named !== undefined) { for (const index of named) found.push(index); }
    const first = this.#byFirst.get(segment.charAt(0));
    if (first !== undefined) testEach(first, segment, found);
    const last = this.#byLast.get(segment.charAt(segment.length - 1));
    if (last !== undefined) testEach(last, segment, found);
    testEach(this.#always, segment, found);
  }
}

function testEach(list: readonly { index: number; re: RegExp }[], s: string, found: number[]) {
  for (const w of list) if (w.re.test(s)) found.push(w.index);
}

/**
 * Many globs, matched against many paths (the gate's ~300 built-in refusals against a PR of
 * 10,000 files): the same answers as testing each glob's RegExp, at a fraction of the cost.
 * A glob without a `/` is about one path segment — the basename, or for a folder glob any
 * segment — so it is looked up by that segment (SegmentGlobs); only globs with a `/` are
 * tried on the whole path. A path with characters beyond ASCII is tested glob by glob (a
 * RegExp's case-insensitivity is not toLowerCase's there).
 */
export class GlobSet {
  readonly #each: RegExp[];
  readonly #base = new SegmentGlobs();
  readonly #folder = new SegmentGlobs();
  /**
   * Globs with a `/`: tried on the whole path, but only when it has the glob's last segment
   * (`need`, when that is a plain name, as `/name/`) as its basename, or for a folder glob as
   * any segment.
   */
  readonly #anchored: { index: number; need: string | null; folder: boolean }[] = [];
  readonly #folders = new Map<string, number[]>();

  constructor(globs: readonly string[]) {
    const parsed = globs.map(parseGlob);
    this.#each = parsed.map(toRegExp);
    for (const [index, g] of parsed.entries()) {
      if (g.anchored) {
        const last = g.pattern.slice(g.pattern.lastIndexOf("/") + 1);
        const plain = last !== "" && ASCII.test(last) && !/[*?[\\]/.test(last);
        this.#anchored.push({
          index,
          need: plain ? `/${last.toLowerCase()}/` : null,
          folder: g.folder,
        });
      } else (g.folder ? this.#folder : this.#base).add(index, g);
    }
  }

  /** The indexes of the globs `path` matches, in the globs' order. */
  matches(path: string): number[] {
    if (!ASCII.test(path)) {
      return this.#each.flatMap((re, index) => re.test(path) ? [index] : []);
    }
    const lower = path.toLowerCase();
    const slash = lower.lastIndexOf("/");
    const found = [...this.#inFolder(slash < 0 ? "" : lower.slice(0, slash))];
    const base = lower.slice(slash + 1);
    this.#folder.collect(base, found);
    this.#base.collect(base, found);
    const wrapped = this.#anchored.length > 0 ? `/${lower}/` : "";
    for (const { index, need, folder } of this.#anchored) {
      if (need !== null && (folder ? !wrapped.includes(need) : !wrapped.endsWith(need))) continue;
      if (this.#each[index]!.test(path)) found.push(index);
    }
    return found.length > 1 ? [...new Set(found)].sort((a, b) => a - b) : found;
  }

  /**
   * The folder globs any segment of a lower-cased folder path matches, asked once per
   * folder: a PR's thousands of files sit in far fewer folders.
   */
  #inFolder(folder: string): number[] {
    let found = this.#folders.get(folder);
    if (found === undefined) {
      found = [];
      if (folder !== "") {
        for (const segment of folder.split("/")) this.#folder.collect(segment, found);
      }
      this.#folders.set(folder, found);
    }
    return found;
  }

  /** True when `path` matches any of the globs. */
  test(path: string): boolean {
    return this.matches(path).length > 0;
  }
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
