/**
 * A task's configuration as it is resolved when the task starts: every value
 * with where it came from, the legacy `.review-loop/config.md` keys relay
 * maps, the profile's limits on what the repo config asks for, and the one
 * start line.
 */
import assert from "node:assert/strict";
import { InputError } from "../lib/errors.ts";
import { parseLegacy } from "../lib/config/legacy.ts";
import { parseProfile, withFlags } from "../lib/config/profile.ts";
import { parseRepoConfig } from "../lib/config/repo.ts";
import { resolveTaskConfig, startLine } from "../lib/config/task_config.ts";

const PROFILE = "/home/op/.config/relay/profile.yaml";
const ROLES = "roles:\n  executor: { vendor: claude }\n  reviewer: { vendor: codex }\n";

function resolve(profileText: string, repoText: string, legacyText?: string) {
  const repoKeys = new Set([...repoText.matchAll(/^([a-z_]+):/gm)].map((m) => m[1]!));
  return resolveTaskConfig({
    profile: parseProfile(profileText, PROFILE),
    repo: parseRepoConfig(repoText, ".relay/config.yaml"),
    repoKeys,
    legacy: legacyText === undefined ? null : parseLegacy(legacyText),
    at: "2026-12-01T00:00:00.000Z",
  });
}

Deno.test("with nothing set, every value is relay's default and says so", () => {
  const c = resolve(ROLES, "");
  assert.deepEqual(c.attempts, { value: 2, from: "default" });
  assert.deepEqual(c.fixRounds, { value: 3, from: "default" });
  assert.deepEqual(c.merge, { value: "auto", from: "default" });
  assert.deepEqual(c.safetyMode, { value: "efficient", from: "default" });
  assert.deepEqual(c.testCommand, { value: null, from: "default" });
  assert.equal(c.roles.security.from, "default");
  assert.equal(c.roles.security.spec.vendor, "claude");
  assert.deepEqual(c.stages.filter((s) => !s.runs).map((s) => `${s.stage}: ${s.why}`), [
    "plan: plan_review is off",
    "docs: no docs_file is set",
  ]);
  assert.deepEqual(c.warnings, []);
});

Deno.test("the profile decides merge_policy over the repo's merge; repo values say they came from it", () => {
  const c = resolve(
    ROLES + "merge_policy: human\nsafety_mode: strict\ntest_command: npm test\n",
    "merge: auto\nattempts: 3\ndocs_file: docs/CHANGES.md\nplan_review: on\n",
  );
  assert.deepEqual(c.merge, { value: "human", from: "profile" });
  assert.deepEqual(c.attempts, { value: 3, from: "repo config" });
  assert.deepEqual(c.docsFile, { value: "docs/CHANGES.md", from: "repo config" });
  assert.deepEqual(c.planReview, { value: true, from: "repo config" });
  assert.deepEqual(c.safetyMode, { value: "strict", from: "profile" });
  assert.deepEqual(c.testCommand, { value: "npm test", from: "profile" });
  assert.ok(c.stages.every((s) => s.runs), JSON.stringify(c.stages));
});

Deno.test("a repo value over the profile's limit is refused naming the file, the key and both fixes", () => {
  let err: unknown;
  try {
    resolve(ROLES + "limits: { attempts: 2 }\n", "attempts: 5\n");
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof InputError, String(err));
  assert.equal(err.location.key, "attempts");
  assert.match(
    err.message,
    /\.relay\/config\.yaml \(key "attempts"\): attempts is 5, over the operator profile's limit of 2/,
  );
  assert.match(
    err.fix ?? "",
    /lower it to 2 or less, or raise limits\.attempts in the operator profile/,
  );
});

