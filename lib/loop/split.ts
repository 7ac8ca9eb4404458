/**
 * `machines: split`: the executor tick and the reviewer tick on machines that
 * share only the git remote. What each tick does around its usual work:
 *
 * - one fetch of main, the PR records and the leases (`refs/relay/*` into
 *   `refs/relay-remote/*`, lib/git/lease.ts);
 * - the role's lease on the remote, taken by a compare-and-swap push, renewed
 *   while the tick runs, released when it ends — or kept while this machine
 *   has an attempt (or a review turn) journaled, so no other machine starts a
 *   second one for the same task;
 * - the primary tree brought up to the remote's main, fast-forward only
 *   (lib/loop/paperwork.ts syncMain: a change in the way is a HOLD that says
 *   what to do), before the brief is read;
 * - the reviewer commits and pushes its own paperwork (a promoted, fix or
 *   retired brief) at the end of its tick, since no executor shares its tree.
 *
 * Mode `one` never comes here: the config text is checked first
 * (lib/state/machines.ts), so today's ticks load nothing more.
 */
import { join } from "../path.ts";
import type { RepoConfig } from "../config/repo_load.ts";
import { formatDuration } from "../config/duration.ts";
import type { RepoPaths } from "../git/discover.ts";
import { Git } from "../git/git.ts";
import {
  describeHolder,
  type Lease,
  type LeaseAt,
  leaseRef,
  type LeaseRole,
  readLease,
  RELAY_REFSPECS,
  releaseLease,
  renewLease,
  takeLease,
} from "../git/lease.ts";
import { NOTES_FETCH_REFSPEC } from "../git/notes.ts";
import { LeaseLostError } from "../errors.ts";
import type { Log } from "../proc/log.ts";
import { currentGuard, guardWith, type LeaseGuard } from "../git/lease_guard.ts";
import { hostname } from "../state/lock.ts";
import { machineId, mayBeSplit } from "../state/machines.ts";
import { BRIEF_FILE, CONFIG_FILE, type StatePaths } from "../state/paths.ts";
import { readTextOrNull } from "../state/json_file.ts";
import { failpoint } from "../state/failpoint.ts";
import { runId } from "../state/run_id.ts";
import { readStatus } from "../protocol/status_line.ts";
import {
  commitReviewerPaperwork,
  mainAhead,
  pushMain,
  rebasePaperwork,
  syncMain,
} from "./paperwork.ts";

/** The repo config when it says `machines: split`, else null (mode one loads nothing). */
export async function splitConfig(root: string): Promise<RepoConfig | null> {
  const text = await readTextOrNull(join(root, CONFIG_FILE));
  if (text === null || !mayBeSplit(text)) return null;
  const { loadRepoConfig } = await import("../config/repo_load.ts");
  const config = await loadRepoConfig(root);
  return config.machines === "split" ? config : null;
}

/** The times of a lease: how long it lasts, how often a tick renews it (tests shorten them). */
export interface LeaseTimes {
  ttlMs: number;
  renewEveryMs: number;
  /** The clock (ms): a test moves it on as a suspended machine's would. */
  now: () => number;
}

/**
 * The lease times `timeouts.lease` sets (10 minutes unless the config says otherwise). A machine
 * that crashed frees its role this long after its last renewal; a live tick renews every fifth
 * of it, through the longest turn.
 */
export function leaseTimes(config: RepoConfig): LeaseTimes {
  return leaseTimesFor(config.timeouts.leaseMs);
}

/** A lease of `ttlMs`, renewed every fifth of it. */
export function leaseTimesFor(ttlMs: number): LeaseTimes {
  return { ttlMs, renewEveryMs: ttlMs / 5, now: () => Date.now() };
}

/**
 * A role's lease this tick holds; renewed in the background until released or kept, and the
 * tick's lease guard meanwhile (lib/git/lease_guard.ts): asked before each agent turn, push
 * and merge, it renews an overdue lease first, and stops the tick with a HOLD once the lease
 * is another machine's.
 */
