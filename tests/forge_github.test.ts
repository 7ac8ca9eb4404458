import assert from "node:assert/strict";
import { join } from "node:path";
import { CommandError, HoldError } from "../lib/errors.ts";
import { Gh } from "../lib/forge/gh.ts";
import { GitHubExecutorForge } from "../lib/forge/github_executor.ts";
import { GitHubPlannerForge } from "../lib/forge/github_planner.ts";
import type { PrStatus } from "../lib/forge/types.ts";
import { Git } from "../lib/git/git.ts";
import { probeTool } from "./helpers/tools.ts";

const STANDIN_DIR = new URL("./fixtures/gh/", import.meta.url).pathname;
const RECORDINGS = join(STANDIN_DIR, "recordings");
const recording = (name: string) => Deno.readTextFileSync(join(RECORDINGS, name));

const HEAD = "1f0c3a9e5b7d2c4e6a8b0d1f3e5c7a9b2d4f6e80";
const MERGE_SHA = "8e1d2c3b4a5f60718293a4b5c6d7e8f9a0b1c2d3";
const PR_FIELDS = "number,url,headRefOid,headRefName,state,isCrossRepository";

interface Reply {
  out?: string;
  err?: string;
  code?: number;
  sleep?: number;
}

interface Call {
  argv: string[];
  stdin: string;
}

interface StandIn extends AsyncDisposable {
  dir: string;
  gh: Gh;
  calls(): Promise<Call[]>;
}

const LOGGED_IN: Reply = { err: recording("auth-status-ok.err") };

/**
 * A scenario for the stand-in gh: `replies` keyed as the stand-in reads them
 * ("pr-list", "pr-view.2"); `gh auth status` succeeds unless overridden.
 */
async function standIn(replies: Record<string, Reply>, timeoutMs = 10_000): Promise<StandIn> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "relay-gh-" }));
  const scenario = join(dir, "scenario");
  await Deno.mkdir(scenario);
  for (const [key, reply] of Object.entries({ "auth-status": LOGGED_IN, ...replies })) {
    if (reply.out !== undefined) await Deno.writeTextFile(join(scenario, `${key}.out`), reply.out);
    if (reply.err !== undefined) await Deno.writeTextFile(join(scenario, `${key}.err`), reply.err);
    await Deno.writeTextFile(join(scenario, `${key}.code`), String(reply.code ?? 0));
    if (reply.sleep !== undefined) {
      await Deno.writeTextFile(join(scenario, `${key}.sleep`), String(reply.sleep));
    }
  }
  const log = join(dir, "calls.jsonl");
  const gh = new Gh(dir, timeoutMs, "gh", {
    PATH: `${STANDIN_DIR}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
    GH_STANDIN_SCENARIO: scenario,
    GH_STANDIN_LOG: log,
  });
  return {
    dir,
    gh,
    async calls() {
      const text = await Deno.readTextFile(log).catch(() => "");
      return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Call);
    },
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

/** The argv of every call after `gh auth status`, which must come first and once. */
async function argvs(s: StandIn): Promise<string[][]> {
  const calls = await s.calls();
  assert.deepEqual(calls[0]?.argv, ["auth", "status"]);
  assert.equal(calls.filter((c) => c.argv[0] === "auth").length, 1);
  return calls.slice(1).map((c) => c.argv);
}

const planner = (gh: Gh) => new GitHubPlannerForge(gh.cwd, gh.timeoutMs, gh);

function openPr(n = 42, head = HEAD): PrStatus {
  return {
    id: `#${n}`,
    branch: "task-7",
    head,
    state: "open",
    url: `https://github.com/octo-org/relay-demo/pull/${n}`,
  };
}

const REQUEST = {
  task: 7,
  branch: "task-7",
  head: HEAD,
  base: "main",
  title: "Task #7: Add the feature",
  body: "Adds src/feature-7.txt.\n\n- with a list\n",
};

// --- openPr ---------------------------------------------------------------------------------------

