/**
 * The plain-git forge, executor side. Any git remote works (a bare repo on
 * disk, ssh). A "PR" is the pushed task branch plus a record under
 * `.git/relay/prs/`, so opening one twice finds the first.
 */
import { join } from "node:path";
import type { Git } from "../git/git.ts";
import { branchPushHold, classifyPush, pushRetry } from "../git/push_outcome.ts";
import { readJson, writeJson } from "../state/json_file.ts";
import type { ExecutorForge, OpenPrRequest, PrRef } from "./types.ts";

export interface PlainPrRecord extends PrRef {
  task: number;
  base: string;
  title: string;
  state: "open" | "merged" | "closed";
  opened: string;
  updated: string;
}

/** The open PR records, by file name; none when the folder does not exist yet. */
export async function openPlainPrs(prsDir: string): Promise<PlainPrRecord[]> {
  // Deno.readDir, not node:fs/promises: loading that module costs ~50 ms on its own.
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(prsDir)) names.push(entry.name);
  } catch {
    return [];
  }
  const open: PlainPrRecord[] = [];
  for (const name of names.filter((n) => n.endsWith(".json")).sort()) {
    const record = await readJson<PlainPrRecord>(join(prsDir, name));
    if (record?.state === "open") open.push(record);
  }
  return open;
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
  ) {}

  async pushBranch(branch: string, head: string): Promise<void> {
    const res = await this.git.push(this.remote, head, `refs/heads/${branch}`);
    const outcome = classifyPush(res.ok, res.stderr);
    if (outcome.kind === "raced" || outcome.kind === "unreachable") {
      throw pushRetry(outcome, `"${branch}" to "${this.remote}"`);
    }
    if (outcome.kind !== "ok") throw branchPushHold(outcome, this.remote, branch, this.git.cwd);
  }

  async listOpen(): Promise<PrRef[]> {
    return (await openPlainPrs(this.prsDir)).map((r) => ({
      id: r.id,
      branch: r.branch,
      head: r.head,
    }));
  }

  async settled(branch: string): Promise<"merged" | "closed" | null> {
    const state = (await readJson<PlainPrRecord>(plainPrPath(this.prsDir, branch)))?.state;
    return state === "merged" || state === "closed" ? state : null;
  }

  async openPr(req: OpenPrRequest): Promise<PrRef> {
    const path = plainPrPath(this.prsDir, req.branch);
    const now = new Date().toISOString();
    const existing = await readJson<PlainPrRecord>(path);
    if (existing && existing.state === "open") {
      if (existing.head !== req.head) {
        await writeJson(path, { ...existing, head: req.head, updated: now });
      }
      return { id: existing.id, branch: existing.branch, head: req.head };
    }
    const record: PlainPrRecord = {
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
    await writeJson(path, record);
    return { id: record.id, branch: record.branch, head: record.head };
  }
}
