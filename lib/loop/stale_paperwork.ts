/**
 * `machines: split`: a reviewer machine's paperwork that never reached the remote — committed
 * but not pushed, or not even committed — when its tick was killed or cut off. Meanwhile the
 * remote's main changed the brief: another machine took the role and went on from what the
 * remote showed, or a person promoted a brief on another clone.
 *
 * Replaying this machine's brief on top would put an old brief back on main — OPEN for a task
 * already done, or in place of the task now in flight, which a later retirement then loses.
 * So it is not replayed: its commits are kept under an anchor ref and its files under
 * `.git/relay/paperwork-aside/`, main goes to the remote's main, and what only this machine
 * has comes back: briefs it queued that the remote has no trace of, and edits to queued
 * briefs the remote still has. The tick then decides afresh from the remote: a promotion is
 * made again where it is still due, and a fix brief this machine wrote whose PR is still open
 * and unanswered is written again (the planner's fix-lost phase). Only relay's own reviewer
 * paperwork is ever set aside: a commit of anyone else's, or the executor's report, takes the
 * usual way (rebase, or a HOLD that says what to do).
 */
import { dirname, join } from "../path.ts";
import { HoldError } from "../errors.ts";
import { type Git, NO_SUBMODULE_STATUS } from "../git/git.ts";
import type { Log } from "../proc/log.ts";
import type { RepoPaths } from "../git/discover.ts";
import { readHeaderField, readHeaderTask, readStatus } from "../protocol/status_line.ts";
import { BRIEF_FILE, INBOX_DIR, REPORT_FILE } from "../state/paths.ts";
import { restoreAside, setAsidePaperwork } from "./paperwork.ts";

/** Where the commits of a set-aside stale paperwork are kept (one ref per time). */
export const STALE_PAPERWORK_ANCHORS = "refs/relay/anchors/paperwork/";

