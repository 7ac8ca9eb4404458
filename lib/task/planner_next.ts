/**
 * The planner's next effect, as a pure function: from the phase `reduce` left
 * the task in (lib/task/planner.ts), the one thing the review tick (or `relay
 * merge`) does now, with the words it says. Split from the state and its
 * reducer only to keep each file short; the two read as one machine.
 */
import type { Finding } from "../state/reviews.ts";
import { blockedOptions } from "./blocked.ts";
import type { PlannerEffect } from "./effects.ts";
import {
  type AcceptRequest,
  type GateDecision,
  type Intent,
  openFindings,
  type PlannerState,
  stageRunsSince,
  stagesDue,
  verdictOn,
} from "./planner.ts";
import { sendsBack } from "../state/reviews.ts";

/** Why a PR goes back when the merge gate refuses it (before review or after). */
const GATE_REFUSED = "The merge gate refused this PR.";

const short = (sha: string) => sha.slice(0, 12);

export function nextPlanner(s: PlannerState): PlannerEffect {
  if (s.hold) return { kind: "stop-on-hold" };
  const seen = s.seen;
  if (!seen) return { kind: "observe" };
  const sub = seen.subject!;
  const pr = seen.pr!;
  const record = s.record!;
  const done = (kind: string, message: string, more: Record<string, unknown> = {}) => ({
    kind: "done" as const,
    result: { kind, message, ...more },
  });
  const wait = (
    what: "executor" | "gate" | "merge" | "orphan-turn" | "preview",
    message: string,
    kind = "waiting",
  ) => ({ kind: "wait" as const, for: what, result: { kind, message } });
  switch (s.phase) {
    case "start":
      return { kind: "observe" };
    case "no-main":
      return done("idle", `idle: ${seen.remote}/${seen.main} does not exist`);
    case "no-report":
      return done("idle", `idle: no report on ${seen.remote}/${seen.main}`);
    case "executor-mid-tick":
      return wait("executor", "waiting: the executor is mid-tick");
    case "blocked":
      return { kind: "hand-blocked-over" };
    case "blocked-handed":
      return wait(
        "executor",
        `waiting: task ${sub.report.task} is BLOCKED and was handed to a person`,
      );
    case "blocked-hold":
      return {
        kind: "record-hold",
        reason: `task ${sub.report.task} is BLOCKED: the executor could not finish it`,
        next: blockedOptions(sub.task),
        task: sub.report.task,
      };
    case "no-pr":
      return done("idle", `idle: no PR for ${sub.brief.branch}`);
    case "merged-unnoticed":
      return { kind: "note-merge" };
    case "merged-moved":
      return {
        kind: "record-hold",
        reason: `${pr.id} was merged outside relay at ${
          short(seen.mergedHead!)
        }, but ${pr.branch} has moved on to ${
          short(pr.head)
        } since: those commits are not in ${seen.main}`,
        next:
          `To keep them, merge ${pr.branch} by hand, or queue a brief for them (relay inbox add); to drop them, do nothing. Then run "relay resume": relay treats task ${sub.task} as merged and moves on.`,
      };
    case "merged-first":
    case "merged":
      return {
        kind: "promote",
        done: s.phase === "merged-first"
          ? `task ${sub.task}: ${pr.id} was merged ${byWhom(pr)}`
          : `task ${sub.task} is merged`,
        retire: `${pr.id} (task ${sub.task}) was merged ${byWhom(pr)}: ${
          short(seen.mergedHead!)
        } is in ${seen.main}. Nothing was launched for this fix.`,
      };
    case "closed-unnoticed":
      return { kind: "note-close" };
    case "closed-first":
    case "closed":
      return {
        kind: "promote",
        done: `task ${sub.task}: ${pr.id} is closed`,
        retire:
          `${pr.id} (task ${sub.task}) was closed outside relay. Nothing was launched for this fix.`,
      };
    case "executor-first":
      return wait("executor", "waiting: a brief is open in NEXT-STEPS.md; the executor goes first");
    case "moved-outside":
      return {
        kind: "record-hold",
        reason: `${pr.id} moved to ${short(pr.head)} outside relay; the report on main is for ${
          short(sub.report.head)
        }`,
        next:
          `Find out who pushed to ${pr.branch}. To keep the new commits, queue a fix brief for task ${sub.task} (Kind: fix, Fixes: ${sub.task}, Branch: ${pr.branch}) so the executor reports on them; otherwise move them off the branch. Then run "relay resume". To give up on the task instead: relay close ${sub.task} --reason "…".`,
      };
    case "failed":
      return sendBack(s, verdictOn(record, pr.head)!.findings, "The reviewer failed this PR.");
    case "fix-lost": {
      // The same round again: its number, no round counted, and what the brief said (a
      // record from before relay kept that: the findings open on the head).
      const fix = record.fixes.filter((f) => f.head === pr.head).at(-1)!;
      const failed = verdictOn(record, pr.head)?.verdict === "FAIL";
      const stage = stageRunsSince(record, pr.head).filter(sendsBack).at(-1);
      return {
        kind: "send-back",
        findings: fix.findings ?? openFindings(record, pr.head),
        why: fix.why ??
          (failed
            ? "The reviewer failed this PR."
            : stage
            ? `The ${stage.stage} stage sent this PR back.`
            : "This PR was sent back."),
        again: fix.task,
      };
    }
    case "to-review":
      return { kind: "check-scope" };
    case "scope-refused":
      return sendBack(
        s,
        [{ severity: "blocker", text: s.scope!.finding }],
        `${GATE_REFUSED} (checked before review).`,
      );
    case "scope-human":
      return { kind: "route-to-person", files: s.scope!.files };
    case "gate-human":
      return { kind: "route-to-person", files: humanFiles(s.decision) };
    case "scope-passed":
      // The preview is asked once per tick, before the turn that would look at it.
      if (seen.preview && !s.preview) return { kind: "check-preview" };
      return { kind: "run-turn", role: "reviewer" };
    case "preview-wait":
      return wait(
        "preview",
        `waiting: the deploy preview of ${pr.id} at ${short(pr.head)} (${
          s.preview!.url
        }) does not answer 200 yet (${s.preview!.seen}); waiting since ${s.preview!.since}`,
      );
    case "preview-missing":
      return {
        kind: "record-hold",
        reason: `the deploy preview of ${pr.id} at ${short(pr.head)} (${
          s.preview!.url
        }) did not answer 200 in time: ${s.preview!.seen} since ${s.preview!.since}`,
        next: `Find out why the preview is not up for ${
          short(pr.head)
        } (the deploy log of your host), or fix preview_url / preview_path / preview_timeout in .relay/config.yaml. Then run "relay resume": the next review tick asks again.`,
        task: sub.task,
      };
    case "reviewer-busy":
      return wait("orphan-turn", s.said!, "busy");
    case "review-held":
      return { kind: "record-hold", ...s.held! };
    case "review-failed":
      return sendBack(s, s.findings, "The reviewer failed this PR.");
    case "passed": {
      // The stages after review run on the head its PASS is for; a merge or an acceptance
      // waits for them (a rejection need not).
      const verdict = verdictOn(record, pr.head);
      const passed = verdict?.verdict === "PASS";
      const due = passed ? stagesDue(seen, record, pr.head) : [];
      if (due.length && s.mode.kind === "tick") return { kind: "run-stage", stage: due[0]! };
      const ask = s.mode.kind === "merge" ? s.mode.accept : undefined;
      const rejected = passed ? stageRunsSince(record, pr.head).filter(sendsBack) : [];
      if (ask?.override) {
        if (!rejected.length) {
          return done(
            "refused",
            `nothing to override: no stage rejected ${pr.id} at ${
              short(pr.head)
            }; accept it without --override-rejection`,
          );
        }
        return { kind: "weigh-acceptance" };
      }
      // A head a stage sent back is merged only over that rejection, by a person, with a reason.
      if (s.mode.kind === "merge" && rejected.length && ask?.action !== "reject") {
        const run = rejected.at(-1)!;
        return done(
          "refused",
          `not merging ${pr.id}: its ${run.stage} stage rejected ${short(pr.head)} (${
            run.findings.map((f) => `[${f.severity}] ${f.text}`).join("; ") || run.detail
          }); to accept it anyway: relay accept ${sub.task} --override-rejection --reason "…" --intent-only`,
        );
      }
      if (due.length && s.mode.kind === "merge" && ask?.action !== "reject") {
        return done(
          "waiting",
          `not yet: ${pr.id} at ${short(pr.head)} passed review, but its stage(s) ${
            due.join(", ")
          } have not run on it; the review tick runs them (relay status ${sub.task} shows where it stands)`,
        );
      }
      return s.mode.kind === "merge" && s.mode.accept && !s.intent
        ? { kind: "weigh-acceptance" }
        : { kind: "gate" };
    }
    case "stage-failed": {
      const run = stageRunsSince(record, pr.head).filter(sendsBack).at(-1)!;
      const findings = run.findings.some((f) => f.severity === "blocker") ? run.findings : [{
        severity: "blocker" as const,
        text: `the ${run.stage} stage failed this head${run.detail ? `: ${run.detail}` : ""}`,
      }, ...run.findings];
      return sendBack(s, findings, `The ${run.stage} stage sent this PR back.`);
    }
    case "accepted":
      return { kind: "gate" };
    case "acceptance-shown":
      return done("intent", intentText(s), { intent: s.intent!.intent, digest: s.intent!.digest });
    case "acceptance-stale":
      return done("refused", staleText(s), {
        intent: s.intent!.intent,
        digest: s.intent!.digest,
        changed: s.intent!.changed,
      });
    case "rejected": {
      const note = (s.mode as { accept: AcceptRequest }).accept.reason ?? "";
      // A person's rejection is never turned into a HOLD that loses the note.
      if (record.fixes.length >= seen.fixRounds) {
        return done(
          "refused",
          `not rejected: task ${sub.task} has had its ${seen.fixRounds} fix round(s), so there is no round left to send it back with; give up on it with relay close ${sub.task} --reason "…", or raise fix_rounds (within the operator profile's limits) and reject again`,
        );
      }
      return sendBack(
        s,
        [{ severity: "blocker", text: `a person rejected this at acceptance: ${note}` }],
        "A person rejected this PR at acceptance.",
      );
    }
    case "gate-stale":
      return { kind: "mark-stale" };
    case "stale-twice":
      return sendBack(s, [{
        severity: "blocker",
        text: `the verification bar fails on the merge of ${pr.branch} with ${seen.main} (${
          short(s.decision!.base)
        }); bring the branch up to date with ${seen.main} and make the bar pass`,
      }], "The PR no longer passes its bar once merged with main.");
    case "gate-wait":
      return wait("gate", `waiting: ${waitReasons(s.decision!)}`);
    case "gate-refused":
      return sendBack(s, refusals(s.decision!), GATE_REFUSED);
    case "ready-for-person": {
      const how =
        `relay accept ${sub.task} --intent-only, then relay accept ${sub.task} --expect <digest> (or relay reject ${sub.task} --intent-only --text "…")`;
      if (seen.handsfree) {
        return {
          kind: "record-hold",
          reason: `task ${sub.task} is DONE awaiting acceptance: accept ${pr.id} at ${
            short(pr.head)
          } into ${seen.main}, or send it back? (merge policy "${seen.merge}", handsfree: nobody is waiting for this question)`,
          next: `Answer it: ${how}. Then run "relay resume".`,
        };
      }
      return done(
        "human",
        `DONE awaiting acceptance: task ${sub.task} (${pr.id} at ${
          short(pr.head)
        }) passed review and the gate; merge policy is "${seen.merge}": ${how}`,
        { files: [] },
      );
    }
    case "mergeable":
      return { kind: "merge" };
    case "needs-acceptance":
      return done(
        "waiting",
        `not merging ${pr.id}: task ${sub.task}'s merge policy is "human", so a person accepts it by digest: relay accept ${sub.task} --intent-only, then relay accept ${sub.task} --expect <digest>`,
        { decision: s.decision },
      );
    case "merge-missed":
      return s.mode.kind === "merge"
        ? done("waiting", `not merged: ${s.said}`, { decision: s.decision })
        : wait(
          "merge",
          `waiting: merge of ${pr.id} did not land: ${s.said}; the next tick tries again`,
        );
    case "merged-now":
      return {
        kind: "promote",
        done: s.mode.kind === "merge"
          ? `merged ${pr.id} as ${short(s.merged!.sha)}`
          : `task ${sub.task} merged (${short(s.merged!.sha)})`,
        // Accepted over a stage's rejection: the fix brief it wrote for this head is answered.
        ...(s.mode.kind === "merge" && s.mode.accept?.override
          ? {
            retire: `a person accepted ${pr.id} at ${
              short(pr.head)
            } over its stage's rejection (reason: ${s.mode.accept.reason}). Nothing was launched for this fix.`,
          }
          : {}),
      };
    case "sent-back":
      return done(
        "fix",
        `task ${sub.task}: sent back — fix brief ${
          s.sentBack!.fix
        } is open in NEXT-STEPS.md (round ${record.fixes.length}/${seen.fixRounds})`,
        {
          task: sub.task,
          fixTask: s.sentBack!.fix,
          why: s.sentBack!.why,
          refused: s.sentBack!.why.startsWith(GATE_REFUSED),
        },
      );
    case "with-person":
      return done(
        "human",
        `human path: ${pr.id} changes owner-accepted infra (${
          s.scope!.files.join(", ")
        }); a person reviews and merges it — relay never will`,
        { files: s.scope!.files },
      );
    case "promoted":
      return promotedEnd(s);
    case "nothing-to-merge": {
      const task = s.mode.kind === "merge" ? s.mode.task : undefined;
      return done(
        "idle",
        `nothing to merge: no report ${
          task === undefined ? "" : `for task ${task} `
        }on ${seen.remote}/${seen.main}; "relay status" shows which task is in flight`,
      );
    }
    case "merge-blocked":
      return done(
        "idle",
        `nothing to merge: task ${sub.report.task} is BLOCKED; "relay status" shows the options`,
      );
    case "merge-no-pr":
      return done(
        "idle",
        `nothing to merge: ${
          seen.pr ? `${seen.pr.id} is ${seen.pr.state}` : `no PR for ${sub.brief.branch}`
        }`,
      );
    case "merge-refused":
      return done(
        "waiting",
        `not merging ${pr.id}: the gate says ${s.decision!.decision}\n${s.gateText}`,
        { decision: s.decision },
      );
  }
}

