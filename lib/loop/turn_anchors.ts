/**
 * Anchors for the commits an agent turn made, written right after the turn and
 * before any guard can HOLD. A commit made on a detached HEAD, on another
 * branch, or on the task branch and then dropped is on no ref: only the
 * worktree's reflog remembers it, and the advice a HOLD gives (move the
 * worktree aside, `git worktree prune`) deletes that reflog with the
 * worktree's git dir. So relay anchors whatever the worktree's HEAD points
 * at, the branch tip, and every commit the HEAD and the branch moved to
 * during the turn (their reflogs since the turn began).
 *
 * Finding them is pure file reads. Writing them is too when the turn changed
 * what steers git (config, hooks): then relay runs no git at all and writes
 * loose ref files itself, as git would (`<common>/<ref>` holding `<sha>\n`).
 */
import { basename, join } from "../path.ts";
import type { Git } from "../git/git.ts";
import { type Journal, stepIndex } from "../state/journal.ts";
import { turnAnchorPrefix } from "../state/paths.ts";
import { worktreeGitDir } from "./guard.ts";

/** Where a worktree's reflogs stood before a turn: a later look reads on from there. */
export interface TurnMark {
  /** The worktree's own git dir (`<common>/worktrees/<name>`), recorded before the turn. */
  gitDir: string;
  /** Size in bytes of `<gitDir>/logs/HEAD` before the turn. */
  headLog: number;
  /** Size in bytes of the branch's reflog before the turn (0 without a branch). */
  branchLog: number;
  /** Seconds since the epoch: a reflog that shrank (rewritten) is read by time from here. */
  since: number;
}

const SHA = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
const ZERO = /^0+$/;
/** Refs git keeps per worktree, under the worktree's own git dir. */
const PER_WORKTREE = ["refs/bisect/", "refs/worktree/", "refs/rewritten/"];

