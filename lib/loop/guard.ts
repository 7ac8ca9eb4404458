/**
 * What an executor turn must leave alone besides its own worktree: the files
 * that steer every later git call relay makes (config, hooks, `info/`), relay's
 * own trust records under `<common>/relay/`, and the pushes this clone made.
 *
 * The executor may run unsandboxed beside relay, as the same user. These
 * checks are pure file reads, so relay can run them right after the agent's
 * turn, before it starts any git process that a planted `core.fsmonitor`,
 * hook or filter would turn into the agent's program.
 */
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { sha256 } from "../proc/hash.ts";
import { AGENT_REPORT, WORKTREE_PAPERWORK } from "../state/paths.ts";

export interface ControlScope {
  /** The common git dir (`.git` of the primary tree). */
  commonDir: string;
  /** Git dirs of the trees relay works in (the primary's, the task worktree's). */
  gitDirs: readonly string[];
  /** Single files outside the git dir: the worktree's `.git` pointer, the operator profile. */
  files?: readonly string[];
  /** Git config files outside the git dir (the user's global config). */
  gitConfigFiles?: readonly string[];
  /** This attempt's run folder: all of it but the agent's own log. */
  runDir?: string;
}

/** Relay's trust records a turn must not touch (verdicts, PR records, attempts, the HOLD). */
const RELAY_RECORDS = ["reviews", "prs", "tasks"] as const;
/**
 * Written by relay during the turn (runner logs), or after the guard passed: the agent's own
 * report and paperwork, copied from its worktree (a tick killed after that must not find its
 * own copies changed when it looks at the turn again). Both are the agent's words, which relay
 * reads as such; an agent that wrote them there itself gains nothing.
 */
const RUN_DIR_SKIP = (name: string) =>
  name === "agent.log" || name === AGENT_REPORT || name === WORKTREE_PAPERWORK;
const INFO_SKIP = (name: string) => name === "refs";
/**
 * A task's timeline (`tasks/<n>.events.jsonl`) is history for people, read by no
 * decision, and relay itself appends to it while the turn runs (the turn started).
 */
const TIMELINE_SKIP = (name: string) => name.endsWith(".events.jsonl");

/** Label for a path in a HOLD message: `.git/config` for files of the repository, else absolute. */
function labeler(commonDir: string): (path: string) => string {
  const base = dirname(resolve(commonDir));
  return (path: string) => {
    const rel = relative(base, resolve(path));
    return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel : resolve(path);
  };
}

async function readOrNull(path: string): Promise<Uint8Array | null> {
  try {
    return await Deno.readFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return null;
    }
    if (err instanceof Deno.errors.IsADirectory) return new TextEncoder().encode("(a folder)");
    throw err;
  }
}

async function lstatOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.lstat(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return null;
    }
    throw err;
  }
}

/**
 * A git config file without its `[branch "<name>"]` sections: git writes those
 * on `git push -u`, `git branch --set-upstream-to` or `git branch -m` and they
 * name no program; relay pushes with explicit refspecs and never reads them.
 * Only a line that is exactly such a header opens a dropped section, so a
 * header git reads differently (`[branch "x"][core]…`) is kept and compared.
 */
export function withoutBranchSections(text: string): string {
  const kept: string[] = [];
  let dropping = false;
  for (const line of text.split("\n")) {
    if (/^\s*\[/.test(line)) {
      dropping = /^\s*\[\s*branch\s+"(?:[^"\\\n]|\\.)*"\s*\]\s*$/.test(line) ||
        /^\s*\[\s*branch\.[A-Za-z0-9_./-]+\s*\]\s*$/.test(line);
    }
    if (!dropping) kept.push(line);
  }
  return kept.join("\n");
}

/** Adds `path` (a file, a symlink or a whole folder) to `out`, keyed by label. */
async function addTree(
  out: Record<string, string>,
  label: (p: string) => string,
  path: string,
  skip: (name: string) => boolean = () => false,
): Promise<void> {
  const info = await lstatOrNull(path);
  if (!info) return;
  if (info.isSymlink) {
    out[label(path)] = `symlink -> ${await Deno.readLink(path)}`;
    return;
  }
  if (info.isDirectory) {
    const names: string[] = [];
    for await (const entry of Deno.readDir(path)) names.push(entry.name);
    for (const name of names.sort()) {
      if (!skip(name)) await addTree(out, label, join(path, name));
    }
    return;
  }
  const data = await readOrNull(path);
  if (data !== null) out[label(path)] = `${info.mode ?? ""}:${await sha256(data)}`;
}