Deno.test("openPr() returns the PR already open for the branch and creates none", async () => {
  await using s = await standIn({ "pr-list": { out: recording("pr-list-open-task-7.json") } });
  const forge = new GitHubExecutorForge(new Git(s.dir), "origin", "main", 10_000, s.gh);
  const pr = await forge.openPr(REQUEST);
  assert.deepEqual(pr, {
    id: "#42",
    url: "https://github.com/octo-org/relay-demo/pull/42",
    branch: "task-7",
    head: HEAD,
  });
  assert.deepEqual(await argvs(s), [
    ["pr", "list", "--head", "task-7", "--state", "open", "--json", PR_FIELDS],
  ]);
});

Deno.test("openPr() creates the PR with the body on stdin when none is open, then reads it back", async () => {
  await using s = await standIn({
    "pr-list": { out: recording("pr-list-empty.json") },
    "pr-create": { out: recording("pr-create.out") },
    "pr-view": { out: recording("pr-view-created.json") },
  });
  const forge = new GitHubExecutorForge(new Git(s.dir), "origin", "main", 10_000, s.gh);
  const pr = await forge.openPr(REQUEST);
  assert.deepEqual(pr, {
    id: "#43",
    url: "https://github.com/octo-org/relay-demo/pull/43",
    branch: "task-7",
    head: HEAD,
  });
  const calls = await s.calls();
  assert.deepEqual(await argvs(s), [
    ["pr", "list", "--head", "task-7", "--state", "open", "--json", PR_FIELDS],
    [
      "pr",
      "create",
      "--head",
      "task-7",
      "--base",
      "main",
      "--title",
      "Task #7: Add the feature",
      "--body-file",
      "-",
    ],
    ["pr", "view", "https://github.com/octo-org/relay-demo/pull/43", "--json", PR_FIELDS],
  ]);
  assert.equal(calls[2]?.stdin, REQUEST.body);
});

Deno.test("openPr() takes the PR another run opened between its list and its create", async () => {
  await using s = await standIn({
    "pr-list.1": { out: recording("pr-list-empty.json") },
    "pr-list.2": { out: recording("pr-list-open-task-7.json") },
    "pr-create": { err: recording("pr-create-exists.err"), code: 1 },
  });
  const forge = new GitHubExecutorForge(new Git(s.dir), "origin", "main", 10_000, s.gh);
  const pr = await forge.openPr(REQUEST);
  assert.equal(pr.id, "#42");
  assert.deepEqual((await argvs(s)).map((a) => a.slice(0, 2).join(" ")), [
    "pr list",
    "pr create",
    "pr list",
  ]);
});

Deno.test("openPr() refuses a branch name gh could read as a flag", async () => {
  await using s = await standIn({});
  const forge = new GitHubExecutorForge(new Git(s.dir), "origin", "main", 10_000, s.gh);
  await assert.rejects(
    forge.openPr({ ...REQUEST, branch: "--admin" }),
    /Cannot pass branch "--admin" to gh/,
  );
  assert.deepEqual(await s.calls(), []);
});

Deno.test("the executor's listOpen() sees relay's open PR and ignores people's", async () => {
  await using s = await standIn({ "pr-list": { out: recording("pr-list-open-mixed.json") } });
  const forge = new GitHubExecutorForge(new Git(s.dir), "origin", "main", 10_000, s.gh);
  assert.deepEqual(await forge.listOpen(), [{
    id: "#42",
    branch: "task-7",
    head: HEAD,
    url: "https://github.com/octo-org/relay-demo/pull/42",
  }]);
});

// --- pushBranch (real git, bare origin) -----------------------------------------------------------

async function gitIn(env: Record<string, string>, cwd: string, ...args: string[]) {
  const out = await new Deno.Command("git", { args, cwd, env, clearEnv: true, stdin: "null" })
    .output();
  const text = new TextDecoder().decode(out.stdout).trim();
  if (out.code !== 0) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return text;
}

