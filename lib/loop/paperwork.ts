/**
 * The paperwork commit: in the primary tree, on main, only the protocol
 * files, in a commit of their own, pushed without force. This is what keeps
 * status files from making two branches "conflict" when their code does not.
 */
import { dirname, join } from "../path.ts";
import { HoldError } from "../errors.ts";
import { type Git, NO_SUBMODULE_STATUS, REUSE_FETCH_MS } from "../git/git.ts";
import { discoverRepo } from "../git/discover.ts";
import { fileSize, reflogShas } from "./turn_anchors.ts";
import {
  classifyPush,
  describePush,
  failureAdvice,
  type PushOutcome,
  pushRetry,
  refusalAdvice,
} from "../git/push_outcome.ts";
import {
  BRIEF_FILE,
  INBOX_DIR,
  PAPERWORK_PATHS,
  RELAY_PAPERWORK_PATHS,
  REPORT_FILE,
} from "../state/paths.ts";
import { readHeaderField, readHeaderTask, readStatus } from "../protocol/status_line.ts";
import type { Log } from "../proc/log.ts";
import { redact } from "../proc/redact.ts";

/** How syncMain, pushMain and rebasePaperwork bring relay's paperwork onto a moved main. */
export interface PaperworkSync {
  /** Where copies of relay's uncommitted paperwork go before it is set aside. */
  aside: string;
  log: Log;
  /** The caller fetched just now (split mode's one fetch at the start of a tick). */
  fetched?: boolean;
  /**
   * machines: one — another task's brief on main was written there by a person (relay's own
   * reach main only DONE, with their report): relay's brief stands whole, the other is queued.
   * With split machines the reviewer commits open briefs itself; those are left as before.
   */
  personBriefs?: boolean;
}

/**
 * Brings local main up to the remote's main when it is behind; never rewrites
 * anything. relay's own uncommitted paperwork (a promoted or fix brief in
 * NEXT-STEPS.md, the inbox) never blocks that: it is set aside, main is
 * fast-forwarded, and it is put back on top, merged line by line with what
 * arrived (a person's edit of a protocol file on main stays in history; where
 * both changed the same lines, relay's version wins). A copy of what was set
 * aside is kept under `aside` first. HOLDs when local main carries commits
 * that are not on the remote and are not paperwork (pushing the paperwork
 * would publish them unreviewed), or when a person's own uncommitted change
 * to another file is in the way.
 */
export async function syncMain(
  primary: Git,
  remote: string,
  main: string,
  opts: PaperworkSync,
): Promise<void> {
  // `fetched`: the caller fetched just now (split mode's one fetch at the start of a tick);
  // otherwise a fetch this tick made a moment ago (no agent ran since) stands: the push is
  // the check.
  if (!opts.fetched) await primary.fetch(remote, { reuseMs: REUSE_FETCH_MS });
  const origin = await primary.resolve(`refs/remotes/${remote}/${main}`);
  const local = await primary.resolve("HEAD");
  if (!origin || !local || origin === local) return;
  if (await primary.isAncestor(local, origin)) {
    const set = await setAsidePaperwork(primary, local, origin, opts.aside);
    const res = await primary.run(["merge", "--ff-only", "--quiet", origin], { allowFail: true });
    if (res.code !== 0) {
      // Put relay's paperwork back as it was before saying why: nothing is lost either way.
      if (set) await restoreAside(primary, set, local, local);
      const paths = [...res.stderr.matchAll(/^\t(.+)$/gm)].map((m) => m[1]!.trim());
      throw new HoldError(
        `Cannot fast-forward "${main}" in the primary tree to ${remote}/${main}: local changes are in the way (${
          paths.join(", ") || res.stderr.trim().split("\n")[0]
        })`,
        `Someone changed files in ${primary.cwd} that ${remote}/${main} changes too. Keep them aside with "git stash push --include-untracked -- ${
          paths.length ? paths.join(" ") : "<the files git names below>"
        }" there (relay never commits a person's changes), then run "relay resume"; "git stash pop" brings them back once the loop has moved on. git said:\n${res.stderr.trim()}`,
        { local: true },
      );
    }
    if (set) {
      const outcomes = await restoreAside(primary, set, local, origin, opts.personBriefs);
      opts.log.step(
        `brought ${main} up to ${remote}/${main} (${
          origin.slice(0, 12)
        }) and put relay's uncommitted paperwork back on top: ${
          outcomes.join("; ")
        } (a copy is in ${set.dir})`,
      );
    }
  } else if (!(await paperworkOnly(primary, `${origin}..${local}`))) {
    // Whatever is on local main is pushed with the paperwork: product code must not ride along.
    throw new HoldError(
      `Cannot commit the paperwork on "${main}": local ${main} has commits that are not on ${remote}/${main} and are not paperwork`,
      `relay pushes only its own paperwork commits to ${main}. In ${primary.cwd}, keep them on a branch ("git branch keep-local ${main}"), put ${main} back where ${remote} has it ("git switch --detach && git branch -f ${main} ${remote}/${main} && git switch ${main}"), then run "relay resume". Push or open a PR for keep-local yourself.`,
      { local: true },
    );
  }
}

