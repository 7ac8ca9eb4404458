/** README.md's examples are what relay actually reads: a README that lies is caught here. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT } from "./helpers/scene.ts";
import { parseBrief } from "../lib/protocol/brief.ts";
import { parseReport } from "../lib/protocol/report.ts";
import { DEFAULT_REPO_CONFIG, parseRepoConfig } from "../lib/config/repo.ts";
import { parseProfile } from "../lib/config/profile.ts";
import { Exit } from "../lib/errors.ts";
import { COMMANDS } from "../lib/cli/dispatch.ts";

const README = Deno.readTextFileSync(join(ROOT, "README.md"));

/** The first fenced block after the heading `heading`, with its language tag. */
function firstBlockAfter(heading: string): { lang: string; body: string } {
  const start = README.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `README has no "${heading}"`);
  const rest = README.slice(start + heading.length + 2);
  const m = /^(`{3,})(\w*)\n([\s\S]*?)^\1$/m.exec(rest);
  assert.ok(m, `no fenced block after "${heading}"`);
  // Nothing but prose between the heading and the block: no other heading.
  assert.doesNotMatch(rest.slice(0, m.index), /^#/m, `the block is not right under "${heading}"`);
  return { lang: m[2]!, body: m[3]! };
}

Deno.test("README's NEXT-STEPS.md example parses as an open brief", () => {
  const example = firstBlockAfter("### The brief: `NEXT-STEPS.md` and the inbox");
  const brief = parseBrief(example.body, "README.md");
  assert.equal(brief.status, "OPEN");
  assert.equal(brief.task, 3);
  assert.equal(brief.branch, "task-3");
  assert.deepEqual(brief.bar, ["npm test", "node scripts/probe-health.js"]);
});

Deno.test("README's COWORK-STATUS.md example parses, with its relay line and evidence", () => {
  const example = firstBlockAfter("### The report: `COWORK-STATUS.md`");
  const report = parseReport(example.body, "README.md");
  assert.equal(report.outcome, "SHIPPED");
  assert.equal(report.warnings.length, 1);
  assert.match(report.warnings[0]!, /^DISAGREEMENT: /);
  assert.deepEqual(report.verification.map((r) => [r.command, r.exit]), [["npm test", 0]]);
  assert.deepEqual(report.evidence.map((e) => [e.command, e.exit]), [["npm test", 1]]);
});

Deno.test("README's .relay/config.yaml example is exactly the defaults", () => {
  const example = firstBlockAfter("## `.relay/config.yaml`");
  assert.equal(example.lang, "yaml");
  assert.deepEqual(parseRepoConfig(example.body, "README.md"), DEFAULT_REPO_CONFIG);
});

Deno.test("README's profile example is a valid operator profile", () => {
  const example = firstBlockAfter("## The operator profile");
  assert.equal(example.lang, "yaml");
  const profile = parseProfile(example.body, "README.md");
  assert.equal(profile.roles.executor.vendor, "claude");
  assert.equal(profile.roles.reviewer.vendor, "codex");
  assert.equal(profile.roles.executor.timeoutMs, 60 * 60_000);
  assert.equal(profile.roles.reviewer.timeoutMs, 30 * 60_000);
});

Deno.test("README's commands table names exactly the commands main.ts dispatches", () => {
  const dispatched = Object.keys(COMMANDS);
  const documented = [...README.matchAll(/^\| `relay ([\w-]+)/gm)].map((m) => m[1]!);
  assert.deepEqual([...new Set(documented)].sort(), [...dispatched].sort());
  // One table, each row once (a merge that concatenated both sides once repeated it four times).
  assert.equal([...README.matchAll(/^\| command +\| what it does/gm)].length, 1);
  const rows = [...README.matchAll(/^\| `relay .*$/gm)].map((m) => m[0]);
  assert.deepEqual(rows.filter((r, i) => rows.indexOf(r) !== i), []);
});

Deno.test("README's exit codes match lib/errors.ts", () => {
  for (
    const [code, word] of [[Exit.ok, "done"], [Exit.failure, "failure"], [
      Exit.badInput,
      "bad input",
    ], [Exit.hold, "HOLD"]] as const
  ) {
    assert.match(README, new RegExp(`^\\| ${code} +\\| ${word}`, "m"));
  }
});

Deno.test("README's vendor table shows the exact argv lib/agents/presets.ts builds", async () => {
  const { buildInvocation } = await import("../lib/agents/presets.ts");
  // As a shell would need it: an argument with spaces or shell characters in double quotes.
  const shown = (argv: string[]) =>
    argv.map((a) => (a !== "<prompt>" && /[^\w./,:=-]/.test(a) ? `"${a}"` : a)).join(" ");
  const rows: [string, string, boolean, string][] = [
    ["claude", "executor", false, "| claude  | executor | `"],
    ["claude", "executor", true, "| claude  | executor | as root: `"],
    ["claude", "reviewer", false, "| claude  | reviewer | `"],
    ["codex", "executor", false, "| codex   | executor | `"],
    ["codex", "reviewer", false, "| codex   | reviewer | `"],
  ];
  for (const [vendor, role, isRoot, prefix] of rows) {
    const inv = buildInvocation(
      role as "executor" | "reviewer",
      { vendor: vendor as "claude" | "codex", model: "M", timeoutMs: 1, env: {} },
      "<prompt>",
      { isRoot },
    );
    assert.equal(inv.kind, "process");
    if (inv.kind !== "process") continue;
    const line = README.split("\n").find((l) => l.startsWith(prefix));
    assert.ok(line, `README has no row starting "${prefix}"`);
    const documented = line.slice(prefix.length, line.indexOf("`", prefix.length));
    assert.equal(documented, shown(inv.argv), `${vendor} ${role}${isRoot ? " as root" : ""}`);
  }
});

