/** The audit's classification of main's history against relay's notes: one case per kind. */
import assert from "node:assert/strict";
import { audit, type AuditCommit } from "../lib/gate/audit.ts";
import type { NoteRecord } from "../lib/git/notes.ts";

const P = "p".repeat(40);
const H = "a".repeat(40);
const OTHER = "b".repeat(40);
const at = "2026-12-02T00:00:00Z";

function commit(subject: string, files: string[], parents = [P]): AuditCommit {
  return {
    sha: subject.replace(/\W/g, "").padEnd(40, "0").slice(0, 40),
    parents,
    author: "A <a@x>",
    subject,
    files,
  };
}

const pass: NoteRecord = { kind: "verdict", task: 3, head: H, result: "PASS", findings: 0, at };
const merge: NoteRecord = { kind: "gate", task: 3, head: H, base: P, decision: "MERGE", at };
const relayMerge = (files = ["src/a.ts"]) =>
  commit("Merge task-3: Add a (task 3, reviewed by relay)", files, [P, H]);

function kinds(commits: AuditCommit[], notes: [string, NoteRecord[]][]): (string | undefined)[] {
  return audit(commits, new Map(notes)).map((e) => e.violation?.kind ?? e.class);
}

Deno.test("paperwork, a reviewed and gated merge, an empty commit: no violation", () => {
  assert.deepEqual(
    kinds([
      commit("Task #3: status", ["NEXT-STEPS.md", "COWORK-STATUS.md", ".relay/inbox/0004-b.md"]),
      relayMerge(),
      commit("empty", []),
    ], [[H, [pass, merge]]]),
    ["paperwork", "task-merge", "empty"],
  );
});

Deno.test("each violation kind", () => {
  assert.deepEqual(kinds([commit("mixed", ["NEXT-STEPS.md", "src/x.ts"])], []), [
    "paperwork-with-product",
  ]);
  assert.deepEqual(kinds([commit("direct", ["src/x.ts"])], []), ["direct-product-commit"]);
  assert.deepEqual(kinds([relayMerge()], []), ["merge-without-verdict"]);
  assert.deepEqual(
    kinds([relayMerge()], [[OTHER, [{ ...pass, head: OTHER }, { ...merge, head: OTHER }]]]),
    ["verdict-for-another-head"],
  );
  assert.deepEqual(kinds([relayMerge()], [[H, [pass]]]), ["merge-without-gate"]);
  assert.deepEqual(
    kinds([relayMerge()], [[H, [{
      kind: "scope",
      task: 3,
      head: H,
      result: "REFUSE",
      reason: "infra",
      at,
    }]]]),
    ["merge-of-refused-scope"],
  );
  assert.deepEqual(kinds([relayMerge(["src/a.ts", "COWORK-STATUS.md"])], [[H, [pass, merge]]]), [
    "paperwork-on-task-branch",
  ]);
  assert.deepEqual(kinds([commit("octopus", ["src/a.ts"], [P, H, OTHER])], []), ["octopus-merge"]);
  // A verdict FAIL on the very head: still no PASS for it.
  const failed = audit([relayMerge()], new Map([[H, [{ ...pass, result: "FAIL" }]]]));
  assert.match(failed[0]!.violation!.detail, /which the reviewer failed/);
});

Deno.test("a head relay routed to a person and a person merged is the person's merge, not a violation", () => {
  const routed: NoteRecord = { kind: "routed", task: 3, head: H, files: ["package.json"], at };
  const [e] = audit(
    [commit("Merge branch 'task-3'", ["package.json"], [P, H])],
    new Map([[H, [routed]]]),
  );
  assert.equal(e!.class, "person-merge");
  assert.equal(e!.task, 3);
});

Deno.test("relay's settings changed on main are a person's change, shown as settings, not as paperwork", () => {
  assert.deepEqual(
    kinds([
      commit("tighten the gate", [".relay/config.yaml"]),
      commit("queue and settings", [".relay/inbox/0002-x.md", ".relay/SECURITY.md"]),
      commit("settings and code", [".relay/config.yaml", "src/x.ts"]),
    ], []),
    ["settings", "settings", "paperwork-with-product"],
  );
});
