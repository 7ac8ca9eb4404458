/**
 * Durations in config files: a number is seconds; a string is "90s", "45m",
 * "2h", "1h30m" (units h, m, s, largest first, each at most once) or a bare
 * number of seconds. Results are milliseconds.
 */

const UNITS = { h: 3_600_000, m: 60_000, s: 1_000 } as const;

/** Longest duration accepted: 24 h, well under what setTimeout can hold (~24.8 days). */
export const MAX_DURATION_MS = 24 * UNITS.h;

const SECONDS = /^\d+(?:\.\d+)?$/;
const UNIT_FORM = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

/** Parses a duration to milliseconds; throws an Error saying what is accepted. */
export function parseDuration(v: string | number): number {
  const ms = typeof v === "number" ? v * 1000 : parseText(v);
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new Error(`Cannot use duration ${show(v)}: it must be longer than zero`);
  }
  if (ms > MAX_DURATION_MS) {
    throw new Error(`Cannot use duration ${show(v)}: the longest allowed is 24h`);
  }
  return Math.round(ms);
}

function parseText(text: string): number {
  const t = text.trim();
  if (SECONDS.test(t)) return Number(t) * 1000;
  const m = UNIT_FORM.exec(t);
  if (t === "" || m === null) {
    throw new Error(
      `Cannot parse duration ${
        show(text)
      }: write seconds (90) or a string like "90s", "45m", "2h", "1h30m"`,
    );
  }
  const [, h = "0", min = "0", s = "0"] = m;
  return Number(h) * UNITS.h + Number(min) * UNITS.m + Number(s) * UNITS.s;
}

/** The shortest string parseDuration() reads back to `ms` (whole seconds): 5400000 → "1h30m". */
export function formatDuration(ms: number): string {
  let rest = Math.round(ms / 1000);
  const h = Math.floor(rest / 3600);
  rest -= h * 3600;
  const m = Math.floor(rest / 60);
  const s = rest - m * 60;
  const out = `${h ? `${h}h` : ""}${m ? `${m}m` : ""}${s ? `${s}s` : ""}`;
  return out === "" ? "0s" : out;
}

function show(v: string | number): string {
  return typeof v === "number" ? String(v) : JSON.stringify(v);
}
