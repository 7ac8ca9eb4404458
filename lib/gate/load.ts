/**
 * Gathers what the gate judges, the way both `relay gate` and the reviewer
 * tick need it: the report and the brief (with its bar) from origin/main —
 * never from a working tree or the PR diff — the PR and the open PRs from
 * the forge, and the review record of the PR's task. The caller fetches.
 */
import type { RepoConfig } from "../config/repo_load.ts";
import { InputError } from "../errors.ts";
import type { PlannerForge } from "../forge/types.ts";
import type { Git, GitObject } from "../git/git.ts";
import { FULL_ID, readRefFile } from "../git/discover.ts";
import { parseBrief } from "../protocol/brief.ts";
import { parseReport } from "../protocol/report.ts";
import { BRIEF_FILE, REPORT_FILE, statePaths } from "../state/paths.ts";
import { readHeaderTask, readStatus } from "../protocol/status_line.ts";
import { readReview } from "../state/tasks.ts";
import { type GateInput, prepareChecks, type PreparedChecks, preparedFor } from "./gate.ts";

export interface LoadGateOptions {
  /** The primary repository, fetched. */
  git: Git;
  /** The git common dir (relay's state lives under it). */
  commonDir: string;
  config: RepoConfig;
  /** Only gate this task: the report's task, or the task of the report's branch. */
  task?: number;
  /** Where a revalidation may make its scratch worktree (a temp dir); else the system's. */
  scratchRoot?: string;
  /** The planner's forge; by default the one `config.forge` names. */
  forge?: PlannerForge;
  /**
   * The checks' git work the caller started before its fetch ended, for the base and head it
   * guessed: used when they are main and the head the report names, else not (the caller
   * lets them end).
   */
  started?: PreparedChecks;
  /**
   * Main's commit, report and brief (MAIN_OBJECTS), read by the caller before its fetch ended,
   * at `base`: used when the fetch left main there, so no read waits on the fetch.
   */
  mainRead?: { base: string; objects: Promise<(GitObject | null)[]> };
}

/** What the gate reads of main at `rev`, in one git call: the commit, the report, the brief. */
export function mainObjects(rev: string): string[] {
  return [`${rev}^{commit}`, `${rev}:${REPORT_FILE}`, `${rev}:${BRIEF_FILE}`];
}

/**
 * An ordinary state with no PR to judge: nothing reported on main, a PR that
 * is merged or closed, a BLOCKED task. `relay gate` says so (decision NONE),
 * it is not an error.
 */
export class NothingToGate extends Error {
  override name = "NothingToGate";
  constructor(
    message: string,
    /** The task the report on main is about, when there is one. */
    readonly task: number | null = null,
    readonly pr: string | null = null,
  ) {
    super(message);
  }
}

export interface LoadedGate {
  input: GateInput;
  /** The task whose review record was read (the PR's original task). */
  reviewTask: number;
}

/** `<rev>:<path>`'s content, or null when the file is not there. No filters, no textconv. */
async function showFile(git: Git, rev: string, path: string): Promise<string | null> {
  const res = await git.run(["cat-file", "blob", `${rev}:${path}`], { allowFail: true });
  return res.code === 0 ? res.stdout : null;
}

/**
 * The brief the report on main answers. With `machines: split` the reviewer commits the
 * brief it promotes or writes (a fix) on its own, so main's brief may be the next one,
 * OPEN: the report's own is then the one in the executor's paperwork commit, the last
 * commit that changed the report. With `machines: one` it is main's, unless main's is an
 * open brief for another task than `reportTask`: one a person wrote there by hand.
 */
export async function briefBesideReport(
  git: Git,
  mainRef: string,
  split: boolean,
  /** Main's brief, when the caller already read it. */
  onMain?: string | null,
  reportTask?: number,
): Promise<string | null> {
  const text = onMain !== undefined ? onMain : await showFile(git, mainRef, BRIEF_FILE);
  if (text === null || readStatus(text) !== "OPEN") return text;
  if (!split && (reportTask === undefined || readHeaderTask(text) === reportTask)) return text;
  const at = await git.out(["log", "-1", "--format=%H", mainRef, "--", REPORT_FILE]);
  return (at === "" ? null : await showFile(git, at, BRIEF_FILE)) ?? text;
}