Deno.test("README's verdict example parses as a FAIL with its findings", async () => {
  const { parseVerdict } = await import("../lib/protocol/verdict.ts");
  const example = firstBlockAfter("## The reviewer side");
  const parsed = parseVerdict(example.body);
  assert.ok(parsed.ok, parsed.ok ? "" : parsed.problem);
  assert.equal(parsed.value.verdict, "FAIL");
  assert.deepEqual(parsed.value.findings.map((f) => f.severity), ["blocker", "minor"]);
});

Deno.test("README's gate example is formatGate() output, with the decision and exit code it implies", async () => {
  const { decide } = await import("../lib/gate/gate.ts");
  const { formatGate, gateExitCode } = await import("../lib/gate/output.ts");
  type Check = import("../lib/gate/gate.ts").GateCheck;
  const lines = firstBlockAfter("### Example: a PR that adds `package.json`").body.trimEnd()
    .split("\n");
  assert.equal(lines[0], "$ relay gate");
  assert.match(lines[1]!, /^gate: PR task-1 at [0-9a-f]{12} onto origin\/main [0-9a-f]{12}$/);
  const shown = lines.slice(2, lines.indexOf("$ echo $?"));
  const checks: Check[] = shown.slice(0, -1).map((line) => {
    const m = /^(PASS|REFUSE|HUMAN|WAIT) +(\S+) +(.+)$/.exec(line);
    assert.ok(m, `not a gate line: ${line}`);
    return { name: m[2] as Check["name"], result: m[1] as Check["result"], reason: m[3]! };
  });
  assert.deepEqual(checks.map((c) => c.name), [
    "scope",
    "verdict",
    "evidence",
    "in-flight",
    "mergeable",
  ]);
  const decision = { decision: decide(checks), checks, head: "", base: "" };
  assert.equal(formatGate(decision), shown.join("\n"));
  assert.equal(lines.at(-1), String(gateExitCode(decision)));
});

Deno.test("README's refusal table shows only built-in refusals, each under its own category", async () => {
  const { BUILT_IN_REFUSALS } = await import("../lib/gate/refusals.ts");
  const rows = [...README.matchAll(/^ {2}\| ([A-Za-z' ]+?) +\| (`.*`) +\|$/gm)];
  const categories = new Set(BUILT_IN_REFUSALS.map((r) => r.why));
  assert.deepEqual(new Set(rows.map((r) => r[1])), categories);
  for (const [, why, cell] of rows) {
    for (const [, glob] of cell!.matchAll(/`([^`]+)`/g)) {
      assert.ok(
        BUILT_IN_REFUSALS.some((r) => r.glob === glob && r.why === why),
        `${glob} is not a built-in "${why}" refusal`,
      );
    }
  }
});

Deno.test("README's gh commands use only flags lib/forge/ passes to gh", async () => {
  const forge = (await Promise.all(
    ["gh.ts", "github_executor.ts", "github_planner.ts"].map((f) =>
      Deno.readTextFile(join(ROOT, "lib", "forge", f))
    ),
  )).join("\n");
  const section = README.slice(
    README.indexOf("\n## Forges\n"),
    README.indexOf("\n## The operator"),
  );
  const commands = [...section.matchAll(/`(gh [^`]+)`/g)].map((m) => m[1]!);
  assert.ok(commands.length >= 6, "the Forges section shows the gh commands");
  for (const command of commands) {
    for (const [flag] of command.matchAll(/--[a-z-]+/g)) {
      assert.ok(forge.includes(`"${flag}"`), `${command}: relay never passes ${flag}`);
    }
  }
  for (const field of "number,url,headRefOid,headRefName,state,isCrossRepository".split(",")) {
    assert.match(forge, new RegExp(`\\b${field}\\b`));
  }
});
