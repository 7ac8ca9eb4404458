/**
 * The inbox: queued briefs in `.relay/inbox/<NNNN>-<slug>.md` with
 * `Status: QUEUED`, taken in task-number order. Adding assigns the next free
 * task number when a brief has none and refuses a number already used.
 */
import { readHeaderField, readHeaderTask } from "../protocol/status_line.ts";
import { readTextOrNull } from "../state/json_file.ts";
import { join } from "../path.ts";
import { InputError } from "../errors.ts";
import { Git } from "../git/git.ts";
import { parseBrief } from "../protocol/brief.ts";
import { briefSlug, writeBrief } from "../protocol/brief_write.ts";
import type { Brief } from "../protocol/types.ts";
import { BRIEF_FILE, INBOX_DIR, REPORT_FILE, statePaths } from "../state/paths.ts";
import type { RepoPaths } from "../git/discover.ts";

export interface InboxEntry {
  task: number;
  title: string;
  kind: Brief["kind"];
  /** Path relative to the repo root. */
  file: string;
  brief: Brief;
}

/** Where a brief is queued, relative to the repo root: `.relay/inbox/<NNNN>-<slug>.md`. */
export function inboxFile(task: number, title: string): string {
  return `${INBOX_DIR}/${String(task).padStart(4, "0")}-${briefSlug(title)}.md`;
}