Deno.test("pushBranch() pushes the head to the task branch and refuses a non-fast-forward with a HOLD", async () => {
  await using s = await standIn({});
  const env = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: s.dir,
    GIT_CONFIG_GLOBAL: join(s.dir, "gitconfig"),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "Test Author",
    GIT_AUTHOR_EMAIL: "author@test.invalid",
    GIT_COMMITTER_NAME: "Test Author",
    GIT_COMMITTER_EMAIL: "author@test.invalid",
  };
  await Deno.writeTextFile(env.GIT_CONFIG_GLOBAL, "");
  const origin = join(s.dir, "origin.git");
  const work = join(s.dir, "work");
  await gitIn(env, s.dir, "init", "--quiet", "--bare", "--initial-branch=main", origin);
  await gitIn(env, s.dir, "clone", "--quiet", `file://${origin}`, work);
  await gitIn(env, work, "commit", "--quiet", "--allow-empty", "-m", "first");
  const first = await gitIn(env, work, "rev-parse", "HEAD");
  await gitIn(env, work, "commit", "--quiet", "--allow-empty", "-m", "second");
  const second = await gitIn(env, work, "rev-parse", "HEAD");

  // A push needs no identity; the Git class runs with this process's environment.
  const forge = new GitHubExecutorForge(new Git(work), "origin", "main", 10_000, s.gh);
  await forge.pushBranch("task-7", second);
  assert.equal(await gitIn(env, origin, "rev-parse", "refs/heads/task-7"), second);

  // Pushing an older head is not a fast-forward: relay holds instead of forcing.
  const err = await forge.pushBranch("task-7", first).then(() => null, (e: unknown) => e);
  assert.ok(err instanceof HoldError, String(err));
  assert.match(err.message, /Cannot push "task-7" to "origin": the remote refused/);
  assert.match(err.next, /never force-pushes/);
  assert.equal(await gitIn(env, origin, "rev-parse", "refs/heads/task-7"), second);
  assert.deepEqual(await s.calls(), [], "pushing goes through git, not gh");
});

// --- find / listOpen ------------------------------------------------------------------------------

Deno.test("find() prefers the open PR over a newer merged one and skips fork PRs", async () => {
  await using s = await standIn({ "pr-list": { out: recording("pr-list-all-task-7.json") } });
  const found = await planner(s.gh).find("task-7");
  assert.deepEqual(found, openPr(42));
  assert.deepEqual(await argvs(s), [
    [
      "pr",
      "list",
      "--head",
      "task-7",
      "--state",
      "all",
      "--json",
      PR_FIELDS,
      "--limit",
      "5",
    ],
  ]);
});

Deno.test("find() returns the newest merged or closed PR when none is open, and null when there is none", async () => {
  await using s = await standIn({
    "pr-list.1": { out: recording("pr-list-all-task-3.json") },
    "pr-list.2": { out: recording("pr-list-empty.json") },
  });
  const forge = planner(s.gh);
  const found = await forge.find("task-3");
  assert.equal(found?.id, "#15");
  assert.equal(found?.state, "closed");
  assert.equal(found?.head, "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00");
  assert.equal(await forge.find("task-3"), null);
});

Deno.test("listOpen() counts only relay's own task branches in this repository", async () => {
  await using s = await standIn({ "pr-list": { out: recording("pr-list-open-mixed.json") } });
  const open = await planner(s.gh).listOpen();
  assert.deepEqual(open, [openPr(42)]);
  assert.deepEqual(await argvs(s), [
    ["pr", "list", "--state", "open", "--json", PR_FIELDS, "--limit", "200"],
  ]);
});

// --- merge ----------------------------------------------------------------------------------------

