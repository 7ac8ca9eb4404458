import assert from "node:assert/strict";
import { HoldError } from "../lib/errors.ts";
import { branchPushHold, classifyPush, describePush } from "../lib/git/push_outcome.ts";

// Output as `git push --porcelain` gives it (stdout and stderr together), git 2.39.
const FETCH_FIRST = [
  "error: failed to push some refs to 'file:///tmp/o.git'",
  "hint: Updates were rejected because the remote contains work that you do",
  "To file:///tmp/o.git",
  "!\tHEAD:refs/heads/main\t[rejected] (fetch first)",
  "Done",
].join("\n");
const NON_FF =
  "To file:///tmp/o.git\n!\tHEAD:refs/heads/main\t[rejected] (non-fast-forward)\nDone\n";
const HOOK = [
  "remote: GH006: Protected branch update failed for refs/heads/main.        ",
  "remote: error: Changes must be made through a pull request.        ",
  "error: failed to push some refs to 'file:///tmp/o.git'",
  "To file:///tmp/o.git",
  "!\tHEAD:refs/heads/main\t[remote rejected] (protected branch hook declined)",
  "Done",
].join("\n");
const NO_REMOTE = [
  "fatal: '/nonexistent' does not appear to be a git repository",
  "fatal: Could not read from remote repository.",
  "",
  "Please make sure you have the correct access rights",
  "and the repository exists.",
].join("\n");

Deno.test("classifyPush() calls a successful push ok", () => {
  assert.deepEqual(classifyPush(true, "To x\n=\tHEAD:refs/heads/main\t[up to date]\nDone\n"), {
    kind: "ok",
  });
});

Deno.test("classifyPush() calls [rejected] (fetch first) and (non-fast-forward) a race to settle by fetching", () => {
  assert.deepEqual(classifyPush(false, FETCH_FIRST), {
    kind: "behind",
    status: "[rejected] (fetch first)",
  });
  assert.deepEqual(classifyPush(false, NON_FF), {
    kind: "behind",
    status: "[rejected] (non-fast-forward)",
  });
});

Deno.test("classifyPush() calls [remote rejected] a refusal and keeps what the remote said", () => {
  assert.deepEqual(classifyPush(false, HOOK), {
    kind: "refused",
    status: "[remote rejected] (protected branch hook declined)",
    remote: [
      "GH006: Protected branch update failed for refs/heads/main.",
      "error: Changes must be made through a pull request.",
    ],
  });
});

Deno.test("classifyPush() calls any other [rejected] reason a refusal, not a race", () => {
  const out = "To x\n!\trefs/tags/v1:refs/tags/v1\t[rejected] (already exists)\nDone\n";
  assert.equal(classifyPush(false, out).kind, "refused");
});

Deno.test("classifyPush() calls a push with no ref status (exit 128) a failure quoting git", () => {
  const outcome = classifyPush(false, NO_REMOTE);
  assert.deepEqual(outcome, {
    kind: "failed",
    detail: [
      "fatal: '/nonexistent' does not appear to be a git repository",
      "fatal: Could not read from remote repository.",
      "Please make sure you have the correct access rights",
      "and the repository exists.",
    ],
  });
  assert.match(describePush(outcome), /^git push failed: "fatal: '\/nonexistent' does not/);
  assert.deepEqual(classifyPush(false, ""), {
    kind: "failed",
    detail: ["git push failed without a message"],
  });
});

Deno.test("branchPushHold() blames someone else's push only for a race", () => {
  const behind = classifyPush(false, FETCH_FIRST);
  const refused = classifyPush(false, HOOK);
  assert.ok(behind.kind !== "ok" && refused.kind !== "ok");
  const race = branchPushHold(behind, "origin", "task-1", "/wt");
  assert.ok(race instanceof HoldError);
  assert.match(race.message, /^Cannot push "task-1" to "origin": the remote refused/);
  assert.match(race.message, /someone else pushed to it\?/);
  assert.match(race.next, /never force-pushes/);
  const hold = branchPushHold(refused, "origin", "task-1", "/wt");
  assert.doesNotMatch(hold.message, /someone else/);
  assert.match(hold.message, /the remote said: "GH006: Protected branch update failed/);
  assert.match(hold.next, /branch protection/);
});
