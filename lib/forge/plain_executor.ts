/**
 * The plain-git forge, executor side. Any git remote works (a bare repo on
 * disk, ssh). A "PR" is the pushed task branch plus a record under
 * `.git/relay/prs/`, so opening one twice finds the first.
 */
import { join } from "../path.ts";
import type { Git } from "../git/git.ts";
import { branchPushHold, classifyPush, pushRetry } from "../git/push_outcome.ts";
import { readJson, readJsonSync, writeJson } from "../state/json_file.ts";
import type { ExecutorForge, OpenPrRequest, PrRef } from "./types.ts";
import { RemoteRecords } from "./remote_records.ts";

export interface PlainPrRecord extends PrRef {
  task: number;
  base: string;
  title: string;
  state: "open" | "merged" | "closed";
  opened: string;
  updated: string;
  /** `machines: split`: set when relay merged it (lib/forge/plain_planner.ts). */
  mergedBy?: "relay";
}

/**
 * The open PR records, by file name; none when the folder does not exist yet. Read without a
 * wait: a repository keeps one record for each task it ever ran, and every tick reads them all.
 */
export function openPlainPrs(prsDir: string): PlainPrRecord[] {
  const names: string[] = [];
  try {
    for (const entry of Deno.readDirSync(prsDir)) names.push(entry.name);
  } catch {
    return [];
  }
  const open: PlainPrRecord[] = [];
  for (const name of names.filter((n) => n.endsWith(".json")).sort()) {
    const record = readJsonSync<PlainPrRecord>(join(prsDir, name));
    if (record?.state === "open") open.push(record);
  }
  return open;
}

/**
 * The open PR records for a reader that only looks (`relay status`, `relay doctor`): the
 * files, or with `machines: split` the remote's as the last fetch mirrored them.
 */
export async function openPrRecords(
  prsDir: string,
  split?: { git: Git; remote: string },
): Promise<PlainPrRecord[]> {
  if (!split) return openPlainPrs(prsDir);
  const records = await new RemoteRecords(split.git, split.remote).list();
  return records.filter((r) => r.state === "open");
}

export function plainPrPath(prsDir: string, branch: string): string {
  return join(prsDir, `${branch.replaceAll("/", "__")}.json`);
}

export class PlainExecutorForge implements ExecutorForge {
  readonly name = "plain";
  constructor(
    private readonly git: Git,
    private readonly remote: string,
    private readonly prsDir: string,
    /** `machines: split`: the records are refs on the remote (lib/forge/remote_records.ts). */
    private readonly records?: RemoteRecords,
  ) {}

  async pushBranch(branch: string, head: string): Promise<void> {
    // Split: the branch goes in openPr's push, atomically with its record, so the other
    // machine never sees a record without its branch or a new head without its record.
    if (this.records) return;
    const res = await this.git.push(this.remote, head, `refs/heads/${branch}`);
    this.judge(classifyPush(res.ok, res.stderr), branch);
  }

  private judge(outcome: ReturnType<typeof classifyPush>, branch: string): void {
    if (outcome.kind === "raced" || outcome.kind === "unreachable") {
      throw pushRetry(outcome, `"${branch}" to "${this.remote}"`);
    }
    if (outcome.kind !== "ok") throw branchPushHold(outcome, this.remote, branch, this.git.cwd);
  }

  async listOpen(): Promise<PrRef[]> {
    const records = this.records
      ? (await this.records.list()).filter((r) => r.state === "open")
      : openPlainPrs(this.prsDir);
    return records.map((r) => ({
      id: r.id,
      branch: r.branch,
      head: r.head,
    }));
  }

  async settled(branch: string): Promise<"merged" | "closed" | null> {
    const state = this.records
      ? (await this.records.read(branch))?.record?.state
      : (await readJson<PlainPrRecord>(plainPrPath(this.prsDir, branch)))?.state;
    return state === "merged" || state === "closed" ? state : null;
  }

  async openPr(req: OpenPrRequest): Promise<PrRef> {
    if (this.records) return await this.openRemotePr(req, this.records);
    const path = plainPrPath(this.prsDir, req.branch);
    const now = new Date().toISOString();
    const existing = await readJson<PlainPrRecord>(path);
    if (existing && existing.state === "open") {
      if (existing.head !== req.head) {
        await writeJson(path, { ...existing, head: req.head, updated: now });
      }
      return { id: existing.id, branch: existing.branch, head: req.head };
    }
    const record = newRecord(req, now);
    await writeJson(path, record);
    return { id: record.id, branch: record.branch, head: record.head };
  }

  /** The branch and its record in one atomic push: both land, or neither. */
  private async openRemotePr(req: OpenPrRequest, records: RemoteRecords): Promise<PrRef> {
    const now = new Date().toISOString();
    const res = await records.update(req.branch, (existing) => {
      if (existing && existing.state === "open") {
        return existing.head === req.head ? null : { ...existing, head: req.head, updated: now };
      }
      return newRecord(req, now);
    }, [`${req.head}:refs/heads/${req.branch}`]);
    if (!res.ok) this.judge(res.outcome, req.branch);
    // The record already had this head: make sure the branch has it too (a no-op when it has).
    if (res.ok && res.record === null) {
      const push = await this.git.push(this.remote, req.head, `refs/heads/${req.branch}`);
      this.judge(classifyPush(push.ok, push.stderr), req.branch);
    }
    return { id: req.branch, branch: req.branch, head: req.head };
  }
}

/** The record of a PR just opened, in either place records live. */
function newRecord(req: OpenPrRequest, now: string): PlainPrRecord {
  return {
    id: req.branch,
    branch: req.branch,
    head: req.head,
    task: req.task,
    base: req.base,
    title: req.title,
    state: "open",
    opened: now,
    updated: now,
  };
}
