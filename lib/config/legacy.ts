/**
 * `.review-loop/config.md`, the settings file of the review-loop workflows
 * relay grew out of. When a repository still has one, the keys relay has an
 * equivalent for apply to the task that starts (and say so in its start
 * line); the ones that would let the repo choose how agents run are not
 * applied, with a warning that says where they belong.
 *
 * The file is markdown: `key: value` lines, in YAML front matter or in the
 * body, as plain lines or list items. Unknown keys are left alone.
 */
import { join } from "../path.ts";

export const LEGACY_FILE = join(".review-loop", "config.md");

export interface LegacySettings {
  docsFile?: string;
  skipQualityPolish?: boolean;
  planRounds?: number;
  /** Executor rounds in all: the first and its fixes. */
  execRounds?: number;
  /** Keys that are set but not applied, each with where it belongs. */
  warnings: string[];
}

const LINE = /^\s*(?:[-*]\s+)?`?([A-Za-z_][A-Za-z0-9_]*)`?\s*:\s*(.*?)\s*$/;

function unquote(v: string): string {
  const m = /^(["'])(.*)\1$/.exec(v);
  return m ? m[2]! : v;
}

function bool(v: string): boolean | undefined {
  const s = v.toLowerCase();
  if (["true", "yes", "on"].includes(s)) return true;
  if (["false", "no", "off"].includes(s)) return false;
  return undefined;
}

function count(v: string): number | undefined {
  return /^\d{1,3}$/.test(v) && Number(v) >= 1 ? Number(v) : undefined;
}

/** The settings in the file's text; keys with values relay cannot read are warned about. */
export function parseLegacy(text: string, file = LEGACY_FILE): LegacySettings {
  const out: LegacySettings = { warnings: [] };
  const unreadable = (key: string, value: string, want: string) =>
    out.warnings.push(`${key}: "${value}" in ${file} is not ${want}; it is not applied`);
  for (const raw of text.split("\n")) {
    const m = LINE.exec(raw);
    if (!m) continue;
    const key = m[1]!;
    const value = unquote(m[2]!.replace(/\s+#.*$/, ""));
    switch (key) {
      case "docs_file":
        if (value && !value.startsWith("/") && !value.split("/").includes("..")) {
          out.docsFile = value;
        } else if (value) unreadable(key, value, "a path inside the repository");
        break;
      case "skip_quality_polish": {
        const b = bool(value);
        if (b === undefined) unreadable(key, value, "true or false");
        else out.skipQualityPolish = b;
        break;
      }
      case "soft_limit_plan":
      case "soft_limit_exec": {
        const n = count(value);
        if (n === undefined) unreadable(key, value, "a whole number from 1");
        else if (key === "soft_limit_plan") out.planRounds = n;
        else out.execRounds = n;
        break;
      }
      case "auto_commit":
        if (bool(value) === true) {
          out.warnings.push(
            `auto_commit in ${file} is not applied: who commits is the operator profile's safety_mode (efficient: the executor commits; strict: relay commits the author's files)`,
          );
        }
        break;
      case "reviewer_model":
      case "executor_model":
        if (value !== "" && value !== "inherit") {
          out.warnings.push(
            `${key} in ${file} is not applied: models come from the operator profile (roles.${
              key.split("_")[0]
            }.model)`,
          );
        }
        break;
    }
  }
  return out;
}

/** The repository's legacy settings, or null when it has no such file. */
export async function readLegacy(root: string): Promise<LegacySettings | null> {
  try {
    return parseLegacy(await Deno.readTextFile(join(root, LEGACY_FILE)));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}
