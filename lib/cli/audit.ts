/**
 * `relay audit [--since REV] [--all] [--json]`: proves, from git alone, that the split
 * held — every commit on the remote's main since relay was set up is relay's
 * paperwork, a merge relay's notes show was reviewed and gated for exactly its
 * head, or a merge of a task relay handed to a person. Anything else is listed
 * as a violation. Works on any clone: main and relay's notes come from the
 * remote (`refs/notes/relay`), nothing under `.git/relay/` is needed. Exit 0
 * when the history is clean, 1 when something in it needs a person.
 */
import { loadRepoConfig } from "../config/repo_load.ts";
import { RetryError, UsageError } from "../errors.ts";
import { Git } from "../git/git.ts";
import { NOTES_FETCH_REFSPEC, NOTES_REF, readAllNotes, REMOTE_NOTES_REF } from "../git/notes.ts";
import { audit, type AuditCommit, type AuditEntry } from "../gate/audit.ts";
import { CONFIG_FILE } from "../state/paths.ts";
import { type Context, parseCommand, printJson, printText, requireRepo } from "./args.ts";

export async function auditCommand(args: string[], ctx: Context): Promise<number> {
  const { values } = parseCommand("audit", args, {
    since: { type: "string" },
    json: { type: "boolean" },
    all: { type: "boolean" },
  }, { min: 0, max: 0 });
  const repo = requireRepo(ctx);
  const config = await loadRepoConfig(repo.root);
  const git = new Git(repo.root, config.timeouts.networkMs);
  const warnings: string[] = [];
  const mainRef = `refs/remotes/${config.remote}/${config.main}`;
  // Main's history as this clone has it is read while the fetch runs: usually the fetch leaves
  // main where it was, and then this is the very history the audit needs (checked below by its
  // newest commit; git resolves the ref once, so the read is of one commit, old or new).
  const early = values.since === undefined
    ? firstParentHistory(git, mainRef).catch(() => null)
    : Promise.resolve(null);
  try {
    try {
      // One fetch: the remote's branches as a plain `git fetch` maps them, and its notes.
      await git.fetch(config.remote, {
        refspecs: [`+refs/heads/*:refs/remotes/${config.remote}/*`, NOTES_FETCH_REFSPEC],
        maintenance: false,
      });
    } catch (err) {
      if (!(err instanceof RetryError)) throw err;
      warnings.push(`${err.message}: audited what this clone already has`);
    }
    // Main (the remote's, else the local one) and which notes refs exist, in one git call.
    const [remoteMain, localMain, localNotes, remoteNotes] = await git.readObjects([
      `${mainRef}^{commit}`,
      `refs/heads/${config.main}^{commit}`,
      NOTES_REF,
      REMOTE_NOTES_REF,
    ]);
    if (warnings.length === 0 && !remoteNotes) {
      warnings.push(
        `${config.remote} has no ${NOTES_REF} yet: no merge there can show a verdict (relay pushes its notes from the reviewer's clone)`,
      );
    }
    const notesPresent = new Set<string>();
    if (localNotes) notesPresent.add(NOTES_REF);
    if (remoteNotes) notesPresent.add(REMOTE_NOTES_REF);
    const remoteTip = remoteMain?.oid ?? null;
    const tip = remoteTip ?? localMain?.oid ?? null;
    if (!tip) {
      throw new UsageError(
        `neither ${config.remote}/${config.main} nor ${config.main} exists here: fetch it first`,
        "audit",
      );
    }
    const target = remoteTip ? `${config.remote}/${config.main}` : config.main;
    let from: string | null = null;
    let fromWhat = "";
    if (values.since !== undefined) {
      from = await git.resolve(values.since);
      if (!from) {
        throw new UsageError(
          `--since "${values.since}" is not a commit here: give a sha, tag or branch`,
          "audit",
        );
      }
      fromWhat = `after ${values.since} (${from.slice(0, 12)})`;
    }
    // The history and the notes are read side by side: neither needs the other.
    const [history, notes] = await Promise.all([
      early.then((read) =>
        read ? brought(git, read, tip) : firstParentHistory(git, from ? `${from}..${tip}` : tip)
      ),
      readAllNotes(git, [NOTES_REF, REMOTE_NOTES_REF], notesPresent),
    ]);
    let commits: AuditCommit[] = history.commits;
    if (values.since === undefined) {
      // From the commit that set relay up (added its config): nothing before it went through
      // relay. Found in the same walk as the rest: the history is read once.
      const setup = history.commits.findIndex((c) => c.added.includes(CONFIG_FILE));
      from = setup < 0 ? null : history.commits[setup]!.sha;
      commits = history.commits.slice(setup + 1);
      fromWhat = from
        ? `after relay was set up (${from.slice(0, 12)} added ${CONFIG_FILE})`
        : "since the first commit";
    }
    const entries = audit(commits, notes);
    const violations = entries.filter((e) => e.class === "violation");
    if (values.json) {
      printJson({
        target,
        tip,
        from,
        warnings,
        commits: entries,
        violations: violations.map((e) => ({ sha: e.sha, subject: e.subject, ...e.violation })),
      });
    } else {
      // relay's own paperwork, most of a long history, is counted, not listed (unless --all):
      // what a person looks for (a violation, a merge, a settings change) stays in view.
      const listed = values.all ? entries : entries.filter((e) => e.class !== "paperwork");
      // One write: a console.log per commit costs more than the git log on a long history.
      const lines = [
        `audit: ${target} ${tip.slice(0, 12)}, ${entries.length} commits ${fromWhat}`,
        ...warnings.map((w) => `warning: ${w}`),
        ...listed.map(line),
      ];
      printText(lines.join("\n"));
      const count = (c: AuditEntry["class"]) => entries.filter((e) => e.class === c).length;
      const unlisted = entries.length - listed.length;
      console.log(
        `\n${count("paperwork")} paperwork${
          unlisted > 0 ? " (not listed: --all lists them)" : ""
        }, ${count("settings")} settings, ${count("task-merge")} reviewed merges, ${
          count("person-merge")
        } merges handed to a person, ${
          count("empty") > 0 ? `${count("empty")} empty, ` : ""
        }${violations.length} violation${violations.length === 1 ? "" : "s"}`,
      );
      if (violations.length) {
        console.log(
          `Each violation is a change on ${config.main} that did not go through relay's review and gate. ` +
            `Look at it (git show <sha>); if it was a person's deliberate change, nothing else is needed.`,
        );
      }
    }
    return violations.length ? 1 : 0;
  } finally {
    // The early read is never left running past the command, whatever happened.
    await early;
  }
}

