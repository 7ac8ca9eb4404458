/** The merge gate end to end on real git: a bare origin, a task branch, paperwork on main, relay's records. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { gate } from "../lib/cli/gate.ts";
import { loadRepoConfig } from "../lib/config/repo.ts";
import { PlainExecutorForge } from "../lib/forge/plain_executor.ts";
import {
  decide,
  type GateCheck,
  type GateDecision,
  type GateInput,
  runGate,
} from "../lib/gate/gate.ts";
import { formatGate, gateExitCode } from "../lib/gate/output.ts";
import { revalidateOnMerge } from "../lib/gate/revalidate.ts";
import { loadGateInput } from "../lib/gate/load.ts";
import { Git } from "../lib/git/git.ts";
import { writeReport } from "../lib/protocol/report.ts";
import type { Evidence } from "../lib/protocol/types.ts";
import { statePaths } from "../lib/state/paths.ts";
import type { ReviewRecord, VerdictRecord } from "../lib/state/reviews.ts";
import { writeReview } from "../lib/state/tasks.ts";
import { brief, makeScene, type Scene } from "./helpers/scene.ts";

/** Passes while src/app.txt and src/feature-1.txt are both tracked. */
const BAR = ["git ls-files --error-unmatch src/app.txt src/feature-1.txt"];

interface Setup {
  scene: Scene;
  git: Git;
  head: string;
  /** origin/main once the paperwork landed: what the reviewer judged against. */
  main: string;
}

async function rev(scene: Scene, name: string): Promise<string> {
  return await scene.out(["rev-parse", name]);
}

/** Commits files (and deletions) on `branch` in the primary tree and pushes it; returns the new sha. */
async function commitOn(
  scene: Scene,
  branch: string,
  change: { write?: Record<string, string>; remove?: string[]; exec?: string[] },
  message: string,
): Promise<string> {
  await scene.git(scene.work, ["switch", "--quiet", branch]);
  for (const [path, text] of Object.entries(change.write ?? {})) await scene.write(path, text);
  for (const path of change.remove ?? []) {
    await scene.git(scene.work, ["rm", "--quiet", "--", path]);
  }
  for (const path of change.exec ?? []) await Deno.chmod(join(scene.work, path), 0o755);
  await scene.git(scene.work, ["add", "--all"]);
  await scene.git(scene.work, ["commit", "--quiet", "-m", message]);
  await scene.git(scene.work, ["push", "--quiet", "origin", `HEAD:refs/heads/${branch}`]);
  const sha = await rev(scene, "HEAD");
  await scene.git(scene.work, ["switch", "--quiet", "main"]);
  return sha;
}

function evidenceFor(tree: string, bar = BAR, exit = 0): Evidence[] {
  return bar.map((command) => ({ command, exit, tree, durationMs: 12, output: "src/app.txt\n" }));
}

/** The paperwork commit the executor makes: the DONE brief and the report for `head`. */
async function paperwork(
  scene: Scene,
  head: string,
  opts: { evidence?: Evidence[]; bar?: string[] } = {},
): Promise<string> {
  const bar = opts.bar ?? BAR;
  const tree = await rev(scene, `${head}^{tree}`);
  const report = writeReport({
    task: 1,
    outcome: "SHIPPED",
    branch: "task-1",
    head,
    pr: "task-1",
    warnings: [],
    whatShipped: "src/feature-1.txt",
    verification: bar.map((command) => ({ command, output: "src/app.txt\n", exit: 0 })),
    beyond: "Nothing.",
    pushback: "None.",
    evidence: opts.evidence ?? evidenceFor(tree, bar),
    extra: [],
  });
  const next = brief({
    task: 1,
    status: "DONE",
    kind: "feature",
    extraHeader: "Branch: task-1",
    bar,
  });
  return await commitOn(
    scene,
    "main",
    { write: { "NEXT-STEPS.md": next, "COWORK-STATUS.md": report } },
    "Task #1: status — SHIPPED (task-1)",
  );
}

function verdict(head: string, main: string, extra: Partial<VerdictRecord> = {}): VerdictRecord {
  return {
    runId: "r1",
    at: new Date().toISOString(),
    reportTask: 1,
    head,
    tree: "",
    main,
    verdict: "PASS",
    findings: [],
    ...extra,
  };
}

