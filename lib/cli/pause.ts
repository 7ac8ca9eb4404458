/**
 * `relay pause [--reason R]` and `relay unpause`: stop and restart the loop
 * without touching the crontab. While paused both ticks start nothing (a turn
 * already running finishes); `relay status` says who paused it and why.
 */
import { UsageError } from "../errors.ts";
import { type Context, parseCommand, requireRepo } from "./args.ts";

export async function pause(args: string[], ctx: Context): Promise<number> {
  const { values } = parseCommand("pause", args, { reason: { type: "string" } }, {
    min: 0,
    max: 0,
  });
  const reason = values.reason?.trim() || null;
  if (values.reason !== undefined && reason === null) {
    throw new UsageError("--reason is empty: say why the loop is paused, or leave it out", "pause");
  }
  const repo = requireRepo(ctx);
  const { statePaths } = await import("../state/paths.ts");
  const { pausedLine, readPause, writePause } = await import("../state/pause.ts");
  const path = statePaths(repo.commonDir).pause;
  const before = await readPause(path);
  if (before) {
    console.log(`already ${pausedLine(before)}`);
    return 0;
  }
  await Deno.mkdir(statePaths(repo.commonDir).dir, { recursive: true });
  const pause = { version: 1 as const, at: new Date().toISOString(), by: await whoAmI(), reason };
  await writePause(path, pause);
  console.log(pausedLine(pause));
  return 0;
}

export async function unpause(args: string[], ctx: Context): Promise<number> {
  parseCommand("unpause", args, {}, { min: 0, max: 0 });
  const repo = requireRepo(ctx);
  const { statePaths } = await import("../state/paths.ts");
  const { clearPause } = await import("../state/pause.ts");
  const had = await clearPause(statePaths(repo.commonDir).pause);
  console.log(had ? "unpaused: the next ticks run as usual" : "not paused: nothing to do");
  return 0;
}

/** "user@host": who paused the loop, or released a lease (relay lease release). */
export async function whoAmI(): Promise<string> {
  const { hostname } = await import("../state/lock.ts");
  return `${Deno.env.get("USER") ?? Deno.env.get("LOGNAME") ?? "someone"}@${hostname()}`;
}
