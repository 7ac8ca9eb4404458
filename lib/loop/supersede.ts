/**
 * `machines: split`: a run this machine journaled, that another machine did in its stead.
 *
 * A machine stopped mid-attempt (SIGKILL, a suspended laptop) keeps the executor's lease only
 * until the lease's time runs out; then another machine may take the lease and do the task.
 * When the stopped machine comes back, its journal says "resume run R" — but running R's
 * agent again would spend a paid turn on a task that may be merged by now, and end in a HOLD
 * with the wrong reason. So the executor's first tick back asks the remote (after the tick's
 * one fetch), never the lease's history: a lease that passed through a machine that did
 * nothing proves nothing, and a run whose branch is pushed is finished whatever the lease says.
 *
 * The run is set aside only before its branch is pushed, and only when the remote shows that
 * someone else worked the task: the brief on the remote's main is no longer the run's brief
 * OPEN, the remote's task branch holds commits this run did not make, or the PR record has
 * another head. The decision is written down first (`set-aside.json` in the state dir), so a
 * tick killed halfway through finishes the set-aside next time and never resumes the run.
 *
 * Setting aside keeps everything: the turn's commits and the branch tip under
 * refs/relay/anchors/, uncommitted work in the worktree as an anchored snapshot commit, the
 * worktree moved (never removed) and the local branch renamed to `relay-aside/<branch>/<run>`,
 * so a later round of the task starts from the remote's branch instead of this stale one. The
 * attempt is recorded as "superseded", which the attempt count does not count.
 */
import { basename, dirname, join } from "../path.ts";
import type { RepoConfig } from "../config/repo_load.ts";
import type { RepoPaths } from "../git/discover.ts";
import type { Git } from "../git/git.ts";
import { mirrorOf } from "../git/lease.ts";
import { HoldError } from "../errors.ts";
import { type Log, stamped } from "../proc/log.ts";
import { readHeaderTask, readStatus } from "../protocol/status_line.ts";
import { parseBrief } from "../protocol/brief.ts";
import { briefDigest } from "../protocol/brief_write.ts";
import type { Brief } from "../protocol/types.ts";
import { failpoint } from "../state/failpoint.ts";
import { readHold } from "../state/hold.ts";
import { archiveJournal, type Journal, readJournal, stepIndex } from "../state/journal.ts";
import { readJson, readTextOrNull, removeFile, writeJson } from "../state/json_file.ts";
import { BRIEF_FILE, type StatePaths } from "../state/paths.ts";
import { ownerOf, recordAttempt } from "../state/tasks.ts";
import { readEvents } from "../task/log.ts";
import { changedControls, controlFiles, executorScope } from "./guard.ts";
import { orphanState, stopOrphan } from "./orphan.ts";
import { Timeline } from "./timeline.ts";
import { anchorAbandonedTurn } from "./turn_anchors.ts";
import { moveWorktreeWithSubmodules, parseWorktreeList, realPathSoFar } from "./worktree.ts";

/** The decision, on record before anything is done about it. */
export interface AsideMarker {
  version: 1;
  runId: string;
  task: number;
  /** What the remote showed, in words: why the run is set aside. */
  reason: string;
  decidedAt: string;
  /** The run's turn was checked for changes to what steers git (done once, before any git in it). */
  checked?: boolean;
}

/** The local branch a set-aside run's branch is renamed to. */
export function asideBranch(branch: string, runId: string): string {
  return `relay-aside/${branch}/${runId}`;
}

/** Where a set-aside run's worktree is moved: beside the task worktrees, in a folder of its own. */
export function asideWorktree(worktree: string, runId: string): string {
  return join(dirname(worktree), ".relay-aside", `${basename(worktree)}-${runId}`);
}

/** The anchors the set-aside writes besides the turn's own: the branch tip, the worktree's state. */
export function asideAnchor(task: number, runId: string, what: "branch" | "worktree"): string {
  return `refs/relay/anchors/task-${task}/${runId}-aside-${what}`;
}

/** What the remote shows of the task, after the tick's one fetch. */
export interface RemoteSeen {
  /**
   * The remote main's brief: null when main has none, "unread" when the remote's main is not
   * there to read (then the brief decides nothing).
   */
  brief: { task: number | null; status: string | null } | null | "unread";
  /** The remote's task branch; `ours`: this run's own commits reach it (it made it or started from it). */
  branch: { sha: string; ours: boolean } | null;
  /** The PR record's head on the remote (plain forge), and whether it is this run's. */
  pr: { head: string; ours: boolean } | null;
  /**
   * Whether the run's head (once committed) is on the remote's task branch. False for a run
   * journaled "pushed" whose push never landed: split mode's plain forge pushes the branch
   * only with its PR record, at "pr-opened". Absent: not known (taken as landed).
   */
  headOnRemote?: boolean;
}