/** The protocol files relay itself writes uncommitted in the primary tree. */
const OWN_PAPERWORK = RELAY_PAPERWORK_PATHS;

export interface Aside {
  dir: string;
  /** path → what the working tree held (null: deleted). */
  files: Map<string, string | null>;
}

/**
 * Sets aside relay's uncommitted paperwork that the fast-forward would touch:
 * copies it under `aside/<time>/`, then puts those paths back as HEAD has them
 * (a file HEAD does not have is moved out). Null when nothing is in the way.
 */
export async function setAsidePaperwork(
  primary: Git,
  local: string,
  origin: string | null,
  aside: string,
): Promise<Aside | null> {
  // Only what the move to `origin` would touch; with no origin, all of it (a rebase).
  const incoming = origin === null
    ? null
    : new Set(await primary.changedPaths(local, origin, [...OWN_PAPERWORK]));
  if (incoming?.size === 0) return null;
  const dirty = (await primary.out([
    "status",
    "--porcelain=v1",
    "-z",
    "--untracked-files=all",
    "--no-renames",
    NO_SUBMODULE_STATUS,
    "--",
    ...OWN_PAPERWORK,
  ])).split("\0").filter((e) => e !== "").map((e) => e.slice(3));
  const inTheWay = dirty.filter((p) => incoming === null || incoming.has(p));
  if (inTheWay.length === 0) return null;
  const dir = join(aside, new Date().toISOString().replace(/[:.]/g, "-"));
  const files = new Map<string, string | null>();
  for (const path of inTheWay) {
    const text = await Deno.readTextFile(join(primary.cwd, path)).catch(() => null);
    files.set(path, text);
    if (text !== null) {
      await Deno.mkdir(dirname(join(dir, path)), { recursive: true });
      await Deno.writeTextFile(join(dir, path), text);
    }
  }
  for (const path of inTheWay) {
    if (await primary.ok(["cat-file", "-e", `${local}:${path}`])) {
      // Literal paths: a queued brief named with "*" or "[" must not match another file.
      await primary.run(["checkout", "--quiet", local, "--", path], {
        env: { GIT_LITERAL_PATHSPECS: "1" },
      });
    } else {
      await Deno.remove(join(primary.cwd, path));
    }
  }
  return { dir, files };
}

/**
 * Puts the set-aside paperwork back on top of `now`: each file is merged
 * three ways (base: `base`, ours: relay's, theirs: `now`), relay's lines
 * winning where both changed the same ones. Returns one phrase per file.
 */
export async function restoreAside(
  primary: Git,
  set: Aside,
  base: string,
  now: string,
  /** PaperworkSync.personBriefs. */
  personBriefs = false,
): Promise<string[]> {
  const said: string[] = [];
  // Queued once every file is back: the number it keeps must be free of relay's brief.
  let arrived: string | null = null;
  for (const [path, ours] of set.files) {
    const at = async (rev: string) =>
      (await primary.ok(["cat-file", "-e", `${rev}:${path}`]))
        ? await primary.run(["show", `${rev}:${path}`]).then((r) => r.stdout)
        : null;
    const older = await at(base);
    const theirs = await at(now);
    const full = join(primary.cwd, path);
    let result: string | null;
    if (ours === null) {
      result = null;
      said.push(
        `${path} stays removed${theirs !== older ? " (it was changed on main meanwhile)" : ""}`,
      );
    } else if (theirs === null || theirs === older) {
      result = ours;
      said.push(`${path} as relay wrote it`);
    } else if (personBriefs && path === BRIEF_FILE && otherBrief(ours, theirs)) {
      // Another task's brief, written on main: merged line by line into relay's, the agent
      // would run parts of both. Relay's stands whole; the other waits in the queue.
      result = ours;
      arrived = theirs;
      said.push(`${path} as relay wrote it (task ${readHeaderTask(ours)})`);
    } else {
      result = await mergeThreeWays(ours, older ?? "", theirs);
      said.push(`${path} merged with the change on main`);
    }
    if (result === null) await Deno.remove(full).catch(() => {});
    else {
      await Deno.mkdir(dirname(full), { recursive: true });
      await Deno.writeTextFile(full, result);
    }
  }
  if (arrived !== null) said.push(await queueArrived(primary, arrived));
  return said;
}

