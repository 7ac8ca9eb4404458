/**
 * The plain forge's PR records on the remote, for `machines: split`: the
 * executor and the reviewer run on different machines, so a record in one
 * clone's `.git/relay/prs/` would be invisible to the other.
 *
 * `refs/relay/prs/<branch>` points at a commit (empty tree) whose message is
 * the whole record as JSON. Every change — opened, new head, a verdict
 * appended, merged, closed — is a new commit whose parent is the record it
 * changed, pushed without force: a push made from a stale read is not a
 * fast-forward and is refused, and the change is re-read and made again. The
 * ref's history is the PR's history. Reads come from the mirror the tick's
 * one fetch filled (`refs/relay-remote/prs/…`, lib/git/lease.ts), all in one
 * `for-each-ref`.
 */
import type { Git } from "../git/git.ts";
import { emptyTree, MIRROR_PREFIX, mirrorOf, RELAY_REFSPECS } from "../git/lease.ts";
import { classifyPush, type PushOutcome } from "../git/push_outcome.ts";
import { redact } from "../proc/redact.ts";
import type { PlainPrRecord } from "./plain_executor.ts";

export type RemotePrRecord = PlainPrRecord & {
  reviews?: { head: string; text: string; at: string }[];
};

export function recordRef(branch: string): string {
  return `refs/relay/prs/${branch}`;
}

/** How an update ended: pushed (with the record it wrote), or the push's outcome. */
export interface UpdateResult {
  ok: boolean;
  outcome: PushOutcome;
  record: RemotePrRecord | null;
}

export class RemoteRecords {
  constructor(private readonly git: Git, private readonly remote: string) {}

  /** Fetches the remote's records and leases into the mirror (with main, in one fetch). */
  async refresh(): Promise<void> {
    await this.git.fetch(this.remote, {
      refspecs: [
        `+refs/heads/*:refs/remotes/${this.remote}/*`,
        ...RELAY_REFSPECS,
      ],
    });
  }

  /** Every record as of the last fetch, by branch, in one `for-each-ref`. */
  async list(): Promise<RemotePrRecord[]> {
    const out = await this.git.out([
      "for-each-ref",
      "--format=%(objectname)%00%(contents)%00",
      `${MIRROR_PREFIX}prs/`,
    ]);
    const fields = out.split("\0");
    const records: RemotePrRecord[] = [];
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const record = parse(fields[i + 1]!);
      if (record) records.push(record);
    }
    return records.sort((a, b) => a.branch.localeCompare(b.branch));
  }

  /** The record for `branch` as of the last fetch, with the commit it is. */
  async read(branch: string): Promise<{ sha: string; record: RemotePrRecord | null } | null> {
    const ref = mirrorOf(recordRef(branch));
    const sha = await this.git.resolve(ref);
    if (!sha) return null;
    const text = await this.git.out(["log", "-1", "--format=%B", sha, "--"]);
    return { sha, record: parse(text) };
  }

  /**
   * Changes the record for `branch` with `change` (given the current one, or null) and
   * pushes it as a fast-forward on top of what it changed; `also` refspecs go in the same
   * atomic push (the branch it records, a merge onto main). A push that lost to another
   * machine's update of the record is re-fetched and made again, up to three times; any
   * other outcome is returned for the caller to judge.
   */
  async update(
    branch: string,
    change: (current: RemotePrRecord | null) => RemotePrRecord | null,
    also: readonly string[] = [],
  ): Promise<UpdateResult> {
    let outcome: PushOutcome = { kind: "ok" } as PushOutcome;
    for (let attempt = 1; attempt <= 3; attempt++) {
      const current = await this.read(branch);
      const next = change(current?.record ?? null);
      if (next === null) return { ok: true, outcome: { kind: "ok" } as PushOutcome, record: null };
      const sha = await this.git.out(
        [
          "commit-tree",
          await emptyTree(this.git),
          ...(current ? ["-p", current.sha] : []),
          "-F",
          "-",
        ],
        { stdin: JSON.stringify(next) + "\n" },
      );
      const ref = recordRef(branch);
      const res = await this.git.pushRefs(this.remote, [...also, `${sha}:${ref}`], {
        atomic: also.length > 0,
      });
      // In an atomic push the refs that were fine say "atomic push failed": the cause is the other.
      const said = res.stderr.split("\n").filter((l) => !l.includes("atomic push failed"));
      outcome = classifyPush(res.ok, said.join("\n"));
      if (outcome.kind === "ok") {
        await this.git.updateRef(mirrorOf(ref), sha, "relay: PR record pushed").catch(() => {});
        return { ok: true, outcome, record: next };
      }
      if (!recordRaced(res.stderr, ref)) break;
      await this.refresh();
    }
    return { ok: false, outcome, record: null };
  }
}

/** True when the push was refused because the record ref moved (another machine's update). */
function recordRaced(stderr: string, ref: string): boolean {
  return stderr.split("\n").some((line) =>
    line.includes(`:${ref}\t`) && /non-fast-forward|fetch first|failed to update ref/.test(line)
  );
}

function parse(text: string): RemotePrRecord | null {
  try {
    const data = JSON.parse(text.trim()) as RemotePrRecord;
    return typeof data?.branch === "string" && typeof data.head === "string" ? data : null;
  } catch {
    return null;
  }
}

/** A verdict's text as the record keeps it: redacted like everything relay writes. */
export function recordText(text: string): string {
  return redact(text);
}
