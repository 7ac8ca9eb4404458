/**
 * The planner's effects on the task's course that need no agent: a BLOCKED
 * report handed to a person, a merge or close made outside relay noted, a PR
 * sent back with a fix brief, a PR routed to a person, a PASS marked stale.
 * Each reports the fact; the review record is saved by the driver.
 */
import { join } from "../../path.ts";
import { Git } from "../../git/git.ts";
import { writeBrief } from "../../protocol/brief_write.ts";
import { readHeaderTask, readStatus } from "../../protocol/status_line.ts";
import { readTextOrNull } from "../../state/json_file.ts";
import { BRIEF_FILE } from "../../state/paths.ts";
import type { Finding } from "../../state/reviews.ts";
import { blockedMarker, type PlannerEvent, type PlannerState } from "../../task/planner.ts";
import { fixBrief } from "../fix_brief.ts";
import { listInbox, usedTaskNumbers } from "../inbox.ts";
import { demoteOpenBrief } from "../promote.ts";
import { forgeOf, type PlanContext, prOf, subjectOf } from "./context.ts";

function now(): string {
  return new Date().toISOString();
}

export function handBlockedOver(s: PlannerState): PlannerEvent {
  return { kind: "blocked-handed-over", runId: blockedMarker(s.seen!.subject!), at: now() };
}

export async function noteMerge(tick: PlanContext, s: PlannerState): Promise<PlannerEvent> {
  const pr = prOf(tick);
  const seen = s.seen!;
  const merged = seen.mergedHead!;
  await forgeOf(tick).noteMerged(pr);
  // (When the branch moved on past the merged head, the HOLD that follows says it all.)
  if (merged === pr.head || seen.prHeadInMain) {
    tick.log.step(
      `task ${subjectOf(tick).task}: ${pr.id} was merged ${
        pr.mergedBy === "relay" ? "by relay on another machine" : "outside relay"
      } (${merged.slice(0, 12)} is in ${seen.main})${
        merged !== pr.head
          ? `; ${pr.branch} has moved on to ${
            pr.head.slice(0, 12)
          } since, and relay does not merge it again`
          : ""
      }`,
    );
  }
  return { kind: "merge-noted", sha: seen.originMain!, at: now() };
}

/** Closed on the forge by a person (relay close records this itself): the task is over. */
export function noteClose(tick: PlanContext): PlannerEvent {
  const pr = prOf(tick);
  tick.log.step(`task ${subjectOf(tick).task}: ${pr.id} was closed outside relay`);
  return {
    kind: "close-noted",
    head: pr.head,
    at: now(),
    reason: `${pr.id} was closed on the forge`,
  };
}

/** Writes the fix brief into NEXT-STEPS.md (a brief opened meanwhile goes back to the queue). */
export async function sendBack(
  tick: PlanContext,
  findings: Finding[],
  why: string,
  again?: number,
): Promise<PlannerEvent> {
  const s = subjectOf(tick);
  const pr = prOf(tick);
  const inbox = await listInbox(tick.repo.root);
  const used = await usedTaskNumbers(tick.repo, inbox);
  const fresh = Math.max(0, s.report.task, ...used.keys()) + 1;
  let task = fresh;
  let replaces: number | undefined;
  if (again !== undefined) {
    const there = await readTextOrNull(join(tick.repo.root, BRIEF_FILE));
    // Its number given to another brief meanwhile (numbered on another clone): a fresh one,
    // else the promotion after the fix would take that brief for a stale copy of it.
    const taken = readHeaderTask(there) === again || inbox.some((e) => e.task === again) ||
      await branchNamed(tick, `task-${again}`);
    if (taken) replaces = again;
    else task = again;
    const holds = there === null
      ? "there is none"
      : `it holds task ${readHeaderTask(there) ?? "?"}, ${readStatus(there) ?? "no status"}`;
    tick.log.step(
      `the fix brief (task ${again}) for ${pr.id} is not in ${BRIEF_FILE} (${holds}): writing it again${
        taken ? ` as task ${task} (task ${again} is another brief's now)` : ""
      }`,
    );
  }
  const brief = fixBrief({
    task,
    original: s.brief,
    originalTask: s.task,
    head: pr.head,
    findings,
    why,
  });
  // A brief someone promoted while this PR was in flight goes back to the queue, not away.
  const demoted = await demoteOpenBrief(tick.repo.root);
  if (demoted) {
    tick.log.step(`moved the open brief back to ${demoted}: the fix for ${pr.id} goes first`);
  }
  await Deno.writeTextFile(join(tick.repo.root, BRIEF_FILE), writeBrief(brief));
  return {
    kind: "sent-back",
    fix: task,
    head: pr.head,
    at: now(),
    why,
    findings,
    ...(replaces !== undefined ? { replaces } : {}),
  };
}

/** True when a branch of that name is here or on a remote. */
async function branchNamed(tick: PlanContext, name: string): Promise<boolean> {
  const refs = await new Git(tick.repo.root).out([
    "for-each-ref",
    "--format=%(refname)",
    `refs/heads/${name}`,
    "refs/remotes/",
  ]);
  return refs.split("\n").some((r) => r === `refs/heads/${name}` || r.endsWith(`/${name}`));
}

/** The human path: recorded once per head; relay never merges the PR. */
export function routeToPerson(tick: PlanContext, files: string[]): PlannerEvent {
  return { kind: "routed-to-person", head: prOf(tick).head, files, at: now() };
}

export function markStale(tick: PlanContext): PlannerEvent {
  return { kind: "verdict-marked-stale", head: prOf(tick).head };
}
