/**
 * A person's acceptance, by digest. `relay accept|reject <task> --intent-only`
 * works out exactly what it would act on — the task, the PR's head and tree,
 * the main it lands on, the head's receipts, the open findings, the reason —
 * and prints the sha256 of it. `--expect <digest>` acts only while the state
 * still yields that digest: a new head, a moved main, a new receipt or
 * finding, another reason, and the person is asked to look again.
 *
 * Each intent printed is kept under `.git/relay/intents/<digest>.json`, so a
 * refusal can say what changed. Nothing decides from those files: the digest
 * is always computed afresh.
 */
import { join } from "../../path.ts";
import { sha256 } from "../../proc/hash.ts";
import { readJson, writeJson } from "../../state/json_file.ts";
import { addReceipt, readTask, type Verification } from "../../state/tasks.ts";
import type { StatePaths } from "../../state/paths.ts";
import { type Finding, sendsBack } from "../../state/reviews.ts";
import {
  type AcceptRequest,
  type Intent,
  openFindings,
  type PlannerEvent,
  type PlannerState,
  stageRunsSince,
  stagesDue,
} from "../../task/planner.ts";
import { type PlanContext, prOf, ready, subjectOf } from "./context.ts";

const DIGEST_CHARS = 24;

function intentsDir(state: StatePaths): string {
  return join(state.dir, "intents");
}

/** The digest of an intent: sha256 of its JSON with the keys in a fixed order. */
export async function intentDigest(i: Intent): Promise<string> {
  const canonical: Intent = {
    task: i.task,
    action: i.action,
    pr: i.pr,
    head: i.head,
    tree: i.tree,
    main: i.main,
    receipts: i.receipts.map((r) => ({ stage: r.stage, result: r.result, digest: r.digest })),
    findings: [...i.findings],
    infra: [...i.infra],
    verifications: [...i.verifications],
    reason: i.reason,
    ...(i.overrides ? { overrides: [...i.overrides] } : {}),
    ...(i.notRun ? { notRun: [...i.notRun] } : {}),
  };
  return (await sha256(JSON.stringify(canonical))).slice(0, DIGEST_CHARS);
}

const finding = (f: Finding) => `[${f.severity}] ${f.text}`;

/** A verification as the intent (and relay status) lists it. */
export function verificationLine(v: Verification): string {
  return `${v.name} (sha256 ${v.sha256.slice(0, 12)}, ${v.at})${v.text ? `: ${v.text}` : ""}`;
}

/** How `now` differs from `before`, a line per field. */
export function intentChanges(before: Intent, now: Intent): string[] {
  const out: string[] = [];
  const keys = ["task", "action", "pr", "head", "tree", "main", "reason"] as const;
  for (const k of keys) {
    if (before[k] !== now[k]) {
      out.push(`${k}: ${JSON.stringify(before[k])} → ${JSON.stringify(now[k])}`);
    }
  }
  const list = (name: string, a: string[], b: string[]) => {
    for (const x of b.filter((x) => !a.includes(x))) out.push(`${name} added: ${x}`);
    for (const x of a.filter((x) => !b.includes(x))) out.push(`${name} gone: ${x}`);
  };
  const receipt = (r: Intent["receipts"][number]) =>
    `${r.stage} ${r.result} (${r.digest.slice(0, 16)})`;
  list("receipt", before.receipts.map(receipt), now.receipts.map(receipt));
  list("finding", before.findings, now.findings);
  list("infra file", before.infra ?? [], now.infra);
  list("verification", before.verifications ?? [], now.verifications);
  list("overridden rejection", before.overrides ?? [], now.overrides ?? []);
  list("stage not run", before.notRun ?? [], now.notRun ?? []);
  return out;
}

/** The `weigh-acceptance` effect. */
export async function weighAcceptance(
  tick: PlanContext,
  s: PlannerState,
  ask: AcceptRequest,
): Promise<PlannerEvent> {
  const { primary } = ready(tick);
  const subject = subjectOf(tick);
  const pr = prOf(tick);
  const head = pr.head;
  const record = await readTask(tick.state, subject.task);
  const receipts = [];
  for (const round of record.rounds) {
    for (const r of round.receipts) {
      if (r.head !== head) continue;
      receipts.push({ stage: r.stage, result: r.result, digest: await sha256(JSON.stringify(r)) });
    }
  }
  const tree = await primary.out(["rev-parse", "--verify", "--end-of-options", `${head}^{tree}`]);
  const intent: Intent = {
    task: subject.task,
    action: ask.action,
    pr: pr.id,
    head,
    tree,
    main: s.seen!.originMain!,
    receipts,
    findings: (s.record ? openFindings(s.record, head) : []).map(finding),
    infra: s.record?.human?.head === head ? [...s.record.human.files] : [],
    verifications: (record.verifications ?? []).filter((v) => v.tree === tree).map(
      verificationLine,
    ),
    reason: ask.reason,
  };
  if (ask.override && s.record) {
    intent.notRun = stagesDue(s.seen!, s.record, head);
    intent.overrides = stageRunsSince(s.record, head).filter(sendsBack).map((r) =>
      `${r.stage} stage ${r.result}: ${
        r.findings.map(finding).join("; ") || r.detail || "no findings"
      }`
    );
  }
  const digest = await intentDigest(intent);
  await writeJson(join(intentsDir(tick.state), `${digest}.json`), intent);
  let changed: string[] = [];
  if (ask.expect !== null && ask.expect !== digest && /^[0-9a-f]+$/.test(ask.expect)) {
    const before = await readJson<Intent>(join(intentsDir(tick.state), `${ask.expect}.json`))
      .catch(() => null);
    if (before) changed = intentChanges(before, intent);
  }
  return { kind: "acceptance-weighed", intent, digest, changed };
}

/** The acceptance receipt, once the merge landed or the fix brief was written. */
export async function recordAcceptance(tick: PlanContext, s: PlannerState): Promise<void> {
  const w = s.intent;
  if (!w) return;
  const subject = subjectOf(tick);
  await addReceipt(tick.state, { task: subject.report.task, fixes: subject.brief.fixes }, {
    stage: "acceptance",
    runId: `acceptance-${w.digest}`,
    at: new Date().toISOString(),
    result: w.intent.action === "accept" ? "ACCEPTED" : "REJECTED",
    head: w.intent.head,
    tree: w.intent.tree,
    base: w.intent.main,
    detail: `digest ${w.digest}${w.intent.overrides?.length ? ", over a stage's rejection" : ""}${
      w.intent.reason ? `: ${w.intent.reason}` : ""
    }`,
  });
}
