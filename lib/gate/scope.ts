/**
 * The gate's scope rule, pure: every path a branch touches must be product
 * code. Input is `git diff --raw -z -M --no-abbrev <base> <head>`; a rename
 * counts both its old and its new path, and file modes count too (symlinks,
 * submodules, an executable-bit change). Built-in refusals (lib/gate/refusals.ts)
 * always apply; the config can add refusals and narrow product code to
 * `gate.product`, and `accepted_infra` routes a refused path to a person —
 * except relay's own files, which no list can route anywhere but back.
 */
import { BUILD_OUTPUT, buildOutputMatcher } from "../git/build_output.ts";
import type { RepoConfig } from "../config/repo_load.ts";
import { GlobSet, normalizePath } from "./glob.ts";
import { BUILT_IN_REFUSALS, RELAY_FILES } from "./refusals.ts";

/** One entry of `git diff --raw -z`. */
export interface DiffEntry {
  /** A, C, D, M, R, T, U or X. */
  status: string;
  /** The similarity of a rename or copy (R100 → 100). */
  score?: number;
  oldMode: string;
  newMode: string;
  oldSha: string;
  newSha: string;
  /** The path after the change (the only path unless a rename or copy). */
  path: string;
  /** For a rename or copy: the path it came from. */
  oldPath?: string;
}

const HEADER = /^:([0-7]{6}) ([0-7]{6}) ([0-9a-f]+) ([0-9a-f]+) ([ACDMRTUX])(\d*)$/;

/**
 * The header of what most of a big PR is, a plain file changed in place: this opening, then
 * `HEX_PAIR_MODIFIED` (the opening is looked for first, without a RegExp call: cheaper).
 */
const PLAIN_OPENING = ":100644 100644 ";
const HEX_PAIR_MODIFIED = /[0-9a-f]+ [0-9a-f]+ M\0/y;

/**
 * `git diff --raw -z` output read field by field, as `out.split("\0")` would cut it: each
 * entry a header, then one path (two for a rename or copy). Throws on anything else.
 */
class RawDiffReader {
  #at = 0;
  /** Entries read so far (for the messages). */
  #count = 0;
  constructor(readonly out: string) {}

