/**
 * A task's events grouped the way a person reads them: by round (the first
 * brief, then each fix), with the title and what started each fix round.
 * Pure: `relay show` renders it, and `--json` prints it as is.
 */
import type { LogEntry } from "./log.ts";

export interface Round {
  /** 1 for the first brief, 2 for the first fix, … */
  round: number;
  /** The brief's own Task number (a fix brief has its own). */
  brief: number;
  /** Why the round began: the `why` of the sent-back that opened it (absent for round 1). */
  why?: string;
  events: LogEntry[];
}

export interface Timeline {
  task: number;
  /** From the first `brief-opened`; null when the log has none. */
  title: string | null;
  /** The branch from the first `brief-opened`; null when the log has none. */
  branch: string | null;
  rounds: Round[];
  /** Every entry, in the order written. */
  events: LogEntry[];
}

/** Groups `events` (as read from task `task`'s log) into rounds, lowest round first. */
export function timeline(task: number, events: LogEntry[]): Timeline {
  const byRound = new Map<number, LogEntry[]>();
  for (const e of events) {
    const list = byRound.get(e.round);
    if (list) list.push(e);
    else byRound.set(e.round, [e]);
  }
  const rounds: Round[] = [...byRound.keys()].sort((a, b) => a - b).map((round) => {
    const list = byRound.get(round)!;
    const brief = briefOf(list);
    const why = round > 1 ? causeOf(events, round, brief) : undefined;
    return { round, brief, ...(why === undefined ? {} : { why }), events: list };
  });
  const opened = events.find((e) => e.event === "brief-opened");
  return {
    task,
    title: text(opened?.details.title),
    branch: text(opened?.details.branch),
    rounds,
    events,
  };
}

/** The round's brief: the one its `brief-opened` names, else the first event's. */
function briefOf(list: LogEntry[]): number {
  return (list.find((e) => e.event === "brief-opened") ?? list[0]!).brief;
}

/** The `why` of the sent-back that started `round` (by round, else by the fix brief's number). */
function causeOf(events: LogEntry[], round: number, brief: number): string | undefined {
  const sent = events.filter((e) => e.event === "sent-back");
  const hit = sent.find((e) => e.details.round === round) ??
    sent.find((e) => e.details.fix === brief);
  return text(hit?.details.why) ?? undefined;
}

function text(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}