/**
 * Why the remote shows that someone else worked the run's task, a reason each; none when it
 * shows nothing of the kind (then the run is resumed as ever). Runs past `pushed`, and runs at
 * `pushed` whose head is on the remote, are never set aside: their branch is on the remote,
 * and finishing them is what resume does.
 */
export function othersWork(
  run: Pick<Journal, "task" | "branch" | "step">,
  where: { remote: string; main: string },
  seen: RemoteSeen,
): string[] {
  if (stepIndex(run.step) > stepIndex("pushed")) return [];
  // "pushed" with nothing of the run on the remote (split's plain forge pushes the branch with
  // its PR record, at "pr-opened"): nothing shipped yet, so it is weighed as a run before it.
  if (run.step === "pushed" && seen.headOnRemote !== false) return [];
  const reasons: string[] = [];
  const b = seen.brief;
  if (b === "unread") {
    // Nothing to compare with: the branch and the PR record still speak.
  } else if (b === null) {
    reasons.push(`${where.remote}/${where.main} has no ${BRIEF_FILE}`);
  } else if (b.task !== run.task || b.status !== "OPEN") {
    reasons.push(
      `${BRIEF_FILE} on ${where.remote}/${where.main} is no longer task ${run.task} OPEN (it is ${
        b.task === null ? "no task" : `task ${b.task}`
      } ${b.status ?? "without a status"})`,
    );
  }
  if (seen.branch && !seen.branch.ours) {
    reasons.push(
      `${where.remote}/${run.branch} is at ${
        seen.branch.sha.slice(0, 12)
      }, which holds commits this run did not make`,
    );
  }
  if (seen.pr && !seen.pr.ours) {
    reasons.push(
      `the PR record of ${run.branch} on ${where.remote} has head ${
        seen.pr.head.slice(0, 12)
      }, which this run did not make`,
    );
  }
  return reasons;
}

/** Reads what the remote shows of the run's task from the refs the tick's fetch left. */
export async function observeRemote(
  git: Git,
  config: RepoConfig,
  run: Journal,
): Promise<RemoteSeen> {
  const main = await git.resolve(`refs/remotes/${config.remote}/${config.main}`);
  const text = main ? await git.showFile(main, BRIEF_FILE) : null;
  const brief = !main
    ? "unread" as const
    : text === null
    ? null
    : { task: readHeaderTask(text), status: readStatus(text) };
  // This run's own: where its branch started, and what its turn committed (a push that
  // landed before the tick could journal it is this run's too), and what the local branch
  // holds: only this run's turn moved it from where it started, and its agent may push it
  // itself (its own branch is the agent's to push) before relay journals "committed".
  const mine = [run.before, ...(run.head ? [run.head] : [])];
  const local = await git.resolve(`refs/heads/${run.branch}`);
  const ours = async (sha: string) =>
    mine.includes(sha) || await git.isAncestor(sha, run.head ?? run.before) ||
    (local !== null && local !== run.before && await git.isAncestor(sha, local));
  const tip = await git.resolve(`refs/remotes/${config.remote}/${run.branch}`);
  let pr: RemoteSeen["pr"] = null;
  if (config.forge === "plain") {
    const ref = mirrorOf(`refs/relay/prs/${run.branch}`);
    if (await git.resolve(ref)) {
      const record = await git.out(["log", "-1", "--format=%B", ref, "--"]).catch(() => "");
      const head = parseHead(record);
      if (head) pr = { head, ours: await ours(head) };
    }
  }
  const headOnRemote = run.head === undefined
    ? undefined
    : tip !== null && (tip === run.head || await git.isAncestor(run.head, tip));
  return {
    brief,
    branch: tip ? { sha: tip, ours: await ours(tip) } : null,
    pr,
    ...(headOnRemote === undefined ? {} : { headOnRemote }),
  };
}

function parseHead(text: string): string | null {
  try {
    const head = (JSON.parse(text) as { head?: unknown }).head;
    return typeof head === "string" && /^[0-9a-f]{40,64}$/.test(head) ? head : null;
  } catch {
    return null;
  }
}

export interface AsideContext {
  /** The primary tree. */
  git: Git;
  config: RepoConfig;
  repo: RepoPaths;
  state: StatePaths;
  log: Log;
  /** A line said also under --quiet (the tick's say), else the log. */
  say?: ((line: string) => void) | undefined;
  /** The operator profile's path: part of what the turn's guard compares. */
  profilePath: string;
}

