/**
 * The report an attempt puts on main: the agent's own (kept in the run folder
 * as soon as the turn ends), with relay's evidence from running the bar and
 * the disagreements between them; or, for a run the executor could not
 * finish, relay's BLOCKED report.
 */
import { join } from "../../path.ts";
import { InputError } from "../../errors.ts";
import { Git } from "../../git/git.ts";
import { checkReport } from "../../protocol/honesty.ts";
import { parseReport } from "../../protocol/report.ts";
import type { Brief, Evidence, Report } from "../../protocol/types.ts";
import { REPORT_FILE } from "../../state/paths.ts";
import type { Journal } from "../../state/journal.ts";
import { readJson, readTextOrNull, writeJson } from "../../state/json_file.ts";
import { readRound } from "../../state/tasks.ts";
import { fileHash } from "../../proc/hash.ts";
import { copyRedacted } from "../../proc/redact.ts";
import { runBar, truncateOutput } from "../../bar/run.ts";
import { disagreements } from "../evidence.ts";
import { briefOf, type ExecContext, ready } from "./context.ts";

const AGENT_REPORT = "report.agent.md";

/** Keeps the report the agent wrote in the worktree (changed since the turn began) in the run folder. */
export async function saveAgentReport(journal: Journal, runDir: string): Promise<void> {
  const saved = join(runDir, AGENT_REPORT);
  if ((await readTextOrNull(saved)) !== null) return;
  const path = join(journal.worktree, REPORT_FILE);
  const hash = await fileHash(path);
  if (hash === "" || hash === journal.reportBefore) return;
  await copyRedacted(path, saved);
}

export interface AgentReport {
  report: Report | null;
  problem: string | null;
}

export async function readAgentReport(runDir: string, brief: Brief): Promise<AgentReport> {
  const path = join(runDir, AGENT_REPORT);
  const text = await readTextOrNull(path);
  if (text === null) return { report: null, problem: "the agent wrote no report" };
  let report: Report;
  try {
    report = parseReport(text, REPORT_FILE);
  } catch (err) {
    if (err instanceof InputError) {
      return { report: null, problem: `invalid report: ${err.message}` };
    }
    throw err;
  }
  const problems = checkReport(report, brief);
  if (problems.length) return { report, problem: `invalid report: ${problems.join("; ")}` };
  return { report, problem: null };
}

/** relay's evidence for the run's head: saved once per head, so a resumed tick never reruns the bar. */
export async function savedEvidence(runDir: string, head: string): Promise<Evidence[] | null> {
  const saved = await readJson<{ head: string; evidence: Evidence[] }>(
    join(runDir, "evidence.json"),
  );
  return saved && saved.head === head ? saved.evidence : null;
}

/** Runs the brief's bar in the worktree and saves what it printed against the run's head. */
export async function runEvidence(tick: ExecContext, journal: Journal): Promise<Evidence[]> {
  const { config } = ready(tick);
  const brief = briefOf(tick);
  const runDir = join(tick.state.runs, journal.runId);
  const saved = await savedEvidence(runDir, journal.head!);
  if (saved) return saved;
  tick.log.step(
    `task ${brief.task}: running the verification bar (${brief.bar.length} command(s))`,
  );
  const wt = new Git(journal.worktree, config.timeouts.networkMs);
  const evidence = await runBar(wt, brief.bar, {
    timeoutMs: config.timeouts.barMs,
    maxBytes: config.evidenceMaxBytes,
    passEnv: config.barEnv,
  });
  await writeJson(join(runDir, "evidence.json"), { head: journal.head, evidence });
  return evidence;
}

/** The report that goes on main for this run, as it stands now. */
export async function runReport(tick: ExecContext, journal: Journal): Promise<Report> {
  const { config } = ready(tick);
  const brief = briefOf(tick);
  const runDir = join(tick.state.runs, journal.runId);
  let report: Report;
  if (journal.outcome === "SHIPPED") {
    report = (await readAgentReport(runDir, brief)).report!;
    const evidence = await runEvidence(tick, journal);
    report.warnings = [
      ...disagreements(report, evidence),
      ...report.warnings.filter((w) => !w.startsWith("DISAGREEMENT")),
    ];
    report.evidence = evidence;
    // What the agent pasted goes on main too: keep it to the size relay keeps of its own runs.
    report.verification = report.verification.map((v) => ({
      ...v,
      output: truncateOutput(v.output, config.evidenceMaxBytes),
    }));
  } else {
    const own = await readAgentReport(runDir, brief);
    report = own.report && !own.problem && own.report.outcome === "BLOCKED"
      ? own.report
      : blockedReport(brief, journal, await readRound(tick.state, brief));
  }
  report.task = brief.task;
  report.branch = brief.branch;
  report.head = journal.head!;
  report.pr = journal.pr ?? "";
  report.outcome = journal.outcome === "SHIPPED" ? "SHIPPED" : "BLOCKED";
  return report;
}

function blockedReport(
  brief: Brief,
  journal: Journal,
  record: { attempts: { runId: string; reason?: string }[] },
): Report {
  const attempts = record.attempts
    .filter((a) => a.reason)
    .map((a) => `- run ${a.runId}: ${a.reason}`)
    .join("\n");
  return {
    task: brief.task,
    outcome: "BLOCKED",
    branch: brief.branch,
    head: journal.head ?? "",
    pr: "",
    warnings: [],
    whatShipped:
      `Nothing shipped. relay stopped task ${brief.task} after its executor failed: ${journal.failure}.\n\nThe work of every attempt is kept on ${brief.branch} and under refs/relay/anchors/task-${brief.task}/.`,
    verification: [],
    beyond: "Nothing.",
    pushback: `Written by relay, not by the agent. Attempts:\n${
      attempts || "- (none recorded)"
    }\n\nLogs: .git/relay/runs/<run>/agent.log. A person should look before this task is queued again.`,
    evidence: [],
    extra: [],
  };
}
