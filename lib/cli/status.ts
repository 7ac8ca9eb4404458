/** `relay status`: what the loop is doing and, whenever it waits, why — on one screen. */
import { join } from "../path.ts";
import { UsageError } from "../errors.ts";
import { type Context, parseCommand, printJson, requireRepo } from "./args.ts";
import { BRIEF_FILE, REPORT_FILE, statePaths } from "../state/paths.ts";
import { currentBranch, type RepoPaths } from "../git/discover.ts";
import type { StatePaths } from "../state/paths.ts";
import type { ReviewRecord } from "../state/reviews.ts";
import { blockedLine, lastFailed, preflight, tickHold, unpublished } from "./status_checks.ts";

async function readTextOrNull(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch {
    return null;
  }
}

/** A task whose PR is merged, or closed at the reported head: what status says of it; else null. */
function settled(
  record: ReviewRecord,
  task: number,
  report: { head: string },
  queued: number,
): string | null {
  if (record.merged) {
    return `task ${task} is merged (${record.merged.sha.slice(0, 12)}, by ${record.merged.by})${
      queued
        ? `; ${queued} brief(s) queued: the next review tick or "relay promote" opens one`
        : "; nothing queued"
    }`;
  }
  if (record.closed?.head === report.head) {
    return `task ${task}'s PR was closed unmerged by a person (${record.closed.reason})`;
  }
  return null;
}

/** Where the reviewer side stands on the reported task, in one line. */
async function reviewState(
  dirs: StatePaths,
  task: number,
  report: { task: number; outcome: string; head: string; pr: string },
  queued: number,
  repo: RepoPaths,
): Promise<string> {
  const { verdictFor } = await import("../state/reviews.ts");
  const { readReview } = await import("../state/tasks.ts");
  const record = await readReview(dirs, task, "");
  const pr = report.pr ? `PR ${report.pr}` : "the branch";
  const ended = settled(record, task, report, queued);
  if (ended !== null) return ended;
  if (report.outcome === "BLOCKED") {
    const { blockedOptions } = await import("../task/blocked.ts");
    return `task ${report.task} is BLOCKED: a person decides what happens next\n  next: ${
      blockedOptions(task)
    }`;
  }
  if (record.human?.head === report.head) {
    return `waiting for a person to merge ${pr}: it changes owner-accepted infra (${
      record.human.files.join(", ")
    }); relay never merges it`;
  }
  const verdict = verdictFor(record, report.head);
  if (verdict?.verdict === "PASS" && !verdict.stale) {
    const { acceptanceSummary } = await import("./acceptance_summary.ts");
    const summary = await acceptanceSummary(repo, dirs, task);
    if (summary) return summary.join("\n");
  }
  if (!verdict) {
    return `task ${report.task} reported SHIPPED (${pr}): waiting for review (relay review)`;
  }
  if (verdict.verdict === "PASS") {
    return `${pr} passed review${
      verdict.stale
        ? " but went stale (main moved): the next review tick reviews again"
        : ": waiting for the gate and merge (relay gate shows why)"
    }`;
  }
  return `${pr} failed review: a fix brief goes to the executor`;
}

/**
 * What the next tick of each kind will do: the ticks' own machines, run dry
 * (lib/loop/predict.ts). A tick that holds its lock now is what the next one waits for.
 */
async function nextTicks(
  repo: RepoPaths,
  profile: string | undefined,
  pollRunning: boolean,
  reviewLock: string,
): Promise<{ poll: { effect: string; says: string }; review: { effect: string; says: string } }> {
  const { predictPoll, predictReview } = await import("../loop/predict.ts");
  const { lockState } = await import("../state/lock.ts");
  const busy = (tick: string) => ({
    effect: "busy",
    says: `waits: a relay ${tick} is running now (the next one starts when it ends)`,
  });
  return {
    poll: pollRunning ? busy("poll") : await predictPoll(repo, profile),
    review: (await lockState(reviewLock)).held
      ? busy("review")
      : await predictReview(repo, profile),
  };
}

