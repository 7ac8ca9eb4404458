/** The executor's forge, chosen by the repo config. Only executor-side adapters are reachable from here. */
import type { RepoConfig } from "../config/repo.ts";
import type { Git } from "../git/git.ts";
import { GitHubExecutorForge } from "./github_executor.ts";
import { PlainExecutorForge } from "./plain_executor.ts";
import type { ExecutorForge } from "./types.ts";

export function executorForge(config: RepoConfig, git: Git, prsDir: string): ExecutorForge {
  if (config.forge === "github") {
    return new GitHubExecutorForge(git, config.remote, config.main, config.timeouts.networkMs);
  }
  return new PlainExecutorForge(git, config.remote, prsDir);
}
