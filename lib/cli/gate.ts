/**
 * `relay gate [<task>] [--json]`: fetches, then runs the merge gate on the PR
 * that the report on origin/main names, and prints each check and the
 * decision. Exit 0 MERGE, 10 REFUSE, 11 HUMAN, 12 WAIT, 13 NONE (no PR to judge:
 * nothing reported, the PR merged or closed, the task BLOCKED). It never merges and
 * writes nothing but what `git fetch` writes (and, when main moved by product
 * code, a scratch worktree it removes again).
 */
import { loadRepoConfig, type RepoConfig } from "../config/repo_load.ts";
import { UsageError } from "../errors.ts";
import { readRefFile } from "../git/discover.ts";
import { Git, type GitObject } from "../git/git.ts";
import type { PreparedChecks } from "../gate/gate.ts";
import { statePaths } from "../state/paths.ts";
import { type Context, parseCommand, printJson, requireRepo } from "./args.ts";

export async function gate(args: string[], ctx: Context): Promise<number> {
  const { values, positionals } = parseCommand("gate", args, { json: { type: "boolean" } }, {
    min: 0,
    max: 1,
    names: "<task>",
  });
  let task: number | undefined;
  const given = positionals[0];
  if (given !== undefined) {
    if (!/^\d+$/.test(given) || Number(given) < 1) {
      throw new UsageError(`"${given}" is not a task number`, "gate");
    }
    task = Number(given);
  }
  const repo = requireRepo(ctx);
  const config = await loadRepoConfig(repo.root);
  const git = new Git(repo.root, config.timeouts.networkMs);
  // Split mode keeps the PR records on the remote: they come in the same fetch.
  const refspecs = config.machines === "split"
    ? [
      `+refs/heads/*:refs/remotes/${config.remote}/*`,
      ...(await import("../git/lease.ts")).RELAY_REFSPECS,
    ]
    : undefined;
  const fetched = git.fetch(config.remote, {
    maintenance: false,
    ...(refspecs ? { refspecs } : {}),
  });
  // The gate's modules load while git fetches (a literal import() each, for deno compile),
  // asked for once the fetch has started: loading them may take the main thread a while.
  const checks = import("../gate/gate.ts");
  const modules = Promise.all([import("../gate/load.ts"), checks, import("../gate/output.ts")]);
  modules.catch(() => {}); // awaited below, after the fetch and its errors
  // The checks' git work (the scope diff, the merge-tree) starts while git fetches too, for
  // main and the PR's branch as this clone has them: the fetch rarely moves them. Used only
  // if the fetch did not (the gate judges what the fetch brought), else left to end.
  const started = guessChecks(repo.commonDir, config, git, checks);
  try {
    await fetched;
    const [{ loadGateInput, NothingToGate }, { runGate }, output] = await modules;
    const { formatGate, gateExitCode, NOTHING_TO_GATE_EXIT } = output;
    const guess = await started;
    let loaded;
    try {
      loaded = await loadGateInput({
        git,
        commonDir: repo.commonDir,
        config,
        ...(task !== undefined ? { task } : {}),
        ...(guess ? { started: guess, mainRead: mainReadOf(guess) } : {}),
      });
    } catch (err) {
      if (!(err instanceof NothingToGate)) throw err;
      // An ordinary state, not an error: one line (or an object with a decision), exit 13.
      if (values.json) {
        printJson({
          task: err.task,
          pr: err.pr,
          decision: "NONE",
          reason: err.message,
          checks: [],
        });
      } else console.log(`gate: nothing to gate: ${err.message}\ndecision: NONE`);
      return NOTHING_TO_GATE_EXIT;
    }
    const { input, reviewTask } = loaded;
    const decision = await runGate(input);
    if (values.json) {
      printJson({
        task: input.report.task,
        reviewTask,
        pr: input.pr.id,
        branch: input.pr.branch,
        ...decision,
      });
    } else {
      console.log(
        `gate: PR ${input.pr.id} at ${
          decision.head.slice(0, 12)
        } onto ${config.remote}/${config.main} ${decision.base.slice(0, 12)}`,
      );
      console.log(formatGate(decision));
    }
    return gateExitCode(decision);
  } finally {
    // The guessed checks, used or not, have ended before the gate answers or throws.
    await (await started)?.settled;
  }
}

/**
 * Starts the checks for the one open plain PR and main as this clone has them before the
 * fetch (read from the ref files, no git process): undefined when there is no such guess
 * (another forge, split machines, no or several open PRs, a ref it cannot read).
 */
async function guessChecks(
  commonDir: string,
  config: RepoConfig,
  git: Git,
  checks: Promise<typeof import("../gate/gate.ts")>,
): Promise<PreparedChecks | undefined> {
  if (config.forge !== "plain" || config.machines !== "one") return undefined;
  try {
    const { openPlainPrs } = await import("../forge/plain_executor.ts");
    const open = openPlainPrs(statePaths(commonDir).prs);
    if (open.length !== 1) return undefined;
    const base = readRefFile(commonDir, `refs/remotes/${config.remote}/${config.main}`);
    const head = readRefFile(commonDir, `refs/remotes/${config.remote}/${open[0]!.branch}`);
    if (base === null || head === null) return undefined;
    // Main's report and brief come in the head commit's read: after the fetch, the gate reads
    // nothing more when main did not move.
    const { mainObjects } = await import("../gate/load.ts");
    return (await checks).prepareChecks(git, config, base, head, mainObjects(base));
  } catch {
    return undefined; // a guess: what goes wrong here is found again, and said, by the gate
  }
}

/**
 * Main's report and brief from the guess's read (see guessChecks). Handled here: the gate
 * awaits it only when the fetch left main at the guess's base, and a failed read must not
 * end relay as an unhandled rejection when it does not (main is then read again).
 */
function mainReadOf(
  guess: PreparedChecks,
): { base: string; objects: Promise<(GitObject | null)[]> } {
  const objects = guess.reading.then((r) => r.slice(1));
  objects.catch(() => {});
  return { base: guess.base, objects };
}
