/**
 * relay's record on the commits it judged, as git notes under
 * `refs/notes/relay`: one JSON object a line, on the head a verdict, a stage
 * receipt, a scope check or a gate decision was about. Notes travel with the
 * repository (they are pushed to the remote beside main), so any clone can
 * check afterwards that every merge on main had a PASS for exactly its head
 * (`relay audit`), where `.git/relay/` stays on the reviewer's machine.
 *
 * Only the planner side writes notes, under the review lock: there is one
 * writer per clone. Two clones that both write (a reviewer moved to another
 * machine) meet at the push, where the remote's notes are merged in line by
 * line (`cat_sort_uniq`) and the push is tried again; nothing is forced.
 */
import type { Git } from "./git.ts";

export const NOTES_REF = "refs/notes/relay";
/**
 * Where `relay audit` and the push keep a copy of the remote's notes, overwritten at each
 * fetch as a remote-tracking branch is (git notes only reads refs under refs/notes/).
 */
export const REMOTE_NOTES_REF = "refs/notes/relay-remote";

/** One line of a note. */
export interface NoteRecord {
  kind: string;
  task: number;
  head: string;
  at: string;
  [key: string]: unknown;
}

/**
 * Appends `records` to the note on `commit`, leaving out a record the note
 * already has (the same fields but its time): a gate that decides the same
 * every minute is written once.
 */
export async function appendNote(
  git: Git,
  commit: string,
  records: NoteRecord[],
): Promise<boolean> {
  const cacheKey = `${git.cwd}\0${commit}`;
  const text = known.get(cacheKey) ?? await readNote(git, commit);
  const have = parseNote(text);
  const key = (r: Record<string, unknown>) => {
    const { at: _at, ...rest } = r;
    return JSON.stringify(rest, Object.keys(rest).sort());
  };
  const seen = new Set(have.map(key));
  const fresh = records.filter((r) => !seen.has(key(r)));
  if (!fresh.length) {
    known.set(cacheKey, text);
    return false;
  }
  const lines = fresh.map((r) => JSON.stringify(r)).join("\n") + "\n";
  known.delete(cacheKey);
  await git.run(["notes", `--ref=${NOTES_REF}`, "append", "-F", "-", "--", commit], {
    stdin: lines,
  });
  // Only its records matter here (parseNote), not git's blank line between old and new.
  known.set(cacheKey, `${text}\n${lines}`);
  return true;
}

/**
 * The note text this process read or wrote, by repository and commit: a review tick appends
 * to one head's note several times, and only the planner writes relay's notes, under the
 * review lock. Cleared when the notes ref is merged with the remote's.
 */
const known = new Map<string, string>();

/** Forgets the notes read so far (the notes ref moved by other means than appendNote). */
export function forgetNotes(): void {
  known.clear();
}

export async function readNote(git: Git, commit: string, ref = NOTES_REF): Promise<string> {
  const res = await git.run(["notes", `--ref=${ref}`, "show", "--", commit], { allowFail: true });
  return res.code === 0 ? res.stdout : "";
}

/** The records of a note's text; lines that are not relay's JSON (a person's note) are skipped. */
export function parseNote(text: string): NoteRecord[] {
  const out: NoteRecord[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      const r = JSON.parse(line);
      if (
        r && typeof r.kind === "string" && typeof r.head === "string" &&
        typeof r.task === "number"
      ) {
        out.push(r as NoteRecord);
      }
    } catch {
      // Not one of relay's lines.
    }
  }
  return out;
}

/**
 * Every note under `refs` (each may be absent), by annotated commit: one
 * `notes list` per ref and one `cat-file --batch` for all their blobs. With
 * `present`, the caller has already looked which of the refs exist.
 */
