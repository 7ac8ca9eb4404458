/**
 * The deploy preview a reviewer-side turn looks at: where it is (a URL
 * template, or the environment URL GitHub records for the head's
 * deployment), and whether it answers. relay has no network permission of its
 * own: the check runs `curl`, as git and gh reach the network themselves.
 */
import type { PreviewConfig } from "../config/repo_load.ts";
import { run } from "../proc/run.ts";
import { CommandError } from "../errors.ts";

/** Fills a preview_url template: {pr} is the PR's number (or its id), {branch}, {head}. */
export function expandPreview(
  template: string,
  pr: { id: string; branch: string; head: string },
): string {
  const values: Record<string, string> = {
    pr: /^#?(\d+)$/.exec(pr.id)?.[1] ?? pr.id,
    branch: pr.branch,
    head: pr.head,
  };
  return template.replace(
    /\{(pr|branch|head)\}/g,
    (_m, k: string) => encodeURIComponent(values[k]!),
  );
}

/**
 * A URL relay hands on (to curl, to an agent's environment and prompt): an
 * absolute http(s) URL with no whitespace or control characters, normalized.
 * Null for anything else.
 */
export function safeUrl(text: string): string | null {
  // deno-lint-ignore no-control-regex
  if (/[\s\x00-\x1f\x7f]/.test(text)) return null;
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? url.toString() : null;
  } catch {
    return null;
  }
}

/** The URL a check asks for: the preview's, with `preview_path` (and its query) appended. */
export function checkUrl(base: string, path: string): string {
  const url = new URL(base);
  const [pathname, query] = path.split("?", 2) as [string, string | undefined];
  if (pathname !== "/") url.pathname = url.pathname.replace(/\/$/, "") + pathname;
  if (query !== undefined) url.search = `?${query}`;
  return url.toString();
}

/** GitHub's deployments of a sha, newest first (as `gh api .../deployments?sha=` lists them). */
export function statusesUrlOf(deployments: unknown): string | null {
  if (!Array.isArray(deployments)) return null;
  const d = deployments.find((x) => typeof x?.statuses_url === "string");
  return d ? d.statuses_url as string : null;
}

/** The environment URL of a deployment's newest successful status, if any. */
export function environmentUrlOf(statuses: unknown): string | null {
  if (!Array.isArray(statuses)) return null;
  const ok = statuses.find((s) => s?.state === "success" && typeof s?.environment_url === "string");
  return ok ? safeUrl(ok.environment_url) : null;
}

export interface PreviewAnswer {
  ready: boolean;
  /** What was seen: "HTTP 200", "HTTP 503", or why there was no answer. */
  seen: string;
}

/** Asks the preview once, with curl (bounded); a 200 is ready, anything else is not yet. */
export async function askPreview(url: string, timeoutMs: number): Promise<PreviewAnswer> {
  const seconds = String(Math.max(1, Math.round(timeoutMs / 1000)));
  try {
    const res = await run(
      [
        "curl",
        "--silent",
        "--location",
        "--output",
        "/dev/null",
        "--write-out",
        "%{http_code}",
        "--max-time",
        seconds,
        "--",
        url,
      ],
      { cwd: Deno.cwd(), timeoutMs: timeoutMs + 5_000, allowFail: true },
    );
    const code = res.stdout.trim();
    if (code === "200") return { ready: true, seen: "HTTP 200" };
    return {
      ready: false,
      seen: code && code !== "000" ? `HTTP ${code}` : `no answer (curl exit ${res.code})`,
    };
  } catch (err) {
    if (err instanceof CommandError && /not found|No such file|ENOENT/i.test(err.message)) {
      throw new PreviewToolMissing();
    }
    return { ready: false, seen: `no answer: ${(err as Error).message.split("\n")[0]}` };
  }
}

export class PreviewToolMissing extends Error {
  override name = "PreviewToolMissing";
  constructor() {
    super("checking the deploy preview needs curl on PATH");
  }
}

export type { PreviewConfig };