export class HeldRole implements LeaseGuard {
  #timer: ReturnType<typeof setInterval>;
  /**
   * The renewal under way, if any. One at a time: a remote that answers slowly (each try up to
   * the network timeout) would otherwise pile renewals up behind it, and the guard wait for
   * them all before the next act.
   */
  #renewal: Promise<void> | null = null;
  #ended = false;
  /** When the remote last took this lease from us (taken or renewed). */
  #renewedAt: number;
  /** A renewal found the lease moved by someone else: the role is no longer ours. */
  #lost = false;

  constructor(
    private readonly git: Git,
    private readonly remote: string,
    private held: LeaseAt & { lease: Lease },
    private readonly log: Log,
    private readonly times: LeaseTimes,
  ) {
    this.#renewedAt = times.now();
    this.#timer = setInterval(() => void this.renewal(), times.renewEveryMs);
    Deno.unrefTimer(this.#timer);
    guardWith(this);
  }

  /** The renewal under way, or a new one. */
  private renewal(): Promise<void> {
    this.#renewal ??= this.renew().finally(() => {
      this.#renewal = null;
    });
    return this.#renewal;
  }

  private async renew(): Promise<void> {
    if (this.#ended || this.#lost) return;
    const at = this.times.now();
    const next = await renewLease(this.git, this.remote, this.held, this.times.ttlMs, new Date(at))
      .catch(() => undefined);
    if (next) {
      this.held = next;
      this.#renewedAt = at;
    } else if (next === null && await this.movedOnRemote()) {
      this.#lost = true;
      this.log.step(
        `warning: the ${this.held.lease.role} lease on ${this.remote} is no longer this machine's`,
      );
    }
  }

  /**
   * Whether a renewal that did not land lost to another push: the remote's lease is no longer
   * the commit this tick holds, nor one of this tick's own (a renewal that landed although its
   * push timed out, taken up here). A push that failed for any other reason (a remote that did
   * not answer) decides nothing, and neither does a fetch that fails.
   */
  private async movedOnRemote(): Promise<boolean> {
    try {
      await this.git.fetch(this.remote, { refspecs: RELAY_REFSPECS, maintenance: false });
      const now = await readLease(this.git, this.held.lease.role);
      if (now?.sha === this.held.sha) return false;
      const mine = this.held.lease.holder;
      if (
        now?.lease && !now.lease.released && now.lease.holder.machine === mine.machine &&
        now.lease.holder.run === mine.run
      ) {
        this.held = { sha: now.sha, lease: now.lease };
        return false;
      }
      return true;
    } catch {
      return false;
    }
  }

  /**
   * After a keep or release the remote refused: whether its lease is this run's after all,
   * under a commit of a renewal whose push timed out but landed (then held now, to try again).
   */
  private async caughtUp(): Promise<boolean> {
    const before = this.held.sha;
    return !(await this.movedOnRemote()) && this.held.sha !== before;
  }

  async confirm(): Promise<void> {
    if (this.#ended) return;
    // The renewals keep the lease while the tick runs; when one is overdue (the machine was
    // stopped past it, or the remote did not answer), renewed now, before the act: after the
    // renewal under way, if that one did not do it.
    const overdue = () => this.times.now() - this.#renewedAt >= this.times.renewEveryMs * 1.5;
    if (!this.#lost && overdue()) {
      await this.#renewal;
      if (!this.#lost && overdue()) await this.renewal();
    }
    // A remote that did not answer decides nothing, for a while: the act that needs it fails
    // on its own. But not renewed for (nearly) a whole lease, by this machine's own clock, the
    // lease is over on the remote, or will be before the act is done, and another machine
    // may take the task meanwhile: no act that a remote cut off from this one cannot see.
    const unrenewed = this.times.now() - this.#renewedAt >=
      this.times.ttlMs - this.times.renewEveryMs;
    if (!this.#lost && !unrenewed) return;
    // Not a HOLD: nothing here needs a person. The run stays journaled, and the next tick that
    // takes the lease settles it from what the remote shows, as after a crash: an executor's
    // run set aside or resumed (lib/loop/supersede.ts), a reviewer's turn void or uncertain
    // (lib/loop/review_stale.ts).
    const role = this.held.lease.role;
    const renewed = `renewed last at ${new Date(this.#renewedAt).toISOString()}, and it lasts ${
      formatDuration(this.times.ttlMs)
    }`;
    const why = this.#lost
      ? `is no longer this machine's (${renewed}): relay could not renew it for longer than ` +
        "that (a suspended machine, or a remote that did not answer) and another machine may " +
        `have the task now (git log -1 ${leaseRef(role)} on ${this.remote} says which)`
      : `could not be renewed (${renewed}): ${this.remote} did not answer, and by now the ` +
        "lease may be over and the task another machine's";
    throw new LeaseLostError(
      `the ${role} lease on ${this.remote} ${why}. It stopped before its next agent turn, push ` +
        "or merge; what it did stays on this machine, and the next tick that holds the lease " +
        (role === "executor"
          ? "sets its run aside if the remote shows the task went on without it, else goes on " +
            "with it."
          : "finds its reviewer turn void if the remote shows the round settled elsewhere, " +
            "else uncertain (a HOLD)."),
    );
  }

  private async stop(): Promise<void> {
    this.#ended = true;
    clearInterval(this.#timer);
    if (currentGuard() === this) guardWith(null);
    await this.#renewal;
  }

  /**
   * The tick ends with work journaled on this machine: the lease stays, and this machine's
   * next tick renews it. Renewed once now, so it lasts a full TTL from here.
   */
  async keep(): Promise<void> {
    await this.stop();
    if (this.#lost) return;
    const renew = () =>
      renewLease(this.git, this.remote, this.held, this.times.ttlMs, new Date(this.times.now()))
        .catch(() => undefined);
    let next = await renew();
    if (next === null && await this.caughtUp()) next = await renew();
    if (next) this.held = next;
  }

  /** The tick is done with the role: the next machine need not wait for the lease to expire. */
  async release(): Promise<void> {
    await this.stop();
    if (this.#lost) return;
    const release = () =>
      releaseLease(this.git, this.remote, this.held, new Date(this.times.now())).catch(() =>
        undefined
      );
    if ((await release())?.ok === false && await this.caughtUp()) await release();
  }
}

/** One fetch: main (all branches), the PR records and the leases. */
export async function fetchAll(git: Git, remote: string): Promise<void> {
  await git.fetch(remote, {
    refspecs: [`+refs/heads/*:refs/remotes/${remote}/*`, ...RELAY_REFSPECS, NOTES_FETCH_REFSPEC],
  });
}

/**
 * Takes `role`'s lease on the remote (after the fetch that read it). A busy line when
 * another machine holds it (or won the race to it just now).
 */
export async function takeRole(
  git: Git,
  config: RepoConfig,
  repo: RepoPaths,
  role: LeaseRole,
  log: Log,
  times: LeaseTimes = leaseTimes(config),
): Promise<{ busy: string } | { role: HeldRole }> {
  const holder = {
    machine: machineId(repo.commonDir),
    host: hostname(),
    pid: Deno.pid,
    run: runId(role === "executor" ? "poll" : "review"),
  };
  const res = await takeLease(git, config.remote, role, holder, times.ttlMs, new Date(times.now()));
  if (!res.ok) {
    return {
      busy: res.holder
        ? `busy: ${role} lease held by ${describeHolder(res.holder)} until ${res.holder.expiresAt}`
        : `busy: ${role} lease taken by another machine just now`,
    };
  }
  return { role: new HeldRole(git, config.remote, res.held, log, times) };
}

/**
 * The executor's start in split mode. Idle (no lease taken, one fetch spent) when this
 * machine has no attempt journaled and no brief is OPEN here or on the remote's main;
 * busy when another machine has the executor's lease; else the lease, with the primary
 * tree brought up to the remote's main.
 */
export async function startExecutor(
  config: RepoConfig,
  repo: RepoPaths,
  state: StatePaths,
  log: Log,
  tick: { say?: ((line: string) => void) | undefined; profileFlag?: string | undefined } = {},
): Promise<{ idle: string } | { busy: string } | { role: HeldRole }> {
  const git = new Git(repo.root, config.timeouts.networkMs);
  await fetchAll(git, config.remote);
  const journaled = (await readTextOrNull(state.journal)) !== null;
  // A set-aside a killed tick began (lib/loop/supersede.ts) is finished, journal or not.
  const asideBegun = (await readTextOrNull(state.setAside)) !== null;
  const here = await readTextOrNull(join(repo.root, BRIEF_FILE));
  const remoteMain = `refs/remotes/${config.remote}/${config.main}`;
  const there = await git.run(["show", `${remoteMain}:${BRIEF_FILE}`], { allowFail: true });
  const open = (text: string | null) => text !== null && readStatus(text) === "OPEN";
  if (!journaled && !asideBegun && !open(here) && !(there.code === 0 && open(there.stdout))) {
    return { idle: `idle: ${BRIEF_FILE} is not OPEN on ${config.remote}/${config.main}` };
  }
  const taken = await takeRole(git, config, repo, "executor", log);
  if ("busy" in taken) return taken;
  try {
    // The reviewer's paperwork a killed tick left here, stale now (its brief OPEN for a task
    // the remote has done since): set aside before this tick could start on it. A run
    // journaled here is settled below, from what the remote shows, as ever.
    if (!journaled && !asideBegun) {
      await setAsideIfStale(git, config, repo, join(state.dir, "paperwork-aside"), log);
    }
    if (journaled || asideBegun) {
      // A run journaled here that another machine did meanwhile (this one was stopped past
      // its lease) is set aside, not resumed: decided from what the fetch shows of the remote.
      const { settleSuperseded } = await import("./supersede.ts");
      const { profilePath } = await import("../config/profile_load.ts");
      await settleSuperseded({
        git,
        config,
        repo,
        state,
        log,
        say: tick.say,
        profilePath: profilePath(tick.profileFlag),
      });
    }
    // Where main was, for a run journaled here (one set aside just now is not).
    const mainRef = `refs/heads/${config.main}`;
    const before = journaled && (await readTextOrNull(state.journal)) !== null
      ? await git.resolve(mainRef)
      : null;
    await syncMain(git, config.remote, config.main, {
      aside: join(state.dir, "paperwork-aside"),
      log,
      fetched: true,
    });
    if (before !== null) {
      const after = await git.resolve(mainRef);
      if (after !== null && after !== before) await rebaseJournalMain(state.journal, before, after);
    }
  } catch (err) {
    await letGo(taken.role, state, state.journal);
    throw err;
  }
  return taken;
}

/**
 * A run journaled here, resumed after the remote's main moved meanwhile (a person's brief
 * queued on the reviewer's machine, say): the fast-forward this tick just made is relay's
 * own, from the remote, so the run's guard compares with where it left main, not with where
 * main was when the run began — else it would HOLD on "main moved" over a move that is not
 * the turn's. Only when main was still where the run left it before the fast-forward: a
 * main that moved here in between is the guard's to judge. (Commits of the turn that landed
 * on the remote's main are found by the guard's look at the remote, whatever this says.)
 */
async function rebaseJournalMain(path: string, from: string, to: string): Promise<void> {
  const { readJournal, writeJournal } = await import("../state/journal.ts");
  const journal = await readJournal(path);
  if (journal === null || journal.mainBefore !== from) return;
  await writeJournal(path, { ...journal, mainBefore: to });
}

/**
 * The end of a role's tick: the lease is kept while this machine still has the role's task
 * in hand — an attempt or review turn journaled (`journal`), a HOLD on record here about the
 * task (one about this machine alone lets it go: its tree is in the way), or
 * `also` (another reason of the caller's) — so no other machine starts over on a task this one
 * holds; else it is let go. This machine's next tick renews a kept lease; one that stops
 * ticking loses it when the lease's time runs out.
 */
export async function letGo(
  role: HeldRole,
  state: StatePaths,
  journal: string,
  also = false,
): Promise<void> {
  if (also || (await readTextOrNull(journal)) !== null || await taskHold(state)) {
    await role.keep();
  } else await role.release();
}

/** A HOLD on record here about the task, not this machine alone (HoldError.local). */
async function taskHold(state: StatePaths): Promise<boolean> {
  const text = await readTextOrNull(state.hold);
  if (text === null) return false;
  try {
    return (JSON.parse(text) as { local?: unknown }).local !== true;
  } catch {
    return true; // unreadable: relay status says so; meanwhile the safe side
  }
}

/**
 * The reviewer's start in split mode: one fetch, the lease, its own paperwork caught up, and
 * a turn this machine's killed tick left whose round another machine settled meanwhile made
 * void (lib/loop/review_stale.ts; `say` tells of it, also under --quiet).
 */
export async function startReviewer(
  config: RepoConfig,
  repo: RepoPaths,
  state: StatePaths,
  log: Log,
  say: (line: string) => void = (line) => log.step(line),
): Promise<{ busy: string } | { role: HeldRole }> {
  const git = new Git(repo.root, config.timeouts.networkMs);
  await fetchAll(git, config.remote);
  const taken = await takeRole(git, config, repo, "reviewer", log);
  if ("busy" in taken) return taken;
  try {
    const aside = join(state.dir, "paperwork-aside");
    if (!(await setAsideIfStale(git, config, repo, aside, log))) {
      await syncMain(git, config.remote, config.main, { aside, log, fetched: true });
      // Other paperwork a previous tick left unpushed goes out with this tick's, at its end
      // (publishReviewerPaperwork), once the tick has looked at the remote: a brief another
      // machine made stale meanwhile (a fix brief for a task it merged) is then retired before
      // it is ever the tip of the remote's main, where an executor could start on it. Here it
      // only moves onto the remote's main, so the tick works on top of what the remote has.
      if (await mainDiverged(git, config.remote, config.main)) {
        await rebasePaperwork(git, config.remote, config.main, { aside, log, fetched: true });
      }
    }
    // Only a turn journaled here can be stale; a tick without one (the common case) loads
    // nothing more.
    if ((await readTextOrNull(state.reviewJournal)) !== null) {
      const { voidStaleReviewTurn } = await import("./review_stale.ts");
      await voidStaleReviewTurn({
        git,
        remote: config.remote,
        lease: config.timeouts.leaseMs,
        state,
        commonDir: repo.commonDir,
        log,
        say,
      });
    }
  } catch (err) {
    await letGo(taken.role, state, state.reviewJournal);
    throw err;
  }
  return taken;
}

/**
 * Paperwork a previous tick left behind (committed but not pushed: an unreachable remote, a
 * tick killed before its push; or not even committed) where the remote changed the brief too
 * meanwhile is stale: set aside, never replayed (lib/loop/stale_paperwork.ts). True when it
 * was; loaded only when local main is not the remote's.
 */
async function setAsideIfStale(
  git: Git,
  config: RepoConfig,
  repo: RepoPaths,
  aside: string,
  log: Log,
): Promise<boolean> {
  const upstream = await git.resolve(`refs/remotes/${config.remote}/${config.main}`);
  if (upstream === await git.resolve("HEAD")) return false;
  const { setAsideStalePaperwork } = await import("./stale_paperwork.ts");
  return await setAsideStalePaperwork(git, config.remote, config.main, { aside, log, repo });
}

/** True when local main and the remote's main each have commits the other lacks. */
async function mainDiverged(git: Git, remote: string, main: string): Promise<boolean> {
  const upstream = `refs/remotes/${remote}/${main}`;
  return await mainAhead(git, remote, main) && !(await git.isAncestor(upstream, "HEAD"));
}

/** The reviewer's end in split mode: what it left in the brief and the inbox, committed and pushed. */
export async function publishReviewerPaperwork(
  config: RepoConfig,
  repo: RepoPaths,
  state: StatePaths,
  log: Log,
): Promise<void> {
  const git = new Git(repo.root, config.timeouts.networkMs);
  failpoint("reviewer-paperwork-written");
  const sha = await commitReviewerPaperwork(git, config.paperwork.commitSuffix);
  if (sha) log.step(`committed the reviewer's paperwork on ${config.main} (${sha.slice(0, 12)})`);
  failpoint("reviewer-paperwork-committed");
  if (await mainAhead(git, config.remote, config.main)) {
    await pushMain(git, config.remote, config.main, {
      aside: join(state.dir, "paperwork-aside"),
      log,
    });
  }
}
