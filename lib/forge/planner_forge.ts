/** The planner's forge, chosen by the repo config. Executor code never imports this file. */
import type { RepoConfig } from "../config/repo_load.ts";
import type { Git } from "../git/git.ts";
import { PlainPlannerForge } from "./plain_planner.ts";
import type { PlannerForge } from "./types.ts";
import { RemoteRecords } from "./remote_records.ts";

/** The GitHub forge's module (gh's JSON read through zod) loads only when the config names it. */
export async function plannerForge(
  config: RepoConfig,
  git: Git,
  prsDir: string,
  /** The git common dir, for a command that reads a branch's head once (PlainPlannerForge). */
  commonDir?: string,
): Promise<PlannerForge> {
  if (config.forge === "github") {
    const { GitHubPlannerForge } = await import("./github_planner.ts");
    return new GitHubPlannerForge(git.cwd, config.timeouts.networkMs);
  }
  const records = config.machines === "split" ? new RemoteRecords(git, config.remote) : undefined;
  return new PlainPlannerForge(git, config.remote, config.main, prsDir, records, commonDir);
}
