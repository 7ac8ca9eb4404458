/**
 * The task record's version-2 shape, checked by hand: a record relay wrote
 * itself passes here without loading zod (which costs more than a `relay gate`
 * does with git). It mirrors the zod schema in tasks.ts and is stricter: an
 * unknown key, which zod would drop, fails here. A record that fails goes to
 * the zod schema, which alone explains what is wrong, and a record that passes
 * is exactly what zod would return for it (tests/state_record_shape.test.ts).
 */

/** A task's stages, in order: the receipts' `stage` (tasks.ts derives its type and zod enum). */
export const STAGES = [
  "plan",
  "implementation",
  "review",
  "finish",
  "polish",
  "docs",
  "security",
  "acceptance",
] as const;

type Check = (v: unknown) => boolean;

const str: Check = (v) => typeof v === "string";
const bool: Check = (v) => typeof v === "boolean";
/** zod's `z.number().int().positive()`. */
const positive: Check = (v) => typeof v === "number" && Number.isSafeInteger(v) && v > 0;
const oneOf = (...values: string[]): Check => (v) => typeof v === "string" && values.includes(v);
const list = (item: Check): Check => (v) => Array.isArray(v) && v.every(item);
const nullable = (inner: Check): Check => (v) => v === null || inner(v);

function isPlain(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** An object with exactly these keys (the optional ones may be absent) and no other. */
function object(required: Record<string, Check>, optional: Record<string, Check> = {}): Check {
  const known = new Set([...Object.keys(required), ...Object.keys(optional)]);
  return (v) => {
    if (!isPlain(v)) return false;
    for (const key of Object.keys(v)) if (!known.has(key)) return false;
    for (const [key, check] of Object.entries(required)) {
      if (!Object.hasOwn(v, key) || !check(v[key])) return false;
    }
    for (const [key, check] of Object.entries(optional)) {
      if (Object.hasOwn(v, key) && !check(v[key])) return false;
    }
    return true;
  };
}

/** zod's `z.looseObject`: these keys checked, any other kept as it is. */
function loose(required: Record<string, Check>): Check {
  return (v) =>
    isPlain(v) && Object.entries(required).every(([k, c]) => Object.hasOwn(v, k) && c(v[k]));
}

const attempt = object(
  {
    runId: str,
    brief: str,
    started: str,
    result: oneOf("shipped", "failed", "blocked", "superseded"),
  },
  { reason: str },
);
const receipt = object(
  {
    stage: oneOf(...STAGES),
    runId: str,
    at: str,
    result: str,
  },
  { head: str, tree: str, base: str, detail: str },
);
const finding = object({ severity: oneOf("blocker", "major", "minor"), text: str });
const review = object(
  {
    task: positive,
    branch: str,
    verdicts: list(object(
      {
        runId: str,
        at: str,
        reportTask: positive,
        head: str,
        tree: str,
        main: str,
        verdict: oneOf("PASS", "FAIL"),
        findings: list(finding),
      },
      {
        stale: bool,
        revalidations: list(object({ main: str, mergeTree: str, passed: bool, at: str })),
      },
    )),
    voids: list(object({ runId: str, at: str, why: str })),
    fixes: list(
      object({ task: positive, at: str, head: str }, { why: str, findings: list(finding) }),
    ),
  },
  {
    merged: object({ sha: str, at: str, by: oneOf("relay", "out-of-band") }),
    closed: object({ head: str, at: str, reason: str }),
    human: object({ head: str, at: str, files: list(str) }),
    previewWait: object({ head: str, since: str }),
    stages: list(object(
      {
        stage: oneOf("finish", "polish", "docs", "security", "plan"),
        runId: str,
        at: str,
        head: str,
        tree: str,
        result: oneOf("PASS", "FAIL", "SKIPPED"),
        findings: list(finding),
      },
      { reportTask: positive, detail: str },
    )),
  },
);

const checks = new Map<number, Check>();

/** True when `value` is a version-`version` task record in exactly the shape relay writes. */
export function isPlainTaskRecord(value: unknown, version: number): boolean {
  let check = checks.get(version);
  if (check === undefined) {
    check = object(
      {
        version: (v) => v === version,
        task: positive,
        rounds: list(object({
          round: positive,
          brief: positive,
          attempts: list(attempt),
          receipts: list(receipt),
        })),
        review: nullable(review),
      },
      {
        config: loose({ version: (v) => v === 1, at: str }),
        verifications: list(object(
          { at: str, head: str, tree: str, file: str, sha256: str, name: str },
          { text: str },
        )),
        notes: list(object(
          { at: str, text: str },
          { delivered: object({ runId: str, role: str, at: str }) },
        )),
        plans: list(object({
          runId: str,
          at: str,
          brief: str,
          result: oneOf("PASS", "FAIL"),
          findings: list(finding),
          by: oneOf("person", "tick"),
        })),
      },
    );
    checks.set(version, check);
  }
  return check(value);
}
