/**
 * Git for tests that make their own repositories: a pinned identity and no system or global
 * config (GIT_ENV), and `git(cwd, ...args)` run with it, stdout trimmed, stderr in the error.
 */
export const GIT_ENV: Readonly<Record<string, string>> = {
  GIT_AUTHOR_NAME: "T",
  GIT_AUTHOR_EMAIL: "t@test.invalid",
  GIT_COMMITTER_NAME: "T",
  GIT_COMMITTER_EMAIL: "t@test.invalid",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
};

/**
 * A new repository on main whose own config names the committer: relay's Git (which reads
 * the environment a test runs in, no global config here) commits in it as T.
 */
export async function initRepo(dir: string): Promise<void> {
  await git(dir, "init", "--quiet", "--initial-branch=main");
  await identify(dir);
}

/** Names the committer in a repository's own config (see initRepo), unsigned. */
export async function identify(dir: string): Promise<void> {
  await git(dir, "config", "user.name", "T");
  await git(dir, "config", "user.email", "t@test.invalid");
  await git(dir, "config", "commit.gpgsign", "false");
}

export async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", {
    args,
    cwd,
    env: GIT_ENV,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (out.code !== 0) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return new TextDecoder().decode(out.stdout).trim();
}
