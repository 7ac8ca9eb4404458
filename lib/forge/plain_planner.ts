/**
 * The plain-git forge, planner side: merging is building the merge commit
 * with `git merge-tree` + `git commit-tree` and pushing it to main without
 * force — a push that only lands when main is still the parent it was built
 * on, which is the compare-and-swap. Nothing touches a working tree.
 */
import { readRefFile } from "../git/discover.ts";
import { type Git, REUSE_FETCH_MS } from "../git/git.ts";
import { HoldError, RetryError } from "../errors.ts";
import {
  classifyPush,
  describePush,
  failureAdvice,
  type PushOutcome,
  refusalAdvice,
} from "../git/push_outcome.ts";
import { readJson, writeJson } from "../state/json_file.ts";
import { redact } from "../proc/redact.ts";
import { PAPERWORK_PATHS } from "../state/paths.ts";
import { openPlainPrs, plainPrPath, type PlainPrRecord } from "./plain_executor.ts";
import type { PlannerForge, PrStatus } from "./types.ts";
import type { RemotePrRecord, RemoteRecords } from "./remote_records.ts";

function toStatus(r: PlainPrRecord): PrStatus {
  return {
    id: r.id,
    branch: r.branch,
    head: r.head,
    state: r.state,
    ...(r.mergedBy ? { mergedBy: r.mergedBy } : {}),
  };
}

export class PlainPlannerForge implements PlannerForge {
  readonly name = "plain";
  constructor(
    private readonly git: Git,
    private readonly remote: string,
    private readonly main: string,
    private readonly prsDir: string,
    /** `machines: split`: the records are refs on the remote (lib/forge/remote_records.ts). */
    private readonly records?: RemoteRecords,
    /**
     * The git common dir: a branch's head is then read from its ref file, with no process
     * (`relay gate` asks once, after its fetch); else, or when the file says nothing, git.
     */
    private readonly commonDir?: string,
  ) {}

  async find(branch: string): Promise<PrStatus | null> {
    const record = this.records
      ? (await this.records.read(branch))?.record ?? null
      : await readJson<PlainPrRecord>(plainPrPath(this.prsDir, branch));
    if (!record) return null;
    // The forge's head is what the remote has for the branch now.
    const ref = `refs/remotes/${this.remote}/${branch}`;
    const head = (this.commonDir !== undefined ? readRefFile(this.commonDir, ref) : null) ??
      await this.git.resolve(ref);
    return { ...toStatus(record), head: head ?? record.head };
  }

  async listOpen(): Promise<PrStatus[]> {
    if (this.records) {
      return (await this.records.list()).filter((r) => r.state === "open").map(toStatus);
    }
    return openPlainPrs(this.prsDir).map(toStatus);
  }

  async merge(pr: PrStatus, head: string, message: string, gatedBase?: string) {
    // A push that main moved under is retried from a fresh fetch — as long as main moved
    // only by paperwork since the gate looked; product commits need the gate again.
    for (let attempt = 1; attempt <= 3; attempt++) {
      // The gate's fetch a moment ago stands for the first try; a push that lost a race fetches.
      await this.git.fetch(this.remote, attempt === 1 ? { reuseMs: REUSE_FETCH_MS } : {});
      const remoteHead = await this.git.resolve(`refs/remotes/${this.remote}/${pr.branch}`);
      if (remoteHead !== head) {
        const at = remoteHead?.slice(0, 12) ?? "nothing";
        return {
          merged: false as const,
          why: `${pr.branch} is at ${at}, not ${head.slice(0, 12)}`,
        };
      }
      const base = await this.git.resolve(`refs/remotes/${this.remote}/${this.main}`);
      if (!base) {
        return { merged: false as const, why: `${this.remote}/${this.main} does not exist` };
      }
      // A head main already has was merged (by a person, by hand): never merge it twice.
      if (await this.git.isAncestor(head, base)) {
        return {
          merged: false as const,
          why: `${head.slice(0, 12)} is already in ${this.remote}/${this.main}`,
        };
      }
      if (gatedBase && base !== gatedBase && !(await this.onlyPaperwork(gatedBase, base))) {
        return {
          merged: false as const,
          why: `${this.remote}/${this.main} moved by product code since the gate`,
        };
      }
      const tree = await this.git.mergeTree(base, head);
      if (tree.code !== 0) return { merged: false as const, why: "the merge has conflicts" };
      const sha = await this.git.out(
        ["commit-tree", tree.tree, "-p", base, "-p", head, "-F", "-"],
        { stdin: redact(message) + "\n" },
      );
      let outcome: PushOutcome;
      if (this.records) {
        // Split: main and the record that says merged move in one atomic push.
        const now = new Date().toISOString();
        const res = await this.records.update(
          pr.branch,
          (r) => r && { ...r, state: "merged", head, updated: now, mergedBy: "relay" },
          [`${sha}:refs/heads/${this.main}`],
        );
        if (res.ok && res.record) return { merged: true as const, sha };
        if (res.ok) return { merged: false as const, why: `no PR record for ${pr.branch}` };
        outcome = res.outcome;
      } else {
        const push = await this.git.push(this.remote, sha, `refs/heads/${this.main}`);
        if (push.ok) {
          await this.setState(pr.branch, "merged", head);
          return { merged: true as const, sha };
        }
        outcome = classifyPush(false, push.stderr);
      }
      // A race (main moved before or while the push landed) is worth another try, and an
      // unreachable remote is the next tick's to retry; a remote that refuses the merge
      // (protected branch, hook, credentials) will refuse it every minute: a person decides.
      if (outcome.kind === "unreachable") {
        return { merged: false as const, why: describePush(outcome) };
      }
      if (outcome.kind === "refused" || outcome.kind === "failed") {
        const ref = `${this.main}`;
        throw new HoldError(
          `Cannot merge ${pr.id}: pushing the merge to ${this.remote}/${this.main} failed: ${
            describePush(outcome)
          }`,
          outcome.kind === "refused"
            ? refusalAdvice(this.remote, ref)
            : failureAdvice(this.remote, ref, this.git.cwd),
        );
      }
    }
    return { merged: false as const, why: `${this.remote}/${this.main} kept moving while merging` };
  }

