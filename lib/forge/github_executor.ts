/**
 * The GitHub forge, executor side: the task branch is pushed with git (never
 * forced) and the PR is opened with `gh pr create`. Opening is idempotent: an
 * open PR for the branch is found first and returned as it is.
 */
import { z } from "zod";
import type { Git } from "../git/git.ts";
import { branchPushHold, classifyPush, pushRetry } from "../git/push_outcome.ts";
import { confirmLease } from "../git/lease_guard.ts";
import { checkBranch, findPr, Gh, GH_TIMEOUT_MS, ghPr, listRelayOpen, PR_FIELDS } from "./gh.ts";
import type { ExecutorForge, OpenPrRequest, PrRef } from "./types.ts";

/** The URL `gh pr create` prints on stdout when stdout is not a terminal. */
const PR_URL = /^https?:\/\/\S+\/pull\/\d+$/m;

export class GitHubExecutorForge implements ExecutorForge {
  readonly name = "github";
  private readonly gh: Gh;
  /** `gh` runs in the git tree's folder; tests pass their own Gh. */
  constructor(
    private readonly git: Git,
    private readonly remote: string,
    /** The base branch; each OpenPrRequest names its own base. */
    readonly main: string,
    timeoutMs: number = GH_TIMEOUT_MS,
    gh?: Gh,
  ) {
    this.gh = gh ?? new Gh(git.cwd, timeoutMs);
  }

  async pushBranch(branch: string, head: string): Promise<void> {
    const res = await this.git.push(this.remote, head, `refs/heads/${branch}`);
    const outcome = classifyPush(res.ok, res.stderr);
    if (outcome.kind === "raced" || outcome.kind === "unreachable") {
      throw pushRetry(outcome, `"${branch}" to "${this.remote}"`);
    }
    if (outcome.kind !== "ok") throw branchPushHold(outcome, this.remote, branch, this.git.cwd);
  }

  /** Open PRs from relay's own `task-<n>` branches (see {@link listRelayOpen} for why only those). */
  async listOpen(): Promise<PrRef[]> {
    return (await listRelayOpen(this.gh)).map((p) => ({
      id: `#${p.number}`,
      branch: p.headRefName,
      head: p.headRefOid,
      url: p.url,
    }));
  }

  async settled(branch: string): Promise<"merged" | "closed" | null> {
    const pr = await findPr(this.gh, branch);
    return pr?.state === "MERGED" ? "merged" : pr?.state === "CLOSED" ? "closed" : null;
  }

  async openPr(req: OpenPrRequest): Promise<PrRef> {
    const branch = checkBranch(req.branch);
    const existing = await this.findOpen(branch);
    if (existing) return { id: `#${existing.number}`, url: existing.url, branch, head: req.head };

    const args = [
      "pr",
      "create",
      "--head",
      branch,
      "--base",
      req.base,
      "--title",
      req.title,
      "--body-file",
      "-",
    ];
    await confirmLease();
    const created = await this.gh.run(args, { stdin: req.body, allowFail: true });
    if (created.code !== 0) {
      // Another run opened it between our list and our create: take that one.
      if (!/already exists/.test(created.stderr)) throw this.gh.failure(args, created);
      const raced = await this.findOpen(branch);
      if (!raced) throw this.gh.failure(args, created);
      return { id: `#${raced.number}`, url: raced.url, branch, head: req.head };
    }
    const target = PR_URL.exec(created.stdout)?.[0] ?? branch;
    const pr = await this.gh.json(["pr", "view", target, "--json", PR_FIELDS], ghPr);
    if (pr.headRefName !== branch || pr.state !== "OPEN") {
      throw new Error(
        `Cannot confirm the PR gh created for "${branch}": ${target} is ${pr.state} on "${pr.headRefName}"`,
      );
    }
    return { id: `#${pr.number}`, url: pr.url, branch, head: req.head };
  }

  /** The open same-repository PR whose head is `branch`, or null. */
  private async findOpen(branch: string) {
    const prs = await this.gh.json(
      ["pr", "list", "--head", branch, "--state", "open", "--json", PR_FIELDS],
      z.array(ghPr),
    );
    const mine = prs
      .filter((p) => p.headRefName === branch && !p.isCrossRepository && p.state === "OPEN")
      .sort((a, b) => a.number - b.number);
    return mine[0] ?? null;
  }
}
