/**
 * Something reads the logs: each state change a person should hear of —
 * a HOLD (an uncertain turn among them), BLOCKED, DONE awaiting acceptance, a
 * PR sent back, the human path, a merge — goes to the operator profile's
 * notifiers, each an argv (no shell) run with the event as JSON on stdin.
 * Once per change, never per tick: the last key of each kind of change is
 * kept in `.git/relay/notified.json`. A notifier that fails or runs past its
 * limit is logged; it never fails the tick.
 */
import { join } from "../path.ts";
import { run } from "../proc/run.ts";
import { redact } from "../proc/redact.ts";
import { readJson, writeJson } from "../state/json_file.ts";

export type EventKind =
  | "hold"
  | "uncertain"
  | "blocked"
  | "acceptance"
  | "sent-back"
  /** Sent back because the merge gate refused the PR (before or after review). */
  | "refused"
  | "human-path"
  | "merged"
  /** A problem `relay doctor` found (one slot per problem, told once while it lasts). */
  | "doctor";

/** What a notifier reads on stdin. */
export interface RelayEvent {
  version: 1;
  at: string;
  kind: EventKind;
  repo: string;
  task: number | null;
  /** One line: what happened, as relay said it. */
  reason: string;
  /** The command (or step) that continues, when a person must act. */
  next: string | null;
  /** Where to look. */
  links: { status: string; show: string | null; log: string };
}

/** A change worth telling, and the key that tells it from the same state seen again. */
export interface Change {
  kind: EventKind;
  key: string;
  task: number | null;
  reason: string;
  next: string | null;
  /**
   * Where the last key is kept, when not one per kind and task: doctor's problems
   * each have their own, so several at once are each told once.
   */
  slot?: string;
}

const LIMIT_MS = 15_000;

/** The change a tick's result is, if any (idle, busy and waiting are not changes). */
export function changeOfResult(
  command: "poll" | "review",
  r: { kind: string; message: string; [k: string]: unknown },
  task: number | null,
): Change | null {
  const t = typeof r.task === "number" ? r.task : task;
  switch (r.kind) {
    case "blocked":
      return command === "poll"
        ? {
          kind: "blocked",
          key: `${t}:${r.message}`,
          task: t,
          reason: r.message,
          next: "relay status",
        }
        : null;
    case "merged":
      return {
        kind: "merged",
        key: String(r.sha ?? r.message),
        task: t,
        reason: r.message,
        next: null,
      };
    case "fix": {
      // The gate's REFUSE is its own kind: the PR was out of scope, not merely wrong.
      const why = typeof r.why === "string" ? r.why.trim() : "";
      return {
        kind: r.refused === true ? "refused" : "sent-back",
        key: `${t}:${r.fixTask ?? r.message}`,
        task: t,
        reason: why ? `${r.message} (${why})` : r.message,
        next: null,
      };
    }
    case "human": {
      const acceptance = r.message.startsWith("DONE awaiting acceptance");
      return {
        kind: acceptance ? "acceptance" : "human-path",
        key: `${t}:${r.message}`,
        task: t,
        reason: r.message,
        next: acceptance ? `relay accept ${t} --intent-only` : "a person reviews and merges the PR",
      };
    }
    default:
      return null;
  }
}

/** The change a HOLD on record is: keyed by when it was raised, so every tick after says nothing. */
export function changeOfHold(
  hold: { task: number; reason: string; next: string; at: string },
): Change {
  return {
    kind: /uncertain/.test(hold.reason) ? "uncertain" : "hold",
    key: hold.at,
    task: hold.task || null,
    reason: hold.reason,
    next: hold.next,
  };
}

/**
 * Tells the notifiers of `change` unless it was told already. Never throws:
 * what went wrong goes to `warn`.
 */
export async function notifyOnce(opts: {
  root: string;
  stateDir: string;
  notifiers: readonly (readonly string[])[];
  change: Change;
  warn: (line: string) => void;
}): Promise<void> {
  const { change } = opts;
  if (!opts.notifiers.length) return;
  const path = join(opts.stateDir, "notified.json");
  const told = (await readJson<Record<string, string>>(path).catch(() => null)) ?? {};
  const slot = change.slot ?? `${change.kind}:${change.task ?? "-"}`;
  if (told[slot] === change.key) return;
  const event: RelayEvent = {
    version: 1,
    at: new Date().toISOString(),
    kind: change.kind,
    repo: opts.root,
    task: change.task,
    reason: redact(change.reason),
    next: change.next === null ? null : redact(change.next),
    links: {
      status: "relay status",
      show: change.task === null ? null : `relay show ${change.task}`,
      log: join(opts.stateDir, "cron.log"),
    },
  };
  const stdin = JSON.stringify(event) + "\n";
  for (const argv of opts.notifiers) {
    try {
      const res = await run(argv, {
        cwd: opts.root,
        timeoutMs: LIMIT_MS,
        allowFail: true,
        stdin,
        endGroup: true,
      });
      if (res.code !== 0) {
        opts.warn(
          `notifier ${argv[0]} exited ${res.code} for ${change.kind}: ${
            redact(res.stderr.trim().split("\n").at(-1) ?? "")
          }`,
        );
      }
    } catch (err) {
      opts.warn(
        `notifier ${argv[0]} failed for ${change.kind}: ${(err as Error).message.split("\n")[0]}`,
      );
    }
  }
  await writeJson(path, { ...told, [slot]: change.key }).catch((err) =>
    opts.warn(`cannot record the notification: ${(err as Error).message}`)
  );
}

/**
 * Forgets the slots starting with `prefix` that are not in `keep`: a state that
 * ended (a problem fixed) is told again if it comes back. Never throws.
 */
export async function forgetSlots(
  stateDir: string,
  prefix: string,
  keep: ReadonlySet<string>,
  warn: (line: string) => void,
): Promise<void> {
  const path = join(stateDir, "notified.json");
  const told = await readJson<Record<string, string>>(path).catch(() => null);
  if (!told) return;
  const gone = Object.keys(told).filter((s) => s.startsWith(prefix) && !keep.has(s));
  if (!gone.length) return;
  for (const slot of gone) delete told[slot];
  await writeJson(path, told).catch((err) =>
    warn(`cannot record the notification: ${(err as Error).message}`)
  );
}