  /** True when nothing but the protocol files differs between two commits. */
  private async onlyPaperwork(a: string, b: string): Promise<boolean> {
    const res = await this.git.run(
      [
        "diff",
        "--quiet",
        "--no-ext-diff",
        a,
        b,
        "--",
        ".",
        ...PAPERWORK_PATHS.map((p) => `:(exclude,top)${p}`),
      ],
      { allowFail: true },
    );
    return res.code === 0;
  }

  async recordVerdict(pr: PrStatus, head: string, text: string): Promise<void> {
    if (this.records) {
      const at = new Date().toISOString();
      await this.remoteUpdate(
        pr.branch,
        (r) => r && { ...r, reviews: [...(r.reviews ?? []), { head, text: redact(text), at }] },
      );
      return;
    }
    const path = plainPrPath(this.prsDir, pr.branch);
    const record = await readJson<
      PlainPrRecord & { reviews?: { head: string; text: string; at: string }[] }
    >(path);
    if (!record) return;
    record.reviews = [...(record.reviews ?? []), { head, text, at: new Date().toISOString() }];
    await writeJson(path, record);
  }

  async close(pr: PrStatus, _comment: string): Promise<void> {
    await this.setState(pr.branch, "closed", pr.head);
  }

  async noteMerged(pr: PrStatus): Promise<void> {
    await this.setState(pr.branch, "merged", pr.head);
  }

  private async setState(
    branch: string,
    state: PlainPrRecord["state"],
    head: string,
  ): Promise<void> {
    if (this.records) {
      const updated = new Date().toISOString();
      await this.remoteUpdate(branch, (r) => r && { ...r, state, head, updated });
      return;
    }
    const path = plainPrPath(this.prsDir, branch);
    const record = await readJson<PlainPrRecord>(path);
    if (!record) return;
    await writeJson(path, { ...record, state, head, updated: new Date().toISOString() });
  }

  /** A change to the record on the remote; one that cannot land is the next tick's (or a HOLD). */
  private async remoteUpdate(
    branch: string,
    change: (r: RemotePrRecord | null) => RemotePrRecord | null,
  ): Promise<void> {
    const res = await this.records!.update(branch, change);
    if (res.ok) return;
    const ref = `refs/relay/prs/${branch}`;
    if (res.outcome.kind === "refused" || res.outcome.kind === "failed") {
      throw new HoldError(
        `Cannot update the PR record ${ref} on ${this.remote}: ${describePush(res.outcome)}`,
        res.outcome.kind === "refused"
          ? refusalAdvice(this.remote, ref)
          : failureAdvice(this.remote, ref, this.git.cwd),
      );
    }
    throw new RetryError(
      `Cannot update the PR record ${ref} on ${this.remote} yet: ${describePush(res.outcome)}`,
    );
  }
}
