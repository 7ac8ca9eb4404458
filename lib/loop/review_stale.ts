/**
 * `machines: split`: a reviewer-side turn journaled on this machine (its tick was killed
 * mid-turn) whose round another machine settled meanwhile. Once this machine's reviewer
 * lease ran out, another machine may have reviewed the same head, merged or closed the PR,
 * or the executor may have pushed the fix round's new head. Then what this machine's turn
 * did or would have said can no longer matter: nothing would read a verdict on a head that is
 * not under review, and a round that has its verdict is not reviewed twice. Such a turn is
 * void (its process stopped if it still runs), instead of an "uncertain turn" HOLD that
 * nobody needs and that would keep the reviewer's lease here until a person acts.
 *
 * When the remote shows nothing settled (the same head still under review, no verdict on it
 * since the turn started), the turn is left to settleOrphanReviewer as on one machine: its
 * verdict may be the one that matters, and nobody knows what it was.
 *
 * Loaded in split mode only (lib/loop/review.ts asSplitReviewer).
 */
import type { Git } from "../git/git.ts";
import { parseNote, readNote, REMOTE_NOTES_REF } from "../git/notes.ts";
import { RemoteRecords } from "../forge/remote_records.ts";
import { orphanState, stopOrphan } from "../agents/orphan.ts";
import { writeJson } from "../state/json_file.ts";
import type { StatePaths } from "../state/paths.ts";
import type { Log } from "../proc/log.ts";
import { join } from "../path.ts";
import {
  clearReviewJournal,
  outcomeRecorded,
  readReviewJournal,
  recordVoid,
  type ReviewJournal,
} from "./review_journal.ts";
import { type LeaseTimes, leaseTimesFor } from "./split.ts";
import { Timeline } from "./timeline.ts";

/** What the remote says about the journaled turn's PR, as of the tick's one fetch. */
export interface RemoteFacts {
  /** The PR's record on the remote (forge plain), or null: there is none (another forge). */
  record: {
    state: "open" | "merged" | "closed";
    reviews?: readonly { head: string; text: string; at: string }[];
  } | null;
  /** Where the PR's branch is on the remote; null when it is not there. */
  branchHead: string | null;
  /** relay's notes on the turn's head, as the remote has them (lib/git/notes.ts). */
  notes: readonly { kind: string; task: number; head: string; at: string; [k: string]: unknown }[];
}

const short = (sha: string) => sha.slice(0, 12);

/**
 * How much later than a turn's start another machine's verdict counts as this round's: half
 * the least time after which another machine can review (4 minutes with a 10-minute lease).
 */
export function skewMs(times: Pick<LeaseTimes, "ttlMs" | "renewEveryMs">): number {
  return (times.ttlMs - times.renewEveryMs) / 2;
}

/** The branch the journaled turn's PR is on. */
function branchOf(journal: ReviewJournal): string {
  return journal.branch ?? `task-${journal.task}`;
}

/**
 * Why the journaled turn's round was settled elsewhere, or null when the remote does not say
 * so. Pure. The caller has checked that the turn's own outcome is not on this machine's record
 * (outcomeRecorded): a verdict on the remote is then another machine's.
 *
 * A verdict counts only if it was recorded well after the turn started: a head is reviewed
 * again when main moved under its PASS, and a verdict from before that round is not this
 * round's. Another machine reviews only once this machine's lease, held from before the turn
 * and renewed every fifth of the lease while it ran, has run out: its verdict on this round
 * comes at least the lease less one renewal (8 minutes with a 10-minute lease) after the turn
 * started. The two times are from two machines' clocks, so a verdict counts from half that after
 * the start (`skew`, skewMs): a difference of clocks up to that much (4 minutes) either way
 * neither voids a turn on an earlier round's verdict nor misses this round's.
 */
