/**
 * The `check-preview` effect: where the head's deploy preview is, and whether
 * it answers 200 at the configured path (lib/loop/preview.ts). Reported as one
 * fact; the wait and the HOLD are the decisions' (lib/task/table.ts).
 */
import { HoldError, InputError } from "../../errors.ts";
import type { PlannerEvent } from "../../task/planner.ts";
import { askPreview, checkUrl, PreviewToolMissing } from "../preview.ts";
import { type PlanContext, prOf, ready } from "./context.ts";

export async function checkPreview(ctx: PlanContext): Promise<PlannerEvent> {
  const pr = prOf(ctx);
  const { config } = ready(ctx);
  const url = await previewUrl(ctx);
  const at = new Date().toISOString();
  if (url === null) {
    return {
      kind: "preview-checked",
      head: pr.head,
      url: "(GitHub has no successful deployment of this head yet)",
      ready: false,
      seen: "no deployment",
      at,
    };
  }
  try {
    const answer = await askPreview(checkUrl(url, config.preview!.path), 20_000);
    ctx.log.step(`preview ${url}: ${answer.seen}`);
    return { kind: "preview-checked", head: pr.head, url, ...answer, at };
  } catch (err) {
    if (!(err instanceof PreviewToolMissing)) throw err;
    throw new HoldError(
      `${err.message}: relay asks the preview with curl (it has no network of its own)`,
      'Install curl where the review tick runs (its PATH is the crontab\'s), or remove preview_url / preview from .relay/config.yaml. Then run "relay resume".',
    );
  }
}

/**
 * The preview's URL for the PR's head: the template filled in, or the
 * environment URL of GitHub's newest successful deployment of the head (null
 * while there is none). Null too when no preview is configured.
 */
export async function previewUrl(ctx: PlanContext): Promise<string | null> {
  const { config, primary } = ready(ctx);
  const preview = config.preview;
  if (!preview) return null;
  const pr = prOf(ctx);
  const { expandPreview, environmentUrlOf, safeUrl, statusesUrlOf } = await import(
    "../preview.ts"
  );
  if ("template" in preview.source) {
    const url = safeUrl(expandPreview(preview.source.template, pr));
    if (url === null) {
      throw new InputError(
        { file: ".relay/config.yaml", key: "preview_url" },
        `preview_url gives no usable http(s) URL for ${pr.id} (branch ${pr.branch})`,
        'write a URL whose placeholders fill in to a valid address, e.g. "https://deploy-preview-{pr}--mysite.netlify.app"',
      );
    }
    return url;
  }
  if (config.forge !== "github") {
    throw new InputError(
      { file: ".relay/config.yaml", key: "preview" },
      "preview: github-deployments reads the deployments GitHub records, but this repo's forge is plain",
      "set forge: github, or give the preview's address as preview_url",
    );
  }
  const { Gh } = await import("../../forge/gh.ts");
  const gh = new Gh(primary.cwd);
  const list = await gh.run([
    "api",
    "-X",
    "GET",
    "repos/{owner}/{repo}/deployments",
    "-f",
    `sha=${pr.head}`,
    "-f",
    "per_page=10",
  ]);
  const statuses = statusesUrlOf(JSON.parse(list.stdout || "[]"));
  if (statuses === null) return null;
  const res = await gh.run([
    "api",
    "-X",
    "GET",
    statuses.replace(/^https:\/\/api\.github\.com\//, ""),
  ]);
  return environmentUrlOf(JSON.parse(res.stdout || "[]"));
}
