/**
 * The planner's first effect: fetch, then read what the task looks like now
 * — the report and brief on origin/main (never the PR's or the working
 * tree's), the PR on the forge, whether main already has a head of it, the
 * brief open in the primary tree, and whether an executor attempt is
 * journaled. Reports it as one fact; the decisions are lib/task/planner.ts.
 */
import { join } from "../../path.ts";
import { InputError } from "../../errors.ts";
import { Git } from "../../git/git.ts";
import { loadRepoConfig } from "../../config/repo_load.ts";
import {
  DEFAULT_LIMITS,
  loadProfile,
  type Profile,
  profilePath,
  withFlags,
} from "../../config/profile_load.ts";
import { parseBrief } from "../../protocol/brief.ts";
import { parseReport } from "../../protocol/report.ts";
import { readStatus } from "../../protocol/status_line.ts";
import { BRIEF_FILE, REPORT_FILE, REVIEW_PROCEDURES } from "../../state/paths.ts";
import { readTextOrNull } from "../../state/json_file.ts";
import { readReview } from "../../state/tasks.ts";
import { plannerForge } from "../../forge/planner_forge.ts";
import type { PlannerEvent, PlannerMode, Seen } from "../../task/planner.ts";
import { firstMerged } from "../merged.ts";
import { applyTaskConfig } from "./freeze.ts";
import { stagesOf } from "../../config/task_config.ts";
import type { PlanContext, PlanSubject, Ready } from "./context.ts";
import { POST_STAGES, type PostStage } from "../../state/reviews.ts";
import { briefBesideReport } from "../../gate/load.ts";

export async function readSubject(
  git: Git,
  originMain: string,
  split = false,
): Promise<PlanSubject | null> {
  // One git call for what this tick reads from main: the report, the brief beside it, and the
  // procedures a reviewer-side turn may read (what git said of a full commit id is kept).
  const [reportText, mainBrief] = await git.showFiles(originMain, [
    REPORT_FILE,
    BRIEF_FILE,
    ...REVIEW_PROCEDURES,
  ]);
  if (reportText === null || reportText === undefined) return null;
  const report = parseReport(reportText, `origin/main:${REPORT_FILE}`);
  // machines: split — main's brief may be the next one; the report's is beside it in history
  // (so too with one machine when a person wrote another task's brief on main by hand).
  const briefText = await briefBesideReport(
    git,
    originMain,
    split,
    mainBrief ?? null,
    report.task,
  );
  if (briefText === null) {
    throw new InputError(
      { file: `origin/main:${BRIEF_FILE}` },
      "the report on main has no brief beside it",
      "restore NEXT-STEPS.md on main",
    );
  }
  const brief = parseBrief(briefText, `origin/main:${BRIEF_FILE}`);
  if (brief.task !== report.task) {
    throw new InputError(
      { file: `origin/main:${REPORT_FILE}`, key: "Task" },
      `the report is for task ${report.task} but the brief beside it is task ${brief.task}`,
      `relay commits the two together, so a commit on main changed one of them by hand ("git log -3 -- ${REPORT_FILE} ${BRIEF_FILE}" on main shows which): put back what relay wrote in that commit, and queue a new brief with "relay inbox add"`,
    );
  }
  return {
    report,
    brief,
    task: brief.fixes ?? brief.task,
    originMain,
    mainBrief: mainBrief ?? null,
  };
}

/**
 * machines: split — whether relay merged `head` on another machine. The plain forge's PR
 * record on the remote says so itself; GitHub says only that the PR is merged. The machine
 * that merged wrote a note on the head, and let go of the reviewer's lease only once that
 * note was pushed (lib/loop/review.ts); this tick's one fetch, made before it took the lease
 * (which it could not have taken had the lease moved since), brought the remote's notes.
 */
async function mergedByRelayElsewhere(git: Git, head: string): Promise<boolean> {
  const { parseNote, readNote, REMOTE_NOTES_REF } = await import("../../git/notes.ts");
  return parseNote(await readNote(git, head, REMOTE_NOTES_REF)).some((r) =>
    r.kind === "merged" && r.head === head && typeof r.by === "string" && r.by.startsWith("relay")
  );
}

/** What `relay status` cannot know without the network. */
export class Offline extends Error {
  override name = "Offline";
}

/** `relay merge` needs no agent: it runs without the operator profile. */
const NO_PROFILE: Profile = {
  path: "",
  roles: {} as Profile["roles"],
  securityDefaulted: true,
  safetyMode: "efficient",
  handsfree: false,
  notify: [],
  limits: { ...DEFAULT_LIMITS },
};

/**
 * `offline`: `relay status` looks without fetching, as of the last fetch, and
 * only where that needs no network (the plain-git forge's records are local).
 */
