/**
 * The audit of main's history (`relay audit`), pure: each first-parent commit
 * since relay was set up is paperwork (the files relay commits: the brief, the
 * report, the inbox), a person's change of relay's settings (the rest of
 * `.relay/`), a merge of a task
 * branch that relay's notes show earned (a PASS and a MERGE gate decision for
 * exactly the merged head), a merge a person made where relay routed the task
 * to a person, or a violation of the split between the executor (commits,
 * never merges) and the planner (merges, never commits product code).
 */
import type { NoteRecord } from "../git/notes.ts";
import { BRIEF_FILE, RELAY_DIR, RELAY_PAPERWORK_PATHS, REPORT_FILE } from "../state/paths.ts";

export interface AuditCommit {
  sha: string;
  parents: string[];
  author: string;
  subject: string;
  /** Paths changed against the first parent. */
  files: readonly string[];
}

export type AuditClass =
  | "paperwork"
  | "settings"
  | "task-merge"
  | "person-merge"
  | "empty"
  | "violation";

export type ViolationKind =
  | "paperwork-with-product"
  | "direct-product-commit"
  | "merge-without-verdict"
  | "verdict-for-another-head"
  | "merge-without-gate"
  | "merge-of-refused-scope"
  | "paperwork-on-task-branch"
  | "octopus-merge";

export interface AuditEntry {
  sha: string;
  subject: string;
  author: string;
  class: AuditClass;
  /** The task a merge was for, when its subject or its notes say. */
  task?: number;
  /** The merged head (second parent) of a merge. */
  head?: string;
  violation?: { kind: ViolationKind; detail: string };
}

const RELAY_FOLDER = `${RELAY_DIR}/`;
const PAPERWORK_FOLDERS = RELAY_PAPERWORK_PATHS.map((p) => `${p}/`);

/** The protocol files: never on a task branch. */
export function isPaperwork(path: string): boolean {
  return path === BRIEF_FILE || path === REPORT_FILE || path.startsWith(RELAY_FOLDER);
}

/**
 * What relay itself commits to main: the brief, the report and the inbox. The rest of
 * `.relay/` (config.yaml, the stages' procedures) is relay's settings, a person's to change.
 */
export function isRelayPaperwork(path: string): boolean {
  if (path === BRIEF_FILE || path === REPORT_FILE) return true;
  for (const folder of PAPERWORK_FOLDERS) if (path.startsWith(folder)) return true;
  return (RELAY_PAPERWORK_PATHS as readonly string[]).includes(path);
}

/** The task a merge commit names: relay's own subject, else a `task-<n>` branch in it. */
export function taskOfSubject(subject: string): number | undefined {
  const m = /\(task (\d+), reviewed by relay\)/.exec(subject) ?? /\btask-(\d+)\b/.exec(subject);
  return m ? Number(m[1]) : undefined;
}

function short(sha: string): string {
  return sha.slice(0, 12);
}

function listed(files: string[], max = 4): string {
  return files.length <= max
    ? files.join(", ")
    : `${files.slice(0, max).join(", ")} and ${files.length - max} more`;
}

/** Classifies `commits` (main's first-parent history, oldest first) against relay's notes. */
export function audit(
  commits: AuditCommit[],
  notes: ReadonlyMap<string, NoteRecord[]>,
): AuditEntry[] {
  // Every head relay judged, by task: to tell "no verdict" from "a verdict for another head".
  const byTask = new Map<number, NoteRecord[]>();
  for (const records of notes.values()) {
    for (const r of records) {
      const list = byTask.get(r.task) ?? [];
      list.push(r);
      byTask.set(r.task, list);
    }
  }
  return commits.map((c) => classify(c, notes, byTask));
}

function classify(
  c: AuditCommit,
  notes: ReadonlyMap<string, NoteRecord[]>,
  byTask: ReadonlyMap<number, NoteRecord[]>,
): AuditEntry {
  // Most of a long history is relay's own paperwork commits: they are told apart first, with
  // no copies made (10,000 commits are common).
  if (c.parents.length <= 1 && c.files.length > 0 && c.files.every(isRelayPaperwork)) {
    return { sha: c.sha, subject: c.subject, author: c.author, class: "paperwork" };
  }
  const base = { sha: c.sha, subject: c.subject, author: c.author };
  const bad = (kind: ViolationKind, detail: string, extra: Partial<AuditEntry> = {}) => ({
    ...base,
    ...extra,
    class: "violation" as const,
    violation: { kind, detail },
  });
  if (c.parents.length > 2) {
    return bad("octopus-merge", `a merge of ${c.parents.length - 1} branches at once`);
  }
  if (c.parents.length <= 1) {
    if (c.files.length === 0) return { ...base, class: "empty" };
    const product = c.files.filter((f) => !isPaperwork(f));
    if (product.length === 0) {
      // relay's settings changed on main: a person's act, shown as such, not a violation.
      return { ...base, class: "settings" };
    }
    if (product.length < c.files.length) {
      return bad(
        "paperwork-with-product",
        `a paperwork commit that also changes product files: ${listed(product)}`,
      );
    }
    return bad(
      "direct-product-commit",
      `product files committed straight to main, not through a reviewed merge: ${listed(product)}`,
    );
  }
  const head = c.parents[1]!;
  const mine = notes.get(head) ?? [];
  const task = taskOfSubject(c.subject) ?? mine[0]?.task;
  const extra = { head, ...(task === undefined ? {} : { task }) };
  const passed = mine.some((r) => r.kind === "verdict" && r.result === "PASS" && r.head === head);
  const gated = mine.some((r) => r.kind === "gate" && r.decision === "MERGE" && r.head === head);
  const refused = mine.find((r) =>
    (r.kind === "scope" || r.kind === "gate") &&
    (r.result === "REFUSE" || r.decision === "REFUSE")
  );
  const routed = mine.some((r) => r.kind === "routed");
  const paperwork = c.files.filter(isPaperwork);
  if (passed && gated) {
    if (paperwork.length) {
      return bad(
        "paperwork-on-task-branch",
        `the merged branch carries paperwork: ${listed(paperwork)}`,
        extra,
      );
    }
    return { ...base, ...extra, class: "task-merge" };
  }
  if (routed && !refused) {
    // relay sent this head to a person (owner-accepted infra), who merged it by hand.
    return { ...base, ...extra, class: "person-merge" };
  }
  if (refused) {
    return bad(
      "merge-of-refused-scope",
      `merges ${short(head)}, which relay's gate refused: ${String(refused.reason ?? "")}`.replace(
        /: $/,
        "",
      ),
      extra,
    );
  }
  if (passed) {
    return bad(
      "merge-without-gate",
      `a PASS for ${short(head)} but no MERGE decision of the gate for it`,
      extra,
    );
  }
  const other = task === undefined
    ? undefined
    : (byTask.get(task) ?? []).find((r) =>
      r.kind === "verdict" && r.result === "PASS" && r.head !== head
    );
  if (other) {
    return bad(
      "verdict-for-another-head",
      `task ${task}'s PASS is for ${short(other.head)}, not the merged head ${short(head)}`,
      extra,
    );
  }
  const failed = mine.find((r) => r.kind === "verdict" && r.head === head);
  return bad(
    "merge-without-verdict",
    failed
      ? `merges ${short(head)}, which the reviewer failed, and no PASS for it`
      : `merges ${short(head)}, for which relay recorded no verdict`,
    extra,
  );
}