/** A ref name relay may turn into a path: under refs/, no empty, `.` or `..` part, nothing git forbids. */
function safeRefName(name: string): boolean {
  if (name === "HEAD") return true;
  if (!/^refs\/[^\0-\x20\x7f~^:?*[\\]+$/.test(name)) return false;
  return !name.split("/").some((part) => part === "" || part === "." || part === "..");
}

/** A file's bytes after `from`, or all of them when it is shorter than that (rewritten). */
async function readAfter(
  path: string,
  from: number,
): Promise<{ bytes: Uint8Array; shrank: boolean } | null> {
  try {
    using file = await Deno.open(path);
    const size = (await file.stat()).size;
    const shrank = size < from;
    if (!shrank) await file.seek(from, Deno.SeekMode.Start);
    const bytes = new Uint8Array(shrank ? size : size - from);
    let read = 0;
    while (read < bytes.length) {
      const n = await file.read(bytes.subarray(read));
      if (n === null) break;
      read += n;
    }
    return { bytes: bytes.subarray(0, read), shrank };
  } catch {
    return null; // missing, a folder, unreadable: as readBytes
  }
}

async function readBytes(path: string): Promise<Uint8Array | null> {
  try {
    return await Deno.readFile(path);
  } catch {
    // Missing, a folder, unreadable: no value (and never a reason to stop the guard).
    return null;
  }
}

/** The size of a file in bytes, 0 when there is none: where a reflog stands (reflogShas reads on). */
export async function fileSize(path: string): Promise<number> {
  try {
    return (await Deno.stat(path)).size;
  } catch {
    return 0;
  }
}

function branchLog(commonDir: string, branch: string): string | null {
  const ref = `refs/heads/${branch}`;
  return safeRefName(ref) ? join(commonDir, "logs", ...ref.split("/")) : null;
}

/** Marks the worktree's reflogs (HEAD's and the branch's) before an agent's turn. */
export async function markTurn(
  commonDir: string,
  gitDir: string,
  branch: string | null,
): Promise<TurnMark> {
  const log = branch === null ? null : branchLog(commonDir, branch);
  return {
    gitDir,
    headLog: await fileSize(join(gitDir, "logs", "HEAD")),
    branchLog: log ? await fileSize(log) : 0,
    since: Math.floor(Date.now() / 1000),
  };
}

/** The sha in `packed-refs` for `name`, or null. */
async function packedRef(commonDir: string, name: string): Promise<string | null> {
  const data = await readBytes(join(commonDir, "packed-refs"));
  if (data === null) return null;
  for (const line of new TextDecoder().decode(data).split("\n")) {
    if (line.startsWith("#") || line.startsWith("^")) continue;
    const space = line.indexOf(" ");
    if (space !== -1 && line.slice(space + 1) === name) {
      const sha = line.slice(0, space);
      return SHA.test(sha) ? sha : null;
    }
  }
  return null;
}

/** What a ref (or HEAD) of a worktree points at, read from files only (loose, then packed). */
async function resolveRef(
  commonDir: string,
  gitDir: string,
  name: string,
  depth = 0,
): Promise<string | null> {
  if (depth > 5 || !safeRefName(name)) return null;
  const own = name === "HEAD" || PER_WORKTREE.some((p) => name.startsWith(p));
  const data = await readBytes(join(own ? gitDir : commonDir, ...name.split("/")));
  if (data !== null) {
    const text = new TextDecoder().decode(data).trim();
    if (SHA.test(text)) return text;
    if (text.startsWith("ref:")) {
      return await resolveRef(commonDir, gitDir, text.slice(4).trim(), depth + 1);
    }
    return null;
  }
  return name === "HEAD" ? null : await packedRef(commonDir, name);
}

/**
 * The shas a reflog recorded after `from` bytes (both sides of each move, in order). A
 * reflog smaller than `from` was rewritten: its lines from `since` on count. Only what was
 * written after `from` is read (a primary tree's HEAD reflog grows for years).
 */
export async function reflogShas(path: string, from: number, since: number): Promise<string[]> {
  const data = await readAfter(path, from);
  if (data === null) return [];
  const shrank = data.shrank;
  const text = new TextDecoder().decode(data.bytes);
  const out: string[] = [];
  for (const line of text.split("\n")) {
    const tab = line.indexOf("\t");
    const fields = (tab === -1 ? line : line.slice(0, tab)).split(" ");
    if (fields.length < 4) continue;
    if (shrank && !(Number(fields[fields.length - 2]) >= since)) continue;
    out.push(fields[0]!, fields[1]!);
  }
  return out;
}

/**
 * Every commit a turn may have left behind, from files only, in a stable
 * order: the worktree's HEAD, the branch tip, then what their reflogs
 * recorded since the mark. `known` (the branch before the turn) is left out.
 */
export async function turnCommits(
  commonDir: string,
  mark: TurnMark,
  branch: string | null,
  known: readonly string[],
): Promise<string[]> {
  const found: (string | null)[] = [await resolveRef(commonDir, mark.gitDir, "HEAD")];
  if (branch !== null) found.push(await resolveRef(commonDir, mark.gitDir, `refs/heads/${branch}`));
  found.push(...await reflogShas(join(mark.gitDir, "logs", "HEAD"), mark.headLog, mark.since));
  const log = branch === null ? null : branchLog(commonDir, branch);
  if (log) found.push(...await reflogShas(log, mark.branchLog, mark.since));
  const skip = new Set(known);
  const out: string[] = [];
  for (const sha of found) {
    if (sha === null || !SHA.test(sha) || ZERO.test(sha) || skip.has(sha)) continue;
    skip.add(sha);
    out.push(sha);
  }
  return out;
}

/** Splits `refs/relay/anchors/task-1/<run>-after-` into its folder and the name's start. */
function splitPrefix(prefix: string): { dir: string; start: string } {
  const slash = prefix.lastIndexOf("/");
  return { dir: prefix.slice(0, slash), start: prefix.slice(slash + 1) };
}

/** Anchors already numbered under `prefix` (ref → sha), from files: loose refs, then packed ones. */
async function anchorsFromFiles(commonDir: string, prefix: string): Promise<Map<string, string>> {
  const { dir } = splitPrefix(prefix);
  const found = new Map<string, string>();
  const packed = await readBytes(join(commonDir, "packed-refs"));
  for (const line of packed ? new TextDecoder().decode(packed).split("\n") : []) {
    const [sha, name] = line.split(" ");
    if (sha && name?.startsWith(prefix) && SHA.test(sha)) found.set(name, sha);
  }
  try {
    for await (const entry of Deno.readDir(join(commonDir, ...dir.split("/")))) {
      const name = `${dir}/${entry.name}`;
      if (!entry.isFile || !name.startsWith(prefix)) continue;
      const sha = await resolveRef(commonDir, commonDir, name);
      if (sha) found.set(name, sha);
    }
  } catch {
    // No such folder yet: no anchors.
  }
  return numbered(found, prefix);
}

/** Keeps `<prefix><k>` names only. */
function numbered(refs: Map<string, string>, prefix: string): Map<string, string> {
  return new Map([...refs].filter(([ref]) => /^\d+$/.test(ref.slice(prefix.length))));
}

/** Plans which shas get which new `<prefix><k>` names; shas already anchored keep theirs. */
function plan(
  existing: Map<string, string>,
  prefix: string,
  shas: readonly string[],
): { refs: string[]; create: [string, string][] } {
  const bySha = new Map([...existing].map(([ref, sha]) => [sha, ref]));
  let k = Math.max(0, ...[...existing.keys()].map((ref) => Number(ref.slice(prefix.length)))) + 1;
  const refs: string[] = [];
  const create: [string, string][] = [];
  for (const sha of shas) {
    let ref = bySha.get(sha);
    if (!ref) {
      ref = `${prefix}${k++}`;
      bySha.set(sha, ref);
      create.push([ref, sha]);
    }
    refs.push(ref);
  }
  return { refs, create };
}

/**
 * Anchors `shas` as `<prefix>1`, `<prefix>2`, … without running git: each a
 * new loose ref file, never one that exists (a sha already anchored under the
 * prefix keeps its ref). Returns the refs that hold the shas, in order.
 */
export async function anchorWithoutGit(
  commonDir: string,
  prefix: string,
  shas: readonly string[],
): Promise<string[]> {
  const { refs, create } = plan(await anchorsFromFiles(commonDir, prefix), prefix, shas);
  for (const [ref, sha] of create) {
    const path = join(commonDir, ...ref.split("/"));
    await Deno.mkdir(join(path, ".."), { recursive: true });
    // git's own lock protocol: `<ref>.lock` created exclusively, then renamed over the ref.
    const lock = `${path}.lock`;
    await Deno.writeTextFile(lock, `${sha}\n`, { createNew: true });
    if ((await readBytes(path)) !== null) {
      await Deno.remove(lock);
      throw new Error(`Cannot anchor ${sha}: "${ref}" appeared while relay wrote it`);
    }
    await Deno.rename(lock, path);
  }
  return refs;
}

/** The shas of `shas` that name a commit in the repository. */
async function existingCommits(git: Git, shas: readonly string[]): Promise<string[]> {
  if (shas.length === 0) return [];
  // A tick asks its resolver, a line each: a commit's id names itself (a tag's, its commit).
  const shared = await Promise.all(shas.map((s) => git.sharedCommit(s)));
  if (shared.every((c) => c !== undefined)) return shas.filter((s, i) => shared[i] === s);
  const out = await git.out(["cat-file", "--batch-check=%(objectname) %(objecttype)"], {
    stdin: shas.map((s) => `${s}\n`).join(""),
  });
  const commits = new Set(
    out.split("\n").filter((l) => l.endsWith(" commit")).map((l) => l.split(" ")[0]!),
  );
  return shas.filter((s) => commits.has(s));
}

/**
 * Anchors `shas` with git (hardened; only when the turn left git's control
 * files alone): only real commits, only the tips among them, none already
 * reachable from `known`. Returns the refs that hold them, in order.
 */
export async function anchorWithGit(
  git: Git,
  prefix: string,
  shas: readonly string[],
  known: readonly string[],
  message: string,
): Promise<string[]> {
  const commits = await existingCommits(git, [...new Set([...shas, ...known])]);
  const keep = new Set(known);
  const tips = commits.some((c) => !keep.has(c))
    ? (await git.out(["merge-base", "--independent", ...commits])).split("\n")
      .filter((c) => c !== "" && !keep.has(c))
    : [];
  // In the turn's order, not merge-base's: the same turn gets the same numbers.
  const ordered = commits.filter((c) => tips.includes(c));
  // Nothing to keep (a turn that made no commit): no ref to list, none to write.
  if (ordered.length === 0) return [];
  // A pattern matches whole path parts only, unless it is a glob.
  const listed = await git.out(["for-each-ref", "--format=%(refname) %(objectname)", `${prefix}*`]);
  const existing = numbered(
    new Map(
      listed.split("\n").filter((l) => l !== "").map((l) => l.split(" ") as [string, string]),
    ),
    prefix,
  );
  const { refs, create } = plan(existing, prefix, ordered);
  for (const [ref, sha] of create) await git.updateRef(ref, sha, message, "");
  return refs;
}

/**
 * Commits among `shas` that no ref (nor any worktree's HEAD) reaches: what a
 * turn made and then left. relay's own refs do not count: the same commit made
 * again (same tree, parent, author and second) is made again. Needs git (hardened).
 */
export async function unreachable(git: Git, shas: readonly string[]): Promise<string[]> {
  const commits = await existingCommits(git, shas);
  if (commits.length === 0) return [];
  const out = new Set(
    (await git.out(["rev-list", ...commits, "--not", "--exclude=refs/relay/*", "--all", "--"]))
      .split("\n"),
  );
  return commits.filter((c) => out.has(c));
}

/**
 * The reflog mark of a journaled executor turn. A journal written before relay
 * marked reflogs reads them by time, from when its agent started.
 */
export function journalMark(commonDir: string, journal: Journal): TurnMark {
  if (journal.turn) return journal.turn;
  return {
    gitDir: worktreeGitDir(journal.worktree) ??
      join(commonDir, "worktrees", basename(journal.worktree)),
    headLog: Number.MAX_SAFE_INTEGER,
    branchLog: Number.MAX_SAFE_INTEGER,
    since: journal.agentStarted ? Math.floor(Date.parse(journal.agentStarted) / 1000) : Infinity,
  };
}

/**
 * For a run given up before relay's guard looked at its turn (`relay close`
 * stops an agent mid-turn; a tick died after it): anchors the turn's commits
 * without running git, since nobody checked what the turn did to git's
 * control files. Nothing when the guard already anchored the turn.
 */
export async function anchorAbandonedTurn(commonDir: string, journal: Journal): Promise<string[]> {
  if (stepIndex(journal.step) >= stepIndex("committed")) return [];
  const prefix = turnAnchorPrefix(journal.task, journal.runId);
  if ((await anchorsFromFiles(commonDir, prefix)).size > 0) return [];
  const mark = journalMark(commonDir, journal);
  const commits = await turnCommits(commonDir, mark, journal.branch, [journal.before]);
  return await anchorWithoutGit(commonDir, prefix, commits);
}
