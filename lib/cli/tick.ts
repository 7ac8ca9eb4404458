/**
 * What `relay poll` and `relay review` share once there is work: start the
 * tick with the right progress style, record how it ended in
 * `.git/relay/last-<tick>.json` (also when it throws), and print the result
 * (stamped with the time when it goes to a file). Imported lazily: never on
 * the idle path.
 */
import type { RepoPaths } from "../git/discover.ts";
import { type Context, printJson } from "./args.ts";
import { silentLog, stamped, stderrLog, type TickOptions } from "../loop/log.ts";
import {
  failedTick,
  type LastTick,
  lastTick,
  saveLastTick,
  type TickCommand,
  tickSubject,
} from "../state/last_tick.ts";
import { redact } from "../proc/redact.ts";

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
}): Promise<number> {
  const { command, repo, ctx } = opts;
  // Read before the tick changes anything: the record names the task it was about.
  const task = await tickSubject(repo.commonDir, repo.root, command);
  const about = (t: LastTick): LastTick => task === null ? t : { ...t, task };
  let result: R;
  try {
    result = await opts.start({
      repo,
      ...(ctx.profile !== undefined ? { profileFlag: ctx.profile } : {}),
      progress: opts.quiet ? "quiet" : Deno.stderr.isTerminal() ? "tty" : "plain",
      log: opts.quiet ? silentLog : stderrLog,
    });
  } catch (err) {
    await saveLastTick(repo.commonDir, about(failedTick(command, err)));
    throw err;
  }
  const code = opts.exitCode(result);
  await saveLastTick(repo.commonDir, about(lastTick(command, code, result.kind, result.message)));
  if (opts.json) printJson({ result: result.kind, ...result });
  else if (!(opts.quiet && opts.quietKinds?.includes(result.kind))) {
    console.log(stamped(redact(result.message), Deno.stdout.isTerminal()));
  }
  return code;
}