export function settledElsewhere(
  journal: ReviewJournal,
  facts: RemoteFacts,
  remote: string,
  skew: number,
): string | null {
  // A plan review judges a queued brief against main: there is no PR round to settle.
  if (journal.role === "plan") return null;
  const branch = branchOf(journal);
  if (facts.record?.state === "merged") return `${branch} was merged on ${remote}`;
  if (facts.record?.state === "closed") return `${branch} was closed on ${remote}`;
  // A journal from before the head was kept: nothing more to compare it with.
  const head = journal.head;
  if (head === undefined) return null;
  if (facts.branchHead !== null && facts.branchHead !== head) {
    return `${branch} is at ${short(facts.branchHead)} on ${remote}, not at ${
      short(head)
    }, the head the turn judged`;
  }
  const started = Date.parse(journal.started);
  if (Number.isNaN(started)) return null;
  const after = (at: string) => Date.parse(at) > started + skew;
  const stage = journal.role && journal.role !== "reviewer" ? journal.role : null;
  const found: { result: string; at: string }[] = [];
  if (stage === null) {
    for (const r of facts.record?.reviews ?? []) {
      const verdict = /^Verdict: (PASS|FAIL)$/m.exec(r.text)?.[1];
      if (r.head === head && verdict && after(r.at)) found.push({ result: verdict, at: r.at });
    }
  }
  for (const n of facts.notes) {
    const mine = stage === null ? n.kind === "verdict" : n.kind === "stage" && n.stage === stage;
    if (mine && n.task === journal.task && n.head === head && after(n.at)) {
      found.push({ result: String(n.result ?? "run"), at: n.at });
    }
  }
  const first = found.sort((a, b) => Date.parse(a.at) - Date.parse(b.at))[0];
  if (!first) return null;
  return `another machine recorded ${
    stage ? `the ${stage} stage's ${first.result}` : `a ${first.result}`
  } on ${short(head)} at ${first.at}, after the turn started (${journal.started})`;
}

/** Reads the facts settledElsewhere weighs from the mirror the tick's fetch filled. */
async function remoteFacts(git: Git, remote: string, journal: ReviewJournal): Promise<RemoteFacts> {
  const branch = branchOf(journal);
  const record = (await new RemoteRecords(git, remote).read(branch))?.record ?? null;
  const branchHead = await git.resolve(`refs/remotes/${remote}/${branch}`);
  const notes = journal.head === undefined
    ? []
    : parseNote(await readNote(git, journal.head, REMOTE_NOTES_REF));
  return { record, branchHead, notes };
}

/**
 * At the reviewer's start in split mode, after the fetch and with the lease held: voids the
 * turn journaled here when the remote shows its round settled elsewhere. The turn's process,
 * if it still runs, is stopped first; one that cannot be stopped (or not told from a process
 * that got its pid) is left to settleOrphanReviewer. A turn a HOLD already names as uncertain
 * is a person's to decide. Says one line (also under --quiet) when it voids a turn.
 */
export async function voidStaleReviewTurn(opts: {
  git: Git;
  remote: string;
  /** timeouts.lease as the config says now: for a journal that does not say its own. */
  lease: number;
  state: StatePaths;
  commonDir: string;
  log: Log;
  say: (line: string) => void;
}): Promise<void> {
  const { state, log } = opts;
  const journal = await readReviewJournal(state.reviewJournal);
  if (!journal || journal.uncertain || await outcomeRecorded(state, journal)) return;
  const why = settledElsewhere(
    journal,
    await remoteFacts(opts.git, opts.remote, journal),
    opts.remote,
    skewMs(leaseTimesFor(journal.leaseMs ?? opts.lease)),
  );
  if (why === null) return;
  const run = journal.runId;
  const alive = await orphanState(journal);
  if (alive.kind === "running" && alive.unverified) return;
  if (alive.kind !== "gone") {
    log.step(`stopping this machine's reviewer of run ${run} (pid ${journal.pid}): ${why}`);
    if (!(await stopOrphan(journal.pid))) return;
  }
  const at = new Date().toISOString();
  const reason = `interrupted; its round was settled elsewhere: ${why}`;
  await recordVoid(state, journal, branchOf(journal), reason);
  await new Timeline(opts.commonDir, journal.task, journal.brief ?? journal.task).add({
    event: "review-void",
    role: "reviewer",
    run,
    details: { why: reason },
  });
  // The journal goes beside the turn's own files, marked void: the run's folder tells the
  // whole story of a turn no tick watched to its end.
  await writeJson(join(state.runs, run, "review-journal.json"), {
    ...journal,
    void: { at, why },
  });
  await clearReviewJournal(state.reviewJournal);
  opts.say(
    `task ${journal.task}: this machine's ${
      journal.role && journal.role !== "reviewer" ? `${journal.role} stage` : "reviewer"
    } turn (run ${run}) from an interrupted tick is void: ${why}`,
  );
}