const LABEL: Record<AuditEntry["class"], string> = {
  paperwork: "paperwork",
  settings: "settings",
  "task-merge": "merge",
  "person-merge": "person",
  empty: "empty",
  violation: "VIOLATION",
};

function line(e: AuditEntry): string {
  const what = e.violation
    ? `${e.violation.detail} — "${e.subject}" by ${e.author}`
    : e.class === "task-merge"
    ? `${e.subject} (PASS and gate MERGE for ${e.head!.slice(0, 12)})`
    : e.class === "settings"
    ? `${e.subject} (relay's settings under .relay/, changed by ${e.author})`
    : e.class === "person-merge"
    ? `${e.subject} (relay handed task ${e.task ?? "?"} to a person)`
    : e.subject;
  return `  ${e.sha.slice(0, 12)}  ${LABEL[e.class].padEnd(9)}  ${what}`;
}

/**
 * The first-parent history up to `tip`, from a read of it up to an earlier commit (`read`, made
 * while the fetch ran): the same read when main did not move; when it moved forward, that read
 * and the commits since (a second, short `git log`); when it was rewritten (the old tip is no
 * longer on main's first-parent line), a whole new read.
 */
async function brought(
  git: Git,
  read: { commits: HistoryCommit[] },
  tip: string,
): Promise<{ commits: HistoryCommit[] }> {
  const old = read.commits.at(-1)?.sha;
  if (old === undefined) return await firstParentHistory(git, tip);
  if (old === tip) return read;
  const since = await firstParentHistory(git, `${old}..${tip}`);
  // `old..tip` walks first parents from tip and stops at what old reaches: it continues
  // old's line only when its oldest commit's first parent is old itself.
  if (since.commits[0]?.parents[0] === old) {
    return { commits: [...read.commits, ...since.commits] };
  }
  return await firstParentHistory(git, tip);
}

/**
 * `range`'s first-parent commits, oldest first, each with the paths it changed against its
 * first parent and, of those, the ones it added. One `git log`, parsed as it arrives.
 */
async function firstParentHistory(
  git: Git,
  range: string,
): Promise<{ commits: HistoryCommit[] }> {
  const reader = new HistoryReader();
  await git.stream(historyLog(range), (chunk) => reader.push(chunk));
  return { commits: reader.end().reverse() };
}

