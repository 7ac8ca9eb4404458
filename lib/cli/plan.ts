/**
 * `relay plan <task>`: the plan stage alone, on a queued brief (lib/loop/plan.ts).
 * The reviewer judges the brief before any work; the result is recorded, and a
 * FAIL's findings are written into the brief's inbox file. Exit 0 on PASS, 1 on
 * FAIL or when it could not run now, 3 when the turn must stop for a person.
 */
import { UsageError } from "../errors.ts";
import { type Context, parseCommand, requireRepo } from "./args.ts";

export async function plan(args: string[], ctx: Context): Promise<number> {
  const { positionals } = parseCommand("plan", args, {}, { min: 1, max: 1, names: "<task>" });
  const task = Number(positionals[0]);
  if (!Number.isInteger(task) || task <= 0) {
    throw new UsageError(`"${positionals[0]}" is not a task number`, "plan");
  }
  const repo = requireRepo(ctx);
  const { loadRepoConfig } = await import("../config/repo_load.ts");
  const { loadProfile, profilePath } = await import("../config/profile_load.ts");
  const { Git } = await import("../git/git.ts");
  const { statePaths } = await import("../state/paths.ts");
  const { stderrLog } = await import("../proc/log.ts");
  const { requireRoleProgram } = await import("../agents/turn.ts");
  const { runPlan } = await import("../loop/plan.ts");
  const config = await loadRepoConfig(repo.root);
  const profile = await loadProfile(profilePath(ctx.profile));
  await requireRoleProgram("reviewer", profile.roles.reviewer, profile.path);
  const state = statePaths(repo.commonDir);
  const tick = {
    repo,
    state,
    log: stderrLog,
    progress: "plain" as const,
    primary: new Git(repo.root, config.timeouts.networkMs),
    config,
    profile,
  };
  // A reviewer-side turn writes relay's records: never beside a tick (their guards watch them).
  const { whileNoTickRuns } = await import("../state/lock.ts");
  const ran = await whileNoTickRuns(state, "plan", () => runPlan(tick, task, "person"));
  if (!ran) {
    console.log("busy: a tick is running; run relay plan again when it ends");
    return 1;
  }
  const outcome = ran.value;
  switch (outcome.kind) {
    case "PASS":
      console.log(
        `plan review PASS for task ${task} (brief ${
          outcome.run.brief.slice(0, 12)
        }): it may be promoted`,
      );
      for (const f of outcome.run.findings) console.log(`  [${f.severity}] ${f.text}`);
      return 0;
    case "FAIL":
      console.log(
        `plan review FAIL for task ${task}: the findings are under "## Plan review" in ${outcome.file}; edit the brief to answer them, then run relay plan ${task} again`,
      );
      for (const f of outcome.run.findings) console.log(`  [${f.severity}] ${f.text}`);
      return 1;
    case "busy":
      console.log(outcome.message);
      return 1;
    case "rounds-used":
      console.log(
        `not reviewed: task ${task} failed its plan review ${outcome.fails} time(s), its plan_rounds (${outcome.limit}); rewrite the brief and raise plan_rounds in .relay/config.yaml (within the operator profile's limits.plan_rounds), or turn plan_review off`,
      );
      return 1;
    case "held": {
      // Recorded like a tick's HOLD (with the run, for resume --retry-uncertain): both ticks
      // stop until a person answers it.
      const { recordHold } = await import("../loop/effects/hold.ts");
      const { reason, next, runId } = outcome;
      return await recordHold(state.hold, { kind: "record-hold", reason, next, runId, task }, task);
    }
  }
}