function promotedEnd(s: PlannerState): PlannerEffect {
  const message = s.said!;
  if (s.merged) {
    return {
      kind: "done",
      result: {
        kind: "merged",
        task: s.seen!.subject!.task,
        sha: s.merged.sha,
        message,
        ...(s.mode.kind === "merge" ? { decision: s.decision } : {}),
      },
    };
  }
  // Said once, also under --quiet: a person merged or closed a PR and relay moved on.
  return { kind: "done", result: { kind: s.noticed ? "settled" : "idle", message } };
}

/** A send-back, or the HOLD once the task has had its fix rounds. */
function sendBack(s: PlannerState, findings: Finding[], why: string): PlannerEffect {
  const record = s.record!;
  const seen = s.seen!;
  const task = seen.subject!.task;
  const pr = seen.pr!;
  if (record.fixes.length >= seen.fixRounds) {
    return {
      kind: "record-hold",
      reason:
        `task ${task} was sent back ${record.fixes.length} time(s) and still does not pass (${why.trim()})`,
      next:
        `Read the findings (relay show ${task}) and the report on main. Either fix ${pr.branch} by hand and queue a fix brief (Kind: fix, Fixes: ${task}, Branch: ${pr.branch}), then run "relay resume"; or give up with relay close ${task} --reason "…" (closes ${pr.id} unmerged, promotes the next brief, clears this HOLD).`,
    };
  }
  return { kind: "send-back", findings, why };
}