export async function status(args: string[], ctx: Context): Promise<number> {
  const { values, positionals } = parseCommand("status", args, {
    json: { type: "boolean" },
    brief: { type: "boolean" },
  }, {
    min: 0,
    max: 1,
    names: "[<task>]",
  });
  if (positionals[0] !== undefined && (!/^\d+$/.test(positionals[0]) || positionals[0] === "0")) {
    throw new UsageError(
      `<task> must be a task number (1, 2, …), not "${positionals[0]}"`,
      "status",
    );
  }
  const repo = requireRepo(ctx);
  const state = statePaths(repo.commonDir);
  if (values.brief && positionals[0] !== undefined) {
    throw new UsageError(
      "--brief shows the loop, not one task: drop the task or --brief",
      "status",
    );
  }
  if (values.brief) return await briefStatus(repo, values.json === true);
  if (positionals[0] !== undefined) {
    return await taskStatus(repo, Number(positionals[0]), values.json === true);
  }
  const { parseBrief } = await import("../protocol/brief.ts");
  const { parseReport } = await import("../protocol/report.ts");
  const { lockState } = await import("../state/lock.ts");
  const { readJournal } = await import("../state/journal.ts");
  const { readHold } = await import("../state/hold.ts");
  const { readRound, failedAttempts } = await import("../state/tasks.ts");
  const { listInbox } = await import("../loop/inbox.ts");
  const { briefDigest } = await import("../protocol/brief_write.ts");
  const { formatLastTick, isCurrentTick, readHoldCleared, readLastTick } = await import(
    "../state/last_tick.ts"
  );

  const problems: string[] = [];
  const briefText = await readTextOrNull(join(repo.root, BRIEF_FILE));
  let brief = null;
  if (briefText !== null) {
    try {
      brief = parseBrief(briefText, BRIEF_FILE);
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  let report = null;
  const reportText = await readTextOrNull(join(repo.root, REPORT_FILE));
  if (reportText !== null) {
    try {
      report = parseReport(reportText, REPORT_FILE);
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  let inbox: { task: number; title: string }[] = [];
  try {
    inbox = (await listInbox(repo.root)).map((e) => ({ task: e.task, title: e.title }));
  } catch (err) {
    problems.push((err as Error).message);
  }
  const lock = await lockState(state.pollLock);
  const journal = await readJournal(state.journal);
  const hold = await readHold(state.hold);
  let attempts = null;
  if (brief) {
    const round = await readRound(state, brief);
    const hash = await briefDigest(brief);
    attempts = { failed: failedAttempts(round, hash), total: round.attempts.length };
  }

  const blockers = await preflight(
    repo,
    ctx.profile,
    journal,
    journal !== null || brief?.status === "OPEN" || (report !== null && brief?.status === "DONE"),
  );
  for (const b of blockers) problems.push(b.problem);
  const warnings = await unpublished(repo);
  const reviewBlockers = blockers.filter((b) => !b.pollOnly);
  const lastPoll = await readLastTick(repo.commonDir, "poll");
  const lastReview = await readLastTick(repo.commonDir, "review");
  const cleared = await readHoldCleared(repo.commonDir);
  // Whether each record still describes the loop: about the task the next tick of its kind
  // works on, and not from before a person cleared a HOLD.
  const pollCurrent = isCurrentTick(lastPoll, journal?.task ?? brief?.task ?? null, cleared);
  const reviewCurrent = isCurrentTick(lastReview, report?.task ?? null, cleared);
  const pollHold = tickHold(lastPoll, pollCurrent);
  const reviewHold = tickHold(lastReview, reviewCurrent);

  const branch = currentBranch(repo.gitDir);
  const { pausedLine, readPause } = await import("../state/pause.ts");
  const paused = await readPause(state.pause);
  let waiting: string;
  if (hold) waiting = `HOLD: ${hold.reason}\n  next: ${hold.next}`;
  else if (paused) waiting = `PAUSED: ${pausedLine(paused)}`;
  else if (lock.held) {
    waiting = `a tick is running (pid ${lock.info?.pid}, since ${lock.info?.started})`;
  } else if (journal) {
    const run = `run ${journal.runId}, after "${journal.step}"`;
    const failed = lastFailed(lastPoll, pollCurrent);
    waiting = blockers.length
      ? blockedLine(`an interrupted tick waits to be finished (${run})`, "poll", blockers)
      : pollHold
      ? pollHold
      : failed
      ? `an interrupted tick waits to be finished (${run}), but ${failed}: the next poll tries again`
      : `an interrupted tick will be finished by the next poll (${run})`;
  } else if (briefText !== null && brief === null && briefText.trim() !== "") {
    waiting =
      `stopped: ${BRIEF_FILE} cannot be read (the problem below): every poll exits 2 until it is fixed`;
  } else if (brief?.status === "OPEN") {
    // Plain-git records only (no forge call: status stays local and quick).
    const { openPrRecords } = await import("../forge/plain_executor.ts");
    const { splitConfig } = await import("../loop/split.ts");
    const split = await splitConfig(repo.root);
    const { Git } = await import("../git/git.ts");
    const inFlight = (await openPrRecords(
      state.prs,
      split ? { git: new Git(repo.root), remote: split.remote } : undefined,
    )).map((r) => r.branch)
      .filter((b) => b !== brief.branch);
    const failed = lastFailed(lastPoll, pollCurrent);
    waiting = blockers.length
      ? blockedLine(`task ${brief.task} is open`, "poll", blockers)
      : pollHold
      ? pollHold
      : failed
      ? `task ${brief.task} is open, but ${failed}: the next poll tries again`
      : inFlight.length
      ? `task ${brief.task} is open but waits: ${
        inFlight.join(", ")
      } is in flight until the reviewer merges it or sends it back`
      : `task ${brief.task} is open: the next poll starts the executor`;
  } else if (report && brief?.status === "DONE") {
    const failed = lastFailed(lastReview, reviewCurrent);
    // A task already merged (or closed) says so, even when every review stops.
    const task = brief.fixes ?? brief.task;
    const { readReview } = await import("../state/tasks.ts");
    waiting = reviewBlockers.length
      ? blockedLine(
        settled(await readReview(state, task, ""), task, report, inbox.length) ??
          `task ${report.task} reported ${report.outcome}`,
        "review",
        reviewBlockers,
      )
      : reviewHold
      ? reviewHold
      : `${await reviewState(state, brief.fixes ?? brief.task, report, inbox.length, repo)}${
        failed ? `; but ${failed}` : ""
      }`;
  } else if (inbox.length) waiting = `${inbox.length} brief(s) queued: run "relay promote"`;
  else waiting = "idle: nothing open and nothing queued";
  const heldByTick = !hold && (waiting === pollHold || waiting === reviewHold);
  const next = paused
    ? {
      poll: { effect: "paused", says: "starts nothing: the loop is paused (relay unpause)" },
      review: { effect: "paused", says: "starts nothing: the loop is paused (relay unpause)" },
    }
    : await nextTicks(repo, ctx.profile, lock.held, state.reviewLock);
  const code = hold || heldByTick || blockers.some((b) => b.hold) ? 3 : problems.length ? 2 : 0;

  const data = {
    repo: repo.root,
    branch,
    brief: brief
      ? { task: brief.task, title: brief.title, status: brief.status, branch: brief.branch }
      : null,
    report: report
      ? { task: report.task, outcome: report.outcome, head: report.head, pr: report.pr }
      : null,
    inbox,
    tick: {
      locked: lock.held,
      holder: lock.info,
      journal: journal ? { runId: journal.runId, step: journal.step, task: journal.task } : null,
    },
    attempts,
    hold,
    paused,
    lastPoll,
    lastReview,
    holdCleared: cleared,
    waiting,
    next,
    problems,
    warnings,
  };
  if (values.json) {
    printJson(data);
    return code;
  }
  console.log(`repo     ${repo.root} (on ${branch ?? "a detached HEAD"})`);
  console.log(
    `brief    ${
      brief
        ? `task ${brief.task} ${brief.status} — ${brief.title} [${brief.branch}]`
        : briefText === null
        ? "none"
        : "unreadable"
    }`,
  );
  if (attempts && brief?.status === "OPEN") {
    console.log(`attempts ${attempts.failed} failed for this brief`);
  }
  console.log(
    `report   ${
      report
        ? `task ${report.task} ${report.outcome}${
          report.head ? ` at ${report.head.slice(0, 12)}` : ""
        }${report.pr ? `, PR ${report.pr}` : ""}`
        : "none"
    }`,
  );
  console.log(
    `inbox    ${inbox.length ? inbox.map((e) => `${e.task} ${e.title}`).join("; ") : "empty"}`,
  );
  console.log(
    `tick     ${
      lock.held
        ? `running: pid ${lock.info?.pid} on ${lock.info?.host} since ${lock.info?.started}`
        : "not running"
    }${journal ? `; journal: run ${journal.runId} after "${journal.step}"` : ""}`,
  );
  console.log(`last poll: ${formatLastTick(lastPoll, cleared)}`);
  console.log(`last review: ${formatLastTick(lastReview, cleared)}`);
  console.log(`\n${waiting}`);
  console.log(`next poll:   ${next.poll.says}`);
  console.log(`next review: ${next.review.says}`);
  for (const p of problems) console.log(`problem: ${p}`);
  for (const w of warnings) console.log(w);
  return code;
}

/**
 * `relay status --brief`: what relay's own files say, and nothing else — no
 * lock is taken or tested, no git runs, no tick is predicted — so it is safe
 * (and quick) while a tick runs. Exit 3 on a HOLD on record, else 0.
 */
async function briefStatus(repo: RepoPaths, json: boolean): Promise<number> {
  const state = statePaths(repo.commonDir);
  const { readStatus } = await import("../protocol/status_line.ts");
  const { readJournal } = await import("../state/journal.ts");
  const { readHold } = await import("../state/hold.ts");
  const { readLastTick, formatLastTick, readHoldCleared } = await import("../state/last_tick.ts");
  const briefText = await readTextOrNull(join(repo.root, BRIEF_FILE));
  const header = (text: string | null, key: string) =>
    text === null ? null : new RegExp(`^${key}:[ \t]*(.+)$`, "m").exec(text)?.[1]?.trim() ?? null;
  const reportText = await readTextOrNull(join(repo.root, REPORT_FILE));
  const journal = await readJournal(state.journal);
  // The reviewer-side turn in flight (review, or a stage), from its journal: no lock taken.
  const { readReviewJournal } = await import("../loop/review_journal.ts");
  const turn = await readReviewJournal(state.reviewJournal).catch(() => null);
  const hold = await readHold(state.hold);
  const { pausedLine, readPause } = await import("../state/pause.ts");
  const paused = await readPause(state.pause);
  const cleared = await readHoldCleared(repo.commonDir);
  const lastPoll = await readLastTick(repo.commonDir, "poll");
  const lastReview = await readLastTick(repo.commonDir, "review");
  const data = {
    brief: briefText === null ? null : {
      status: readStatus(briefText),
      task: header(briefText, "Task"),
      title: header(briefText, "Title"),
    },
    report: reportText === null ? null : {
      task: header(reportText, "Task"),
      outcome: header(reportText, "Outcome"),
    },
    run: journal && { task: journal.task, runId: journal.runId, step: journal.step },
    turn: turn && {
      task: turn.task,
      role: turn.role ?? "reviewer",
      runId: turn.runId,
      pid: turn.pid,
      started: turn.started,
      ...(turn.uncertain ? { uncertain: turn.uncertain } : {}),
    },
    hold: hold && { task: hold.task, reason: hold.reason, next: hold.next, at: hold.at },
    paused,
    lastPoll: formatLastTick(lastPoll, cleared),
    lastReview: formatLastTick(lastReview, cleared),
  };
  if (json) printJson(data);
  else {
    const b = data.brief;
    console.log(
      `brief    ${b ? `task ${b.task ?? "?"} ${b.status ?? "?"} — ${b.title ?? ""}` : "none"}`,
    );
    const r = data.report;
    console.log(`report   ${r ? `task ${r.task ?? "?"} ${r.outcome ?? "?"}` : "none"}`);
    const run = data.run;
    console.log(
      `run      ${run ? `task ${run.task}, run ${run.runId} after "${run.step}"` : "none"}`,
    );
    const t = data.turn;
    console.log(
      `turn     ${
        t
          ? `task ${t.task}: ${
            t.role === "reviewer" ? "review" : `${t.role} stage`
          } (run ${t.runId}, pid ${t.pid}, since ${t.started})${
            t.uncertain ? `, uncertain: ${t.uncertain.why}` : ""
          }`
          : "none"
      }`,
    );
    console.log(`poll     ${data.lastPoll}`);
    console.log(`review   ${data.lastReview}`);
    if (paused) console.log(`PAUSED: ${pausedLine(paused)}`);
    if (hold) console.log(`HOLD: ${hold.reason}\n  next: ${hold.next}`);
  }
  return hold ? 3 : 0;
}

/**
 * `relay status <task>`: where one task stands, from its record: DONE awaiting
 * acceptance with its receipts, findings, verifications and what accepting
 * does; or merged, closed, its latest verdict, its attempts.
 */
async function taskStatus(repo: RepoPaths, task: number, json: boolean): Promise<number> {
  const state = statePaths(repo.commonDir);
  const { readTask } = await import("../state/tasks.ts");
  const { acceptanceSummary } = await import("./acceptance_summary.ts");
  const record = await readTask(state, task);
  if (!record.rounds.length && !record.review) {
    throw new UsageError(
      `relay has no record of task ${task} (a task's record starts at its first attempt); "relay status" shows the loop`,
      "status",
    );
  }
  const summary = await acceptanceSummary(repo, state, task);
  const lines = summary ?? standing(record);
  if (json) printJson({ task, awaitingAcceptance: summary !== null, lines });
  else console.log(lines.join("\n"));
  return 0;
}

function standing(record: import("../state/tasks.ts").TaskRecord): string[] {
  const r = record.review;
  const task = record.task;
  const last = record.rounds.at(-1);
  const head = (() => {
    if (r?.merged) {
      return `task ${task} is merged (${r.merged.sha.slice(0, 12)}, by ${r.merged.by})`;
    }
    if (r?.closed) return `task ${task}'s PR was closed unmerged (${r.closed.reason})`;
    const v = r?.verdicts.at(-1);
    if (v) {
      return `task ${task}: latest verdict ${v.verdict} at ${v.head.slice(0, 12)}${
        v.stale ? " (stale)" : ""
      }`;
    }
    return `task ${task}: no verdict yet`;
  })();
  return [
    head,
    ...(last
      ? [
        `  round ${last.round} (brief ${last.brief}): ${last.attempts.length} attempt(s)${
          last.attempts.length ? `, the last ${last.attempts.at(-1)!.result}` : ""
        }`,
        ...last.receipts.map((x) =>
          `  receipt ${x.stage}: ${x.result}${x.detail ? ` (${x.detail})` : ""}`
        ),
      ]
      : []),
  ];
}