/**
 * The executor's first step in split mode, after the fetch and the lease: a set-aside on
 * record is finished; else a journaled run the remote shows someone else did is set aside.
 * True when a run was set aside (the tick then goes on as one with nothing journaled).
 */
export async function settleSuperseded(ctx: AsideContext): Promise<boolean> {
  const path = ctx.state.setAside;
  let marker = await readJson<AsideMarker>(path);
  if (!marker) {
    const run = await readJournal(ctx.state.journal);
    // A HOLD on record waits for a person: "relay resume" settles the run, not this.
    if (!run || (await readHold(ctx.state.hold)) !== null) return false;
    const seen = await observeRemote(ctx.git, ctx.config, run);
    const reasons = othersWork(run, ctx.config, seen);
    if (reasons.length === 0) return false;
    marker = {
      version: 1,
      runId: run.runId,
      task: run.task,
      // Who moved it on, the remote does not say: another machine, or a person (relay close,
      // a brief edited on main); the reasons say what it shows.
      reason: `the remote shows task ${run.task} went on without this run: ${reasons.join("; ")}`,
      decidedAt: new Date().toISOString(),
    };
    await writeJson(path, marker);
    failpoint("set-aside-decided");
  }
  await setAside(ctx, marker);
  return true;
}

/** Carries out a set-aside on record. Every step may have been done by a killed tick already. */
async function setAside(ctx: AsideContext, marker: AsideMarker): Promise<void> {
  const { state } = ctx;
  const live = await readJournal(state.journal);
  const run = live?.runId === marker.runId
    ? live
    : await readJson<Journal>(join(state.runs, marker.runId, "journal.json"));
  if (!run) {
    // Nothing of the run is left to settle (its journal was never archived?): the decision goes.
    await removeFile(state.setAside);
    return;
  }
  await stopLeftAgent(ctx, run);
  if (!marker.checked) {
    await requireUntouchedControls(ctx, run, marker);
    marker = { ...marker, checked: true };
    await writeJson(state.setAside, marker);
  }
  // Everything anchored before anything moves.
  await anchorAbandonedTurn(ctx.repo.commonDir, run);
  await anchorBranch(ctx, run);
  await anchorWorktree(ctx, run);
  failpoint("set-aside-anchored");
  const worktree = await moveWorktree(ctx, run);
  const branch = await renameBranch(ctx, run);
  failpoint("set-aside-moved");
  const brief = await runBrief(state, run);
  if (brief) {
    await recordAttempt(state, brief, {
      runId: run.runId,
      brief: await briefDigest(brief),
      started: run.runId,
      result: "superseded",
      reason: marker.reason,
    });
    await addTimelineEvent(ctx, brief, run, marker, { branch, worktree });
  }
  if (live?.runId === run.runId) await archiveJournal(state.journal, state.runs, run);
  failpoint("set-aside-archived");
  await removeFile(state.setAside);
  const line = `task ${run.task}: set aside this machine's run ${run.runId} (stopped after ` +
    `step "${run.step}"), not resumed: ${marker.reason}. Nothing is lost: its branch is ` +
    `${branch ?? "gone"}, its worktree ${worktree ?? "gone"}, its commits under ` +
    `refs/relay/anchors/task-${run.task}/${run.runId}-*; the attempt is not counted`;
  // Also under --quiet (cron): the run this machine had in hand is gone from its hands.
  (ctx.say ?? ((l: string) => console.log(stamped(l, Deno.stdout.isTerminal()))))(line);
}

/** The run's agent, if a killed tick left it running: stopped first, as `relay close` does. */
async function stopLeftAgent(ctx: AsideContext, run: Journal): Promise<void> {
  if (run.step !== "agent-started" || run.agentPid === undefined) return;
  const orphan = await orphanState(run);
  if (orphan.kind === "gone") return;
  ctx.log.step(`task ${run.task}: stopping the agent of run ${run.runId} (pid ${run.agentPid})`);
  if (!(await stopOrphan(run.agentPid))) {
    throw new HoldError(
      `Cannot set aside run ${run.runId}: its agent (pid ${run.agentPid}) is still running after SIGTERM and SIGKILL`,
      `Stop process ${run.agentPid} by hand; the next tick finishes setting the run aside.`,
      { recheck: true, task: run.task },
    );
  }
}

/**
 * The turn may not have been guarded yet (the tick died during it). A turn that changed what
 * steers git (config, hooks) would have any git run in its worktree run its program: then
 * nothing but file reads happen, the turn's commits are anchored without git, and a person
 * looks (the decision is dropped: "relay resume" settles the run).
 */
