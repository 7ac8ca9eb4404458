/**
 * What `relay poll` and `relay review` share once there is work: start the
 * tick with the right progress style, record how it ended in
 * `.git/relay/last-<tick>.json` (also when it throws), and print the result
 * (stamped with the time when it goes to a file). Imported lazily: never on
 * the idle path.
 */
import type { RepoPaths } from "../git/discover.ts";
import { type Context, printJson } from "./args.ts";
import { silentLog, stamped, stderrLog } from "../proc/log.ts";
import type { TickOptions } from "../loop/log.ts";
import {
  failedTick,
  type LastTick,
  lastTick,
  readLastTick,
  REPEAT_MS,
  saveLastTick,
  type TickCommand,
} from "../state/last_tick.ts";
import { readHeaderTask } from "../protocol/status_line.ts";
import { readJson, readTextOrNull } from "../state/json_file.ts";
import { join } from "../path.ts";
import { BRIEF_FILE, REPORT_FILE } from "../state/paths.ts";
import { HoldError } from "../errors.ts";
import { persistHold, readHold, writeHold } from "../state/hold.ts";
import { statePaths } from "../state/paths.ts";
import { redact } from "../proc/redact.ts";
import { batchResolves } from "../git/resolver.ts";

export async function runTick<R extends { kind: string; message: string }>(opts: {
  command: TickCommand;
  repo: RepoPaths;
  ctx: Context;
  json: boolean;
  quiet: boolean;
  start: (options: TickOptions) => Promise<R>;
  exitCode: (result: R) => number;
  /** Results not worth a line under --quiet (idle, busy). */
  quietKinds?: readonly string[];
  /** This command's flags over the operator profile. */
  flags?: import("../config/profile_load.ts").ProfileFlags;
}): Promise<number> {
  const { command, repo, ctx } = opts;
  // A tick resolves refs through one git process (lib/git/resolver.ts), not one each.
  batchResolves(true);
  // Read before the tick changes anything: the record names the task it was about.
  const task = await tickSubject(repo.commonDir, repo.root, command);
  const effects: string[] = [];
  const about = (t: LastTick): LastTick => ({
    ...t,
    ...(task === null ? {} : { task }),
    ...(effects.length ? { effects } : {}),
  });
  const previous = await readLastTick(repo.commonDir, command);
  let result: R;
  try {
    result = await opts.start({
      repo,
      ...(ctx.profile !== undefined ? { profileFlag: ctx.profile } : {}),
      ...(opts.flags ? { flags: opts.flags } : {}),
      progress: opts.quiet ? "quiet" : Deno.stderr.isTerminal() ? "tty" : "plain",
      log: opts.quiet ? silentLog : stderrLog,
      effects,
      say: opts.json
        ? (line) => console.error(stamped(redact(line), Deno.stderr.isTerminal()))
        : (line) => console.log(stamped(redact(line), Deno.stdout.isTerminal())),
    });
  } catch (err) {
    return await ended(opts, about(failedTick(command, err)), previous, err, task);
  }
  const code = opts.exitCode(result);
  if (TOLD.has(result.kind)) {
    const { changeOfResult } = await import("../loop/notify.ts");
    await tell(opts, changeOfResult(command, result, task));
  }
  const record = about(lastTick(command, code, result.kind, result.message));
  if (opts.json) {
    await saveLastTick(repo.commonDir, { ...record, said: record.at });
    printJson({ result: result.kind, ...result });
    return code;
  }
  const quietKind = opts.quiet && opts.quietKinds?.includes(result.kind) === true;
  const say = !quietKind && sayAgain(opts.quiet, record, previous);
  await saveLastTick(repo.commonDir, said(record, previous, say));
  if (say) console.log(stamped(redact(result.message), Deno.stdout.isTerminal()));
  return code;
}

/**
 * A tick that threw. A HOLD is recorded in hold.json here, for both ticks:
 * one place, so a HOLD raised anywhere stops both ticks until a person runs
 * `relay resume` (preconditions every tick checks again are not recorded).
 * Under --quiet (cron), a HOLD already on record is not said again each
 * minute, only as a short hourly reminder; any other error that repeats the
 * last one is said again hourly too.
 */
