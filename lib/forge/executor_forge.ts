/** The executor's forge, chosen by the repo config. Only executor-side adapters are reachable from here. */
import type { RepoConfig } from "../config/repo.ts";
import type { Git } from "../git/git.ts";
import { GitHubExecutorForge } from "./github_executor.ts";
import { PlainExecutorForge } from "./plain_executor.ts";
import type { ExecutorForge } from "./types.ts";
import { RemoteRecords } from "./remote_records.ts";

export function executorForge(config: RepoConfig, git: Git, prsDir: string): ExecutorForge {
  if (config.forge === "github") {
    return new GitHubExecutorForge(git, config.remote, config.main, config.timeouts.networkMs);
  }
  const records = config.machines === "split" ? new RemoteRecords(git, config.remote) : undefined;
  return new PlainExecutorForge(git, config.remote, prsDir, records);
}
