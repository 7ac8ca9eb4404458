/**
 * The GitHub forge, planner side. Merging is `gh pr merge --merge
 * --match-head-commit <sha>`: GitHub merges server side only while the PR head
 * is still the reviewed sha (the compare-and-swap), and refuses with "Head
 * branch was modified" otherwise. relay never passes `--admin`, `--auto` or
 * `--delete-branch`, and never forces anything.
 */
import { confirmLease } from "../git/lease_guard.ts";
import { z } from "zod";
import { findPr, Gh, GH_TIMEOUT_MS, type GhPr, listRelayOpen, prNumber } from "./gh.ts";
import type { PlannerForge, PrStatus } from "./types.ts";

const afterMerge = z.object({
  state: z.enum(["OPEN", "MERGED", "CLOSED"]),
  headRefOid: z.string(),
  mergeCommit: z.object({ oid: z.string().regex(/^[0-9a-f]{40}$/) }).nullable(),
});

/** What GitHub (through gh) says when the compare-and-swap fails or the PR cannot merge now. */
const MOVED = /Head branch was modified|Base branch was modified/i;
const NOT_MERGEABLE = /is not mergeable[^\n]*/i;

function toStatus(pr: GhPr): PrStatus {
  return {
    id: `#${pr.number}`,
    branch: pr.headRefName,
    head: pr.headRefOid,
    state: pr.state === "OPEN" ? "open" : pr.state === "MERGED" ? "merged" : "closed",
    url: pr.url,
  };
}

export class GitHubPlannerForge implements PlannerForge {
  readonly name = "github";
  private readonly gh: Gh;
  /** `gh` runs in `cwd` (a tree of the repository); tests pass their own Gh. */
  constructor(cwd: string, timeoutMs: number = GH_TIMEOUT_MS, gh?: Gh) {
    this.gh = gh ?? new Gh(cwd, timeoutMs);
  }

  /** The open PR for the branch; else the newest merged or closed one; else null. */
  async find(branch: string): Promise<PrStatus | null> {
    const pick = await findPr(this.gh, branch);
    return pick ? toStatus(pick) : null;
  }

  /** Open PRs from relay's own `task-<n>` branches (see {@link listRelayOpen} for why only those). */
  async listOpen(): Promise<PrStatus[]> {
    return (await listRelayOpen(this.gh)).map(toStatus);
  }

  /**
   * `gatedBase` is not enforced here: gh can pin the head (--match-head-commit) but not the
   * base. GitHub's own branch protection ("require branches to be up to date") covers that.
   */
  async merge(
    pr: PrStatus,
    head: string,
    message: string,
    _gatedBase?: string,
  ): Promise<{ merged: true; sha: string } | { merged: false; why: string }> {
    const number = prNumber(pr.id);
    if (!/^[0-9a-f]{40}$/.test(head)) {
      throw new Error(`Cannot merge ${pr.id} at "${head}": expected a full 40-character sha`);
    }
    const [subject = "", ...rest] = message.trim().split("\n");
    const args = [
      "pr",
      "merge",
      number,
      "--merge",
      "--match-head-commit",
      head,
      "--subject",
      subject.trim(),
      "--body",
      rest.join("\n").trim(),
    ];
    await confirmLease();
    const res = await this.gh.run(args, { allowFail: true });
    if (res.code !== 0) {
      const said = res.stderr + res.stdout;
      if (MOVED.test(said)) {
        return {
          merged: false,
          why: `${pr.id} moved: GitHub refused to merge it at ${head.slice(0, 12)} (${
            firstLine(said)
          })`,
        };
      }
      const refused = NOT_MERGEABLE.exec(said);
      if (refused) return { merged: false, why: `GitHub says ${pr.id} ${refused[0].trim()}` };
      throw this.gh.failure(args, res);
    }
    // gh exits 0 without merging when it only queued the PR (merge queue) or the PR was
    // merged already; the PR's state says which.
    const after = await this.gh.json(
      ["pr", "view", number, "--json", "state,mergeCommit,headRefOid"],
      afterMerge,
    );
    if (after.state !== "MERGED" || after.mergeCommit === null) {
      return {
        merged: false,
        why:
          `gh pr merge exited 0 but ${pr.id} is ${after.state} (held by a merge queue or a rule?)`,
      };
    }
    if (after.headRefOid !== head) {
      return {
        merged: false,
        why: `${pr.id} was merged at ${after.headRefOid.slice(0, 12)}, not at the reviewed ${
          head.slice(0, 12)
        }`,
      };
    }
    return { merged: true, sha: after.mergeCommit.oid };
  }

  /**
   * A COMMENT review, not APPROVE / REQUEST_CHANGES: GitHub refuses those two
   * on your own PR, and the reviewer often runs as the account that opened it.
   */
  async recordVerdict(pr: PrStatus, head: string, text: string): Promise<void> {
    const body = text.includes(head) ? text : `${text.trimEnd()}\n\n(relay reviewed head ${head})`;
    // As a plain forge's verdict, which is a guarded push: a tick that lost its lease says nothing.
    await confirmLease();
    await this.gh.run(
      ["pr", "review", prNumber(pr.id), "--comment", "--body-file", "-"],
      { stdin: body },
    );
  }

  /** `gh pr close` (never --delete-branch: the branch and its commits stay). */
  async close(pr: PrStatus, comment: string): Promise<void> {
    await confirmLease();
    await this.gh.run(["pr", "close", prNumber(pr.id), "--comment", comment]);
  }

  /** GitHub already knows a PR merged out of band; nothing to record. */
  noteMerged(_pr: PrStatus): Promise<void> {
    return Promise.resolve();
  }
}

function firstLine(text: string): string {
  return text.trim().split("\n").map((l) => l.trim()).find((l) => l !== "") ?? "";
}
