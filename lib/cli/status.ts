/** `relay status`: what the loop is doing and, whenever it waits, why — on one screen. */
import { join } from "node:path";
import { type Context, parseCommand, printJson, requireRepo } from "./args.ts";
import { BRIEF_FILE, REPORT_FILE, statePaths } from "../state/paths.ts";
import { currentBranch } from "../git/discover.ts";

async function readTextOrNull(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch {
    return null;
  }
}

/** Branches with an open plain-git PR record (no forge call: status stays local and quick). */
async function openPlainPrs(dir: string): Promise<string[]> {
  const branches: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (!e.name.endsWith(".json")) continue;
      const r = JSON.parse(await Deno.readTextFile(`${dir}/${e.name}`));
      if (r?.state === "open" && typeof r.branch === "string") branches.push(r.branch);
    }
  } catch {
    // No records: nothing in flight on the plain forge.
  }
  return branches.sort();
}

/** Where the reviewer side stands on the reported task, in one line. */
async function reviewState(
  dir: string,
  task: number,
  report: { task: number; outcome: string; head: string; pr: string },
  queued: number,
): Promise<string> {
  const { readReview, verdictFor } = await import("../state/reviews.ts");
  const record = await readReview(dir, task, "");
  const pr = report.pr ? `PR ${report.pr}` : "the branch";
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
  if (report.outcome === "BLOCKED") {
    return `task ${report.task} is BLOCKED: a person decides what happens next`;
  }
  if (record.human?.head === report.head) {
    return `waiting for a person to merge ${pr}: it changes owner-accepted infra (${
      record.human.files.join(", ")
    }); relay never merges it`;
  }
  const verdict = verdictFor(record, report.head);
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

export async function status(args: string[], ctx: Context): Promise<number> {
  const { values } = parseCommand("status", args, { json: { type: "boolean" } }, {
    min: 0,
    max: 0,
  });
  const repo = requireRepo(ctx);
  const state = statePaths(repo.commonDir);
  const { parseBrief } = await import("../protocol/brief.ts");
  const { parseReport } = await import("../protocol/report.ts");
  const { lockState } = await import("../state/lock.ts");
  const { readJournal } = await import("../state/journal.ts");
  const { readHold } = await import("../state/hold.ts");
  const { readTaskRecord, failedAttempts } = await import("../state/tasks.ts");
  const { listInbox } = await import("../loop/inbox.ts");
  const { sha256 } = await import("../loop/hash.ts");
  const { writeBrief } = await import("../protocol/brief.ts");

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
    const record = await readTaskRecord(state.tasks, brief.task);
    const hash = await sha256(writeBrief({ ...brief, status: "OPEN" }));
    attempts = { failed: failedAttempts(record, hash), total: record.attempts.length };
  }

  const branch = currentBranch(repo.gitDir);
  let waiting: string;
  if (hold) waiting = `HOLD: ${hold.reason}\n  next: ${hold.next}`;
  else if (lock.held) {
    waiting = `a tick is running (pid ${lock.info?.pid}, since ${lock.info?.started})`;
  } else if (journal) {
    waiting =
      `an interrupted tick will be finished by the next poll (run ${journal.runId}, after "${journal.step}")`;
  } else if (brief?.status === "OPEN") {
    const inFlight = (await openPlainPrs(state.prs)).filter((b) => b !== brief.branch);
    waiting = inFlight.length
      ? `task ${brief.task} is open but waits: ${
        inFlight.join(", ")
      } is in flight until the reviewer merges it or sends it back`
      : `task ${brief.task} is open: the next poll starts the executor`;
  } else if (report && brief?.status === "DONE") {
    waiting = await reviewState(state.reviews, brief.fixes ?? brief.task, report, inbox.length);
  } else if (inbox.length) waiting = `${inbox.length} brief(s) queued: run "relay promote"`;
  else waiting = "idle: nothing open and nothing queued";

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
    waiting,
    problems,
  };
  if (values.json) {
    printJson(data);
    return hold ? 3 : problems.length ? 2 : 0;
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
  console.log(`\n${waiting}`);
  for (const p of problems) console.log(`problem: ${p}`);
  return hold ? 3 : problems.length ? 2 : 0;
}
