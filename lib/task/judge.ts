/**
 * What an executor turn amounts to, from the facts: how the agent's process
 * ended and what its report says. Pure: the handler reads the report, this
 * decides SHIPPED, BLOCKED (by the agent) or FAILED, and why.
 */
import { timedOutText } from "../agents/progress.ts";
import type { AgentOutcome } from "../state/journal.ts";

export interface TurnJudgement {
  outcome: "SHIPPED" | "BLOCKED" | "FAILED";
  failure?: string;
}

/**
 * `reported` is the outcome of a valid report, `problem` what is wrong with the
 * report (none written, unparsable, not for this brief).
 */
export function judgeTurn(
  agent: AgentOutcome | undefined,
  limitMs: number | undefined,
  reported: "SHIPPED" | "BLOCKED" | null,
  problem: string | null,
): TurnJudgement {
  const why: string[] = [];
  if (agent?.startError) why.push(`the agent could not start: ${agent.startError}`);
  else if (agent?.timedOut) why.push(`the agent ${timedOutText(limitMs, agent.durationMs)}`);
  else if (agent && !agent.interrupted && agent.exitCode !== 0) {
    why.push(`the agent exited ${agent.exitCode ?? `by ${agent.signal}`}`);
  }
  if (problem) why.push(problem);
  if (why.length === 0 && reported) {
    return reported === "BLOCKED"
      ? { outcome: "BLOCKED", failure: "the agent reported BLOCKED" }
      : { outcome: "SHIPPED" };
  }
  if (agent?.interrupted && why.length === 0) why.push("the tick running the agent was killed");
  return { outcome: "FAILED", failure: why.join("; ") };
}