Deno.test("merge() merges only at the reviewed head and returns the merge commit", async () => {
  await using s = await standIn({
    "pr-merge": {},
    "pr-view": { out: recording("pr-view-merged.json") },
  });
  const result = await planner(s.gh).merge(
    openPr(),
    HEAD,
    "Merge task-7: Add the feature\n\nReviewed by relay.\nPASS at 1f0c3a9e5b7d.",
  );
  assert.deepEqual(result, { merged: true, sha: MERGE_SHA });
  const sent = await argvs(s);
  assert.deepEqual(sent, [
    [
      "pr",
      "merge",
      "42",
      "--merge",
      "--match-head-commit",
      HEAD,
      "--subject",
      "Merge task-7: Add the feature",
      "--body",
      "Reviewed by relay.\nPASS at 1f0c3a9e5b7d.",
    ],
    ["pr", "view", "42", "--json", "state,mergeCommit,headRefOid"],
  ]);
  for (const argv of sent) {
    for (const flag of ["--admin", "--auto", "--delete-branch", "-d", "--force"]) {
      assert.ok(!argv.includes(flag), `${argv.join(" ")} carries ${flag}`);
    }
  }
});

Deno.test("merge() asks the tick's lease first: one lost to another machine asks gh nothing", async () => {
  const { guardWith } = await import("../lib/git/lease_guard.ts");
  using _guard = { [Symbol.dispose]: () => guardWith(null) };
  await using s = await standIn({ "pr-merge": {} });
  guardWith({ confirm: () => Promise.reject(new HoldError("the reviewer lease is lost", "x")) });
  await assert.rejects(planner(s.gh).merge(openPr(), HEAD, "Merge task-7"), HoldError);
  assert.deepEqual(await s.calls(), [], "gh was not started");
});

Deno.test("a PR's creation, a verdict and a close ask the tick's lease first, as merge() does: one lost asks gh for none of them", async () => {
  const { guardWith } = await import("../lib/git/lease_guard.ts");
  using _guard = { [Symbol.dispose]: () => guardWith(null) };
  await using s = await standIn({ "pr-list": { out: recording("pr-list-empty.json") } });
  guardWith({ confirm: () => Promise.reject(new HoldError("the reviewer lease is lost", "x")) });
  const forge = new GitHubExecutorForge(new Git(s.dir), "origin", "main", 10_000, s.gh);
  await assert.rejects(forge.openPr(REQUEST), HoldError);
  await assert.rejects(planner(s.gh).recordVerdict(openPr(), HEAD, "Verdict: PASS"), HoldError);
  await assert.rejects(planner(s.gh).close(openPr(), "superseded"), HoldError);
  // Only the look for an open PR, which changes nothing, reached gh.
  assert.deepEqual((await argvs(s)).map((a) => a.slice(0, 2)), [["pr", "list"]]);
});

