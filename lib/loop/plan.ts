/**
 * The plan stage: before a queued brief is promoted, the reviewer judges the
 * brief itself — is every "Done when" term checkable, is the verification bar
 * real — in a read-only checkout of main, as a reviewer-style turn
 * (review_turn.ts: void and dispatched once more when it changes its checkout,
 * a HOLD the second time). Off by default; `plan_review: on` in
 * `.relay/config.yaml` makes a PASS for the brief as it is now a condition of
 * its promotion, and `relay plan <task>` runs it on demand.
 *
 * A FAIL keeps the brief queued with the findings under `## Plan review` in
 * its inbox file, and stops for a person. Each run is recorded in the task's
 * record with the digest of the brief it judged: an edited brief needs a new
 * PASS; the findings section is not part of the digest.
 */
import { join } from "../path.ts";
import { InputError } from "../errors.ts";
import type { Git } from "../git/git.ts";
import type { RepoConfig } from "../config/repo_load.ts";
import type { Profile } from "../config/profile_load.ts";
import type { RepoPaths } from "../git/discover.ts";
import type { Log, Progress } from "../proc/log.ts";
import { writeBrief } from "../protocol/brief_write.ts";
import { INBOX_DIR, type StatePaths } from "../state/paths.ts";
import { addPlanRun, type PlanRun, readTask } from "../state/tasks.ts";
import type { PlannerEvent } from "../task/planner.ts";
import { listInbox } from "./inbox.ts";
import { PLAN_SECTION, planDigest } from "./plan_gate.ts";

/** What a plan review needs of a tick: the repo, relay's paths, the config, the profile. */
export interface PlanTick {
  repo: RepoPaths;
  state: StatePaths;
  log: Log;
  progress: Progress;
  primary: Git;
  config: RepoConfig;
  profile: Profile;
}

export type PlanOutcome =
  | { kind: "PASS" | "FAIL"; run: PlanRun; file: string }
  /** A turn that reached past its checkout, or was void twice: a HOLD's reason and next step. */
  | { kind: "held"; reason: string; next: string; runId: string }
  | { kind: "busy"; message: string }
  | { kind: "rounds-used"; fails: number; limit: number };

/** The plan rounds a task has: the repo's, within the operator profile's limit. */
export function planRounds(config: RepoConfig, profile: Profile): number {
  return Math.min(config.planRounds, profile.limits.planRounds);
}

/** Runs the plan review of queued task `task` and records it. */
export async function runPlan(
  tick: PlanTick,
  task: number,
  by: PlanRun["by"],
  /** The review tick's PR task, merged or closed: a turn of it left on record is moot. */
  settled?: number,
): Promise<PlanOutcome> {
  const entry = (await listInbox(tick.repo.root)).find((e) => e.task === task);
  if (!entry) {
    throw new InputError(
      { file: INBOX_DIR },
      `task ${task} is not queued in the inbox`,
      "a plan review is of a queued brief, before it is promoted: relay inbox list shows what is queued",
    );
  }
  // Another task's reviewer-side turn on record (running, or interrupted and maybe uncertain)
  // is the review tick's to settle: a plan review never clears it.
  const { readReviewJournal } = await import("./review_journal.ts");
  const other = await readReviewJournal(tick.state.reviewJournal).catch(() => null);
  // Its own plan turn on record is settled by runReview below (waited for, or uncertain).
  if (other && other.task !== settled && other.task !== task) {
    return {
      kind: "busy",
      message: `not reviewed now: the ${
        other.role ?? "reviewer"
      } turn of task ${other.task} (run ${other.runId}) is on record${
        other.uncertain ? " as uncertain" : ""
      }; relay review settles it first${
        other.uncertain ? ` (see relay status; relay resume --retry-uncertain replays it)` : ""
      }`,
    };
  }
  if (tick.profile.safetyMode === "strict") {
    const { requireProbe } = await import("./probe.ts");
    await requireProbe(tick.state, "reviewer", tick.profile.roles.reviewer);
  }
  const limit = planRounds(tick.config, tick.profile);
  const fails = ((await readTask(tick.state, task)).plans ?? [])
    .filter((p) => p.result === "FAIL").length;
  if (fails >= limit) return { kind: "rounds-used", fails, limit };
  const { remote, main } = tick.config;
  await tick.primary.fetch(remote);
  const originMain = await tick.primary.resolve(`refs/remotes/${remote}/${main}`);
  if (!originMain) {
    throw new InputError(
      { file: ".relay/config.yaml", key: "main" },
      `${remote}/${main} does not exist: there is nothing to review the brief against`,
      `push ${main} first (git push ${remote} ${main})`,
    );
  }
  const digest = await planDigest(entry.brief);
  const events: PlannerEvent[] = [];
  const { runReview } = await import("./effects/review_turn.ts");
  const stopped = await runReview(
    tick,
    { task, report: { task }, brief: entry.brief, originMain },
    { id: `the plan of task ${task}`, branch: main, head: originMain, state: "open" },
    (e) => {
      events.push(e);
      return Promise.resolve();
    },
    "plan",
  );
  if (stopped?.kind === "review-held") {
    return { kind: "held", reason: stopped.reason, next: stopped.next, runId: stopped.runId };
  }
  if (stopped?.kind === "reviewer-still-running") return { kind: "busy", message: stopped.message };
  const ran = events.find((e) => e.kind === "stage-ran");
  if (ran?.kind !== "stage-ran") throw new Error("relay bug: a plan turn ended with no verdict");
  const run: PlanRun = {
    runId: ran.run.runId,
    at: ran.run.at,
    brief: digest,
    result: ran.run.result === "PASS" ? "PASS" : "FAIL",
    findings: ran.run.findings,
    by,
  };
  await addPlanRun(tick.state, task, run);
  // The findings go where the person edits the brief; a PASS clears an earlier FAIL's.
  const extra = entry.brief.extra.filter((x) => x.heading !== PLAN_SECTION);
  if (run.result === "FAIL") {
    extra.push({
      heading: PLAN_SECTION,
      body: [
        `relay's plan review FAILED this brief (run ${run.runId}, ${run.at}; round ${
          fails + 1
        } of ${limit}). Answer each finding by editing the brief, then run relay plan ${task}.`,
        "",
        ...run.findings.map((f) => `- [${f.severity}] ${f.text}`),
      ].join("\n"),
    });
  }
  const path = join(tick.repo.root, entry.file);
  const text = writeBrief({ ...entry.brief, extra });
  if (text !== await Deno.readTextFile(path)) await Deno.writeTextFile(path, text);
  return { kind: run.result, run, file: entry.file };
}