Deno.test("the legacy file's keys map for the task and win over the repo config; the rest warn", () => {
  const legacy = [
    "# review-loop settings",
    "",
    "- docs_file: docs/NOTES.md",
    "- skip_quality_polish: true",
    "- soft_limit_plan: 2",
    "- soft_limit_exec: 4",
    "- auto_commit: true",
    "- reviewer_model: gpt-9",
    "- executor_model: inherit",
    "- entry: paired-session",
  ].join("\n");
  const c = resolve(ROLES, "fix_rounds: 1\nplan_review: on\n", legacy);
  assert.deepEqual(c.docsFile, { value: "docs/NOTES.md", from: "legacy config" });
  assert.deepEqual(c.skipQualityPolish, { value: true, from: "legacy config" });
  assert.deepEqual(c.planRounds, { value: 2, from: "legacy config" });
  // Four exec rounds in all: the first and three fixes.
  assert.deepEqual(c.fixRounds, { value: 3, from: "legacy config" });
  assert.deepEqual(c.warnings, [
    "auto_commit in .review-loop/config.md is not applied: who commits is the operator profile's safety_mode (efficient: the executor commits; strict: relay commits the author's files)",
    "reviewer_model in .review-loop/config.md is not applied: models come from the operator profile (roles.reviewer.model)",
  ]);
  const line = startLine(7, c);
  assert.equal(
    line,
    "task 7 starts: executor claude claude-opus-5-5, reviewer codex gpt-6.1-sol, security claude claude-opus-5-5 (the executor's); " +
      "plan rounds 2, exec rounds 4; attempts 2 per round; timeout 60m/30m; docs file docs/NOTES.md; " +
      "skip-quality-polish yes; merge auto, efficient; " +
      "from .review-loop/config.md: docs_file, skip_quality_polish, soft_limit_plan, soft_limit_exec",
  );
});

Deno.test("the legacy reader takes front matter, plain lines and backticked keys; a bad value is warned about, not applied", () => {
  const l = parseLegacy(
    "---\ndocs_file: 'docs/A.md'\n---\n# Notes\n`soft_limit_exec`: 2 # two rounds\nskip_quality_polish: maybe\nsoft_limit_plan: zero\ndocs_file: ../outside.md\n",
  );
  assert.equal(l.docsFile, "docs/A.md");
  assert.equal(l.execRounds, 2);
  assert.equal(l.skipQualityPolish, undefined);
  assert.equal(l.planRounds, undefined);
  assert.deepEqual(l.warnings, [
    'skip_quality_polish: "maybe" in .review-loop/config.md is not true or false; it is not applied',
    'soft_limit_plan: "zero" in .review-loop/config.md is not a whole number from 1; it is not applied',
    'docs_file: "../outside.md" in .review-loop/config.md is not a path inside the repository; it is not applied',
  ]);
});

Deno.test("a command executor and a named security role show in the start line as they are", () => {
  const c = resolve(
    'roles:\n  executor: { vendor: command, argv: ["/opt/agent", "{prompt}"], timeout: 90s }\n' +
      "  reviewer: { vendor: codex }\n  gate: { vendor: claude, model: claude-z }\nhandsfree: true\n",
    "",
  );
  assert.equal(c.roles.security.from, "profile");
  assert.match(
    startLine(1, c),
    /^task 1 starts: executor command \/opt\/agent, reviewer codex gpt-6\.1-sol, security claude claude-z; plan rounds off, exec rounds 4; attempts 2 per round; timeout 90s\/30m; docs file none; skip-quality-polish no; merge auto, efficient, handsfree; from \.review-loop\/config\.md: nothing$/,
  );
});

Deno.test("a command's flags decide over the profile and say so; a brief's Acceptance: human is never waived", () => {
  const profile = withFlags(parseProfile(ROLES + "merge_policy: human\n", PROFILE), {
    mergePolicy: "auto",
    safetyMode: "strict",
    handsfree: true,
  });
  const inputs = {
    profile,
    repo: parseRepoConfig("", ".relay/config.yaml"),
    repoKeys: new Set<string>(),
    legacy: null,
    at: "2026-12-01T00:00:00.000Z",
  };
  const c = resolveTaskConfig(inputs);
  assert.deepEqual(c.merge, { value: "auto", from: "flag" });
  assert.deepEqual(c.safetyMode, { value: "strict", from: "flag" });
  assert.deepEqual(c.handsfree, { value: true, from: "flag" });
  assert.deepEqual(resolveTaskConfig({ ...inputs, briefAcceptance: "human" }).merge, {
    value: "human",
    from: "brief",
  });
  // No flags: the profile as it is.
  assert.equal(withFlags(profile, undefined), profile);
});