Deno.test("merge() reports a moved head as not merged and asks gh nothing more", async () => {
  await using s = await standIn({
    "pr-merge": { err: recording("pr-merge-head-modified.err"), code: 1 },
  });
  const result = await planner(s.gh).merge(openPr(), HEAD, "Merge task-7");
  assert.equal(result.merged, false);
  assert.ok(!result.merged);
  assert.match(result.why, /#42 moved: GitHub refused to merge it at 1f0c3a9e5b7d/);
  assert.match(result.why, /Head branch was modified/);
  assert.deepEqual((await argvs(s)).map((a) => a[1]), ["merge"]);
});

Deno.test("merge() reports a PR GitHub cannot merge now as not merged", async () => {
  await using s = await standIn({
    "pr-merge": { err: recording("pr-merge-not-mergeable.err"), code: 1 },
  });
  const result = await planner(s.gh).merge(openPr(), HEAD, "Merge task-7");
  assert.ok(!result.merged);
  assert.match(result.why, /is not mergeable: the merge commit cannot be cleanly created/);
});

Deno.test("merge() does not claim a merge that gh only queued", async () => {
  await using s = await standIn({
    "pr-merge": {},
    "pr-view": { out: recording("pr-view-still-open.json") },
  });
  const result = await planner(s.gh).merge(openPr(), HEAD, "Merge task-7");
  assert.ok(!result.merged);
  assert.match(result.why, /exited 0 but #42 is OPEN/);
});

Deno.test("merge() does not claim a PR someone merged at another head", async () => {
  await using s = await standIn({
    "pr-merge": {},
    "pr-view": { out: recording("pr-view-merged-other-head.json") },
  });
  const result = await planner(s.gh).merge(openPr(), HEAD, "Merge task-7");
  assert.ok(!result.merged);
  assert.match(result.why, /merged at 4d3c2b1a09f8, not at the reviewed 1f0c3a9e5b7d/);
});

Deno.test("merge() throws CommandError with gh's stderr on any other failure", async () => {
  await using s = await standIn({
    "pr-merge": { err: recording("pr-merge-forbidden.err"), code: 1 },
  });
  const err = await planner(s.gh).merge(openPr(), HEAD, "Merge task-7")
    .then(() => null, (e: unknown) => e);
  assert.ok(err instanceof CommandError, String(err));
  assert.equal(err.code, 1);
  assert.match(err.stderr, /Resource not accessible by integration/);
  assert.match(err.message, /exited 1: gh pr merge 42 --merge --match-head-commit/);
});

Deno.test("merge() refuses an abbreviated head before calling gh", async () => {
  await using s = await standIn({});
  await assert.rejects(
    planner(s.gh).merge(openPr(), HEAD.slice(0, 12), "Merge"),
    /expected a full 40-character sha/,
  );
  assert.deepEqual(await s.calls(), []);
});

// --- recordVerdict / noteMerged -------------------------------------------------------------------

Deno.test("recordVerdict() posts a COMMENT review with the verdict and the head on stdin", async () => {
  await using s = await standIn({ "pr-review": {} });
  const forge = planner(s.gh);
  await forge.recordVerdict(openPr(), HEAD, "Verdict: PASS\n\nThe bar passes.");
  const calls = await s.calls();
  assert.deepEqual(await argvs(s), [["pr", "review", "42", "--comment", "--body-file", "-"]]);
  assert.equal(
    calls[1]?.stdin,
    `Verdict: PASS\n\nThe bar passes.\n\n(relay reviewed head ${HEAD})`,
  );
  await forge.noteMerged(openPr());
  assert.equal((await s.calls()).length, 2, "noteMerged() calls nothing");
});

Deno.test("close() runs gh pr close with the comment and never deletes the branch", async () => {
  await using s = await standIn({ "pr-close": {} });
  await planner(s.gh).close(openPr(), "Closed by a person with relay close: not worth it");
  const sent = await argvs(s);
  assert.deepEqual(sent.at(-1), [
    "pr",
    "close",
    "42",
    "--comment",
    "Closed by a person with relay close: not worth it",
  ]);
  assert.ok(!sent.flat().includes("--delete-branch"));
});

// --- readiness and failures -----------------------------------------------------------------------

Deno.test("Gh says to install GitHub CLI or set forge: plain when gh is not on PATH", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "relay-gh-" }));
  try {
    const gh = new Gh(dir, 5_000, "gh", { PATH: join(dir, "empty-bin") });
    const err = await planner(gh).listOpen().then(() => null, (e: unknown) => e);
    assert.ok(err instanceof HoldError, String(err));
    assert.match(
      err.message,
      /Cannot use the GitHub forge: "gh" \(GitHub CLI\) was not found on PATH/,
    );
    assert.match(err.next, /Install GitHub CLI/);
    assert.match(err.next, /"forge: plain"/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Gh says to run gh auth login when gh auth status fails, and calls nothing else", async () => {
  await using s = await standIn({
    "auth-status": { err: recording("auth-status-logged-out.err"), code: 1 },
    "pr-list": { out: recording("pr-list-open-task-7.json") },
  });
  const err = await planner(s.gh).find("task-7").then(() => null, (e) => e);
  assert.ok(err instanceof HoldError, String(err));
  assert.match(err.message, /gh is not logged in to GitHub/);
  assert.match(err.message, /You are not logged into any GitHub hosts/);
  assert.match(err.next, /Run "gh auth login"/);
  assert.deepEqual((await s.calls()).map((c) => c.argv), [["auth", "status"]]);
});

