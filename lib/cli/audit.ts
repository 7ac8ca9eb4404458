/**
 * `relay audit [--since REV] [--json]`: proves, from git alone, that the split
 * held — every commit on the remote's main since relay was set up is relay's
 * paperwork, a merge relay's notes show was reviewed and gated for exactly its
 * head, or a merge of a task relay handed to a person. Anything else is listed
 * as a violation. Works on any clone: main and relay's notes come from the
 * remote (`refs/notes/relay`), nothing under `.git/relay/` is needed. Exit 0
 * when the history is clean, 1 when something in it needs a person.
 */
import { loadRepoConfig } from "../config/repo.ts";
import { RetryError, UsageError } from "../errors.ts";
import { Git } from "../git/git.ts";
import { fetchNotes, NOTES_REF, readAllNotes, REMOTE_NOTES_REF } from "../git/notes.ts";
import { audit, type AuditCommit, type AuditEntry } from "../gate/audit.ts";
import { CONFIG_FILE } from "../state/paths.ts";
import { type Context, parseCommand, printJson, requireRepo } from "./args.ts";

export async function auditCommand(args: string[], ctx: Context): Promise<number> {
  const { values } = parseCommand("audit", args, {
    since: { type: "string" },
    json: { type: "boolean" },
  }, { min: 0, max: 0 });
  const repo = requireRepo(ctx);
  const config = await loadRepoConfig(repo.root);
  const git = new Git(repo.root, config.timeouts.networkMs);
  const warnings: string[] = [];
  try {
    await git.fetch(config.remote);
    if (!(await fetchNotes(git, config.remote))) {
      warnings.push(
        `${config.remote} has no ${NOTES_REF} yet: no merge there can show a verdict (relay pushes its notes from the reviewer's clone)`,
      );
    }
  } catch (err) {
    if (!(err instanceof RetryError)) throw err;
    warnings.push(`${err.message}: audited what this clone already has`);
  }
  const tip = await git.resolve(`refs/remotes/${config.remote}/${config.main}`) ??
    await git.resolve(`refs/heads/${config.main}`);
  if (!tip) {
    throw new UsageError(
      `neither ${config.remote}/${config.main} nor ${config.main} exists here: fetch it first`,
      "audit",
    );
  }
  const target = (await git.resolve(`refs/remotes/${config.remote}/${config.main}`))
    ? `${config.remote}/${config.main}`
    : config.main;
  let from: string | null;
  let fromWhat: string;
  if (values.since !== undefined) {
    from = await git.resolve(values.since);
    if (!from) {
      throw new UsageError(
        `--since "${values.since}" is not a commit here: give a sha, tag or branch`,
        "audit",
      );
    }
    fromWhat = `after ${values.since} (${from.slice(0, 12)})`;
  } else {
    // The commit that set relay up (added its config); nothing before it went through relay.
    const added = await git.out([
      "log",
      "--first-parent",
      "--diff-filter=A",
      "--format=%H",
      tip,
      "--",
      CONFIG_FILE,
    ]);
    from = added.split("\n").filter((l) => l).at(-1) ?? null;
    fromWhat = from
      ? `after relay was set up (${from.slice(0, 12)} added ${CONFIG_FILE})`
      : "since the first commit";
  }
  const commits = await firstParentHistory(git, from ? `${from}..${tip}` : tip);
  const notes = await readAllNotes(git, [NOTES_REF, REMOTE_NOTES_REF]);
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
    console.log(`audit: ${target} ${tip.slice(0, 12)}, ${entries.length} commits ${fromWhat}`);
    for (const w of warnings) console.log(`warning: ${w}`);
    for (const e of entries) console.log(line(e));
    const count = (c: AuditEntry["class"]) => entries.filter((e) => e.class === c).length;
    console.log(
      `\n${count("paperwork")} paperwork, ${count("settings")} settings, ${
        count("task-merge")
      } reviewed merges, ${
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

/** `range`'s first-parent commits, oldest first, each with the paths it changed against its first parent. */
async function firstParentHistory(git: Git, range: string): Promise<AuditCommit[]> {
  const out = await git.out([
    "log",
    "--first-parent",
    "--diff-merges=first-parent",
    "--name-only",
    "--no-renames",
    "-z",
    "--format=%x1e%H%x1f%P%x1f%an <%ae>%x1f%s",
    range,
    "--",
  ]);
  const commits: AuditCommit[] = [];
  for (const chunk of out.split("\x1e")) {
    if (!chunk.trim()) continue;
    const end = chunk.indexOf("\0");
    const header = end < 0 ? chunk : chunk.slice(0, end);
    const [sha, parents, author, subject] = header.split("\x1f");
    const files = end < 0 ? [] : chunk.slice(end + 1).split("\0").map((f) => f.replace(/^\n/, ""))
      .filter((f) => f !== "");
    commits.push({
      sha: sha!,
      parents: (parents ?? "").split(" ").filter((p) => p),
      author: author ?? "",
      subject: subject ?? "",
      files,
    });
  }
  return commits.reverse();
}
