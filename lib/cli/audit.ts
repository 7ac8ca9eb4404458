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
        read && read.commits.at(-1)?.sha === tip
          ? read
          : firstParentHistory(git, from ? `${from}..${tip}` : tip)
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
        } merges handed to a person, ${violations.length} violation${
          violations.length === 1 ? "" : "s"
        }`,
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
    // Never left running past the command (its temporary file is removed when it ends).
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
 * `range`'s first-parent commits, oldest first, each with the paths it changed against its
 * first parent and, of those, the ones it added. One `git log`, parsed as it arrives.
 */
async function firstParentHistory(
  git: Git,
  range: string,
): Promise<{ commits: (AuditCommit & { added: string[] })[] }> {
  const reader = new HistoryReader();
  await git.stream([
    "log",
    "--first-parent",
    "--diff-merges=first-parent",
    "--name-status",
    "--no-renames",
    "-z",
    "--format=%x1e%H%x1f%P%x1f%an <%ae>%x1f%s",
    range,
    "--",
  ], (chunk) => reader.push(chunk));
  return { commits: reader.end().reverse() };
}

/**
 * parseHistory over output that arrives in chunks: each commit is parsed once the next one
 * starts (or the output ends), while git is still writing the rest.
 */
export class HistoryReader {
  readonly #commits: (AuditCommit & { added: string[] })[] = [];
  readonly #decoder = new TextDecoder();
  /** The text from the last commit start seen: that commit may go on in the next chunk. */
  #rest = "";

  push(chunk: Uint8Array): void {
    const text = this.#rest + this.#decoder.decode(chunk, { stream: true });
    const cut = text.lastIndexOf("\x1e");
    if (cut <= 0) {
      this.#rest = text;
      return;
    }
    for (const c of parseHistory(text.slice(0, cut))) this.#commits.push(c);
    this.#rest = text.slice(cut);
  }

  /** Every commit, newest first, as parseHistory gives them. */
  end(): (AuditCommit & { added: string[] })[] {
    const last = (this.#rest + this.#decoder.decode()).replace(/\n$/, "");
    for (const c of parseHistory(last)) this.#commits.push(c);
    this.#rest = "";
    return this.#commits;
  }
}

/** The paths of a commit that changed or added none: one array for all of them, frozen. */
const NO_PATHS: string[] = Object.freeze([]) as unknown as string[];

/**
 * `git log -z --name-status --format=%x1e%H%x1f%P%x1f%an <%ae>%x1f%s` output, newest first:
 * per commit "\x1e<header>\0", then "<status>\0<path>\0" per path (the first status after a
 * newline). Read by scanning, one pass and no per-commit copies or arrays it does not need:
 * 10,000 commits are common.
 */
export function parseHistory(out: string): (AuditCommit & { added: string[] })[] {
  const commits: (AuditCommit & { added: string[] })[] = [];
  let at = out.indexOf("\x1e");
  while (at >= 0) {
    const next = out.indexOf("\x1e", at + 1);
    const end = next < 0 ? out.length : next;
    // The header's four fields; a field git left out (none does) reads as empty.
    let headerEnd = out.indexOf("\0", at + 1);
    if (headerEnd < 0 || headerEnd > end) headerEnd = end;
    const f1 = fieldEnd(out, at + 1, headerEnd);
    const f2 = fieldEnd(out, f1 + 1, headerEnd);
    const f3 = fieldEnd(out, f2 + 1, headerEnd);
    const sha = out.slice(at + 1, f1);
    const parents = out.slice(f1 + 1, f2);
    let files = NO_PATHS;
    let added = NO_PATHS;
    // Status and path fields in pairs, up to the next commit.
    let i = headerEnd + 1;
    while (i < end) {
      if (out.charCodeAt(i) === 10) i++; // the newline before a commit's first status
      const s1 = out.indexOf("\0", i);
      if (s1 < 0 || s1 >= end) break;
      const s2 = out.indexOf("\0", s1 + 1);
      if (s2 < 0 || s2 >= end) break;
      if (s1 > i && s2 > s1 + 1) {
        const path = out.slice(s1 + 1, s2);
        if (files === NO_PATHS) files = [];
        files.push(path);
        if (s1 === i + 1 && out.charCodeAt(i) === 65 /* A */) {
          if (added === NO_PATHS) added = [];
          added.push(path);
        }
      }
      i = s2 + 1;
    }
    if (sha) {
      commits.push({
        sha,
        parents: parents.length === 40 ? [parents] : parents.split(" ").filter((p) => p),
        author: out.slice(f2 + 1, f3),
        subject: out.slice(f3 + 1, headerEnd),
        files,
        added,
      });
    }
    at = next;
  }
  return commits;
}

/** Where the header field starting at `from` ends: the next \x1f, else the header's end. */
function fieldEnd(out: string, from: number, headerEnd: number): number {
  if (from > headerEnd) return headerEnd;
  const at = out.indexOf("\x1f", from);
  return at < 0 || at > headerEnd ? headerEnd : at;
}