export async function loadGateInput(opts: LoadGateOptions): Promise<LoadedGate> {
  const { git, config } = opts;
  const mainName = `${config.remote}/${config.main}`;
  const mainRef = `refs/remotes/${mainName}`;
  // The forge's module loads while git reads; awaited (and any failure thrown) below.
  const forgeLoading = opts.forge
    ? Promise.resolve(opts.forge)
    : import("../forge/planner_forge.ts").then(({ plannerForge }) =>
      plannerForge(config, git, statePaths(opts.commonDir).prs, opts.commonDir)
    );
  forgeLoading.catch(() => {});
  // Main, the report and the brief in one git call — or none, when the caller read them at the
  // commit the fetch left main at (a ref file says, no process). A file is read only as a
  // blob, with no filters and no textconv.
  const early = opts.mainRead !== undefined &&
      readRefFile(opts.commonDir, mainRef) === opts.mainRead.base
    ? await opts.mainRead.objects.catch(() => undefined)
    : undefined;
  const [mainCommit, reportBlob, briefBlob] = early?.length === 3
    ? early
    : await git.readObjects(mainObjects(mainRef));
  const blob = (o: GitObject | null | undefined) => o?.type === "blob" ? o.content : null;
  const originMain = mainCommit?.oid ?? null;
  if (originMain === null) {
    throw new InputError(
      { file: ".relay/config.yaml", key: "main" },
      `Cannot run the gate: "${mainName}" does not exist`,
      `push "${config.main}" to "${config.remote}", or set main and remote to the base branch`,
    );
  }

  const reportFile = `${mainName}:${REPORT_FILE}`;
  const reportText = blob(reportBlob);
  if (reportText === null) {
    throw new NothingToGate(
      `no ${REPORT_FILE} on ${mainName}: no PR is in flight (the executor reports first)`,
    );
  }
  const report = parseReport(reportText, reportFile);
  if (
    opts.task !== undefined && report.task !== opts.task && report.branch !== `task-${opts.task}`
  ) {
    throw new NothingToGate(
      `no report for task ${opts.task} on ${mainName} (the report there is for task ${report.task}); run "relay gate" without a task, or with ${report.task}`,
      report.task,
    );
  }
  if (report.outcome === "BLOCKED") {
    throw new NothingToGate(
      `task ${report.task} is BLOCKED: the executor could not finish it, so there is nothing to merge; "relay status" shows the options`,
      report.task,
    );
  }

  // The checks' git work starts now, for the head the report names (the PR's, unless the
  // branch moved since), and runs while the forge is asked. runGate uses it if the PR's head
  // is that one. When loading fails or finds nothing to gate (the PR merged or closed), it has
  // ended before that is said: such a `relay gate` costs what judging the PR would have.
  const guessed = opts.started;
  const prepared = !FULL_ID.test(report.head)
    ? undefined
    : preparedFor(guessed, originMain, report.head)
    ? guessed
    : prepareChecks(git, config, originMain, report.head);
  try {
    const briefFile = `${mainName}:${BRIEF_FILE}`;
    const briefText = await briefBesideReport(
      git,
      mainRef,
      config.machines === "split",
      blob(briefBlob),
      report.task,
    );
    if (briefText === null) {
      throw new InputError(
        { file: briefFile },
        `Cannot run the gate: there is no ${BRIEF_FILE} on ${mainName}, so no verification bar`,
        "the executor commits the brief with its report; check the paperwork commit on main",
      );
    }
    const brief = parseBrief(briefText, briefFile);

    if (report.branch === "") {
      throw new InputError(
        { file: reportFile, key: "Branch" },
        "Cannot run the gate: the report names no branch",
        "wait for relay poll to write the report's Branch line",
      );
    }
    const forge = await forgeLoading;

    const owner = /^task-(\d+)$/.exec(report.branch);
    const reviewTask = owner ? Number(owner[1]) : brief.fixes ?? report.task;
    // The review record (a local read) while the forge looks up the PR; the PR's answer,
    // and its errors, still come first.
    const [found, read] = await Promise.allSettled([
      forge.find(report.branch),
      readReview(statePaths(opts.commonDir), reviewTask, report.branch),
    ]);
    if (found.status === "rejected") throw found.reason;
    const pr = found.value;

    if (pr === null) {
      throw new NothingToGate(
        `the ${forge.name} forge has no PR for branch "${report.branch}" (relay poll opens it when it ships)`,
        report.task,
      );
    }
    if (pr.state !== "open") {
      throw new NothingToGate(`${pr.id} is ${pr.state}`, report.task, pr.id);
    }
    const openPrs = await forge.listOpen();

    if (read.status === "rejected") throw read.reason;
    const review = read.value;

    const input: GateInput = {
      git,
      config,
      pr,
      report,
      brief,
      review,
      openPrs,
      base: originMain,
      ...(prepared === undefined ? {} : { prepared }),
      revalidate: async () =>
        (await import("./revalidate.ts")).revalidateOnMerge(git, {
          originMain,
          head: pr.head,
          bar: brief.bar,
          timeoutMs: config.timeouts.barMs,
          maxBytes: config.evidenceMaxBytes,
          passEnv: config.barEnv,
          ...(opts.scratchRoot === undefined ? {} : { scratchRoot: opts.scratchRoot }),
        }),
    };
    return { input, reviewTask };
  } catch (err) {
    await prepared?.settled;
    throw err;
  }
}