/** Adds a git config file, its branch sections left out. */
async function addConfig(
  out: Record<string, string>,
  label: (p: string) => string,
  path: string,
): Promise<void> {
  const info = await lstatOrNull(path);
  if (!info) return;
  if (!info.isFile) return await addTree(out, label, path);
  const data = await readOrNull(path);
  if (data === null) return;
  out[label(path)] = await sha256(withoutBranchSections(new TextDecoder().decode(data)));
}

async function listDir(path: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(path)) names.push(entry.name);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory) {
      return [];
    }
    throw err;
  }
  return names.sort();
}

/**
 * The control files of a repository as label → content hash: config (every
 * tree's), hooks/, info/, relay's records and the scope's extra files. Absent
 * files have no entry, so a new one shows up as a change.
 */
export async function controlFiles(scope: ControlScope): Promise<Record<string, string>> {
  const common = resolve(scope.commonDir);
  const label = labeler(common);
  const out: Record<string, string> = {};
  await addConfig(out, label, join(common, "config"));
  await addConfig(out, label, join(common, "config.worktree"));
  for (const name of await listDir(join(common, "worktrees"))) {
    await addConfig(out, label, join(common, "worktrees", name, "config"));
    await addConfig(out, label, join(common, "worktrees", name, "config.worktree"));
  }
  for (const gitDir of scope.gitDirs) {
    await addConfig(out, label, join(gitDir, "config"));
    await addConfig(out, label, join(gitDir, "config.worktree"));
    // Where a linked worktree's git finds the repository (and so its config).
    await addTree(out, label, join(gitDir, "commondir"));
  }
  await addTree(out, label, join(common, "hooks"));
  // relay's git notes (refs/notes/relay): the record `relay audit` trusts is written by the
  // planner side only, never during an agent's turn.
  // (Its loose ref: a packed one an agent writes becomes loose again.)
  await addTree(out, label, join(common, "refs", "notes", "relay"));
  await addTree(out, label, join(common, "info"), INFO_SKIP);
  const relay = join(common, "relay");
  for (const dir of RELAY_RECORDS) await addTree(out, label, join(relay, dir), TIMELINE_SKIP);
  await addTree(out, label, join(relay, "hold.json"));
  // What strict mode trusts: a probe an agent wrote would pass a changed program.
  await addTree(out, label, join(relay, "probes.json"));
  // A run folder that appears (or goes) during a turn was not made by relay.
  out[`${label(join(relay, "runs"))}/`] = await sha256(
    (await listDir(join(relay, "runs"))).join("\n"),
  );
  if (scope.runDir) await addTree(out, label, scope.runDir, RUN_DIR_SKIP);
  for (const file of scope.files ?? []) await addTree(out, label, file);
  for (const file of scope.gitConfigFiles ?? []) await addConfig(out, label, file);
  return out;
}

/** One hash over `controlFiles()`. */
export async function controlSnapshot(scope: ControlScope): Promise<string> {
  const files = await controlFiles(scope);
  return await sha256(JSON.stringify(Object.keys(files).sort().map((k) => [k, files[k]])));
}

/** Labels whose entry differs between two `controlFiles()` maps (added, removed or changed). */
export function changedControls(
  before: Record<string, string>,
  now: Record<string, string>,
): string[] {
  return [...new Set([...Object.keys(before), ...Object.keys(now)])]
    .filter((k) => before[k] !== now[k])
    .sort();
}

/** The user-level git config files git reads (the system one is not writable by an agent). */
export function globalGitConfigFiles(): string[] {
  const set = Deno.env.get("GIT_CONFIG_GLOBAL");
  if (set) return [resolve(set)];
  const home = Deno.env.get("HOME");
  const xdg = Deno.env.get("XDG_CONFIG_HOME") || (home ? join(home, ".config") : "");
  return [
    ...(home ? [join(home, ".gitconfig")] : []),
    ...(xdg ? [join(xdg, "git", "config")] : []),
  ];
}

/** The git dir a linked worktree's `.git` file points at, or null. */
export async function worktreeGitDir(worktree: string): Promise<string | null> {
  const data = await readOrNull(join(worktree, ".git"));
  if (data === null) return null;
  const match = /^gitdir:\s*(.+?)\s*$/m.exec(new TextDecoder().decode(data));
  if (!match?.[1]) return null;
  return isAbsolute(match[1]) ? match[1] : resolve(worktree, match[1]);
}