export async function readAllNotes(
  git: Git,
  refs: string[],
  present?: ReadonlySet<string>,
): Promise<Map<string, NoteRecord[]>> {
  const blobs = new Map<string, string[]>();
  const there = present
    ? refs.filter((ref) => present.has(ref))
    : (await Promise.all(refs.map(async (ref) => (await git.resolve(ref)) ? [ref] : []))).flat();
  const lists = await Promise.all(there.map((ref) => git.out(["notes", `--ref=${ref}`, "list"])));
  for (const list of lists) {
    for (const line of list.split("\n")) {
      const [blob, commit] = line.trim().split(/\s+/);
      if (!blob || !commit) continue;
      const of = blobs.get(commit) ?? [];
      if (!of.includes(blob)) of.push(blob);
      blobs.set(commit, of);
    }
  }
  const all = [...new Set([...blobs.values()].flat())];
  const texts = new Map<string, string>();
  if (all.length) {
    const out = await git.out(["cat-file", "--batch"], { stdin: all.join("\n") + "\n" });
    // "<oid> blob <size>\n<content>\n" per object.
    let at = 0;
    const bytes = new TextEncoder().encode(out + "\n");
    const dec = new TextDecoder();
    while (at < bytes.length) {
      const nl = bytes.indexOf(10, at);
      if (nl < 0) break;
      const [oid, , size] = dec.decode(bytes.subarray(at, nl)).split(" ");
      const n = Number(size);
      if (!oid || !Number.isFinite(n)) break;
      texts.set(oid, dec.decode(bytes.subarray(nl + 1, nl + 1 + n)));
      at = nl + 1 + n + 1;
    }
  }
  const notes = new Map<string, NoteRecord[]>();
  for (const [commit, ids] of blobs) {
    const records: NoteRecord[] = [];
    const seen = new Set<string>();
    for (const id of ids) {
      for (const r of parseNote(texts.get(id) ?? "")) {
        const k = JSON.stringify(r);
        if (!seen.has(k)) records.push(r);
        seen.add(k);
      }
    }
    notes.set(commit, records);
  }
  return notes;
}

/**
 * The refspec that fetches the remote's notes into REMOTE_NOTES_REF beside other refspecs,
 * in the same fetch: a pattern, so a remote without notes is no error (the exact ref would
 * fail the whole fetch). `refs/notes/relay*` also names `refs/notes/relay`, which lands in
 * REMOTE_NOTES_REF; with --prune a copy whose source is gone is removed, so after the fetch
 * REMOTE_NOTES_REF exists exactly when the remote has notes.
 */
export const NOTES_FETCH_REFSPEC = `+${NOTES_REF}*:${REMOTE_NOTES_REF}*`;

/**
 * Fetches the remote's notes into REMOTE_NOTES_REF. False when the remote has
 * none yet; throws like any fetch when the remote cannot be reached.
 */
export async function fetchNotes(git: Git, remote: string): Promise<boolean> {
  const res = await git.run(
    [
      "fetch",
      "--quiet",
      "--no-tags",
      "--no-recurse-submodules",
      "--",
      remote,
      `+${NOTES_REF}:${REMOTE_NOTES_REF}`,
    ],
    { allowFail: true, timeoutMs: git.networkTimeoutMs },
  );
  if (res.code === 0) return true;
  if (/couldn't find remote ref/i.test(res.stderr)) return false;
  throw new Error(`git fetch of ${NOTES_REF} from ${remote} failed: ${res.stderr.trim()}`);
}

/**
 * Pushes the local notes, without force. When the remote has notes this
 * clone lacks, they are merged in first (every line kept) and the push is
 * tried again. Returns why it did not land, or null when it did.
 */
export async function pushNotes(git: Git, remote: string): Promise<string | null> {
  if (!(await git.resolve(NOTES_REF))) return null;
  for (let attempt = 1; attempt <= 3; attempt++) {
    const push = await git.push(remote, NOTES_REF, NOTES_REF);
    if (push.ok) return null;
    if (!/non-fast-forward|fetch first|rejected/i.test(push.stderr)) {
      return push.stderr.trim().split("\n")[0] ?? "the push failed";
    }
    try {
      if (!(await fetchNotes(git, remote))) return push.stderr.trim().split("\n")[0] ?? "";
    } catch (err) {
      return (err as Error).message;
    }
    forgetNotes();
    await git.run(
      ["notes", `--ref=${NOTES_REF}`, "merge", "--quiet", "-s", "cat_sort_uniq", REMOTE_NOTES_REF],
    );
  }
  return `${remote} kept getting other notes while pushing`;
}
