import assert from "node:assert/strict";
import { HoldError } from "../lib/errors.ts";
import {
  branchPushHold,
  classifyPush,
  describePush,
  isTransient,
} from "../lib/git/push_outcome.ts";

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

Deno.test("classifyPush() calls a remote that is not there for the moment unreachable, quoting git", () => {
  const outcome = classifyPush(false, NO_REMOTE);
  assert.deepEqual(outcome, {
    kind: "unreachable",
    detail: [
      "fatal: '/nonexistent' does not appear to be a git repository",
      "fatal: Could not read from remote repository.",
      "Please make sure you have the correct access rights",
      "and the repository exists.",
    ],
  });
  assert.ok(isTransient(outcome));
  assert.match(describePush(outcome), /^the remote could not be reached: "fatal: '\/nonexistent'/);
  for (
    const text of [
      "fatal: unable to access 'https://example.invalid/x.git/': Could not resolve host: example.invalid",
      "ssh: connect to host example.invalid port 22: Connection refused\nfatal: Could not read from remote repository.",
      "error: RPC failed; HTTP 502 curl 22 The requested URL returned error: 502",
      "fatal: the remote end hung up unexpectedly",
      "timed out after 120s: git push --porcelain -- origin HEAD:refs/heads/main",
    ]
  ) {
    assert.equal(classifyPush(false, text).kind, "unreachable", text);
  }
});

Deno.test("classifyPush() calls missing credentials or access a failure for a person, never a blip", () => {
  for (
    const text of [
      "git@example.invalid: Permission denied (publickey).\nfatal: Could not read from remote repository.",
      "remote: Invalid username or password.\nfatal: Authentication failed for 'https://example.invalid/x.git/'",
      "fatal: could not read Username for 'https://example.invalid': terminal prompts disabled",
      "remote: Repository not found.\nfatal: repository 'https://example.invalid/x.git/' not found",
      "fatal: unable to access 'https://example.invalid/x.git/': The requested URL returned error: 403",
    ]
  ) {
    const outcome = classifyPush(false, text);
    assert.equal(outcome.kind, "failed", text);
    assert.ok(!isTransient(outcome));
  }
  assert.deepEqual(classifyPush(false, ""), {
    kind: "failed",
    detail: ["git push failed without a message"],
  });
});

Deno.test("classifyPush() calls a ref-lock race on the remote a race (two pushes at once), not a refusal", () => {
  // What git 2.39 answers when another push moved main between the remote's check and its update.
  const raced = [
    "remote: error: cannot lock ref 'refs/heads/main': is at 140e665e but expected 053d65a6        ",
    "To /tmp/o.git",
    "!\tHEAD:refs/heads/main\t[remote rejected] (failed to update ref)",
    "Done",
    "error: failed to push some refs to '/tmp/o.git'",
  ].join("\n");
  const outcome = classifyPush(false, raced);
  assert.equal(outcome.kind, "raced");
  assert.ok(isTransient(outcome));
  assert.match(describePush(outcome), /another push moved the ref while this one landed/);
  // A hook that declines with the same status is still a refusal.
  const declined = raced.replace(
    "error: cannot lock ref",
    "pre-receive hook declined: cannot lock ref",
  );
  assert.equal(classifyPush(false, declined).kind, "refused");
  // A stale lock file on the remote is no race: git asks a person to remove it.
  const stale = [
    "remote: error: cannot lock ref 'refs/heads/main': Unable to create '/o.git/refs/heads/main.lock': File exists.",
    "remote: Another git process seems to be running in this repository; remove the file manually to continue.",
    "!\tHEAD:refs/heads/main\t[remote rejected] (failed to update ref)",
    "Done",
  ].join("\n");
  assert.equal(classifyPush(false, stale).kind, "refused");
});

Deno.test("branchPushHold() blames someone else's push only for a race", () => {
  const behind = classifyPush(false, FETCH_FIRST);
  const refused = classifyPush(false, HOOK);
  assert.ok(behind.kind === "behind" && refused.kind === "refused");
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
