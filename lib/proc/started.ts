/**
 * When a process started, as `ps -o lstart=` reports it. A later tick uses it
 * to tell the agent it journaled from an unrelated process that got the same
 * pid after the agent ended.
 */
import { run } from "./run.ts";

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/**
 * Parses the C-locale `lstart` column, e.g. "Mon Jun  3 10:22:33 2024", as
 * local time (ps prints it in the local time zone). Null when it is not that.
 */
export function parseLstart(text: string): Date | null {
  const m =
    /^\s*[A-Z][a-z]{2}\s+([A-Z][a-z]{2})\s+(\d{1,2})\s+(\d{1,2}):(\d{2}):(\d{2})\s+(\d{4})\s*$/
      .exec(text);
  if (!m) return null;
  const month = MONTHS.indexOf(m[1]!);
  if (month < 0) return null;
  const date = new Date(
    Number(m[6]),
    month,
    Number(m[2]),
    Number(m[3]),
    Number(m[4]),
    Number(m[5]),
  );
  return Number.isNaN(date.getTime()) ? null : date;
}

/** The start time of process `pid` (to the second), or null when ps cannot tell. */
export async function processStartTime(pid: number): Promise<Date | null> {
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  const out = await run(["ps", "-o", "lstart=", "-p", String(pid)], {
    cwd: "/",
    env: { LC_ALL: "C" },
    allowFail: true,
    timeoutMs: 10_000,
  }).catch(() => null);
  if (out === null || out.code !== 0) return null;
  return parseLstart(out.stdout);
}