/** The `git log` the audit reads (HistoryReader's input), for `range`. */
export function historyLog(range: string): string[] {
  return [
    "log",
    "--first-parent",
    "--diff-merges=first-parent",
    "--name-status",
    "--no-renames",
    "-z",
    "--format=%x1e%H%x1f%P%x1f%an <%ae>%x1f%s",
    range,
    "--",
  ];
}

/** A commit of the history, with the paths it added (the setup commit is the one adding the config). */
export type HistoryCommit = AuditCommit & { added: readonly string[] };

/** The paths of a commit that changed or added none: one array for all of them, frozen. */
const NO_PATHS: readonly string[] = Object.freeze([]);

/**
 * Reads `git log -z --name-status --format=%x1e%H%x1f%P%x1f%an <%ae>%x1f%s` output as it
 * arrives, in chunks cut anywhere. The output is NUL-separated fields: per commit its header
 * ("\x1e" then the four format fields), then a status ("A", "M" …; the first one after a
 * newline) and a path per file. Field by field, in one pass: a field is looked at once, and a
 * header is only ever where a status could be — a path, which may hold any byte but NUL
 * ("\x1e" included), is never taken for the start of a commit.
 */
export class HistoryReader {
  readonly #commits: HistoryCommit[] = [];
  readonly #decoder = new TextDecoder();
  /** The start of a field whose NUL has not arrived yet. */
  #partial = "";
  /** The status of the path the next field is, or null when the next field is not a path. */
  #status: string | null = null;
  #files: string[] = [];
  #added: string[] = [];

  push(chunk: Uint8Array): void {
    this.#read(this.#decoder.decode(chunk, { stream: true }));
  }

  /** Every commit, newest first (git log's order). */
  end(): HistoryCommit[] {
    this.#read(this.#decoder.decode());
    // git ends the output with a NUL; a last field without one (or a newline) still counts.
    const last = this.#partial.replace(/\n$/, "");
    this.#partial = "";
    if (last !== "") this.#field(last);
    return this.#commits;
  }

  /** Parses the whole output at once. */
  static parse(out: string): HistoryCommit[] {
    const reader = new HistoryReader();
    reader.#read(out);
    return reader.end();
  }

  #read(text: string): void {
    let from = 0;
    let nul = text.indexOf("\0");
    if (nul < 0) {
      this.#partial += text;
      return;
    }
    if (this.#partial !== "") {
      this.#field(this.#partial + text.slice(0, nul));
      this.#partial = "";
      from = nul + 1;
      nul = text.indexOf("\0", from);
    }
    while (nul >= 0) {
      this.#field(text.slice(from, nul));
      from = nul + 1;
      nul = text.indexOf("\0", from);
    }
    this.#partial = text.slice(from);
  }

  #field(field: string): void {
    if (this.#status !== null) {
      const status = this.#status;
      this.#status = null;
      const commit = this.#commits.at(-1);
      if (field === "" || commit === undefined) return;
      if (commit.files === NO_PATHS) commit.files = this.#files = [];
      this.#files.push(field);
      if (status === "A") {
        if (commit.added === NO_PATHS) commit.added = this.#added = [];
        this.#added.push(field);
      }
    } else if (field.charCodeAt(0) === 0x1e) {
      this.#commits.push(header(field));
    } else {
      // A status; git puts a newline before a commit's first one.
      const status = field.charCodeAt(0) === 10 ? field.slice(1) : field;
      if (status !== "") this.#status = status;
    }
  }
}

/** A commit from its header field: "\x1e<sha>\x1f<parents>\x1f<author>\x1f<subject>". */
function header(field: string): HistoryCommit {
  const f1 = fieldEnd(field, 1);
  const f2 = fieldEnd(field, f1 + 1);
  const f3 = fieldEnd(field, f2 + 1);
  const parents = field.slice(f1 + 1, f2);
  return {
    sha: field.slice(1, f1),
    parents: parents.length === 40 ? [parents] : parents.split(" ").filter((p) => p),
    author: field.slice(f2 + 1, f3),
    // The last field: whatever the subject holds, separators included.
    subject: field.slice(f3 + 1),
    files: NO_PATHS,
    added: NO_PATHS,
  };
}

/** Where the header field starting at `from` ends: the next \x1f, else the header's end. */
function fieldEnd(header: string, from: number): number {
  if (from >= header.length) return header.length;
  const at = header.indexOf("\x1f", from);
  return at < 0 ? header.length : at;
}

/** `git log` output read in one piece (see HistoryReader). */
export function parseHistory(out: string): HistoryCommit[] {
  return HistoryReader.parse(out);
}