/** Where this clone's reflogs of `<remote>`'s remote-tracking refs stood: a later look reads on from there. */
export interface RemoteLogMark {
  /** Seconds since the epoch when the mark was taken. */
  since: number;
  /** Reflog path under `logs/refs/remotes/<remote>/` → its size in bytes. */
  sizes: Record<string, number>;
}

async function reflogFiles(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for (const name of await listDir(dir)) {
    const path = join(dir, name);
    const info = await lstatOrNull(path);
    if (info?.isDirectory) out.push(...await reflogFiles(path, `${prefix}${name}/`));
    else if (info?.isFile) out.push(`${prefix}${name}`);
  }
  return out;
}

export async function markRemoteLogs(commonDir: string, remote: string): Promise<RemoteLogMark> {
  const dir = join(commonDir, "logs", "refs", "remotes", remote);
  const sizes: Record<string, number> = {};
  for (const rel of await reflogFiles(dir)) {
    const info = await lstatOrNull(join(dir, rel));
    if (info) sizes[rel] = info.size;
  }
  return { since: Math.floor(Date.now() / 1000), sizes };
}

export interface Push {
  /** The remote's branch, e.g. `main` for `refs/remotes/origin/main`. */
  branch: string;
  /** The sha the push set it to (all zeros for a deletion). */
  sha: string;
}

/**
 * Remote branches this clone pushed since `mark`, read from the reflogs git
 * writes as "update by push" on a remote-tracking ref. Only pushes made
 * through the remote's name leave that trace (a push to a URL leaves none),
 * and a repository on the reftable backend keeps no such files: then nothing
 * is found.
 */
export async function pushesSince(
  commonDir: string,
  remote: string,
  mark: RemoteLogMark,
): Promise<Push[]> {
  const dir = join(commonDir, "logs", "refs", "remotes", remote);
  const pushes: Push[] = [];
  for (const rel of await reflogFiles(dir)) {
    const data = await readOrNull(join(dir, rel));
    if (data === null) continue;
    const start = mark.sizes[rel] ?? 0;
    // A reflog that shrank was rewritten (reflog expire): judge its lines by their time instead.
    const shrank = data.length < start;
    const text = new TextDecoder().decode(shrank ? data : data.subarray(start));
    for (const line of text.split("\n")) {
      const tab = line.indexOf("\t");
      if (tab === -1 || !line.slice(tab + 1).startsWith("update by push")) continue;
      const fields = line.slice(0, tab).split(" ");
      const time = Number(fields[fields.length - 2]);
      if (shrank && !(time >= mark.since)) continue;
      pushes.push({ branch: rel, sha: fields[1] ?? "" });
    }
  }
  return pushes;
}

/** The control scope of an executor attempt: the repository, its task worktree, the operator profile. */
export async function executorScope(opts: {
  commonDir: string;
  gitDir: string;
  worktree: string;
  runDir: string;
  profilePath: string;
}): Promise<ControlScope> {
  const wtGitDir = await worktreeGitDir(opts.worktree);
  return {
    commonDir: opts.commonDir,
    gitDirs: [opts.gitDir, ...(wtGitDir ? [wtGitDir] : [])],
    files: [join(opts.worktree, ".git"), ...(opts.profilePath ? [opts.profilePath] : [])],
    gitConfigFiles: globalGitConfigFiles(),
    runDir: opts.runDir,
  };
}

const GONE = "(deleted)";

/**
 * Paths of the primary tree the agent changed, from two path → hash maps
 * (`"(deleted)"` for a tracked file that is gone). Under `inboxDir` only a
 * rewritten brief counts: a brief added or dropped is what `relay inbox
 * add/drop` does, and a person may run those during a turn.
 */
export function changedPrimaryFiles(
  before: Record<string, string>,
  now: Record<string, string>,
  inboxDir: string,
): string[] {
  const present = (h: string | undefined) => h !== undefined && h !== GONE;
  return [...new Set([...Object.keys(before), ...Object.keys(now)])]
    .filter((p) => before[p] !== now[p])
    .filter((p) => !p.startsWith(`${inboxDir}/`) || (present(before[p]) && present(now[p])))
    .sort();
}
