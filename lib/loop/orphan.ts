/**
 * The executor's turn as the poll journal records it (agentPid, agentStarted,
 * agentDeadline, agentStamp), for the orphan checks in lib/agents/orphan.ts: a later tick
 * (or `relay close`) asks whether the agent of a killed tick still runs.
 */
import {
  type JournaledTurn,
  type OrphanState,
  orphanState as turnState,
  stopOrphan,
  turnLimitMs,
} from "../agents/orphan.ts";
import type { Journal } from "../state/journal.ts";

export { ORPHAN_GRACE_MS, type OrphanState, START_TOLERANCE_MS } from "../agents/orphan.ts";
export { stopOrphan };

/** The executor turn the journal recorded at launch. */
export function journaledAgent(journal: Journal): JournaledTurn {
  return {
    pid: journal.agentPid,
    started: journal.agentStarted,
    deadline: journal.agentDeadline,
    stamp: journal.agentStamp,
  };
}

/** The turn limit the journal recorded at launch (the orphan path has no other record of it). */
export function agentLimitMs(journal: Journal): number | undefined {
  return turnLimitMs(journaledAgent(journal));
}

/** Whether the journaled agent still runs, is past its turn limit, or is gone. */
export async function orphanState(journal: Journal, now = Date.now()): Promise<OrphanState> {
  return await turnState(journaledAgent(journal), now);
}
