/** The executor's forge, chosen by the repo config. Only executor-side adapters are reachable from here. */
import type { RepoConfig } from "../config/repo_load.ts";
import type { Git } from "../git/git.ts";
import { PlainExecutorForge } from "./plain_executor.ts";
import type { ExecutorForge } from "./types.ts";
import { RemoteRecords } from "./remote_records.ts";

/** The GitHub forge's module (gh's JSON read through zod) loads only when the config names it. */
export async function executorForge(
  config: RepoConfig,
  git: Git,
  prsDir: string,
): Promise<ExecutorForge> {
  if (config.forge === "github") {
    const { GitHubExecutorForge } = await import("./github_executor.ts");
    return new GitHubExecutorForge(git, config.remote, config.main, config.timeouts.networkMs);
  }
  const records = config.machines === "split" ? new RemoteRecords(git, config.remote) : undefined;
  return new PlainExecutorForge(git, config.remote, prsDir, records);
}