Deno.test("Gh says to run gh auth login when a command exits 4 asking for a login", async () => {
  await using s = await standIn({
    "pr-list": { err: recording("pr-list-needs-login.err"), code: 4 },
  });
  const err = await planner(s.gh).listOpen().then(() => null, (e) => e);
  assert.ok(err instanceof HoldError, String(err));
  assert.match(err.next, /Run "gh auth login"/);
});

Deno.test("Gh runs gh auth status once for many calls", async () => {
  await using s = await standIn({ "pr-list": { out: recording("pr-list-empty.json") } });
  const forge = planner(s.gh);
  await forge.listOpen();
  await forge.find("task-7");
  await planner(new Gh(s.dir, 10_000, "gh", { ...s.gh.env })).listOpen();
  assert.equal((await argvs(s)).length, 3);
});

Deno.test("Gh rejects JSON that does not have gh's fields, naming the field", async () => {
  await using s = await standIn({
    "pr-list": { out: '[{"number":42,"url":"u","headRefName":"task-7","state":"OPEN"}]\n' },
  });
  const err = await planner(s.gh).listOpen().then(() => null, (e) => e);
  assert.ok(err instanceof CommandError, String(err));
  assert.match(err.message, /gh printed JSON relay does not understand \(0\.headRefOid: /);
});

async function alive(pid: number): Promise<boolean> {
  const out = await new Deno.Command("ps", { args: ["-o", "stat=", "-p", String(pid)] }).output();
  const stat = new TextDecoder().decode(out.stdout).trim();
  return out.code === 0 && stat !== "" && !stat.startsWith("Z");
}

Deno.test("Gh kills a gh call that hangs past its timeout, children included", async () => {
  await using s = await standIn({ "pr-list": { sleep: 30, out: "[]" } }, 700);
  const started = Date.now();
  const err = await planner(s.gh).listOpen().then(() => null, (e) => e);
  const took = Date.now() - started;
  assert.ok(err instanceof CommandError, String(err));
  assert.match(err.message, /timed out after 1s: gh pr list --state open/);
  assert.ok(took < 10_000, `took ${took}ms`);
  const pid = Number(await Deno.readTextFile(join(s.dir, "sleep.pid")));
  assert.ok(pid > 0);
  assert.equal(await alive(pid), false, "the stand-in's sleep outlived the timeout");
});

// --- the real gh, when installed: the flags relay sends exist -------------------------------------

// Probed safely: on a machine without gh this one test shows as ignored and the rest still run.
const realGh = await probeTool("gh");

Deno.test({
  name: "the installed gh documents every flag and JSON field relay sends",
  ignore: realGh === null,
  async fn() {
    // Both answers come from gh itself, offline: `--help`, and the field list `--json` prints bare.
    const gh = async (args: string[]) => {
      const out = await new Deno.Command("gh", {
        args,
        cwd: STANDIN_DIR,
        env: { NO_COLOR: "1", GH_NO_UPDATE_NOTIFIER: "1", GH_PROMPT_DISABLED: "1" },
      }).output();
      return new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    };
    const flags: Record<string, string[]> = {
      list: ["--head", "--state", "--json", "--limit"],
      create: ["--head", "--base", "--title", "--body-file"],
      view: ["--json"],
      merge: ["--merge", "--match-head-commit", "--subject", "--body"],
      review: ["--comment", "--body-file"],
    };
    for (const [verb, wanted] of Object.entries(flags)) {
      const help = await gh(["pr", verb, "--help"]);
      for (const flag of wanted) {
        assert.match(help, new RegExp(`\\s${flag}[\\s=]`), `gh pr ${verb} has no ${flag}`);
      }
    }
    const fields = [...PR_FIELDS.split(","), "mergeCommit"];
    for (const verb of ["list", "view"]) {
      const known = (await gh(["pr", verb, "--json"])).split("\n").map((l) => l.trim());
      for (const field of fields) {
        assert.ok(known.includes(field), `gh pr ${verb} --json has no field ${field}`);
      }
    }
  },
});