/**
 * Whether `theirs` is another brief than `ours`: for another task, for none it names, or one
 * under the same number and another title (a person on their own clone cannot see what is
 * queued only here, and picks the next number main shows).
 */
function otherBrief(ours: string, theirs: string): boolean {
  const mine = readHeaderTask(ours);
  return mine !== null &&
    (readHeaderTask(theirs) !== mine ||
      readHeaderField(theirs, "title") !== readHeaderField(ours, "title"));
}

/**
 * Another task's brief that arrived in main's NEXT-STEPS.md while relay's stood there (a
 * person wrote it there rather than with `relay inbox add`): an open one is queued once
 * (queueFromMain); any other stays in main's history. Returns what became of it, for the log.
 */
async function queueArrived(primary: Git, text: string): Promise<string> {
  const task = readHeaderTask(text);
  const source = `main's ${BRIEF_FILE} (${task === null ? "no Task line" : `task ${task}`})`;
  if (readStatus(text) !== "OPEN") return `${source}, not open, stays in main's history only`;
  const repo = discoverRepo(primary.cwd);
  if (!repo) return `${source} stays in main's history: ${primary.cwd} is not a git work tree`;
  const { queueFromMain } = await import("./inbox.ts");
  return await queueFromMain(repo, text, source) ??
    `the open brief in ${source} was queued before (.git/relay/adopted-briefs.json)`;
}