async function recordVerdicts(scene: Scene, verdicts: VerdictRecord[]): Promise<void> {
  const record: ReviewRecord = { task: 1, branch: "task-1", verdicts, voids: [], fixes: [] };
  await writeReview(statePaths(join(scene.work, ".git")), record);
}

async function openPr(git: Git, scene: Scene, branch: string, head: string): Promise<void> {
  const forge = new PlainExecutorForge(git, "origin", statePaths(join(scene.work, ".git")).prs);
  await forge.openPr({ task: 1, branch, head, base: "main", title: "Add a feature", body: "" });
}

/**
 * A shipped task 1: branch task-1 with `branch` files (src/feature-1.txt by
 * default), the paperwork commit on main, the PR record, and — unless
 * `verdict: false` — a PASS for the head judged on that main.
 */
async function setup(
  opts: {
    config?: string;
    branch?: { write?: Record<string, string>; remove?: string[]; exec?: string[] };
    verdict?: boolean;
  } = {},
): Promise<Setup> {
  const scene = await makeScene(opts.config === undefined ? {} : { config: opts.config });
  const git = new Git(scene.work);
  await scene.git(scene.work, ["branch", "task-1"]);
  const head = await commitOn(
    scene,
    "task-1",
    opts.branch ?? { write: { "src/feature-1.txt": "feature for task 1\n" } },
    "Task #1: add the feature",
  );
  const main = await paperwork(scene, head);
  await openPr(git, scene, "task-1", head);
  if (opts.verdict !== false) await recordVerdicts(scene, [verdict(head, main)]);
  return { scene, git, head, main };
}

/** Loads the gate's input the way `relay gate` does; `revalidate` may be replaced. */
async function inputs(s: Setup, revalidate?: GateInput["revalidate"]): Promise<GateInput> {
  await s.git.fetch("origin");
  const config = await loadRepoConfig(s.scene.work);
  const { input } = await loadGateInput({
    git: s.git,
    commonDir: join(s.scene.work, ".git"),
    config,
    scratchRoot: s.scene.dir,
  });
  if (revalidate) input.revalidate = revalidate;
  return input;
}

/** A revalidation that must not happen. */
const NO_REVALIDATE: GateInput["revalidate"] = () => {
  throw new Error("revalidate was called");
};

function byName(decision: GateDecision, name: GateCheck["name"]): GateCheck {
  const found = decision.checks.find((c) => c.name === name);
  assert.ok(found, `no ${name} check`);
  return found;
}

Deno.test("runGate() decides MERGE for a product-only PR with a PASS on the current main", async () => {
  const s = await setup();
  await using _ = s.scene;
  const decision = await runGate(await inputs(s, NO_REVALIDATE));
  assert.deepEqual(
    decision.checks.map((c) => `${c.result} ${c.name}`),
    ["PASS scope", "PASS verdict", "PASS evidence", "PASS in-flight", "PASS mergeable"],
  );
  assert.equal(decision.decision, "MERGE");
  assert.equal(decision.head, s.head);
  assert.equal(decision.base, s.main);
  assert.equal(gateExitCode(decision), 0);
  assert.equal(await rev(s.scene, "origin/main"), s.main, "the gate never merges");
});

Deno.test("runGate() refuses a PR that touches package.json, naming the file", async () => {
  const s = await setup({
    branch: { write: { "src/feature-1.txt": "feature\n", "package.json": "{}\n" } },
  });
  await using _ = s.scene;
  const decision = await runGate(await inputs(s, NO_REVALIDATE));
  const scope = byName(decision, "scope");
  assert.equal(scope.result, "REFUSE");
  assert.deepEqual(scope.files, ["package.json"]);
  assert.match(scope.reason, /package\.json \(dependency manifest\)/);
  assert.equal(decision.decision, "REFUSE");
  assert.equal(gateExitCode(decision), 10);
});

Deno.test("runGate() refuses a script committed with the executable bit", async () => {
  const s = await setup({
    branch: {
      write: { "src/feature-1.txt": "f\n", "src/run.sh": "echo hi\n" },
      exec: ["src/run.sh"],
    },
  });
  await using _ = s.scene;
  const scope = byName(await runGate(await inputs(s, NO_REVALIDATE)), "scope");
  assert.equal(scope.result, "REFUSE");
  assert.match(scope.reason, /src\/run\.sh \(executable bit\)/);
});

