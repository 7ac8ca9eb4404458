/**
 * Turns a zod validation failure into one InputError that names the file,
 * the line, the dotted key and a fix. Shared by the repo config and the
 * operator profile.
 */
import type { z } from "zod";
import { InputError } from "../errors.ts";
import type { KeyPath, YamlSource } from "./yaml_source.ts";

export interface IssueContext {
  file: string;
  source: YamlSource;
  /** The schema that failed; used to list the allowed keys for an unknown one. */
  schema: z.ZodType;
  /** A fix for the key at `path` (array indexes already removed), if the module knows one. */
  fixFor(path: readonly string[]): string | undefined;
}

/** `["gate", "product", 0]` → `gate.product[0]`. */
export function dottedKey(path: KeyPath): string {
  let out = "";
  for (const seg of path) {
    out += typeof seg === "number" ? `[${seg}]` : out === "" ? seg : `.${seg}`;
  }
  return out;
}

/** Walks plain data along `path`; undefined when any step is missing. */
export function valueAt(value: unknown, path: KeyPath): unknown {
  let v = value;
  for (const seg of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string | number, unknown>)[seg];
  }
  return v;
}

/** The key names the schema allows for an object at `path`, or [] when none is found. */
export function allowedKeysAt(schema: z.ZodType, path: KeyPath): string[] {
  let s: unknown = schema;
  for (const seg of [...path, undefined]) {
    s = unwrap(s);
    if (seg === undefined) break;
    const def = defOf(s);
    if (def?.type === "object" && typeof seg === "string") {
      s = (def.shape as Record<string, unknown>)[seg];
    } else if ((def?.type === "array" || def?.type === "record") && seg !== undefined) {
      s = def.type === "array" ? def.element : def.valueType;
    } else {
      return [];
    }
  }
  const def = defOf(s);
  return def?.type === "object" ? Object.keys(def.shape as Record<string, unknown>) : [];
}

interface Def {
  type: string;
  [k: string]: unknown;
}

function defOf(s: unknown): Def | undefined {
  return (s as { _zod?: { def?: Def } } | undefined)?._zod?.def;
}

/** Looks through optional / default / prefault / nullable wrappers and into a pipe's input. */
function unwrap(s: unknown): unknown {
  for (let i = 0; i < 20; i++) {
    const def = defOf(s);
    if (def === undefined) return s;
    if (["optional", "default", "prefault", "nullable", "readonly"].includes(def.type)) {
      s = def.innerType;
    } else if (def.type === "pipe") {
      s = def.in;
    } else {
      return s;
    }
  }
  return s;
}

/** Builds the InputError for the first problem in document order. */
export function issuesToInputError(error: z.ZodError, ctx: IssueContext): InputError {
  const found = error.issues.map((issue) => describe(issue, ctx));
  found.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
  const first = found[0];
  if (first === undefined) return new InputError({ file: ctx.file }, "Cannot read config: invalid");
  const more = found.length > 1 ? ` (${found.length - 1} more problem(s) after this one)` : "";
  const loc = {
    file: ctx.file,
    key: first.key,
    ...(first.line === undefined ? {} : { line: first.line }),
  };
  return new InputError(loc, first.problem + more, first.fix);
}

interface Described {
  key: string;
  line: number | undefined;
  problem: string;
  fix: string;
}

function describe(issue: z.core.$ZodIssue, ctx: IssueContext): Described {
  const raw = ctx.source.value ?? {};
  if (issue.code === "unrecognized_keys") {
    const unknown = issue.keys[0] ?? "?";
    const path = [...issue.path.filter(isKeySeg), unknown];
    const allowed = allowedKeysAt(ctx.schema, issue.path.filter(isKeySeg));
    const others = issue.keys.length > 1
      ? ` (also unknown here: ${issue.keys.slice(1).map((k) => `"${k}"`).join(", ")})`
      : "";
    return {
      key: dottedKey(path),
      line: lineNear(ctx.source, path),
      problem: `Cannot use unknown key "${unknown}"${others}`,
      fix: `remove it or use one of the allowed keys: ${allowed.join(", ") || "(none)"}`,
    };
  }
  const path = issue.path.filter(isKeySeg);
  const key = dottedKey(path);
  const value = valueAt(raw, path);
  const fix = ctx.fixFor(path.filter((s): s is string => typeof s === "string")) ??
    "see the commented sample that `relay init` writes";
  // A null mapping value was dropped before validation (YAML `key:` alone): it counts as missing.
  const missing = value === undefined ||
    (value === null && typeof path[path.length - 1] === "string");
  const problem = missing
    ? `Cannot find required key "${key}"${issue.code === "custom" ? `: ${issue.message}` : ""}`
    : `Cannot use ${show(value)}: ${issue.message.replace(/^Invalid input: /, "")}`;
  return { key: key || "(top level)", line: lineNear(ctx.source, path), problem, fix };
}

/** Line of the key, or of the nearest ancestor that exists. */
function lineNear(source: YamlSource, path: KeyPath): number | undefined {
  for (let n = path.length; n >= 0; n--) {
    const line = source.lineOf(path.slice(0, n));
    if (line !== undefined) return line;
  }
  return undefined;
}

function isKeySeg(seg: PropertyKey): seg is string | number {
  return typeof seg === "string" || typeof seg === "number";
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
