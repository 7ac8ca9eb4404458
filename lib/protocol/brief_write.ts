/**
 * A Brief back to text, and what relay derives from it: the canonical form it
 * commits (NEXT-STEPS.md, inbox entries), a status change, a file-name slug
 * and the digest attempts are counted by. Parsing is in brief.ts. Pure: value
 * in, text out.
 *
 * Canonical form: LF, no BOM, header lines Status, Task, Title, Branch, Kind,
 * Fixes?, Acceptance? (Task is left out when 0 and Branch when "", as in an inbox entry not
 * yet numbered), a blank line, then `## Goal`, `## Done when`,
 * `## Verification bar` (one fenced block), `## Out of scope`?, extra
 * sections, one trailing newline.
 */
import { sha256 } from "../proc/hash.ts";
import { renderFence, renderSection } from "./markdown.ts";
import type { Brief, BriefStatus } from "./types.ts";

/** Writes the canonical form of a brief (see the file comment). */
export function writeBrief(brief: Brief): string {
  const header = [`Status: ${brief.status}`];
  if (brief.task !== 0) header.push(`Task: ${brief.task}`);
  header.push(`Title: ${brief.title}`);
  if (brief.branch !== "") header.push(`Branch: ${brief.branch}`);
  header.push(`Kind: ${brief.kind}`);
  if (brief.fixes !== undefined) header.push(`Fixes: ${brief.fixes}`);
  if (brief.acceptance) header.push(`Acceptance: ${brief.acceptance}`);
  const sections = [
    renderSection("Goal", brief.goal),
    renderSection("Done when", brief.doneWhen),
    renderSection("Verification bar", renderFence(brief.bar.join("\n"))),
  ];
  if (brief.outOfScope !== undefined) {
    sections.push(renderSection("Out of scope", brief.outOfScope));
  }
  for (const section of brief.extra) sections.push(renderSection(section.heading, section.body));
  return `${header.join("\n")}\n\n${sections.join("\n")}`;
}

/** The same brief with another status. */
export function withStatus(brief: Brief, status: BriefStatus): Brief {
  return { ...brief, status };
}

/** A file-name slug for a title: a-z, 0-9 and dashes, at most 40 characters, never empty. */
export function briefSlug(title: string): string {
  const slug = title
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+/, "")
    .slice(0, 40)
    .replace(/-+$/, "");
  return slug === "" ? "brief" : slug;
}

/**
 * A brief's digest, whatever its Status line says: attempts are counted per
 * digest, so an edited brief starts a fresh count and promoting it does not.
 */
export async function briefDigest(brief: Brief): Promise<string> {
  return await sha256(writeBrief({ ...brief, status: "OPEN" }));
}