export async function observe(
  tick: PlanContext,
  mode: PlannerMode,
  opts: { offline?: boolean } = {},
): Promise<PlannerEvent> {
  const config = await loadRepoConfig(tick.repo.root);
  const primary = new Git(tick.repo.root, config.timeouts.networkMs);
  if (!opts.offline) await primary.fetch(config.remote);
  else if (config.forge !== "plain") throw new Offline("the PR is on GitHub");
  const originMain = await primary.resolve(`refs/remotes/${config.remote}/${config.main}`);
  const seen: Seen = {
    remote: config.remote,
    main: config.main,
    originMain,
    subject: null,
    journal: false,
    openBranch: null,
    pr: null,
    mergedHead: null,
    prHeadInMain: false,
    fixRounds: config.fixRounds,
    merge: config.merge,
    handsfree: false,
    stages: [],
  };
  const subject = originMain
    ? await readSubject(primary, originMain, config.machines === "split")
    : null;
  if (!subject) return { kind: "observed", seen, record: null };
  const profile = mode.kind === "tick"
    ? withFlags(await loadProfile(profilePath(tick.profileFlag)), tick.flags)
    : NO_PROFILE;
  tick.ready = { config, primary, profile };
  // The task runs with the configuration it started with: its reviewer, its rounds, its merge.
  await applyTaskConfig(tick.ready, tick.state, subject.task);
  seen.fixRounds = tick.ready.config.fixRounds;
  // A task with no frozen configuration (started before relay froze one, or let go of by
  // relay resume until its next attempt) runs with the profile as it is: its merge_policy
  // wins over the repo's merge, as it would in a frozen one.
  seen.merge = tick.ready.frozen
    ? tick.ready.config.merge
    : profile.mergePolicy ?? tick.ready.config.merge;
  // A brief that asks for a person gets one, frozen or not.
  if (subject.brief.acceptance === "human") seen.merge = "human";
  seen.handsfree = tick.ready.frozen?.config.handsfree.value ?? profile.handsfree;
  seen.stages = postStages(tick.ready);
  seen.preview = config.preview ? { timeoutMs: config.preview.timeoutMs } : null;
  tick.subject = subject;
  const forge = tick.forge = await plannerForge(config, primary, tick.state.prs);
  const { report, brief } = subject;
  seen.subject = {
    task: subject.task,
    report: { task: report.task, outcome: report.outcome, head: report.head },
    brief: { task: brief.task, title: brief.title, branch: brief.branch },
  };
  const record = await readReview(tick.state, subject.task, brief.branch);
  seen.journal = (await readTextOrNull(tick.state.journal)) !== null;
  // What the decisions below need, and no more: a journaled attempt or a BLOCKED report
  // stops the tick before any forge call.
  if (mode.kind === "tick" && (seen.journal || report.outcome === "BLOCKED")) {
    return { kind: "observed", seen, record };
  }
  if (mode.kind === "merge" && report.outcome === "BLOCKED") {
    return { kind: "observed", seen, record };
  }
  const pr = await forge.find(brief.branch);
  if (
    pr?.state === "merged" && pr.mergedBy === undefined && config.machines === "split" &&
    record.merged === undefined && await mergedByRelayElsewhere(primary, pr.head)
  ) {
    pr.mergedBy = "relay";
  }
  if (pr) tick.pr = pr;
  seen.pr = pr;
  if (mode.kind === "merge" && mode.accept) seen.openBranch = await openBranch(tick.repo.root);
  if (!pr || mode.kind === "merge") return { kind: "observed", seen, record };
  // Merged (by relay or by a person): a person may have merged any head of this PR — the
  // one reported, or one an open fix brief was written for — and a PR main already has is
  // never merged again.
  seen.mergedHead = pr.state === "merged" || record.merged !== undefined
    ? pr.head
    : await firstMerged(
      primary,
      [
        report.head,
        pr.head,
        ...record.fixes.map((f) => f.head),
        ...record.verdicts.map((v) => v.head),
      ],
      originMain!,
      tick.state,
      subject.task,
    );
  if (seen.mergedHead !== null && seen.mergedHead !== pr.head && !record.merged) {
    seen.prHeadInMain = await primary.isAncestor(pr.head, originMain!);
  }
  seen.openBranch = await openBranch(tick.repo.root);
  return { kind: "observed", seen, record };
}

/**
 * The stages the task runs after review: its frozen configuration's, or (a
 * task that has none) the repo config's as it is now.
 */
function postStages(r: Ready): PostStage[] {
  const stages = r.frozen?.config.stages ?? stagesOf({
    planReview: r.config.planReview,
    skipQualityPolish: r.config.skipQualityPolish,
    docsFile: r.config.docsFile ?? null,
  });
  return stages.filter((x) => x.runs).map((x) => x.stage)
    .filter((x): x is PostStage => (POST_STAGES as readonly string[]).includes(x));
}

/** The branch of the brief OPEN in the primary tree, if any. */
async function openBranch(root: string): Promise<string | null> {
  const working = await readTextOrNull(join(root, BRIEF_FILE));
  if (working === null || readStatus(working) !== "OPEN") return null;
  return parseBrief(working, BRIEF_FILE).branch;
}