Deno.test("runGate() routes an owner-accepted infra change to a person (HUMAN)", async () => {
  const s = await setup({
    config: 'accepted_infra: [".github/workflows/**"]\n',
    branch: {
      write: { "src/feature-1.txt": "f\n", ".github/workflows/ci.yml": "on: push\n" },
    },
  });
  await using _ = s.scene;
  const decision = await runGate(await inputs(s, NO_REVALIDATE));
  const scope = byName(decision, "scope");
  assert.equal(scope.result, "HUMAN");
  assert.deepEqual(scope.files, [".github/workflows/ci.yml"]);
  assert.match(scope.reason, /^human path: an owner-accepted infra change; relay never merges it/);
  assert.equal(decision.decision, "HUMAN");
  assert.equal(gateExitCode(decision), 11);
});

Deno.test("runGate() routes owner-accepted infra to a person without waiting for a verdict (relay does not review it)", async () => {
  const s = await setup({
    config: 'accepted_infra: [".github/workflows/**"]\n',
    branch: {
      write: { "src/feature-1.txt": "f\n", ".github/workflows/ci.yml": "on: push\n" },
    },
    verdict: false,
  });
  await using _ = s.scene;
  const decision = await runGate(await inputs(s, NO_REVALIDATE));
  assert.deepEqual(byName(decision, "verdict"), {
    name: "verdict",
    result: "HUMAN",
    reason: "not reviewed by relay: a person reviews owner-accepted infra",
  });
  assert.equal(decision.decision, "HUMAN");
  assert.equal(gateExitCode(decision), 11);
});

Deno.test("runGate() waits when there is no verdict for the head yet", async () => {
  const s = await setup({ verdict: false });
  await using _ = s.scene;
  const decision = await runGate(await inputs(s, NO_REVALIDATE));
  assert.deepEqual(byName(decision, "verdict"), {
    name: "verdict",
    result: "WAIT",
    reason: "no verdict for this head yet",
  });
  assert.equal(decision.decision, "WAIT");
  assert.equal(gateExitCode(decision), 12);
});

Deno.test("runGate() refuses when the newest verdict for the head is FAIL", async () => {
  const s = await setup({ verdict: false });
  await using _ = s.scene;
  await recordVerdicts(s.scene, [
    verdict(s.head, s.main),
    verdict(s.head, s.main, {
      verdict: "FAIL",
      findings: [{ severity: "blocker", text: "no tests" }],
    }),
  ]);
  const decision = await runGate(await inputs(s, NO_REVALIDATE));
  assert.equal(byName(decision, "verdict").result, "REFUSE");
  assert.match(byName(decision, "verdict").reason, /FAIL \(1 finding\)/);
  assert.equal(decision.decision, "REFUSE");
});

Deno.test("runGate() waits on a PASS marked stale", async () => {
  const s = await setup({ verdict: false });
  await using _ = s.scene;
  await recordVerdicts(s.scene, [verdict(s.head, s.main, { stale: true })]);
  const decision = await runGate(await inputs(s, NO_REVALIDATE));
  assert.equal(byName(decision, "verdict").result, "WAIT");
  assert.match(byName(decision, "verdict").reason, /stale/);
});

Deno.test("runGate() keeps a PASS when main moved only by paperwork", async () => {
  const s = await setup();
  await using _ = s.scene;
  await commitOn(
    s.scene,
    "main",
    { write: { ".relay/inbox/0002-next.md": brief({ title: "Next" }) } },
    "relay: queue task 2",
  );
  const decision = await runGate(await inputs(s, NO_REVALIDATE));
  const v = byName(decision, "verdict");
  assert.equal(v.result, "PASS");
  assert.match(v.reason, /^main moved only by paperwork/);
  assert.notEqual(decision.base, s.main);
  assert.equal(decision.decision, "MERGE");
});