async function requireUntouchedControls(
  ctx: AsideContext,
  run: Journal,
  marker: AsideMarker,
): Promise<void> {
  // A run whose guard passed was judged: what changed in its run folder since is relay's own
  // copies of the agent's report and paperwork.
  if (!run.control || run.guarded || stepIndex(run.step) >= stepIndex("committed")) return;
  const now = await controlFiles(
    executorScope({
      commonDir: ctx.repo.commonDir,
      gitDir: ctx.repo.gitDir,
      worktree: run.worktree,
      runDir: join(ctx.state.runs, run.runId),
      profilePath: ctx.profilePath,
    }),
  );
  const changed = changedControls(run.control, now);
  if (changed.length === 0) return;
  await anchorAbandonedTurn(ctx.repo.commonDir, run);
  await removeFile(ctx.state.setAside);
  throw new HoldError(
    `run ${run.runId} of task ${run.task} is not resumed (${marker.reason}), but it cannot be set aside safely: files that steer git or relay changed since its turn began: ${
      changed.join(", ")
    }`,
    `relay ran no git in its worktree. Put those files back as they were (a program planted in git config or hooks runs on any git command), then run "relay resume": it abandons the run; its commits are under refs/relay/anchors/task-${run.task}/${run.runId}-*.`,
    { task: run.task },
  );
}

/** The local branch's tip, when it has moved from where the run began (idempotent). */
async function anchorBranch(ctx: AsideContext, run: Journal): Promise<void> {
  const ref = asideAnchor(run.task, run.runId, "branch");
  if (await ctx.git.resolve(ref)) return;
  const tip = await ctx.git.resolve(`refs/heads/${run.branch}`) ??
    await ctx.git.resolve(`refs/heads/${asideBranch(run.branch, run.runId)}`);
  if (!tip || tip === run.before) return;
  await ctx.git.updateRef(ref, tip, `relay: branch of run ${run.runId}, set aside`, "");
}

/**
 * Uncommitted work in the worktree (tracked changes and untracked files git does not ignore),
 * as a commit on top of its HEAD under an anchor. Built in a scratch index: the worktree, its
 * index and its branch are left as they are.
 */
async function anchorWorktree(ctx: AsideContext, run: Journal): Promise<void> {
  const ref = asideAnchor(run.task, run.runId, "worktree");
  if (await ctx.git.resolve(ref)) return;
  const folder = await worktreeAt(ctx, run.worktree);
  if (!folder) return; // moved already (a killed tick), or gone: nothing uncommitted to read here
  const { Git, GITLINK_MODE, NO_SUBMODULE_STATUS } = await import("../git/git.ts");
  const wt = new Git(run.worktree, ctx.config.timeouts.networkMs);
  const head = await wt.resolve("HEAD");
  if (!head) return;
  const index = join(ctx.state.dir, `set-aside-${run.runId}.index`);
  const env = { GIT_INDEX_FILE: index };
  try {
    await wt.run(["read-tree", head], { env });
    // A git repository the agent made inside the worktree (listed whole, "web/") stays out:
    // `git add` fails on one without a commit. It stays in the worktree, which is kept.
    const listed = (await wt.out(
      [
        "--no-optional-locks",
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        NO_SUBMODULE_STATUS,
      ],
      { env },
    )).split("\0").filter((e) => e !== "");
    const nested = listed.filter((e) => e.startsWith("?? ") && e.endsWith("/"))
      .map((e) => e.slice(3, -1));
    // Nor a submodule status did not list (one whose commit did not move): `git add` would
    // run a status inside it, under its own config, which the agent can write (see
    // NO_SUBMODULE_STATUS). One whose commit moved is recorded as it is, running nothing.
    const moved = new Set(listed.map((e) => e.slice(3)));
    const submodules = (await wt.out(["ls-files", "--stage", "-z"], { env })).split("\0")
      .filter((e) => e.startsWith(`${GITLINK_MODE} `)).map((e) => e.slice(e.indexOf("\t") + 1))
      .filter((p) => !moved.has(p));
    const leftOut = [...nested, ...submodules].map((p) => `:(exclude,literal)${p}`);
    await wt.run(["add", "--all", "--", ".", ...leftOut], { env });
    const tree = await wt.out(["write-tree"], { env });
    if (tree === await wt.out(["rev-parse", `${head}^{tree}`])) return;
    const sha = await wt.out(
      ["commit-tree", tree, "-p", head, "-F", "-"],
      { stdin: `relay: uncommitted work of run ${run.runId}, set aside\n` },
    );
    await ctx.git.updateRef(ref, sha, `relay: worktree of run ${run.runId}, set aside`, "");
  } finally {
    await removeFile(index);
  }
}