/** The queue, lowest task number first. A malformed entry is an InputError naming its file. */
export async function listInbox(root: string): Promise<InboxEntry[]> {
  const dir = join(root, INBOX_DIR);
  const entries: InboxEntry[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (!e.isFile || !e.name.endsWith(".md")) continue;
      const file = `${INBOX_DIR}/${e.name}`;
      const brief = parseBrief(await Deno.readTextFile(join(dir, e.name)), file);
      entries.push({ task: brief.task, title: brief.title, kind: brief.kind, file, brief });
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return entries.sort((a, b) => a.task - b.task || a.file.localeCompare(b.file));
}

/** Every task number already spoken for, with where it was seen. */
export async function usedTaskNumbers(
  repo: RepoPaths,
  inbox: InboxEntry[],
): Promise<Map<number, string>> {
  const used = new Map<number, string>();
  for (const e of inbox) used.set(e.task, e.file);
  for (const file of [BRIEF_FILE, REPORT_FILE]) {
    const text = await readTextOrNull(join(repo.root, file));
    const task = readHeaderTask(text);
    if (task !== null) used.set(task, file);
  }
  try {
    const dir = statePaths(repo.commonDir).tasks;
    for (const e of Deno.readDirSync(dir)) {
      const m = /^(\d+)\.json$/.exec(e.name);
      if (!m?.[1]) continue;
      used.set(Number(m[1]), "relay's task records");
      // A task's fix briefs have numbers of their own, kept as its rounds and its send-backs.
      for (const n of roundNumbers(join(dir, e.name))) {
        if (!used.has(n)) used.set(n, `relay's record of task ${m[1]} (a fix round)`);
      }
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  const refs = await new Git(repo.root).out([
    "for-each-ref",
    "--format=%(refname)",
    "refs/heads/",
    "refs/remotes/",
  ]);
  for (const ref of refs.split("\n")) {
    const m = /\/task-(\d+)$/.exec(ref);
    if (m?.[1] && !used.has(Number(m[1]))) {
      used.set(Number(m[1]), `branch ${ref.replace(/^refs\/(heads|remotes)\//, "")}`);
    }
  }
  return used;
}

/** The brief numbers a task record holds: its rounds' and its send-backs' (plain JSON, no schema). */
function roundNumbers(path: string): number[] {
  try {
    // Read without a wait: one record for each task the repository ever ran.
    const raw = JSON.parse(Deno.readTextFileSync(path));
    const out: number[] = [];
    for (const r of Array.isArray(raw?.rounds) ? raw.rounds : []) {
      if (Number.isInteger(r?.brief)) out.push(r.brief);
    }
    for (const f of Array.isArray(raw?.review?.fixes) ? raw.review.fixes : []) {
      if (Number.isInteger(f?.task)) out.push(f.task);
    }
    return out;
  } catch {
    // A record that cannot be read still reserves its own number; the tick that reads it says why.
    return [];
  }
}

/** Validates `text` as a brief and queues it. Returns the new entry. */
export async function addToInbox(
  repo: RepoPaths,
  text: string,
  source: string,
): Promise<InboxEntry> {
  const parsed = parseBrief(text, source, {
    allowMissingTask: true,
    allowMissingBranch: true,
    allowMissingKind: true,
  });
  const inbox = await listInbox(repo.root);
  const used = await usedTaskNumbers(repo, inbox);
  let task = parsed.task;
  if (task === 0) {
    task = Math.max(0, ...used.keys()) + 1;
  } else if (used.has(task)) {
    throw new InputError(
      { file: source, key: "Task" },
      `task number ${task} is already used (by ${used.get(task)})`,
      `remove the "Task:" line to get the next free number (${Math.max(0, ...used.keys()) + 1})`,
    );
  }
  // A Branch line that is there is kept (a fix names the branch it fixes); only a missing one
  // defaults, and only then to the number just assigned.
  const branch = parsed.branch === "" ? `task-${task}` : parsed.branch;
  if (parsed.kind === "feature" && branch !== `task-${task}`) {
    throw new InputError(
      { file: source, key: "Branch" },
      `a feature brief works on its own branch, task-${task}, not "${branch}"`,
      `leave the "Branch:" line out (relay names it), or write "Branch: task-${task}"`,
    );
  }
  const brief: Brief = { ...parsed, task, branch, status: "QUEUED" };
  const file = inboxFile(task, brief.title);
  await Deno.mkdir(join(repo.root, INBOX_DIR), { recursive: true });
  await Deno.writeTextFile(join(repo.root, file), writeBrief(brief), { createNew: true });
  return { task, title: brief.title, kind: brief.kind, file, brief };
}

/**
 * Queues again a brief that left NEXT-STEPS.md without running: under its own number when
 * `keep` and nothing here uses that number, else under the next number free here and in
 * `taken` (a branch named for the old number follows the new one). A brief that does not
 * parse is an InputError naming `source`.
 */
export async function queueAgain(
  repo: RepoPaths,
  text: string,
  source: string,
  opts: { keep: boolean; taken?: readonly number[] },
): Promise<{ task: number; file: string }> {
  // As lenient as `relay inbox add`: a brief with no Task line takes the next free number.
  const brief = parseBrief(text, source, {
    allowMissingTask: true,
    allowMissingBranch: true,
    allowMissingKind: true,
  });
  const used = await usedTaskNumbers(repo, await listInbox(repo.root));
  const task = opts.keep && brief.task > 0 && !used.has(brief.task)
    ? brief.task
    : Math.max(0, ...(opts.taken ?? []), ...used.keys()) + 1;
  const branch = brief.branch === "" || brief.branch === `task-${brief.task}`
    ? `task-${task}`
    : brief.branch;
  const file = inboxFile(task, brief.title);
  await Deno.mkdir(join(repo.root, INBOX_DIR), { recursive: true });
  const queued = writeBrief({ ...brief, task, branch, status: "QUEUED" });
  const target = join(repo.root, file);
  // Written whole in relay's own folder, then linked in: a file of that name is never seen half
  // written, nor overwritten when there. A git folder on another file system gets a plain write.
  const state = statePaths(repo.commonDir).dir;
  await Deno.mkdir(state, { recursive: true });
  const part = join(state, `queue-${crypto.randomUUID()}.part`);
  await Deno.writeTextFile(part, queued);
  try {
    try {
      await Deno.link(part, target);
    } catch (err) {
      if (err instanceof Deno.errors.AlreadyExists) throw err;
      await Deno.writeTextFile(target, queued, { createNew: true });
    }
  } catch (err) {
    // The other tick of the same minute queued this very brief a moment ago.
    if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
    if (readHeaderTask(await readTextOrNull(target)) !== task) throw err;
  } finally {
    await Deno.remove(part).catch(() => {});
  }
  return { task, file };
}

/** Main's hand-written briefs relay queued, by a hash of their text (queueFromMain). */
const ADOPTED = "adopted-briefs.json";

/** The record of main's briefs queued by queueFromMain, and this text's key in it. */
async function adoptedRecord(repo: RepoPaths, text: string) {
  const { sha256 } = await import("../proc/hash.ts");
  const { readJson } = await import("../state/json_file.ts");
  const path = join(statePaths(repo.commonDir).dir, ADOPTED);
  const record = (await readJson<Record<string, { task: number; file: string; at: string }>>(
    path,
  ).catch(() => null)) ?? {};
  return { path, record, key: await sha256(text) };
}

/** Whether queueFromMain queued this text before (read without a lock: a hint, not a claim). */
export async function queuedFromMain(repo: RepoPaths, text: string): Promise<boolean> {
  const { record, key } = await adoptedRecord(repo, text);
  return record[key] !== undefined;
}

/**
 * An open brief a person wrote into main's NEXT-STEPS.md by hand (machines: one), queued once:
 * by a hash of its text, kept in `.git/relay/adopted-briefs.json`, so no later tick queues it
 * again while main still shows it (after it ran, was dropped or closed). Under its own number
 * while that is free, else the next free one; a brief queued or open here already under that
 * number and title is taken to be this one. Callers hold the poll lock (both ticks queue here).
 * Returns what became of it, for the log; null when it was queued before.
 */
export async function queueFromMain(
  repo: RepoPaths,
  text: string,
  source: string,
): Promise<string | null> {
  const { writeJson } = await import("../state/json_file.ts");
  const { path, record, key } = await adoptedRecord(repo, text);
  if (record[key]) return null;
  const task = readHeaderTask(text);
  const title = readHeaderField(text, "title");
  const open = await readTextOrNull(join(repo.root, BRIEF_FILE));
  const here = task === null
    ? null
    : (await listInbox(repo.root)).find((e) => e.task === task && e.title === title)?.file ??
      (readHeaderTask(open) === task && readHeaderField(open, "title") === title
        ? BRIEF_FILE
        : null);
  let said: string;
  let queued: { task: number; file: string };
  if (here !== null) {
    queued = { task: task!, file: here };
    said = `the open brief in ${source} is queued already, as ${here}`;
  } else {
    try {
      queued = await queueAgain(repo, text, source, { keep: true });
    } catch (err) {
      return `the open brief in ${source} could not be queued (${
        (err as Error).message.split("\n")[0]
      }): it stays in main's history; queue it with "relay inbox add"`;
    }
    said = `the open brief in ${source} went to the queue as ${queued.file}${
      task !== null && queued.task !== task ? ` (task ${queued.task}: ${task} was taken)` : ""
    }`;
  }
  record[key] = { ...queued, at: new Date().toISOString() };
  await writeJson(path, record);
  return said;
}

export async function dropFromInbox(root: string, task: number): Promise<InboxEntry> {
  const entry = (await listInbox(root)).find((e) => e.task === task);
  if (!entry) {
    throw new InputError(
      { file: INBOX_DIR },
      `no queued brief for task ${task}`,
      `see "relay inbox list"`,
    );
  }
  await Deno.remove(join(root, entry.file));
  return entry;
}