Deno.test("runGate() re-verifies on the merge when main moved by product code, and merges when the bar passes", async () => {
  const s = await setup();
  await using _ = s.scene;
  const moved = await commitOn(
    s.scene,
    "main",
    { write: { "src/other.txt": "other\n" } },
    "other work",
  );
  const input = await inputs(s);
  const real = input.revalidate;
  const calls: VerdictRecord[] = [];
  input.revalidate = (v) => {
    calls.push(v);
    return real(v);
  };
  const decision = await runGate(input);
  assert.equal(calls.length, 1);
  assert.equal(calls[0]!.head, s.head);
  const v = byName(decision, "verdict");
  assert.equal(v.result, "PASS");
  assert.equal(v.reason, `re-verified on the merge with main ${moved.slice(0, 12)}`);
  assert.equal(decision.decision, "MERGE");
  // The scratch worktree is gone, and git no longer knows it.
  const worktrees = await s.scene.out(["worktree", "list", "--porcelain"]);
  assert.equal(worktrees.split("\n").filter((l) => l.startsWith("worktree ")).length, 1);
  const leftovers = [...Deno.readDirSync(s.scene.dir)].filter((e) =>
    e.name.startsWith("relay-merge-preview-")
  );
  assert.deepEqual(leftovers, []);
});

Deno.test("runGate() waits when main moved by product code and the bar fails on the merge", async () => {
  const s = await setup();
  await using _ = s.scene;
  await commitOn(s.scene, "main", { remove: ["src/app.txt"] }, "drop the app file");
  const decision = await runGate(await inputs(s));
  const v = byName(decision, "verdict");
  assert.equal(v.result, "WAIT");
  assert.equal(
    v.reason,
    "stale: main moved by product code and the bar fails on the merge; the next review tick reviews again",
  );
  assert.equal(byName(decision, "mergeable").result, "PASS");
  assert.equal(decision.decision, "WAIT");
});

Deno.test("runGate() reuses a revalidation already recorded for the current main", async () => {
  const s = await setup({ verdict: false });
  await using _ = s.scene;
  const moved = await commitOn(s.scene, "main", { write: { "src/other.txt": "o\n" } }, "other");
  await recordVerdicts(s.scene, [
    verdict(s.head, s.main, {
      revalidations: [{ main: moved, mergeTree: "t", passed: true, at: new Date().toISOString() }],
    }),
  ]);
  const decision = await runGate(await inputs(s, NO_REVALIDATE));
  assert.equal(byName(decision, "verdict").result, "PASS");
  assert.equal(decision.decision, "MERGE");
});

Deno.test("runGate() waits when the head moved after the PASS", async () => {
  const s = await setup();
  await using _ = s.scene;
  const newHead = await commitOn(
    s.scene,
    "task-1",
    { write: { "src/feature-1.txt": "feature, fixed\n" } },
    "Task #1: fix",
  );
  await paperwork(s.scene, newHead);
  const decision = await runGate(await inputs(s, NO_REVALIDATE));
  assert.equal(decision.head, newHead);
  const v = byName(decision, "verdict");
  assert.equal(v.result, "WAIT");
  assert.match(v.reason, new RegExp(`^no verdict for this head yet .*${s.head.slice(0, 12)}`));
  assert.equal(byName(decision, "evidence").result, "PASS");
  assert.equal(decision.decision, "WAIT");
});

Deno.test("runGate() refuses a PR that conflicts with main, naming the file", async () => {
  const s = await setup({
    branch: { write: { "src/feature-1.txt": "f\n", "src/app.txt": "app v2 from the branch\n" } },
  });
  await using _ = s.scene;
  await commitOn(s.scene, "main", { write: { "src/app.txt": "app v2 from main\n" } }, "app v2");
  const decision = await runGate(await inputs(s, NO_REVALIDATE));
  const m = byName(decision, "mergeable");
  assert.equal(m.result, "REFUSE");
  assert.match(m.reason, /^conflicts with main [0-9a-f]{12}: src\/app\.txt$/);
  assert.deepEqual(m.files, ["src/app.txt"]);
  assert.match(byName(decision, "verdict").reason, /not re-verified while another check fails/);
  assert.equal(decision.decision, "REFUSE");
});

Deno.test("runGate() refuses while two PRs are open, naming them", async () => {
  const s = await setup();
  await using _ = s.scene;
  await scene2Branch(s);
  const decision = await runGate(await inputs(s, NO_REVALIDATE));
  const f = byName(decision, "in-flight");
  assert.equal(f.result, "REFUSE");
  assert.equal(f.reason, "2 PRs are open (task-1, task-2); relay allows one in flight");
  assert.equal(decision.decision, "REFUSE");
});

