/**
 * `relay poll`. The idle path — no open brief and no unfinished tick — runs
 * 1,440 times a day from cron: it reads one file, stats another, starts no
 * process, writes only its heartbeat (one small file, for `relay doctor`) and
 * loads neither zod nor yaml. Everything else is
 * imported lazily. Every other tick records how it ended in
 * `.git/relay/last-poll.json` (for `relay status`), also when it throws.
 */
import { join } from "../path.ts";
import {
  type Context,
  parseCommand,
  printJson,
  PROFILE_FLAG_OPTIONS,
  profileFlags,
  requireRepo,
} from "./args.ts";
import { readStatus } from "../protocol/status_line.ts";
import { beat, BRIEF_FILE, CONFIG_FILE, statePaths } from "../state/paths.ts";
import { mayBeSplit } from "../state/machines.ts";

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

function readOrNull(path: string): string | null {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return null;
  }
}

/** Records a poll that threw (with the exit code main.ts maps it to); the caller rethrows. */
async function recordThrown(commonDir: string, err: unknown): Promise<void> {
  const { failedTick, saveLastTick } = await import("../state/last_tick.ts");
  await saveLastTick(commonDir, failedTick("poll", err));
}

export async function poll(args: string[], ctx: Context): Promise<number> {
  const { values } = parseCommand("poll", args, {
    json: { type: "boolean" },
    quiet: { type: "boolean", short: "q" },
    ...PROFILE_FLAG_OPTIONS,
  }, { min: 0, max: 0 });
  const flags = profileFlags("poll", values);
  const repo = requireRepo(ctx);
  beat(repo.commonDir, "poll");
  const brief = readOrNull(join(repo.root, BRIEF_FILE));
  const unfinished = exists(statePaths(repo.commonDir).journal);
  // machines: split — the brief to read is on the remote: the full tick fetches it.
  const split = mayBeSplit(readOrNull(join(repo.root, CONFIG_FILE)) ?? "");
  if (!unfinished && !split && (brief === null || readStatus(brief) !== "OPEN")) {
    if (brief !== null && readStatus(brief) === null && brief.trim() !== "") {
      // Line 1 is no Status line relay knows (a typo for OPEN, a line deleted by hand): say
      // so (exit 2, file and line) rather than stay idle forever without a word.
      try {
        const { parseBrief } = await import("../protocol/brief.ts");
        parseBrief(brief, BRIEF_FILE);
      } catch (err) {
        await recordThrown(repo.commonDir, err);
        throw err;
      }
    }
    const why = brief === null ? `no ${BRIEF_FILE}` : `${BRIEF_FILE} is not OPEN`;
    if (values.json) printJson({ result: "idle", message: `idle: ${why}` });
    else if (!values.quiet && Deno.stdout.isTerminal()) console.log(`idle: ${why}`);
    return 0;
  }

  const { runPollTick } = await import("../loop/poll.ts");
  const { runTick } = await import("./tick.ts");
  return await runTick({
    command: "poll",
    repo,
    ctx,
    json: values.json === true,
    quiet: values.quiet === true,
    ...(flags ? { flags } : {}),
    start: runPollTick,
    exitCode: (r) => r.kind === "failed" || r.kind === "blocked" ? 1 : 0,
    // Split mode's idle tick comes this way every minute: not a line each time under --quiet.
    ...(split ? { quietKinds: ["idle"] } : {}),
  });
}
