/**
 * The `run-stage` effect: a stage after review, on the PR head its PASS is
 * for. `finish` is relay's own checks, no model: the verification bar as
 * relay ran it on this head, whether the head merges cleanly with main, and
 * the profile's `test_command` run by relay in a throwaway checkout. `polish`,
 * `docs` and `security` are reviewer-style turns (review_turn.ts): a
 * disposable checkout, a procedure from `.relay/` on main, a verdict; a turn
 * that changes its checkout is void. Each reports one fact, the stage's run.
 */
import { join } from "../../path.ts";
import { runCommand, truncateOutput } from "../../bar/run.ts";
import { inScratchCheckout } from "../../git/scratch.ts";
import { sameCommand } from "../../protocol/bar.ts";
import { runId as newRunId } from "../../state/run_id.ts";
import type { Finding, PostStage } from "../../state/reviews.ts";
import type { PlannerEvent } from "../../task/planner.ts";
import { type PlanContext, prOf, ready, subjectOf } from "./context.ts";
import { runReviewerTurn } from "./review_turn.ts";

const short = (sha: string) => sha.slice(0, 12);

export async function runStage(
  ctx: PlanContext,
  stage: PostStage,
  emit: (e: PlannerEvent) => Promise<void>,
): Promise<PlannerEvent | void> {
  if (stage === "finish") return runFinish(ctx);
  // The preview answered before the review turn: the stage's turn gets its address too.
  const { previewUrl } = await import("./preview.ts");
  const url = await previewUrl(ctx).catch(() => null);
  return await runReviewerTurn(ctx, emit, stage, url ?? undefined);
}

/** The finish stage: relay's own checks of the head, no agent. */
export async function runFinish(ctx: PlanContext): Promise<PlannerEvent> {
  const { primary, config, profile } = ready(ctx);
  const pr = prOf(ctx);
  const s = subjectOf(ctx);
  const runId = newRunId(`finish${s.task}`);
  const runDir = join(ctx.state.runs, runId);
  await Deno.mkdir(runDir, { recursive: true });
  const tree = await primary.treeOf(pr.head);
  const findings: Finding[] = [];
  const said: string[] = [];

  // The bar, as relay itself ran it on this head's tree when the executor shipped it.
  const unproven = s.brief.bar.filter((command) =>
    !s.report.evidence.some((e) =>
      sameCommand(e.command, command) && e.exit === 0 && e.tree === tree
    )
  );
  if (unproven.length) {
    findings.push({
      severity: "blocker",
      text: `relay has no passing run on this head's tree of: ${unproven.join(", ")}`,
    });
  } else said.push(`bar: ${s.brief.bar.length} command(s) passed on this tree (relay's run)`);

  // Whether it still merges with main as main is now: said, not judged (the gate decides).
  const merge = await primary.mergeTree(s.originMain, pr.head);
  said.push(
    merge.code === 0
      ? `merges cleanly with main ${short(s.originMain)}`
      : `conflicts with main ${short(s.originMain)} (the gate decides)`,
  );

  const testCommand = profile.testCommand ?? null;
  if (testCommand === null) {
    said.push("test_command: none set in the operator profile");
  } else {
    const run = await inScratchCheckout(
      primary,
      pr.head,
      { prefix: "relay-finish-" },
      (dir) => runCommand(testCommand, dir, config.timeouts.barMs, config.barEnv),
    );
    await Deno.writeTextFile(
      join(runDir, "finish.log"),
      `$ ${testCommand}\n${run.output}\n[exit ${run.exit} after ${run.durationMs} ms]\n`,
    );
    if (run.exit === 0) {
      said.push(`test_command \`${testCommand}\` exit 0 (${Math.round(run.durationMs / 1000)}s)`);
    } else {
      findings.push({
        severity: "blocker",
        text: `test_command \`${testCommand}\` ${
          run.timedOut ? "timed out" : `exits ${run.exit}`
        } on ${short(pr.head)}: ${
          truncateOutput(run.output, 1500).split("\n").slice(-15).join(" | ")
        }`,
      });
    }
  }
  ctx.log.step(
    `task ${s.task}: finish stage ${findings.length ? "FAIL" : "PASS"}: ${said.join("; ")}`,
  );
  return {
    kind: "stage-ran",
    run: {
      stage: "finish",
      runId,
      at: new Date().toISOString(),
      reportTask: s.report.task,
      head: pr.head,
      tree,
      result: findings.length ? "FAIL" : "PASS",
      findings,
      detail: said.join("; "),
    },
  };
}