async function scene2Branch(s: Setup): Promise<void> {
  await s.scene.git(s.scene.work, ["branch", "task-2", "main"]);
  const head2 = await commitOn(s.scene, "task-2", { write: { "src/two.txt": "2\n" } }, "two");
  await openPr(s.git, s.scene, "task-2", head2);
}

Deno.test("runGate() refuses when relay's evidence ran on another tree", async () => {
  const s = await setup();
  await using _ = s.scene;
  const mainTree = await rev(s.scene, "main^{tree}");
  await paperwork(s.scene, s.head, { evidence: evidenceFor(mainTree) });
  await recordVerdicts(s.scene, [verdict(s.head, await rev(s.scene, "origin/main"))]);
  const decision = await runGate(await inputs(s, NO_REVALIDATE));
  const e = byName(decision, "evidence");
  assert.equal(e.result, "REFUSE");
  assert.match(e.reason, /not on the head's tree/);
});

Deno.test("runGate() refuses when relay's own run of a bar command failed", async () => {
  const s = await setup();
  await using _ = s.scene;
  const tree = await rev(s.scene, `${s.head}^{tree}`);
  await paperwork(s.scene, s.head, { evidence: evidenceFor(tree, BAR, 1) });
  await recordVerdicts(s.scene, [verdict(s.head, await rev(s.scene, "origin/main"))]);
  const e = byName(await runGate(await inputs(s, NO_REVALIDATE)), "evidence");
  assert.equal(e.result, "REFUSE");
  assert.match(e.reason, /Relay's run of `git ls-files .*` exited 1\./);
});

Deno.test("runGate() refuses a report that names another head", async () => {
  const s = await setup();
  await using _ = s.scene;
  const input = await inputs(s, NO_REVALIDATE);
  input.report = { ...input.report, head: s.main };
  const e = byName(await runGate(input), "evidence");
  assert.equal(e.result, "REFUSE");
  assert.match(e.reason, /The report on main is for head [0-9a-f]{12}, but the PR head is/);
});

Deno.test("runGate() refuses a report that fails the honesty check", async () => {
  const s = await setup();
  await using _ = s.scene;
  const input = await inputs(s, NO_REVALIDATE);
  input.report = { ...input.report, verification: [] };
  const e = byName(await runGate(input), "evidence");
  assert.equal(e.result, "REFUSE");
  assert.match(e.reason, /No pasted output for `git ls-files/);
});

Deno.test("formatGate() prints one line per check, then the decision", () => {
  const text = formatGate({
    decision: "REFUSE",
    head: "h",
    base: "b",
    checks: [
      {
        name: "scope",
        result: "REFUSE",
        reason: "not product code: package.json (dependency manifest)",
      },
      { name: "in-flight", result: "PASS", reason: "PR task-1 is the only open PR" },
    ],
  });
  assert.equal(
    text,
    [
      "REFUSE  scope      not product code: package.json (dependency manifest)",
      "PASS    in-flight  PR task-1 is the only open PR",
      "decision: REFUSE",
    ].join("\n"),
  );
});

Deno.test("revalidateOnMerge() runs the bar on the merge tree and cleans up its worktree", async () => {
  const s = await setup();
  await using _ = s.scene;
  const moved = await commitOn(s.scene, "main", { write: { "src/other.txt": "o\n" } }, "other");
  const expected =
    (await s.scene.out(["merge-tree", "--write-tree", moved, s.head])).split("\n")[0];
  const result = await revalidateOnMerge(s.git, {
    originMain: moved,
    head: s.head,
    bar: ["git ls-files src"],
    timeoutMs: 30_000,
    maxBytes: 4096,
    scratchRoot: s.scene.dir,
  });
  assert.equal(result.passed, true);
  assert.equal(result.mergeTree, expected);
  assert.equal(result.evidence[0]?.tree, expected);
  assert.equal(result.evidence[0]?.output, "src/app.txt\nsrc/feature-1.txt\nsrc/other.txt");
  const worktrees = await s.scene.out(["worktree", "list", "--porcelain"]);
  assert.equal(worktrees.split("\n").filter((l) => l.startsWith("worktree ")).length, 1);
  assert.equal(await rev(s.scene, "origin/main"), moved);
});

/** Runs the command module in-process, capturing what it prints. */
async function runCli(args: string[], cwd: string): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const original = console.log;
  console.log = (...parts: unknown[]) => lines.push(parts.join(" "));
  try {
    const code = await gate(args, { cwd });
    return { code, out: lines.join("\n") };
  } finally {
    console.log = original;
  }
}

Deno.test("relay gate decides MERGE on what relay poll shipped, and changes nothing", async () => {
  await using scene = await makeScene();
  await scene.write("brief.md", brief({ title: "Add the feature", bar: ["git ls-files src"] }));
  assert.equal((await scene.relay(["inbox", "add", "brief.md"])).code, 0);
  await Deno.remove(join(scene.work, "brief.md"));
  assert.equal((await scene.relay(["promote"])).code, 0);
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, poll.stdout + poll.stderr);

  await scene.git(scene.work, ["fetch", "--quiet", "origin"]);
  const head = await rev(scene, "origin/task-1");
  const main = await rev(scene, "origin/main");
  const before = await runCli([], scene.work);
  assert.equal(before.code, 12, before.out);
  assert.ok(before.out.split("\n").includes("WAIT    verdict    no verdict for this head yet"));

  await recordVerdicts(scene, [verdict(head, main)]);
  const snapshot = await scene.snapshot();
  const text = await runCli(["1"], scene.work);
  assert.equal(text.code, 0, text.out);
  assert.ok(text.out.split("\n").includes("PASS    scope      1 product file changed"));
  assert.match(text.out, /^decision: MERGE$/m);
  assert.equal(await scene.snapshot(), snapshot);

  const json = await runCli(["--json"], scene.work);
  assert.equal(json.code, 0);
  const data = JSON.parse(json.out);
  assert.equal(data.decision, "MERGE");
  assert.equal(data.head, head);
  assert.equal(data.pr, "task-1");
  assert.equal(data.checks.length, 5);
  assert.equal(await rev(scene, "origin/main"), main, "relay gate never merges");
});

Deno.test("relay gate <task> for a task the report on origin/main is not for: nothing to gate (13)", async () => {
  const s = await setup();
  await using _ = s.scene;
  const res = await runCli(["7"], s.scene.work);
  assert.equal(res.code, 13);
  assert.match(res.out, /^gate: nothing to gate: no report for task 7 on origin\/main/);
  assert.match(res.out, /^decision: NONE$/m);
});

Deno.test("decide() puts REFUSE before WAIT before HUMAN before MERGE", () => {
  const c = (result: GateCheck["result"]): GateCheck => ({ name: "scope", result, reason: "" });
  assert.equal(decide([c("HUMAN"), c("WAIT"), c("REFUSE")]), "REFUSE");
  assert.equal(decide([c("HUMAN"), c("WAIT"), c("PASS")]), "WAIT");
  assert.equal(decide([c("PASS"), c("HUMAN")]), "HUMAN");
  assert.equal(decide([c("PASS"), c("PASS")]), "MERGE");
});

Deno.test("loadGateInput() starts the checks for the report's head; runGate uses them when the PR is there", async () => {
  const s = await setup();
  await using _ = s.scene;
  const input = await inputs(s, NO_REVALIDATE);
  assert.equal(input.prepared?.head, s.head);
  assert.equal(input.prepared?.base, s.main);
  const decision = await runGate(input);
  assert.equal(decision.decision, "MERGE");
  assert.equal(byName(decision, "scope").reason, "1 product file changed");
});

Deno.test("the branch moved after the report: the gate judges the PR's head, not the checks started for the report's", async () => {
  const s = await setup();
  await using _ = s.scene;
  // The executor pushes again, after its report: a dependency manifest this time.
  const moved = await commitOn(s.scene, "task-1", { write: { "package.json": "{}\n" } }, "more");
  const input = await inputs(s, NO_REVALIDATE);
  assert.equal(input.prepared?.head, s.head, "started for the report's head");
  assert.equal(input.pr.head, moved);
  const decision = await runGate(input);
  assert.equal(decision.head, moved);
  const scope = byName(decision, "scope");
  assert.equal(scope.result, "REFUSE");
  assert.deepEqual(scope.files, ["package.json"]);
  assert.match(byName(decision, "evidence").reason, /but the PR head is/);
  assert.equal(byName(decision, "verdict").result, "WAIT");
  assert.equal(decision.decision, "REFUSE");
});

/** A Git that counts its commands under way (a diff read through a file counts until read). */
class CountingGit extends Git {
  underWay = 0;
  started = 0;
  override async run(...args: Parameters<Git["run"]>) {
    this.underWay++;
    this.started++;
    try {
      return await super.run(...args);
    } finally {
      this.underWay--;
    }
  }
  override async outViaFile(...args: Parameters<Git["outViaFile"]>) {
    this.underWay++;
    try {
      return await super.outViaFile(...args);
    } finally {
      this.underWay--;
    }
  }
}

Deno.test("loadGateInput() that finds no PR lets the checks it started end before it says so", async () => {
  const s = await setup();
  await using _ = s.scene;
  await Deno.remove(statePaths(join(s.scene.work, ".git")).prs, { recursive: true });
  const git = new CountingGit(s.scene.work);
  await git.fetch("origin");
  const config = await loadRepoConfig(s.scene.work);
  const before = git.started;
  await assert.rejects(
    loadGateInput({ git, commonDir: join(s.scene.work, ".git"), config }),
    (err: Error) =>
      err.name === "NothingToGate" && /has no PR for branch "task-1"/.test(err.message),
  );
  // The report's head was known, so the checks had started: a diff, a merge-tree, a read.
  assert.ok(git.started - before >= 4, `${git.started - before} git commands`);
  assert.equal(git.underWay, 0, "a git command of the gate is still running");
});

Deno.test("the branch moved after the report: the checks started for the report's head have ended when the gate answers", async () => {
  const s = await setup();
  await using _ = s.scene;
  const moved = await commitOn(s.scene, "task-1", { write: { "src/more.txt": "x\n" } }, "more");
  const git = new CountingGit(s.scene.work);
  await git.fetch("origin");
  const { input } = await loadGateInput({
    git,
    commonDir: join(s.scene.work, ".git"),
    config: await loadRepoConfig(s.scene.work),
  });
  input.revalidate = NO_REVALIDATE;
  assert.equal(input.prepared?.head, s.head);
  // The dropped checks' end is held back: the gate must not answer before it.
  let release!: () => void;
  const held = new Promise<void>((resolve) => release = resolve);
  const prepared = input.prepared!;
  input.prepared = { ...prepared, settled: prepared.settled.then(() => held) };
  let answered = false;
  const judging = runGate(input).then((d) => {
    answered = true;
    return d;
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(answered, false, "the gate answered before the checks it dropped had ended");
  release();
  const decision = await judging;
  assert.equal(decision.head, moved);
  assert.equal(byName(decision, "scope").reason, "2 product files changed");
  assert.equal(git.underWay, 0, "a git command of the gate is still running");
});

/** One git trace2 event: a process's start (with its argv) or its exit. */
interface TraceEvent {
  event: string;
  sid: string;
  argv?: string[];
}

/**
 * relay gate, run as the binary runs, with git's trace2 events on for its git processes only
 * (an environment of its own: work this test process still has under way, another test's, is
 * not in the trace); returns its result and relay's git events.
 */
async function tracedGate(
  scene: Scene,
  args: string[],
): Promise<{ code: number; out: string; events: TraceEvent[] }> {
  const trace = join(scene.dir, `trace-${crypto.randomUUID()}`);
  const res = await scene.relay(["gate", ...args], { env: { GIT_TRACE2_EVENT: trace } });
  const events = (await Deno.readTextFile(trace)).trim().split("\n")
    .map((line) => JSON.parse(line) as TraceEvent)
    .filter((e) => e.event === "start" || e.event === "exit");
  return { code: res.code, out: res.stdout, events };
}

/** The sids of the git processes relay itself started whose argv has `word`. */
function started(events: TraceEvent[], word: string): string[] {
  return events.filter((e) =>
    e.event === "start" && e.argv?.[2] === "core.fsmonitor=false" && e.argv.includes(word)
  ).map((e) => e.sid);
}

/**
 * The primary tree's remote answers a fetch only after two seconds: the gate's guessed checks,
 * on the refs the clone has, start before the fetch can move them.
 */
async function slowRemote(scene: Scene): Promise<void> {
  const slow = join(scene.dir, "slow-upload-pack");
  await Deno.writeTextFile(slow, '#!/bin/sh\nsleep 2\nexec git-upload-pack "$@"\n');
  await Deno.chmod(slow, 0o755);
  await scene.git(scene.work, ["config", "remote.origin.uploadpack", slow]);
}

/** A second clone of the scene's origin, for a push the primary tree does not see until it fetches. */
async function otherClone(scene: Scene): Promise<string> {
  const other = join(scene.dir, "other");
  await scene.git(scene.dir, ["clone", "--quiet", `file://${scene.origin}`, other]);
  return other;
}

async function pushFrom(
  scene: Scene,
  clone: string,
  branch: string,
  files: Record<string, string>,
): Promise<string> {
  await scene.git(clone, ["switch", "--quiet", branch]);
  for (const [path, text] of Object.entries(files)) {
    await Deno.writeTextFile(join(clone, path), text);
  }
  await scene.git(clone, ["add", "--all"]);
  await scene.git(clone, ["commit", "--quiet", "-m", `more on ${branch}`]);
  await scene.git(clone, ["push", "--quiet", "origin", branch]);
  return await scene.out(["rev-parse", "HEAD"], clone);
}

Deno.test("relay gate starts the scope diff on the clone's refs while a slow remote answers the fetch, and uses it", async () => {
  const s = await setup();
  await using _ = s.scene;
  // The remote takes two seconds to answer: the guessed checks start well before it has.
  await slowRemote(s.scene);
  const res = await tracedGate(s.scene, ["--json"]);
  assert.equal(res.code, 0, res.out);
  const data = JSON.parse(res.out);
  assert.equal(data.decision, "MERGE");
  assert.equal(data.head, s.head);
  assert.equal(data.base, s.main);
  const [fetch] = started(res.events, "fetch");
  const diffs = started(res.events, "--raw");
  assert.equal(diffs.length, 1, "one scope diff: the one started during the fetch");
  const order = res.events.map((e) => `${e.event} ${e.sid}`);
  assert.ok(
    order.indexOf(`start ${diffs[0]}`) < order.indexOf(`exit ${fetch}`),
    "the scope diff started before the fetch ended",
  );
  const exits = new Set(res.events.filter((e) => e.event === "exit").map((e) => e.sid));
  assert.deepEqual(started(res.events, "").filter((sid) => !exits.has(sid)), []);
});

Deno.test("relay gate whose fetch moves the PR's branch judges the new head, not the guessed one", async () => {
  const s = await setup();
  await using _ = s.scene;
  const other = await otherClone(s.scene);
  const moved = await pushFrom(s.scene, other, "task-1", { "package.json": "{}\n" });
  await slowRemote(s.scene); // the guess is made on the branch as the clone had it
  const res = await tracedGate(s.scene, ["--json"]);
  const data = JSON.parse(res.out);
  assert.equal(data.head, moved);
  assert.equal(data.decision, "REFUSE");
  const scope = data.checks.find((c: GateCheck) => c.name === "scope");
  assert.deepEqual(scope.files, ["package.json"]);
  // The report still names the old head: the checks started for it are not the PR's.
  assert.equal(started(res.events, "--raw").length, 2, "the report's head's diff, and the PR's");
  const exits = new Set(res.events.filter((e) => e.event === "exit").map((e) => e.sid));
  assert.deepEqual(started(res.events, "").filter((sid) => !exits.has(sid)), [], "all ended");
});

Deno.test("relay gate whose fetch moves main judges the PR onto the new main", async () => {
  const s = await setup();
  await using _ = s.scene;
  const other = await otherClone(s.scene);
  const main = await pushFrom(s.scene, other, "main", { "src/other.txt": "a person's change\n" });
  await slowRemote(s.scene); // the guess is made on main as the clone had it
  const res = await tracedGate(s.scene, ["--json"]);
  const data = JSON.parse(res.out);
  assert.equal(data.base, main);
  assert.equal(data.head, s.head);
  const mergeable = data.checks.find((c: GateCheck) => c.name === "mergeable");
  assert.match(mergeable.reason, new RegExp(main.slice(0, 12)));
  assert.equal(started(res.events, "--raw").length, 2, "the guessed diff and the right one");
});