  /** The next NUL-ended field; undefined past the end. */
  #field(): string | undefined {
    const { out } = this;
    if (this.#at > out.length) return undefined;
    let end = out.indexOf("\0", this.#at);
    if (end < 0) end = out.length;
    const field = out.slice(this.#at, end);
    this.#at = end + 1;
    return field;
  }

  #path(what: string): string {
    const field = this.#field();
    if (field === undefined || field === "") {
      throw new Error(
        `Cannot read git diff --raw output: ${what} is missing after entry ${this.#count + 1}`,
      );
    }
    return field;
  }

  /**
   * When the next entry is a plain file modified in place (M, mode 100644 before and after),
   * its path; nothing is read until `skip`. Null for any other entry, or none.
   */
  peekPlain(): { path: string; next: number } | null {
    if (!this.out.startsWith(PLAIN_OPENING, this.#at)) return null;
    HEX_PAIR_MODIFIED.lastIndex = this.#at + PLAIN_OPENING.length;
    if (!HEX_PAIR_MODIFIED.test(this.out)) return null;
    const start = HEX_PAIR_MODIFIED.lastIndex;
    let end = this.out.indexOf("\0", start);
    if (end < 0) end = this.out.length;
    if (end === start) return null; // no path: next() says so
    return { path: this.out.slice(start, end), next: end + 1 };
  }

  /** Moves past the entry `peekPlain` returned. */
  skip(plain: { next: number }): void {
    this.#at = plain.next;
    this.#count++;
  }

  /** The next entry; null at the end. */
  next(): DiffEntry | null {
    const header = this.#field();
    if (header === undefined) return null;
    if (header === "") {
      if (/^\0*$/.test(this.out.slice(this.#at))) {
        this.#at = this.out.length + 1;
        return null;
      }
      throw new Error("Cannot read git diff --raw output: an empty field between entries");
    }
    const m = HEADER.exec(header);
    if (!m) {
      throw new Error(
        `Cannot read git diff --raw output: ${JSON.stringify(header)} is not an entry header`,
      );
    }
    const status = m[5]!;
    const entry: DiffEntry = {
      status,
      oldMode: m[1]!,
      newMode: m[2]!,
      oldSha: m[3]!,
      newSha: m[4]!,
      path: "",
    };
    if (m[6]) entry.score = Number(m[6]);
    if (status === "R" || status === "C") {
      entry.oldPath = this.#path("the source path");
      entry.path = this.#path("the destination path");
    } else {
      entry.path = this.#path("the path");
    }
    this.#count++;
    return entry;
  }
}

/** Parses `git diff --raw -z -M --no-abbrev` output. Throws on anything else. */
export function parseRawDiff(out: string): DiffEntry[] {
  const reader = new RawDiffReader(out);
  const entries: DiffEntry[] = [];
  for (let entry = reader.next(); entry !== null; entry = reader.next()) entries.push(entry);
  return entries;
}

export interface ScopeItem {
  path: string;
  /** The categories that refuse it, e.g. "dependency manifest, executable bit". */
  why: string;
}

export interface Scope {
  /** Paths the branch may not touch: the gate sends it back. */
  refused: ScopeItem[];
  /** Refused paths an owner accepted (accepted_infra): the human path, never merged by relay. */
  accepted: ScopeItem[];
  /** Paths that are product code. */
  product: string[];
}

export type ScopeConfig = Pick<RepoConfig, "gate" | "acceptedInfra"> & {
  /** The repo's `never_commit` globs, on top of the built-in build output. */
  neverCommit?: readonly string[];
};

/** Why a branch may not add or change build output, and the fix, in the gate's words. */
const BUILD_OUTPUT_WHY =
  "build output: remove it from the branch (git rm --cached) and list it in .gitignore";

// Compiled once, when the gate first needs it: a PR may touch 10,000 paths.
let relayFiles: GlobSet | undefined;

const SYMLINK = "120000";
const SLASH = 47; // "/"
const SUBMODULE = "160000";

const NO_REASONS: readonly string[] = Object.freeze([]);

/** Why an entry's file mode alone is refused, if it is. */
function modeReasons(e: DiffEntry): readonly string[] {
  // Most entries are plain files changed in place: no array for them.
  if (e.oldMode === e.newMode && e.oldMode === "100644") return NO_REASONS;
  const why: string[] = [];
  if (e.oldMode === SYMLINK || e.newMode === SYMLINK) why.push("symlink");
  if (e.oldMode === SUBMODULE || e.newMode === SUBMODULE) why.push("submodule");
  // Any change of the executable bit, either way; and a new file that arrives executable.
  const bitChanged = (e.oldMode === "100644" && e.newMode === "100755") ||
    (e.oldMode === "100755" && e.newMode === "100644");
  const addedExecutable = e.newMode === "100755" && (e.status === "A" || e.oldMode === "000000");
  if (bitChanged || addedExecutable) why.push("executable bit");
  return why;
}

/**
 * The build output, built-in refusal and `gate.refuse` globs in one GlobSet, in that order
 * (the order their reasons are listed): one lookup a path. Kept while the config's lists
 * are the same.
 */
interface Refusals {
  set: GlobSet;
  /** Indexes below this are build output; below `refuseFrom`, built-in refusals. */
  builtInFrom: number;
  refuseFrom: number;
  neverCommit: readonly string[];
  refuse: readonly string[];
}
let refusals: { key: string; value: Refusals } | undefined;

function refusalsFor(config: ScopeConfig): Refusals {
  const neverCommit = config.neverCommit ?? [];
  const key = JSON.stringify([neverCommit, config.gate.refuse]);
  if (refusals?.key !== key) {
    const build = [...BUILD_OUTPUT, ...neverCommit];
    const builtIn = BUILT_IN_REFUSALS.map((r) => r.glob);
    refusals = {
      key,
      value: {
        set: new GlobSet([...build, ...builtIn, ...config.gate.refuse]),
        builtInFrom: build.length,
        refuseFrom: build.length + builtIn.length,
        neverCommit: [...neverCommit],
        refuse: [...config.gate.refuse],
      },
    };
  }
  return refusals.value;
}

/** How a branch's paths are sorted (classifyScope), one path at a time, into `scope`. */
function scopeSorter(config: ScopeConfig) {
  relayFiles ??= new GlobSet(RELAY_FILES);
  const relay = relayFiles;
  const { set, builtInFrom, refuseFrom, neverCommit, refuse } = refusalsFor(config);
  const product = new GlobSet(config.gate.product);
  const accepted = new GlobSet(config.acceptedInfra);
  const productGiven = config.gate.product.length > 0;

  /** Why `path` (one of `entry`'s) may not be merged; null for most paths: no reason. */
  const reasonsOf = (
    entry: DiffEntry,
    path: string,
    byMode: readonly string[],
  ): string[] | null => {
    const hits = set.matches(path);
    // Most paths of a PR: matched by nothing, a plain file, nothing configured. The full
    // look below would find no reason either (a path with a leading ./ or / aside: its build
    // output check is the matcher's own).
    if (hits.length === 0 && byMode.length === 0 && !productGiven && isPlainPath(path)) return null;
    const found: string[] = [];
    // Removing build output a branch once carried is the fix, not the problem.
    if (entry.status !== "D" && path === entry.path) {
      // Build output is matched on the path without a leading ./ or / (git never writes one).
      const isBuildOutput = normalizePath(path) === path
        ? hits.length > 0 && hits[0]! < builtInFrom
        : buildOutputMatcher(neverCommit).match(path) !== undefined;
      if (isBuildOutput) found.push(BUILD_OUTPUT_WHY);
    }
    for (const i of hits) {
      if (i >= refuseFrom) found.push(`gate.refuse "${refuse[i - refuseFrom]}"`);
      else if (i >= builtInFrom) found.push(BUILT_IN_REFUSALS[i - builtInFrom]!.why);
    }
    if (productGiven && !product.test(path)) found.push("not under the configured product globs");
    for (const why of byMode) found.push(why);
    return found.length === 0 ? null : found;
  };

  const scope: Scope = { refused: [], accepted: [], product: [] };
  const place = (path: string, why: Iterable<string> | null) => {
    if (why === null) {
      scope.product.push(path);
      return;
    }
    // Two globs may give one reason (two manifests of one kind): each is said once.
    const item = { path, why: [...new Set(why)].join(", ") };
    if (!relay.test(path) && accepted.test(path)) scope.accepted.push(item);
    else scope.refused.push(item);
  };
  /**
   * True when `path` is product code for certain, with no entry needed: it matches no glob
   * and nothing narrows product code (a plain file modified in place has no other reason).
   */
  const plainProduct = (path: string) =>
    !productGiven && isPlainPath(path) && set.matches(path).length === 0;
  return { scope, reasonsOf, place, plainProduct };
}

/** A path with no leading ./ or / (git never writes one): the glob set's answer is the whole answer. */
function isPlainPath(path: string): boolean {
  return path.charCodeAt(0) !== SLASH && !path.startsWith("./");
}

/**
 * Sorts a branch's changes into product code, refusals, and owner-accepted infra. `entries`
 * are a tree diff's, as `git diff --raw -M` (no -C, no -B) gives them: each path in one entry,
 * but for a rename's old path, which may also be another entry's (renamed away, added anew).
 */
export function classifyScope(entries: readonly DiffEntry[], config: ScopeConfig): Scope {
  const { scope, reasonsOf, place } = scopeSorter(config);
  // Without renames each path is in one entry: no map of paths is needed.
  if (!entries.some((e) => e.status === "R")) {
    for (const entry of entries) {
      place(entry.path, reasonsOf(entry, entry.path, modeReasons(entry)));
    }
    return scope;
  }
  // A path's reasons, in the order first seen; null for a path with none.
  const reasons = new Map<string, Set<string> | null>();
  const consider = (entry: DiffEntry, path: string, byMode: readonly string[]) => {
    const found = reasonsOf(entry, path, byMode);
    const had = reasons.get(path);
    if (found === null) {
      if (had === undefined) reasons.set(path, null);
    } else if (had) {
      for (const why of found) had.add(why);
    } else {
      reasons.set(path, new Set(found));
    }
  };
  for (const entry of entries) {
    const byMode = modeReasons(entry);
    // A rename touches both of its paths; a copy only its new one (the source is unchanged).
    if (entry.status === "R" && entry.oldPath !== undefined) consider(entry, entry.oldPath, byMode);
    consider(entry, entry.path, byMode);
  }
  for (const [path, why] of reasons) place(path, why);
  return scope;
}

/**
 * `classifyScope(parseRawDiff(out), config)`, the same answer, without an entry for what
 * most of a big PR is: a plain file changed in place that no glob matches (10,000 of them
 * are read in half the time). A diff with a rename is read the long way.
 */
export function scopeOfRawDiff(out: string, config: ScopeConfig): Scope {
  const { scope, reasonsOf, place, plainProduct } = scopeSorter(config);
  const reader = new RawDiffReader(out);
  for (;;) {
    const plain = reader.peekPlain();
    if (plain !== null && plainProduct(plain.path)) {
      scope.product.push(plain.path);
      reader.skip(plain);
      continue;
    }
    const entry = reader.next();
    if (entry === null) return scope;
    if (entry.status === "R") return classifyScope(parseRawDiff(out), config);
    place(entry.path, reasonsOf(entry, entry.path, modeReasons(entry)));
  }
}