/** The subjects of the reviewer's own paperwork commits (commitReviewerPaperwork). */
const REVIEWER_SUBJECT = /^(Task #\d+: brief — |relay: inbox)/;

/**
 * Moves main to the remote's main, setting this machine's paperwork aside, when the remote
 * changed the brief since local main last matched it and this machine changed it too
 * (committed or not). False when that is not so: the caller's fast-forward and rebase carry
 * local paperwork on top as usual. The caller fetched just now.
 */
export async function setAsideStalePaperwork(
  primary: Git,
  remote: string,
  main: string,
  opts: { aside: string; log: Log; repo: RepoPaths },
): Promise<boolean> {
  const upstream = await primary.resolve(`refs/remotes/${remote}/${main}`);
  const local = await primary.resolve("HEAD");
  if (!upstream || !local || upstream === local) return false;
  if (await primary.isAncestor(upstream, local)) return false; // the remote did not move
  const base = (await primary.out(["merge-base", "--", local, upstream])).trim();
  if (!base) return false;
  if ((await primary.changedPaths(base, upstream, [BRIEF_FILE])).length === 0) return false;
  const committed = base !== local;
  const dirty = async (path: string) =>
    (await primary.out(["status", "--porcelain=v1", "-z", NO_SUBMODULE_STATUS, "--", path])) !== "";
  const mine = (committed && (await primary.changedPaths(base, local, [BRIEF_FILE])).length > 0) ||
    await dirty(BRIEF_FILE);
  if (!mine) return false;
  // The executor's report is not the reviewer's to drop: its paperwork takes the usual way.
  if (await dirty(REPORT_FILE)) return false;
  // Nor is anything but relay's reviewer commits: a person's commit (config.yaml, say) is
  // rebased with the paperwork, or the caller's HOLD says what to do.
  if (committed && !(await reviewerCommitsOnly(primary, `${base}..${local}`))) return false;

  const anchor = committed ? await anchorOf(primary, local) : "";
  const set = await setAsidePaperwork(primary, local, null, opts.aside);
  const ours = set?.files.has(BRIEF_FILE)
    ? set.files.get(BRIEF_FILE) ?? null
    : (await primary.showFiles(local, [BRIEF_FILE]))[0] ?? null;
  // `--keep`, not `--hard`: git refuses rather than drop a change in the tree (a person's
  // edit of a file the remote changed too, an untracked file in the way), and the commits it
  // moves main off are under the anchor.
  const moved = await primary.run(["reset", "--quiet", "--keep", upstream], { allowFail: true });
  if (moved.code !== 0) {
    if (set) await restoreAside(primary, set, local, local);
    const paths = [...moved.stderr.matchAll(/^\t(.+)$/gm)].map((m) => m[1]!.trim());
    const named = paths.length
      ? paths
      : [...moved.stderr.matchAll(/file '([^']+)'/g)].map((m) => m[1]!);
    throw new HoldError(
      `Cannot bring "${main}" to ${remote}/${main}: changes in the primary tree are in the way (${
        named.join(", ") || moved.stderr.trim().split("\n")[0]
      })`,
      `${remote}/${main} changed ${BRIEF_FILE} since this machine's last paperwork, which never reached it; relay sets that paperwork aside and starts from ${remote}'s, but someone's files in ${primary.cwd} are in the way. Keep them aside with "git stash push --include-untracked -- ${
        named.length ? named.join(" ") : "<the files git names below>"
      }" there (relay never commits a person's changes), then run "relay resume".${
        anchor ? ` relay's commits are under ${anchor}.` : ""
      } git said:\n${moved.stderr.trim()}`,
      { local: true },
    );
  }

  // What only this machine did to the queue since the two last matched, committed or not:
  // path → its text here (null: taken out of the queue here).
  const queue = new Map<string, string | null>();
  if (committed) {
    const changed = (await primary.out([
      "diff",
      "--name-only",
      "--no-renames",
      "--diff-filter=AMD",
      "-z",
      base,
      local,
      "--",
      INBOX_DIR,
    ])).split("\0").filter((p) => p !== "");
    const texts = await primary.showFiles(local, changed);
    changed.forEach((path, i) => queue.set(path, texts[i] ?? null));
  }
  for (const [path, text] of set?.files ?? []) {
    if (path.startsWith(`${INBOX_DIR}/`)) queue.set(path, text);
  }
  const said = await requeueMine(
    primary,
    opts.repo,
    remote,
    { base, local, upstream },
    queue,
    ours,
  );
  const kept = [anchor ? `commits under ${anchor}` : "", set ? `files in ${set.dir}` : ""]
    .filter((s) => s).join(", ");
  const brief = ours === null
    ? ""
    : ` (its brief: task ${readHeaderTask(ours) ?? "?"}, ${readStatus(ours) ?? "no status"})`;
  opts.log.step(
    `set aside this machine's paperwork that never reached ${remote}${brief}: ${remote}/${main} changed ${BRIEF_FILE} meanwhile, so this tick starts from its brief (${kept}${said})`,
  );
  return true;
}

/** An inbox file's name: its task number first. */
const NUMBERED = /(?:^|\/)(\d+)-[^/]*$/;

/**
 * Puts back in the queue, main now being the remote's, what only this machine did to it:
 * briefs queued here that the remote has no trace of, edits of briefs it still queues, and
 * briefs taken out of the queue here (a person's `relay inbox drop`) that it still has as they
 * were. What the remote did meanwhile wins: a brief it took from the queue or ran is not
 * queued again (it would run twice), and a number it gave to another brief is not reused.
 * Returns what the set-aside line adds: "; queued again: …; not queued again: …".
 */
async function requeueMine(
  primary: Git,
  repo: RepoPaths,
  remote: string,
  at: { base: string; local: string; upstream: string },
  mine: Map<string, string | null>,
  ours: string | null,
): Promise<string> {
  const { base, local, upstream } = at;
  const back: string[] = [];
  const dropped: string[] = [];
  const out: string[] = [];
  const show = async (rev: string, path: string) =>
    (await primary.showFiles(rev, [path]))[0] ?? null;
  if (mine.size === 0) return "";
  // The queue when the two last matched, by task number: a brief queued here since has a
  // number of its own (inbox add counts the queue), so one of those numbers is that brief.
  const queuedAtBase = await queueByNumber(primary, base);
  const queuedUpstream = await queueByNumber(primary, upstream);
  // Numbers this loop gave to briefs it queued again: not the remote's.
  const renumbered = new Set<number>();
  // A free number is free of the briefs this loop has still to put back, too.
  const mineNumbers = [...mine.values()].map((t) => readHeaderTask(t)).filter((n) => n !== null);
  const handled = new Set<string>();
  let known: Map<number, Set<string | null>> | undefined;
  for (const [path, text] of mine) {
    if (text === null) continue;
    const full = join(primary.cwd, path);
    const title = readHeaderField(text, "title");
    // This brief back in the queue as `at` is, merged with the remote's where both changed it.
    const restore = (at: string) =>
      restoreAside(primary, { dir: "", files: new Map([[at, text]]) }, base, upstream);
    // This brief back in the queue under the next free number, for `why`.
    const requeueFree = async (why: string) => {
      known ??= await knownTasks(primary, remote, base, upstream, queuedUpstream);
      const { queueAgain } = await import("./inbox.ts");
      const moved = await queueAgain(repo, text, path, {
        keep: false,
        taken: [...known.keys(), ...mineNumbers],
      });
      known.set(moved.task, new Set([title]));
      renumbered.add(moved.task);
      back.push(`${moved.file} (was ${path}: ${why})`);
    };
    try {
      const theirs = await show(upstream, path);
      const task = readHeaderTask(text);
      const was = task === null ? undefined : queuedAtBase.get(task);
      if (theirs !== null) {
        // Still queued on the remote: this machine's edit goes back on top, merged with the
        // remote's where both changed it.
        if (theirs === text) continue;
        if ((await show(base, path)) === null) {
          // Queued under the same name on both sides since they parted: one brief when the
          // titles are one (queued twice), else two, and this one takes a free number.
          if (title === readHeaderField(theirs, "title")) {
            dropped.push(`${path} (${remote} queued a brief of this title under this name)`);
            continue;
          }
          await requeueFree(`${remote} queued another brief under this name`);
          continue;
        }
        await restore(path);
        back.push(`${path} (edited)`);
        continue;
      }
      if ((await show(base, path)) !== null) {
        // Queued when the two last matched: the remote took it from the queue since, or queues
        // it under another name (a person's drop and add there).
        const there = task === null ? undefined : queuedUpstream.get(task);
        // Its number queued there under another name: the same brief renamed (drop, then add
        // with its Task line), or another that inbox add gave the number again. Said as such.
        dropped.push(
          there === undefined
            ? `${path} (${remote} took it from the queue)`
            : `${path} (${remote} no longer queues it under this name; task ${task} is queued there as ${there}, this brief renamed or another that took its number; this machine's edit is not in it)`,
        );
        continue;
      }
      if (was !== undefined && was !== path) {
        // A brief queued at the base, re-added here under another name (inbox drop, then add
        // with its Task line): an edit of that brief, never a second one.
        handled.add(was);
        if ((await show(upstream, was)) === null) {
          dropped.push(`${path} (${remote} took task ${task} from the queue: it was ${was})`);
          continue;
        }
        await restore(was);
        back.push(`${was} (edited here as ${path})`);
        continue;
      }
      // Queued here only, or taken from the queue there (promoted, done). A brief whose task
      // the remote shows anywhere is not queued again: it would run twice. Unless the
      // remote's briefs gave that number another title: numbered on another clone meanwhile,
      // it is another brief, and this one is queued under a free number.
      if (task === null) {
        dropped.push(`${path} (no Task: line; queue it with relay inbox add)`);
        continue;
      }
      known ??= await knownTasks(primary, remote, base, upstream, queuedUpstream);
      const theirTitles = known.get(task);
      // A number seen only untitled (a report, a branch) is taken for this brief: every brief
      // the remote ran since passed through its NEXT-STEPS.md, where its title was read.
      if (theirTitles && (theirTitles.has(title) || [...theirTitles].every((t) => t === null))) {
        dropped.push(`${path} (${remote} has task ${task} already)`);
        continue;
      }
      if (theirTitles) {
        await requeueFree(
          renumbered.has(task)
            ? `task ${task} went to another brief queued again here`
            : `${remote} gave task ${task} to another brief`,
        );
        continue;
      }
      await Deno.mkdir(dirname(full), { recursive: true });
      await Deno.writeTextFile(full, text);
      known.set(task, new Set([title]));
      renumbered.add(task);
      back.push(path);
    } catch (err) {
      // Main has moved already: one brief that cannot be queued again must not cost the rest
      // theirs, nor the line that says where it is kept.
      dropped.push(`${path} (${err instanceof Error ? err.message : String(err)})`);
    }
  }
  // Taken out of the queue here. A promotion's is not a drop: the promotion is set aside
  // with the rest, and the tick promotes afresh from the remote's queue.
  let promoted: Set<number> | undefined;
  for (const [path, text] of mine) {
    if (text !== null || handled.has(path)) continue;
    try {
      const theirs = await show(upstream, path);
      if (theirs === null) continue; // gone there too
      promoted ??= await promotedHere(primary, base, local, ours);
      const m = NUMBERED.exec(path);
      if (m && promoted.has(Number(m[1]))) continue;
      if (theirs === (await show(base, path))) {
        await Deno.remove(join(primary.cwd, path));
        out.push(`dropped again: ${path}`);
      } else {
        out.push(
          `kept: ${path}, dropped here, was changed on ${remote} meanwhile (relay inbox drop ${
            m?.[1] ?? "<task>"
          } drops it)`,
        );
      }
    } catch (err) {
      out.push(`kept: ${path} (${err instanceof Error ? err.message : String(err)})`);
    }
  }
  return [
    back.length ? `; queued again: ${back.join(", ")}` : "",
    dropped.length ? `; not queued again: ${dropped.join(", ")}` : "",
    out.length ? `; ${out.join("; ")}` : "",
  ].join("");
}

/** The inbox files `rev` holds, by the task number their names begin with. */
async function queueByNumber(primary: Git, rev: string): Promise<Map<number, string>> {
  const queued = new Map<number, string>();
  const names = await primary.out(["ls-tree", "--name-only", "-z", rev, "--", `${INBOX_DIR}/`]);
  for (const path of names.split("\0")) {
    const m = NUMBERED.exec(path);
    if (m) queued.set(Number(m[1]), path);
  }
  return queued;
}

/** The task numbers this machine's set-aside paperwork put in its brief (its promotions). */
async function promotedHere(
  primary: Git,
  base: string,
  local: string,
  ours: string | null,
): Promise<Set<number>> {
  const tasks = new Set<number>();
  const revs = (await primary.out(["log", "--format=%H", `${base}..${local}`, "--", BRIEF_FILE]))
    .split("\n").filter((l) => l !== "");
  for (const rev of revs) {
    const task = readHeaderTask((await primary.showFiles(rev, [BRIEF_FILE]))[0] ?? null);
    if (task !== null) tasks.add(task);
  }
  const task = readHeaderTask(ours);
  if (task !== null) tasks.add(task);
  return tasks;
}

/** True when every commit in `range` is relay's reviewer paperwork: the brief and the inbox. */
async function reviewerCommitsOnly(primary: Git, range: string): Promise<boolean> {
  const out = await primary.out(["log", "--format=%x01%s", "--name-only", "-z", range]);
  for (const entry of out.split("\x01").filter((e) => e.trim() !== "")) {
    const [subject = "", ...paths] = entry.split(/[\0\n]/).filter((p) => p !== "");
    if (!REVIEWER_SUBJECT.test(subject)) return false;
    if (!paths.every((p) => p === BRIEF_FILE || p.startsWith(`${INBOX_DIR}/`))) return false;
  }
  return true;
}

/** An anchor ref for `sha`: one already there for it (a tick that HOLDs again), else a new one. */
async function anchorOf(primary: Git, sha: string): Promise<string> {
  const refs = await primary.out([
    "for-each-ref",
    "--format=%(objectname) %(refname)",
    STALE_PAPERWORK_ANCHORS,
  ]);
  const found = refs.split("\n").find((l) => l.startsWith(`${sha} `));
  if (found) return found.slice(sha.length + 1);
  const anchor = `${STALE_PAPERWORK_ANCHORS}${new Date().toISOString().replace(/[:.]/g, "-")}`;
  await primary.updateRef(anchor, sha, "relay: stale paperwork set aside", "");
  return anchor;
}

/**
 * The task numbers the remote shows, each with the titles it goes by there (null: a number
 * seen without one, in a report or a branch name): in its brief and report as they were at
 * `base` and in every brief since, its queue, and its task branches.
 */
async function knownTasks(
  primary: Git,
  remote: string,
  base: string,
  upstream: string,
  /** The remote's queue (queueByNumber of `upstream`). */
  queued: Map<number, string>,
): Promise<Map<number, Set<string | null>>> {
  const known = new Map<number, Set<string | null>>();
  const add = (task: number | null, title: string | null) => {
    if (task === null) return;
    const titles = known.get(task) ?? new Set<string | null>();
    titles.add(title);
    known.set(task, titles);
  };
  const briefs =
    (await primary.out(["log", "--format=%H", `${base}..${upstream}`, "--", BRIEF_FILE]))
      .split("\n").filter((l) => l !== "");
  for (const rev of [base, upstream, ...briefs]) {
    const [brief = null, report = null] = await primary.showFiles(rev, [BRIEF_FILE, REPORT_FILE]);
    add(readHeaderTask(brief), readHeaderField(brief, "title"));
    add(readHeaderTask(report), null);
  }
  const numbers = [...queued.keys()];
  const texts = await primary.showFiles(upstream, [...queued.values()]);
  numbers.forEach((task, i) => add(task, readHeaderField(texts[i] ?? null, "title")));
  const branches = await primary.out([
    "for-each-ref",
    "--format=%(refname:lstrip=3)",
    `refs/remotes/${remote}/`,
  ]);
  for (const name of branches.split("\n")) {
    const m = /^task-(\d+)$/.exec(name);
    if (m) add(Number(m[1]), null);
  }
  return known;
}