async function ended(
  opts: { command: TickCommand; repo: RepoPaths; ctx: Context; quiet: boolean; json: boolean },
  record: LastTick,
  previous: LastTick | null,
  err: unknown,
  task: number | null,
): Promise<number> {
  const { describeError, say: sayError } = await import("./report.ts");
  const { code, text } = describeError(err);
  const holdPath = statePaths(opts.repo.commonDir).hold;
  if (err instanceof HoldError && !err.recheck) {
    // Told once: the HOLD's own time is the key, so the ticks that meet it after stay quiet.
    const told = async () => {
      const hold = await readHold(holdPath);
      if (!hold) return;
      const { changeOfHold } = await import("../loop/notify.ts");
      await tell(opts, changeOfHold(hold));
    };
    if (err.recorded) {
      // The record keeps what the tick met, not the reminder's wording.
      await saveLastTick(opts.repo.commonDir, { ...record, said: record.at });
      if (!opts.quiet || opts.json) sayError(text);
      else {
        const reminder = await holdReminder(holdPath);
        if (reminder !== null) sayError(reminder);
      }
      await told();
      return code;
    }
    // Said as recorded: the advice a person reads is the advice `relay status` shows.
    const paths = statePaths(opts.repo.commonDir);
    const hold = await persistHold(
      holdPath,
      err,
      task,
      opts.command === "poll" ? paths.journal : undefined,
    );
    await saveLastTick(opts.repo.commonDir, { ...record, said: record.at });
    sayError(hold ? describeError(new HoldError(hold.reason, hold.next)).text : text);
    await told();
    return code;
  }
  const say = opts.json || sayAgain(opts.quiet, record, previous);
  await saveLastTick(opts.repo.commonDir, said(record, previous, say));
  if (say) sayError(text);
  return code;
}

/** The results a person hears of (lib/loop/notify.ts); the rest are not changes. */
const TOLD = new Set(["blocked", "merged", "fix", "human"]);

/**
 * Tells the profile's notifiers of a change, once. Loads the profile only when there
 * is something to tell; a notifier's failure (or a profile that cannot be read) is a
 * warning, never the tick's result.
 */
async function tell(
  opts: { repo: RepoPaths; ctx: Context },
  change: import("../loop/notify.ts").Change | null,
): Promise<void> {
  if (!change) return;
  const warn = (line: string) =>
    console.error(stamped(`relay: warning: ${redact(line)}`, Deno.stderr.isTerminal()));
  try {
    const { loadProfile, profilePath } = await import("../config/profile_load.ts");
    const profile = await loadProfile(profilePath(opts.ctx.profile));
    if (!profile.notify.length) return;
    const { notifyOnce } = await import("../loop/notify.ts");
    await notifyOnce({
      root: opts.repo.root,
      stateDir: statePaths(opts.repo.commonDir).dir,
      notifiers: profile.notify,
      change,
      warn,
    });
  } catch (err) {
    warn(`notifiers not run: ${(err as Error).message.split("\n")[0]}`);
  }
}

/** Off --quiet every result is said; under it, one that repeats the last is said hourly. */
function sayAgain(quiet: boolean, record: LastTick, previous: LastTick | null): boolean {
  if (!quiet || previous === null || previous.message !== record.message) return true;
  if (previous.exit !== record.exit || previous.said === undefined) return true;
  return Date.parse(record.at) - Date.parse(previous.said) >= REPEAT_MS;
}

function said(record: LastTick, previous: LastTick | null, now: boolean): LastTick {
  if (now) return { ...record, said: record.at };
  return previous?.said ? { ...record, said: previous.said } : record;
}

/**
 * Under --quiet, a tick that meets the HOLD on record says nothing — the tick
 * that raised it said it in full — but a one-line reminder once an hour.
 * Null when nothing is to be said.
 */
async function holdReminder(path: string): Promise<string | null> {
  const hold = await readHold(path);
  if (!hold) return null;
  const now = new Date();
  const last = Date.parse(hold.said ?? hold.at);
  if (Number.isFinite(last) && now.getTime() - last < REPEAT_MS) return null;
  await writeHold(path, { ...hold, said: now.toISOString() });
  return `relay: still on HOLD since ${hold.at} (task ${hold.task}): ${
    hold.reason.split("\n")[0]
  } — "relay status" says what to do, "relay resume" clears it`;
}

/**
 * The task a tick is about as it starts, from files alone (no git): for a poll
 * the unfinished run's task, else the brief's; for a review the report's (the
 * primary tree follows origin/main). Null when there is none.
 */
async function tickSubject(
  commonDir: string,
  root: string,
  command: TickCommand,
): Promise<number | null> {
  if (command === "poll") {
    try {
      const journal = await readJson<{ task?: unknown }>(join(commonDir, "relay", "journal.json"));
      if (typeof journal?.task === "number") return journal.task;
    } catch {
      // An unreadable journal: the poll says so itself; the brief names the task.
    }
    return readHeaderTask(await readTextOrNull(join(root, BRIEF_FILE)));
  }
  return readHeaderTask(await readTextOrNull(join(root, REPORT_FILE)));
}
