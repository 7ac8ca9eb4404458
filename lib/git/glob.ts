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

/** A glob taken apart: its pattern, and how the pattern applies to a path. */
interface ParsedGlob {
  /** The pattern without its leading and trailing `/`. */
  pattern: string;
  /** A trailing `/`: the folder and everything below it. */
  folder: boolean;
  /** A `/` in the pattern: matched from the root; else at any depth. */
  anchored: boolean;
}

/** A pattern with nothing but literal characters: its RegExp can wait until it is needed. */
const PLAIN = /^[^*?[\\]*$/;

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
  return { pattern, folder, anchored };
}

function toRegExp(g: ParsedGlob): RegExp {
  const prefix = g.anchored ? "^" : "^(?:.*/)?";
  const suffix = g.folder ? "(?:/.*)?$" : "$";
  return new RegExp(prefix + translate(g.pattern) + suffix, "i");
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
/** ASCII with no capital letter: a path that is its own lower case (most are). */
// deno-lint-ignore no-control-regex
const ASCII_LOWER = /^[\x00-\x40\x5b-\x7f]*$/;

/** A glob that needs its RegExp run: one with `*` or `?`, `[…]`, `\\` or beyond ASCII. */
interface Tested {
  index: number;
  re: RegExp;
}

/** What a segment that is exactly a name gets: the globs it matches, the globs to try. */
interface Named {
  /** Segment globs that are this plain name. */
  hits: number[];
  /** Anchored globs whose last segment is this name: tried on the whole path. */
  whole: number[];
}

/**
 * Globs that each match one whole path segment, indexed so a segment is tested against
 * the few that can match it: a plain name by lookup, a `*`/`?` pattern with a literal
 * first (or else last) character only against segments that start (end) with it.
 */
class SegmentGlobs {
  readonly #names = new Map<string, Named>();
  /** The shape (see `shape`) of every name in `#names`. */
  readonly #shapes = new Set<number>();
  /** By the char code of a literal first (last) character, lower-cased: ASCII only. */
  readonly #byFirst: (Tested[] | undefined)[] = [];
  readonly #byLast: (Tested[] | undefined)[] = [];
  readonly #always: Tested[] = [];

  add(index: number, g: ParsedGlob): void {
    const p = g.pattern;
    if (!ASCII.test(p) || /[[\\]/.test(p) || p.includes("**")) {
      this.#always.push({ index, re: new RegExp(`^(?:${translate(p)})$`, "i") });
      return;
    }
    const key = p.toLowerCase();
    if (!/[*?]/.test(p)) {
      this.#named(key).hits.push(index);
      return;
    }
    const entry = { index, re: new RegExp(`^(?:${translate(p)})$`, "i") };
    const [first, last] = [key[0]!, key[key.length - 1]!];
    if (!/[*?]/.test(first)) (this.#byFirst[first.charCodeAt(0)] ??= []).push(entry);
    else if (!/[*?]/.test(last)) (this.#byLast[last.charCodeAt(0)] ??= []).push(entry);
    else this.#always.push(entry);
  }

  /** An anchored glob to try on a whole path whose basename is `name`. */
  addWhole(index: number, name: string): void {
    this.#named(name.toLowerCase()).whole.push(index);
  }

  #named(key: string): Named {
    let named = this.#names.get(key);
    if (named === undefined) this.#names.set(key, named = { hits: [], whole: [] });
    this.#shapes.add(shape(key));
    return named;
  }

  /** The globs a segment that is exactly `segment` (lower-cased) gets, if any. */
  named(segment: string): Named | undefined {
    // Most segments name nothing: their length and first character rule out a lookup.
    if (!this.#shapes.has(shape(segment))) return undefined;
    return this.#names.get(segment);
  }

  /**
   * The indexes of the `*`/`?` globs the lower-cased ASCII `segment` matches, appended to
   * `found` (a new array when `found` is null and there is a hit).
   */
  patterns(segment: string, found: number[] | null): number[] | null {
    const first = this.#byFirst[segment.charCodeAt(0)];
    if (first !== undefined) found = testEach(first, segment, found);
    const last = this.#byLast[segment.charCodeAt(segment.length - 1)];
    if (last !== undefined) found = testEach(last, segment, found);
    return this.#always.length > 0 ? testEach(this.#always, segment, found) : found;
  }
}

/** A segment's length and first character, as one number: a cheap first look before a lookup. */
function shape(segment: string): number {
  return segment.length * 65536 + segment.charCodeAt(0);
}

function append(found: number[] | null, indexes: readonly number[]): number[] {
  if (found === null) return [...indexes];
  for (const index of indexes) found.push(index);
  return found;
}

function testEach(
  list: readonly Tested[],
  s: string,
  found: number[] | null,
): number[] | null {
  for (const w of list) {
    if (w.re.test(s)) (found ??= []).push(w.index);
  }
  return found;
}

/** What a folder (a path without its basename) contributes, worked out once per folder. */
interface FolderHits {
  /** The folder globs one of its segments matches. */
  globs: readonly number[];
  /** Anchored globs whose last segment is one of its segments: to try on the whole path. */
  anchored: readonly number[];
}

const NONE: readonly number[] = Object.freeze([]);

/**
 * Many globs, matched against many paths (the gate's ~300 built-in refusals against a PR of
 * 10,000 files): the same answers as testing each glob's RegExp, at a fraction of the cost.
 * A glob without a `/` is about one path segment — the basename, or for a folder glob any
 * segment — so it is looked up by that segment (SegmentGlobs); only globs with a `/` are
 * tried on the whole path. A path with characters beyond ASCII is tested glob by glob (a
 * RegExp's case-insensitivity is not toLowerCase's there).
 */
export class GlobSet {
  /** Each glob's RegExp over a whole path; a plain name's is made when first needed. */
  readonly #each: (RegExp | undefined)[];
  readonly #parsed: ParsedGlob[];
  /** Folder globs: what a folder's segments are matched against. */
  readonly #folder = new SegmentGlobs();
  /**
   * Every segment glob, folder or not, and the anchored globs by their last segment: what a
   * basename is matched against.
   */
  readonly #basename = new SegmentGlobs();
  /**
   * Globs with a `/` are tried on the whole path, but only a path that has the glob's last
   * segment, when that is a plain name: as its basename (`#basename`'s `whole`), or for a
   * folder glob as any segment (`#folder`'s `whole`, for the folder's segments). Those whose
   * last segment is a pattern are tried on every path.
   */
  readonly #anchoredAlways: number[] = [];
  readonly #folders = new Map<string, FolderHits>();
  /** The last folder asked about: a diff lists a folder's files one after the other. */
  #lastFolder: string | undefined;
  #lastHits: FolderHits = { globs: NONE, anchored: NONE };

  constructor(globs: readonly string[]) {
    const parsed = globs.map(parseGlob);
    this.#parsed = parsed;
    // Anything but a plain name is compiled now: a glob RegExp refuses fails here, not later.
    this.#each = parsed.map((g) => PLAIN.test(g.pattern) ? undefined : toRegExp(g));
    for (const [index, g] of parsed.entries()) {
      if (g.anchored) {
        const last = g.pattern.slice(g.pattern.lastIndexOf("/") + 1);
        if (last === "" || !ASCII.test(last) || /[*?[\\]/.test(last)) {
          this.#anchoredAlways.push(index);
          continue;
        }
        this.#basename.addWhole(index, last);
        if (g.folder) this.#folder.addWhole(index, last);
      } else {
        this.#basename.add(index, g);
        if (g.folder) this.#folder.add(index, g);
      }
    }
  }

  /** The indexes of the globs `path` matches, in the globs' order. */
  matches(path: string): readonly number[] {
    const lower = ASCII_LOWER.test(path) ? path : ASCII.test(path) ? path.toLowerCase() : undefined;
    if (lower === undefined) {
      return this.#parsed.flatMap((_, index) => this.#re(index).test(path) ? [index] : []);
    }
    const slash = lower.lastIndexOf("/");
    const folder = slash < 0 ? null : this.#inFolder(lower.slice(0, slash));
    const base = slash < 0 ? lower : lower.slice(slash + 1);
    let found = folder === null || folder.globs.length === 0 ? null : [...folder.globs];
    const named = this.#basename.named(base);
    if (named !== undefined) {
      if (named.hits.length > 0) found = append(found, named.hits);
      if (named.whole.length > 0) found = this.#tryWhole(named.whole, path, found);
    }
    found = this.#basename.patterns(base, found);
    if (folder !== null && folder.anchored.length > 0) {
      found = this.#tryWhole(folder.anchored, path, found);
    }
    if (this.#anchoredAlways.length > 0) found = this.#tryWhole(this.#anchoredAlways, path, found);
    if (found === null) return NONE;
    return found.length > 1 ? [...new Set(found)].sort((a, b) => a - b) : found;
  }

  #re(index: number): RegExp {
    return this.#each[index] ??= toRegExp(this.#parsed[index]!);
  }

  #tryWhole(indexes: readonly number[], path: string, found: number[] | null): number[] | null {
    for (const index of indexes) {
      if (this.#re(index).test(path)) (found ??= []).push(index);
    }
    return found;
  }

  /**
   * What the segments of a lower-cased folder path contribute, worked out once per folder:
   * a PR's thousands of files sit in far fewer folders.
   */
  #inFolder(folder: string): FolderHits {
    if (folder === this.#lastFolder) return this.#lastHits;
    let hits = this.#folders.get(folder);
    if (hits === undefined) {
      let globs: number[] | null = null;
      let anchored: number[] | null = null;
      for (const segment of folder === "" ? [] : folder.split("/")) {
        const named = this.#folder.named(segment);
        if (named !== undefined) {
          if (named.hits.length > 0) globs = append(globs, named.hits);
          if (named.whole.length > 0) anchored = append(anchored, named.whole);
        }
        globs = this.#folder.patterns(segment, globs);
      }
      hits = { globs: globs ?? NONE, anchored: anchored ?? NONE };
      this.#folders.set(folder, hits);
    }
    this.#lastFolder = folder;
    return this.#lastHits = hits;
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