function humanFiles(decision: GateDecision | null): string[] {
  return decision?.checks.flatMap((c) => c.result === "HUMAN" ? c.files ?? [] : []) ?? [];
}

function waitReasons(decision: GateDecision): string {
  return decision.checks.filter((c) => c.result === "WAIT").map((c) => c.reason).join("; ");
}

function refusals(decision: GateDecision): Finding[] {
  return decision.checks.filter((c) => c.result === "REFUSE").map((c) => ({
    severity: "blocker" as const,
    text: `${c.name}: ${c.reason}`,
  }));
}

/** What an acceptance would act on, as `--intent-only` prints it. */
export function describeIntent(i: Intent): string[] {
  return [
    `task ${i.task}: ${i.action} ${i.pr} at ${i.head} (tree ${i.tree})`,
    `onto main at ${i.main}`,
    ...(i.receipts.length
      ? i.receipts.map((r) => `receipt ${r.stage}: ${r.result} (${r.digest.slice(0, 16)})`)
      : ["no receipts for this head"]),
    ...(i.findings.length ? i.findings.map((f) => `open finding: ${f}`) : ["open findings: none"]),
    ...i.verifications.map((v) => `verified by a person: ${v}`),
    ...(i.overrides ?? []).map((o) => `accepted over a rejection: ${o}`),
    ...(i.notRun?.length
      ? [`never ran on this head (the rejection sent it back first): ${i.notRun.join(", ")}`]
      : []),
    ...(i.infra.length
      ? [`owner-accepted infra, merged only because a person accepts it: ${i.infra.join(", ")}`]
      : []),
    `${i.action === "accept" ? "reason" : "note"}: ${i.reason ?? "(none)"}`,
  ];
}

