/**
 * When a process started, as `ps -o lstart=` reports it. A later tick uses it
 * to tell the agent it journaled from an unrelated process that got the same
 * pid after the agent ended.
 */
import { readProc, statFields } from "./alive.ts";
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

/**
 * Linux: a process as no clock step moves it. The boot it belongs to and the clock ticks after
 * that boot at which it was forked (`/proc/<pid>/stat`, field 22) name it for good: a pid the
 * kernel hands out again gets a later start, a reboot a new boot id. How long it has run is read
 * on the same clock. ps's start time, by contrast, is the wall clock's, which NTP or a resumed
 * laptop may step by minutes while an agent runs. /proc shows start ticks and uptime shifted by
 * the reader's time namespace (a container may set a boot-time offset): the ticks are taken back
 * to the host's boot clock by that offset (`/proc/self/timens_offsets`), so two readers in
 * different namespaces name one process alike.
 */
export interface ProcStart {
  /** `<boot id>:<start ticks on the host's boot clock>`. */
  stamp: string;
  elapsedMs: number;
  zombie: boolean;
}

/** Ticks a second in /proc's start times: USER_HZ, 100 on every Linux that relay is built for. */
const USER_HZ = 100;

/**
 * The process's stamp and run time; null off Linux, for a pid with no /proc entry, and whenever
 * it cannot be read (the stamp is extra evidence: nothing fails for want of it).
 */
export async function procStart(pid: number): Promise<ProcStart | null> {
  if (Deno.build.os !== "linux" || !Number.isSafeInteger(pid) || pid <= 0) return null;
  // In this order; the offsets file is absent on a kernel built without time namespaces.
  return parseProcStart(
    await readProc([
      "/proc/sys/kernel/random/boot_id",
      "/proc/uptime",
      "/proc/self/timens_offsets",
      `/proc/${pid}/stat`,
    ]),
  );
}

/**
 * The boot id line, the uptime line, the time namespace's offsets (two lines, when there) and
 * the stat line, as `procStart` reads them; null without a whole stat line.
 */
export function parseProcStart(text: string): ProcStart | null {
  const lines = text.split("\n");
  const boot = lines[0]?.trim() ?? "";
  const uptime = Number(lines[1]?.trim().split(/\s+/)[0]);
  let rest = 2;
  let offsetTicks = 0;
  if (/^monotonic\s/.test(lines[2] ?? "")) {
    const m = /^boottime\s+(-?\d+)\s+(\d+)\s*$/.exec(lines[3] ?? "");
    if (m === null) return null;
    offsetTicks = Number(m[1]) * USER_HZ + Math.floor(Number(m[2]) / (1e9 / USER_HZ));
    rest = 4;
  }
  const fields = statFields(lines.slice(rest).join("\n"));
  // fields[0] is field 3 (the state letter); field 22 is the start time in ticks.
  const ticks = fields?.[19];
  if (!/^[0-9a-f-]{8,}$/.test(boot) || !Number.isFinite(uptime) || fields === null) return null;
  if (ticks === undefined || !/^\d+$/.test(ticks)) return null;
  return {
    stamp: `${boot}:${Number(ticks) - offsetTicks}`,
    // Start ticks and uptime are shifted alike by the namespace: their difference is not.
    elapsedMs: Math.max(0, Math.round(uptime * 1000 - (Number(ticks) * 1000) / USER_HZ)),
    zombie: fields[0] === "Z",
  };
}