/** `git merge-file --ours`: both sides' changes, relay's where they touch the same lines. */
async function mergeThreeWays(ours: string, base: string, theirs: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "relay-paperwork-" });
  try {
    const files = ["ours", "base", "theirs"].map((n) => join(dir, n));
    await Deno.writeTextFile(files[0]!, ours);
    await Deno.writeTextFile(files[1]!, base);
    await Deno.writeTextFile(files[2]!, theirs);
    const { Git } = await import("../git/git.ts");
    const res = await new Git(dir).run(["merge-file", "-p", "--ours", "--", ...files], {
      allowFail: true,
    });
    return res.code >= 0 && res.code < 128 ? res.stdout : ours;
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

export interface PaperworkFiles {
  brief: string;
  report: string;
}

/**
 * Writes NEXT-STEPS.md and COWORK-STATUS.md and commits them (with any inbox
 * change the planner left) in one commit on main. Idempotent: when HEAD is
 * already that commit, returns it without a new one. Secrets of relay's
 * environment are redacted first: the report quotes the agent's output.
 */
export async function commitPaperwork(
  primary: Git,
  files: PaperworkFiles,
  message: string,
): Promise<string> {
  message = redact(message);
  await Deno.writeTextFile(join(primary.cwd, BRIEF_FILE), redact(files.brief));
  await Deno.writeTextFile(join(primary.cwd, REPORT_FILE), redact(files.report));
  // What differs from HEAD, staged or not, untracked included: nothing, and there is nothing
  // to add either (then HEAD may be this very commit, made by a run that died before its push).
  const entries = (await primary.out([
    "status",
    "--porcelain=v1",
    "-z",
    "--untracked-files=all",
    "--no-renames",
    NO_SUBMODULE_STATUS,
    "--",
    BRIEF_FILE,
    REPORT_FILE,
    INBOX_DIR,
  ])).split("\0").filter((e) => e.length > 3);
  const listed = entries.map((e) => e.slice(3));
  const paths: string[] = [BRIEF_FILE, REPORT_FILE];
  if (listed.some((p) => p.startsWith(`${INBOX_DIR}/`))) paths.push(INBOX_DIR);
  if (listed.length) await primary.run(["add", "--all", "--", ...paths]);
  if (!(await stagesSomething(primary, entries, paths))) {
    // HEAD may be this very commit, made by a run that died before its push.
    const subject = await primary.out(["log", "-1", "--format=%s"]);
    if (subject === message) return await primary.head();
    throw new Error(
      `nothing to commit for "${message}": the paperwork in ${primary.cwd} is as HEAD ` +
        `has it, under another message ("${subject}")`,
    );
  }
  const commit = ["commit", "--quiet", "--no-verify", "-m", message, "--", ...paths];
  // Where HEAD's reflog stands: the commit's own line is read after it.
  const headLog = join(
    discoverRepo(primary.cwd)?.gitDir ?? join(primary.cwd, ".git"),
    "logs",
    "HEAD",
  );
  const mark = await fileSize(headLog);
  const since = Math.floor(Date.now() / 1000);
  await primary.run(commit);
  const made = await primary.head();
  // What it was made on, as git recorded the commit: the one move of HEAD since the mark. Not
  // HEAD as read before, which someone else's commit in the primary tree meanwhile would have
  // moved under it (then there are two moves, and pushMain asks git).
  const moves = await reflogShas(headLog, mark, since);
  if (moves.length === 2 && moves[1] === made) {
    madeHere.set(primary.cwd, { commit: made, parent: moves[0]! });
  } else madeHere.delete(primary.cwd);
  return made;
}

/**
 * The paperwork commit `commitPaperwork` made in this process, by primary tree, and what it
 * was made on: a commit of the paperwork paths alone (`git commit -- <paths>`), so pushMain
 * need not ask git what is in it when it is all that local main has over the remote's.
 */
const madeHere = new Map<string, { commit: string; parent: string }>();

/** True when every commit in `range` touches only paperwork. */
async function paperworkOnly(primary: Git, range: string): Promise<boolean> {
  const out = await primary.out(["log", "--format=", "--name-only", "-z", range]);
  const paths = out.split(/[\0\n]/).filter((p) => p !== "");
  return paths.every((p) => PAPERWORK_PATHS.some((pw) => p === pw || p.startsWith(`${pw}/`)));
}

/**
 * Pushes main. A push that lost a race — the remote's main moved first (not
 * a fast-forward) or moved while this push landed (a ref-lock race) — is
 * retried after a fetch and a rebase of the local paperwork-only commits onto
 * the remote's main, never forced. A remote that cannot be reached is left to
 * the next tick (RetryError: the commit waits on local main and the journal
 * keeps the step). Only a refusal a person must address (a protected branch,
 * a hook's message, credentials) is a HOLD, quoting git and the remote.
 */
export async function pushMain(
  primary: Git,
  remote: string,
  main: string,
  opts: PaperworkSync,
): Promise<void> {
  const { log } = opts;
  // Whatever is on local main goes out with the push: only relay's paperwork may (a tick
  // that resumes a push after a blip must not publish a commit someone made meanwhile).
  const upstream = `refs/remotes/${remote}/${main}`;
  const upstreamAt = await primary.resolve(upstream);
  const made = madeHere.get(primary.cwd);
  // Local main is the remote's plus the commit this tick made: paperwork by construction.
  const onlyMine = made !== undefined && made.parent === upstreamAt &&
    made.commit === await primary.head();
  if (upstreamAt && !onlyMine && !(await paperworkOnly(primary, `${upstream}..HEAD`))) {
    throw new HoldError(
      `Cannot push the paperwork to "${remote}/${main}": local ${main} has commits that are not paperwork`,
      `relay pushes only its own paperwork commits to ${main}. In ${primary.cwd}, keep the others on a branch ("git branch keep-local ${main}"), put ${main} back where ${remote} has it plus relay's paperwork commit, and run "relay resume". Push or open a PR for keep-local yourself.`,
      { local: true },
    );
  }
  const waits =
    `The paperwork commit waits on local ${main} in ${primary.cwd}; nothing was forced.`;
  let last: PushOutcome | null = null;
  for (let attempt = 1; attempt <= 3; attempt++) {
    const res = await primary.push(remote, "HEAD", `refs/heads/${main}`);
    const outcome = classifyPush(res.ok, res.stderr);
    if (outcome.kind === "ok") return;
    last = outcome;
    if (outcome.kind === "unreachable") {
      throw pushRetry(outcome, `the paperwork commit to "${remote}/${main}"`);
    }
    if (outcome.kind === "refused" || outcome.kind === "failed") {
      throw new HoldError(
        `Cannot push the paperwork commit to "${remote}/${main}": ${describePush(outcome)}`,
        `${
          outcome.kind === "refused"
            ? refusalAdvice(remote, main)
            : failureAdvice(remote, main, primary.cwd)
        } ${waits} Once it can push, run "relay resume".`,
      );
    }
    log.step(
      `push of ${main} did not land (${outcome.status}, attempt ${attempt}); fetching and rebasing the paperwork commit`,
    );
    await rebasePaperwork(primary, remote, main, opts);
  }
  throw pushRetry(
    last as Extract<PushOutcome, { kind: "behind" | "raced" }>,
    `the paperwork commit to "${remote}/${main}" (it kept moving)`,
  );
}

/**
 * Puts local main's paperwork commits on top of the remote's main. A person
 * who edited the protocol files on main meanwhile keeps the edit in history;
 * where both changed the same lines, relay's paperwork wins (`-X theirs`: in a
 * rebase, "theirs" is the commit being replayed — relay's).
 */
export async function rebasePaperwork(
  primary: Git,
  remote: string,
  main: string,
  opts: PaperworkSync,
): Promise<void> {
  // `fetched`: the caller fetched just now (split mode's one fetch at the start of a tick).
  if (!opts.fetched) await primary.fetch(remote);
  const origin = `refs/remotes/${remote}/${main}`;
  if (!(await paperworkOnly(primary, `${origin}..HEAD`))) {
    throw new HoldError(
      `Cannot push "${main}": local ${main} has commits that are not paperwork and ${remote} moved`,
      `Look at "git log ${origin}..${main}" in ${primary.cwd}; relay only rebases its own paperwork commits. Move the other commits to a branch (git branch keep-mine ${main}), then put ${main} back on ${remote}/${main} without them, and run "relay resume".`,
      { local: true },
    );
  }
  // No autostash: a stash that does not apply afterwards leaves conflict markers in the
  // tree while git still says the rebase went well. relay's own uncommitted paperwork is
  // set aside and put back merged; anyone else's change in the way is a HOLD.
  const before = await primary.head();
  const set = await setAsidePaperwork(primary, before, null, opts.aside);
  const others = (await primary.out([
    "status",
    "--porcelain=v1",
    "-z",
    "--untracked-files=no",
    NO_SUBMODULE_STATUS,
  ])).split("\0").filter((e) => e !== "").map((e) => e.slice(3));
  if (others.length) {
    if (set) await restoreAside(primary, set, before, before);
    throw new HoldError(
      `Cannot rebase the paperwork commit onto ${remote}/${main}: the primary tree has changes that are not relay's (${
        others.join(", ")
      })`,
      `Someone works in ${primary.cwd}, which relay keeps for its own paperwork. Keep the changes aside with "git stash push --include-untracked -- ${
        others.join(" ")
      }" there, then run "relay resume"; "git stash pop" brings them back once the loop has moved on.`,
      { local: true },
    );
  }
  const rebase = await primary.run(["rebase", "--quiet", "-X", "theirs", origin], {
    allowFail: true,
  });
  if (rebase.code !== 0) {
    await primary.run(["rebase", "--abort"], { allowFail: true });
    if (set) await restoreAside(primary, set, before, before);
    throw new HoldError(
      `Cannot rebase the paperwork commit onto ${remote}/${main}: ${
        rebase.stderr.trim().split("\n")[0] ?? "conflict"
      }`,
      `Someone changed the protocol files on ${remote}/${main} in a way git cannot replay (a file deleted on one side and changed on the other). In ${primary.cwd}, run "git rebase ${remote}/${main}", resolve NEXT-STEPS.md and COWORK-STATUS.md (keep relay's version for the task it just finished, and ${remote}'s when it already names a later task), "git rebase --continue", then "relay resume": the next tick pushes it.`,
      { local: true },
    );
  }
  const kept = opts.personBriefs ? await keepOwnBrief(primary, before, origin) : null;
  if (kept) opts.log.step(kept);
  if (set) {
    const outcomes = await restoreAside(
      primary,
      set,
      before,
      await primary.head(),
      opts.personBriefs,
    );
    opts.log.step(
      `put relay's uncommitted paperwork back after the rebase: ${outcomes.join("; ")}`,
    );
  }
}

/**
 * After the rebase: relay's committed brief over another task's that arrived on main meanwhile,
 * as restoreAside keeps its uncommitted one. `-X theirs` settles only the lines both changed:
 * the rest of the person's would be in relay's brief, a brief of two tasks. Relay's stands
 * whole (the rebased commit amended, a local one never pushed), and the other, when open, is
 * queued. Returns what to log, or null when main's brief was not changed meanwhile.
 */
async function keepOwnBrief(primary: Git, before: string, origin: string): Promise<string | null> {
  const base = (await primary.run(["merge-base", before, origin], { allowFail: true })).stdout
    .trim();
  if (base === "") return null;
  const [mine = null] = await primary.showFiles(before, [BRIEF_FILE]);
  const [older = null] = await primary.showFiles(base, [BRIEF_FILE]);
  const [theirs = null] = await primary.showFiles(origin, [BRIEF_FILE]);
  if (mine === null || theirs === null || mine === older || theirs === older) return null;
  if (!otherBrief(mine, theirs)) return null;
  const [now = null] = await primary.showFiles("HEAD", [BRIEF_FILE]);
  if (now !== mine) {
    await Deno.writeTextFile(join(primary.cwd, BRIEF_FILE), mine);
    await primary.run([
      "commit",
      "--quiet",
      "--amend",
      "--no-edit",
      "--no-verify",
      "--",
      BRIEF_FILE,
    ]);
  }
  return `${BRIEF_FILE} as relay committed it (task ${readHeaderTask(mine)}); ${await queueArrived(
    primary,
    theirs,
  )}`;
}

/**
 * `machines: split`: the reviewer's own paperwork commit. With no shared tree, a promoted
 * brief, a fix brief or a retired one cannot wait for the executor's next paperwork commit:
 * the reviewer commits what it left in the protocol files (the brief and the inbox, never
 * anything else) on main, in a commit of its own, named like the executor's
 * (`Task #<n>: brief — <status> (<branch>)`). Null when it left nothing.
 */
export async function commitReviewerPaperwork(
  primary: Git,
  suffix?: string,
): Promise<string | null> {
  const changed = await primary.out([
    "status",
    "--porcelain=v1",
    "-z",
    "--untracked-files=all",
    "--no-renames",
    NO_SUBMODULE_STATUS,
    "--",
    BRIEF_FILE,
    INBOX_DIR,
  ]);
  if (changed === "") return null;
  const entries = changed.split("\0").filter((e) => e.length > 3);
  // The inbox only when something in it changed: a pathspec that matches nothing (no inbox
  // folder, its .gitkeep removed) fails the add and the commit.
  const paths = entries.some((e) => e.slice(3).startsWith(`${INBOX_DIR}/`))
    ? [BRIEF_FILE, INBOX_DIR]
    : [BRIEF_FILE];
  const brief = await Deno.readTextFile(join(primary.cwd, BRIEF_FILE)).catch(() => null);
  const task = readHeaderTask(brief);
  const subject = task === null
    ? "relay: inbox"
    : `Task #${task}: brief — ${readStatus(brief ?? "") ?? "changed"} (${
      readHeaderField(brief, "branch") ?? `task-${task}`
    })`;
  const message = redact(suffix ? `${subject} ${suffix}` : subject);
  await primary.run(["add", "--all", "--", ...paths]);
  if (!(await stagesSomething(primary, entries, paths))) return null;
  await primary.run(["commit", "--quiet", "--no-verify", "-m", message, "--", ...paths]);
  return await primary.head();
}

/**
 * Whether a commit of `paths` would commit anything, after `git add` of them, from the
 * status entries taken before that add: never `git commit` with nothing to commit, which
 * fails printing a status of the whole tree, and that status looks inside each submodule
 * under its own config (see NO_SUBMODULE_STATUS). Asked of git (the index against HEAD, no
 * working tree) only when an entry was changed both in the index and in the tree: the add
 * may have undone the staged change then.
 */
async function stagesSomething(
  primary: Git,
  entries: readonly string[],
  paths: readonly string[],
): Promise<boolean> {
  if (entries.length === 0) return false;
  const maybeUndone = entries.some((e) => e[0] !== " " && e[0] !== "?" && e[1] !== " ");
  if (!maybeUndone) return true;
  return !(await primary.ok(["diff", "--cached", "--quiet", "HEAD", "--", ...paths]));
}

/** True when local main has commits the remote's main lacks (a paperwork push still to make). */
export async function mainAhead(primary: Git, remote: string, main: string): Promise<boolean> {
  const upstream = await primary.resolve(`refs/remotes/${remote}/${main}`);
  const local = await primary.resolve("HEAD");
  return upstream !== null && local !== null && upstream !== local &&
    !(await primary.isAncestor(local, upstream));
}
