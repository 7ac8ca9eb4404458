/** Schema pieces shared by the repo config and the operator profile. */
import { z } from "zod";
import { parseDuration } from "./duration.ts";

/** A duration (seconds as a number, or "90s" / "45m" / "2h" / "1h30m") parsed to milliseconds. */
export function durationMs() {
  return z.union([z.number(), z.string()]).transform((v, ctx): number => {
    try {
      return parseDuration(v);
    } catch (err) {
      const why = (err as Error).message.replace(/^Cannot (?:use|parse) duration [^:]*: /, "");
      ctx.addIssue({ code: "custom", message: why, input: v });
      return z.NEVER;
    }
  });
}

export const DURATION_FIX =
  "write a duration such as 90s, 45m, 2h or 1h30m (a bare number is seconds), at most 24h";

/**
 * Drops keys whose value is null (YAML `key:` with nothing after it) from
 * mappings at any depth, so an emptied section means "use the defaults".
 * Items inside lists are kept as they are.
 */
export function dropNullKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => (v === null ? v : dropNullKeys(v)));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v !== null) out[k] = dropNullKeys(v);
  }
  return out;
}