function intentText(s: PlannerState): string {
  const { intent, digest } = s.intent!;
  const task = intent.task;
  const does = intent.action === "accept"
    ? `merges ${intent.pr} through the gate and promotes the next brief`
    : s.record!.fixes.length >= s.seen!.fixRounds
    ? `would send task ${task} back, but it has had its ${
      s.seen!.fixRounds
    } fix round(s): rejecting is refused (relay close ${task} gives up on it)`
    : `sends task ${task} back to the executor with a fix brief that carries the note (fix round ${
      s.record!.fixes.length + 1
    } of ${s.seen!.fixRounds})`;
  const flag = intent.action === "accept"
    ? `${intent.overrides ? " --override-rejection" : ""}${
      intent.reason === null ? "" : ` --reason ${JSON.stringify(intent.reason)}`
    }`
    : ` --text ${JSON.stringify(intent.reason ?? "")}`;
  return [
    `intent: ${digest}`,
    ...describeIntent(intent).map((l) => `  ${l}`),
    `${
      intent.action === "accept" ? "accepting" : "rejecting"
    } ${does}; to do it: relay ${intent.action} ${task} --expect ${digest}${flag}`,
  ].join("\n");
}

function staleText(s: PlannerState): string {
  const { intent, digest, changed } = s.intent!;
  const ask = (s.mode as { accept: AcceptRequest }).accept;
  if (s.decision && s.decision.base !== intent.main) {
    return [
      `refused: main moved while accepting task ${intent.task}: the digest covered ${intent.main}, the merge would land on ${s.decision.base}`,
      `nothing was merged; look again with relay accept ${intent.task} --intent-only`,
    ].join("\n");
  }
  return [
    `refused: task ${intent.task} no longer yields digest ${ask.expect}; it yields ${digest}`,
    ...(changed.length ? changed.map((c) => `  changed: ${c}`) : [
      `  the intent of ${ask.expect} is not on record here: compare with relay ${intent.action} ${intent.task} --intent-only`,
    ]),
    `nothing was ${
      intent.action === "accept" ? "merged" : "sent back"
    }; look again with relay ${intent.action} ${intent.task} --intent-only`,
  ].join("\n");
}

/** Who merged a PR relay did not merge in this clone: a person, or (split) another machine's relay. */
function byWhom(pr: { mergedBy?: "relay" }): string {
  return pr.mergedBy === "relay" ? "by relay on another machine" : "outside relay";
}
