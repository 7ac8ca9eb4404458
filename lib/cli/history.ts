/**
 * `relay report --html <file> [--task N]`: every task's timeline (or one
 * task's) as one self-contained HTML page — a summary, a chart, each round's
 * events — written whole or not at all (a temporary file, then a rename).
 * The page is made by history_html.ts; this reads the logs, the HOLD and the
 * pause on record, and writes.
 */
import { basename, dirname, resolve } from "../path.ts";
import { UsageError } from "../errors.ts";
import { type Context, parseCommand, requireRepo } from "./args.ts";

export async function report(args: string[], ctx: Context): Promise<number> {
  const { values } = parseCommand("report", args, {
    html: { type: "string" },
    task: { type: "string" },
  }, { min: 0, max: 0 });
  if (values.html === undefined || values.html.trim() === "") {
    throw new UsageError(
      "--html <file> is required: relay report writes an HTML page (e.g. relay report --html report.html)",
      "report",
    );
  }
  const asked = values.task;
  if (asked !== undefined && (!/^\d+$/.test(asked) || Number(asked) < 1)) {
    throw new UsageError(`--task must be a task number (1, 2, …), not "${asked}"`, "report");
  }
  const out = resolve(ctx.cwd, values.html);
  await checkTarget(out, values.html);
  const repo = requireRepo(ctx);

  const { readEvents, taskOfBrief, tasksWithEvents } = await import("../task/log.ts");
  const { timeline } = await import("../task/timeline.ts");
  const { statePaths } = await import("../state/paths.ts");
  const { readHold } = await import("../state/hold.ts");
  const { readPause } = await import("../state/pause.ts");
  const { redactor } = await import("../proc/redact.ts");
  const { VERSION } = await import("./help.ts");
  const { renderHistoryHtml, summarize, summaryLine } = await import("./history_html.ts");

  let tasks = await tasksWithEvents(repo.commonDir);
  if (asked !== undefined) {
    const task = await taskOfBrief(repo.commonDir, Number(asked));
    if (task === null) {
      throw new UsageError(
        `no events recorded for task ${asked}; ${
          tasks.length ? `tasks with a timeline: ${tasks.join(", ")}` : "no task has a timeline yet"
        }`,
        "report",
      );
    }
    tasks = [task];
  }
  // Every log is read before anything is written: a malformed line is exit 2 with no page.
  const timelines = [];
  for (const task of tasks) timelines.push(timeline(task, await readEvents(repo.commonDir, task)));
  const paths = statePaths(repo.commonDir);
  const hold = await readHold(paths.hold);
  const pause = await readPause(paths.pause);
  const now = new Date();
  const input = redactor().redactDeep({
    tasks: timelines,
    hold,
    pause,
    name: basename(repo.root),
    version: VERSION,
  });
  const html = renderHistoryHtml({ ...input, now });

  const tmp = `${out}.${Deno.pid}.tmp`;
  try {
    await Deno.writeTextFile(tmp, html);
    await Deno.rename(tmp, out);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
  const sums = input.tasks.map((tl) => summarize(tl, input.hold, now));
  console.log(`wrote ${out}: ${summaryLine(sums)}`);
  return 0;
}

/** The page's folder must exist and the path must not be a folder: said before any log is read. */
async function checkTarget(path: string, given: string): Promise<void> {
  let dir: Deno.FileInfo;
  try {
    dir = await Deno.stat(dirname(path));
  } catch {
    throw new UsageError(
      `cannot write --html ${given}: the folder ${
        dirname(path)
      } does not exist; create it or name a file in an existing folder`,
      "report",
    );
  }
  if (!dir.isDirectory) {
    throw new UsageError(
      `cannot write --html ${given}: ${dirname(path)} is not a folder`,
      "report",
    );
  }
  const info = await Deno.stat(path).catch(() => null);
  if (info?.isDirectory) {
    throw new UsageError(
      `cannot write --html ${given}: it is a folder; name a file, e.g. ${
        given.replace(/\/$/, "")
      }/report.html`,
      "report",
    );
  }
}