/** Whether `path` is a worktree of this repository whose folder exists. */
async function worktreeAt(ctx: AsideContext, path: string): Promise<boolean> {
  const list = parseWorktreeList(await ctx.git.out(["worktree", "list", "--porcelain", "-z"]));
  // Real paths: git lists them so, and a journal from before relay resolved its worktree root
  // may name the folder through a link.
  const real = realPathSoFar(path);
  if (!list.some((w) => realPathSoFar(w.path) === real)) return false;
  return await Deno.stat(path).then(() => true, () => false);
}

/** Moves the run's worktree aside (git worktree move: its files, index and reflogs go along). */
async function moveWorktree(ctx: AsideContext, run: Journal): Promise<string | null> {
  const to = asideWorktree(run.worktree, run.runId);
  if (await worktreeAt(ctx, to)) return to;
  const there = (path: string) => Deno.stat(path).then(() => true, () => false);
  // A move of a worktree with submodules that a killed tick left halfway: finished.
  const halfway = !(await there(run.worktree)) && await there(to);
  if (!halfway && !(await worktreeAt(ctx, run.worktree))) return null;
  await Deno.mkdir(dirname(to), { recursive: true });
  let why = "the move was left halfway (its folder is moved, git's record not)";
  if (!halfway) {
    const res = await ctx.git.run(["worktree", "move", "--", run.worktree, to], {
      allowFail: true,
    });
    if (res.code === 0) return to;
    why = res.stderr.trim();
  }
  // git moves no worktree that holds submodules (an agent or a bar command initialized them):
  // relay moves it as git would have, links and all.
  const submodules = halfway || /submodules/.test(why);
  const moved = submodules ? await moveWorktreeWithSubmodules(ctx.git, run.worktree, to) : null;
  if (moved !== null) {
    ctx.log.step(
      `moved the worktree of run ${run.runId}, which holds submodules, to ${to} (renamed, then git worktree repair)${moved.said}`,
    );
    return to;
  }
  throw new HoldError(
    `Cannot move the worktree of run ${run.runId} aside from "${run.worktree}" to "${to}": ${why}`,
    submodules
      ? `Move its folder yourself (mv -- "${run.worktree}" "${to}"), then run git worktree repair -- "${to}" in the repository (git worktree move refuses a worktree with submodules); the next tick finishes setting the run aside.`
      : `Move it yourself (git worktree move -- "${run.worktree}" "${to}", after "git worktree unlock" if it is locked); the next tick finishes setting the run aside.`,
    { recheck: true, task: run.task },
  );
}

/** Renames the run's local branch aside, so the next round starts from the remote's branch. */
async function renameBranch(ctx: AsideContext, run: Journal): Promise<string | null> {
  const to = asideBranch(run.branch, run.runId);
  const has = async (name: string) => (await ctx.git.resolve(`refs/heads/${name}`)) !== null;
  if (!(await has(run.branch))) return (await has(to)) ? to : null;
  if (await has(to)) {
    throw new HoldError(
      `Cannot rename "${run.branch}" to "${to}": both branches exist`,
      `Keep what you need of "${run.branch}" on another branch and delete it; the next tick finishes setting run ${run.runId} aside.`,
      { recheck: true, task: run.task },
    );
  }
  // -m, not -M: never over an existing branch. It follows the branch into the moved worktree.
  await ctx.git.run(["branch", "-m", "--", run.branch, to]);
  return to;
}

/** The brief the run worked on, from its run folder. */
async function runBrief(state: StatePaths, run: Journal): Promise<Brief | null> {
  const path = join(state.runs, run.runId, "brief.md");
  const text = await readTextOrNull(path);
  return text === null ? null : parseBrief(text, path);
}

/** The set-aside in the task's timeline, once. */
async function addTimelineEvent(
  ctx: AsideContext,
  brief: Brief,
  run: Journal,
  marker: AsideMarker,
  where: { branch: string | null; worktree: string | null },
): Promise<void> {
  const owner = ownerOf(brief);
  const events = await readEvents(ctx.repo.commonDir, owner).catch(() => []);
  if (events.some((e) => e.event === "set-aside" && e.run === run.runId)) return;
  await new Timeline(ctx.repo.commonDir, owner, brief.task).add({
    event: "set-aside",
    role: "relay",
    run: run.runId,
    details: {
      reason: marker.reason,
      step: run.step,
      ...(where.branch ? { branch: where.branch } : {}),
      ...(where.worktree ? { worktree: where.worktree } : {}),
    },
  });
}
