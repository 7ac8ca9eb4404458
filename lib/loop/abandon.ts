/**
 * Abandoning a run: its journal moves into its run folder and the attempt is
 * recorded as failed (so the next one is numbered after it). No branch
 * changes: the work stays on the branch and under refs/relay/anchors/ (a turn
 * relay's guard never looked at is anchored here, without git).
 */
import { dirname, join } from "../path.ts";
import { parseBrief } from "../protocol/brief.ts";
import { briefDigest } from "../protocol/brief_write.ts";
import { readTextOrNull } from "../state/json_file.ts";
import { archiveJournal, type Journal } from "../state/journal.ts";
import type { StatePaths } from "../state/paths.ts";
import { recordAttempt } from "../state/tasks.ts";
import { anchorAbandonedTurn } from "./turn_anchors.ts";

export async function abandonRun(
  state: StatePaths,
  journal: Journal,
  reason: string,
): Promise<void> {
  await anchorAbandonedTurn(dirname(state.dir), journal);
  const path = join(state.runs, journal.runId, "brief.md");
  const text = await readTextOrNull(path);
  if (text !== null) {
    const brief = parseBrief(text, path);
    await recordAttempt(state, brief, {
      runId: journal.runId,
      brief: await briefDigest(brief),
      started: journal.runId,
      result: "failed",
      reason,
    });
  }
  await archiveJournal(state.journal, state.runs, journal);
}
