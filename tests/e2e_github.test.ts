/**
 * End to end with `forge: github`: the real CLI, real git, fake agents, and a
 * stateful stand-in `gh` (tests/fixtures/gh-stateful/) that keeps PRs in a JSON
 * file and merges for real in the bare origin. Assertions read the origin's git
 * state, the stand-in's PR state and its log of every argv relay sent.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  all,
  brief,
  makeScene,
  reviewRecord,
  type Scene,
  type SceneOptions,
} from "./helpers/scene.ts";

const STANDIN_DIR = new URL("./fixtures/gh-stateful", import.meta.url).pathname;
const PR_FIELDS = "number,url,headRefOid,headRefName,state,isCrossRepository";

interface Call {
  argv: string[];
  stdin?: string;
}

interface PrState {
  number: number;
  title: string;
  headRefName: string;
  baseRefName: string;
  state: "OPEN" | "MERGED" | "CLOSED";
  headRefOid: string;
  mergeCommit: string | null;
  reviews: { state: string; body: string }[];
}

/** A scene whose repo config says `forge: github`, with the stand-in first on PATH. */
class GitHubScene implements AsyncDisposable {
  readonly ghEnv: Record<string, string>;
  constructor(readonly scene: Scene) {
    this.ghEnv = {
      PATH: `${STANDIN_DIR}:${scene.env.PATH}`,
      FAKEGH_ORIGIN: scene.origin,
      FAKEGH_STATE: join(scene.dir, "gh.json"),
    };
  }

  relay(args: string[], env: Record<string, string> = {}, stdin?: string) {
    return this.scene.relay(args, {
      env: { ...this.ghEnv, ...env },
      ...(stdin !== undefined ? { stdin } : {}),
    });
  }

  async queue(text: string): Promise<void> {
    const res = await this.relay(["inbox", "add", "-"], {}, text);
    assert.equal(res.code, 0, all(res));
  }

  async promote(): Promise<void> {
    const res = await this.relay(["promote"]);
    assert.equal(res.code, 0, all(res));
  }

  /** One executor tick that must ship. */
  async ship(env: Record<string, string> = {}): Promise<void> {
    const res = await this.relay(["poll"], env);
    assert.equal(res.code, 0, all(res));
    assert.match(res.stdout, /shipped/, all(res));
  }

  /** Every argv the stand-in received, in order. */
  async calls(): Promise<Call[]> {
    const text = await Deno.readTextFile(`${this.ghEnv.FAKEGH_STATE}.log`).catch(() => "");
    return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Call);
  }

  /** The calls that start with `prefix` (e.g. ["pr", "merge"]). */
  async callsOf(...prefix: string[]): Promise<Call[]> {
    return (await this.calls()).filter((c) => prefix.every((p, i) => c.argv[i] === p));
  }

  async prs(): Promise<PrState[]> {
    const store = JSON.parse(await Deno.readTextFile(this.ghEnv.FAKEGH_STATE!));
    return store.prs as PrState[];
  }

  async pr(n: number): Promise<PrState> {
    const pr = (await this.prs()).find((p) => p.number === n);
    assert.ok(pr, `the stand-in has no PR #${n}`);
    return pr;
  }

  /** A sha in the origin (read straight from the bare repository). */
  async originSha(ref: string): Promise<string> {
    return await this.scene.out(["--git-dir", this.scene.origin, "rev-parse", "--verify", ref]);
  }

  async parents(ref: string): Promise<string[]> {
    const line = await this.scene.out([
      "--git-dir",
      this.scene.origin,
      "rev-list",
      "--parents",
      "-n",
      "1",
      ref,
    ]);
    return line.split(" ").slice(1);
  }

  /** A file as it is on the origin's main. */
  async onMain(path: string): Promise<string> {
    return await this.scene.out(["--git-dir", this.scene.origin, "show", `main:${path}`]);
  }

  /** Runs the stand-in as a person at a terminal would (not through relay). */
  async gh(args: string[]): Promise<{ code: number; stderr: string }> {
    const out = await new Deno.Command(join(STANDIN_DIR, "gh"), {
      args,
      cwd: this.scene.dir,
      env: { ...this.scene.env, ...this.ghEnv },
      clearEnv: true,
      stdin: "null",
    }).output();
    return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.scene[Symbol.asyncDispose]();
  }
}

async function githubScene(opts: SceneOptions = {}): Promise<GitHubScene> {
  return new GitHubScene(
    await makeScene({ ...opts, config: `forge: github\n${opts.config ?? ""}` }),
  );
}

/** The PR relay sent for a merge at `head`, exactly as README's Forges table lists it. */
function mergeArgv(n: number, head: string, subject: string): string[] {
  return ["pr", "merge", String(n), "--merge", "--match-head-commit", head, "--subject", subject];
}

/**
 * Every commit on the origin's main first-parent line since the initial one is either a
 * paperwork commit (only NEXT-STEPS.md, COWORK-STATUS.md, .relay/) or a two-parent merge.
 */
async function assertOnlyPaperworkAndMerges(g: GitHubScene): Promise<string[]> {
  const lines = (await g.scene.out([
    "--git-dir",
    g.scene.origin,
    "log",
    "--first-parent",
    "--format=%H %P",
    "main",
  ])).split("\n");
  const kinds: string[] = [];
  for (const line of lines.slice(0, -1)) {
    const [sha, ...parents] = line.split(" ");
    if (parents.length === 2) {
      kinds.push("merge");
      continue;
    }
    assert.equal(parents.length, 1, `unexpected commit on main: ${line}`);
    const files = (await g.scene.out([
      "--git-dir",
      g.scene.origin,
      "diff-tree",
      "--no-commit-id",
      "--name-only",
      "-r",
      sha!,
    ])).split("\n");
    for (const f of files) {
      assert.match(f, /^(NEXT-STEPS\.md|COWORK-STATUS\.md|\.relay\/.*)$/, `${sha} changes ${f}`);
    }
    kinds.push("paperwork");
  }
  return kinds.reverse();
}

Deno.test("with forge: github two briefs each open a PR through gh and merge at the reviewed head", async () => {
  await using g = await githubScene();
  await g.queue(brief({ title: "First" }));
  await g.queue(brief({ title: "Second" }));
  await g.promote();

  await g.ship();
  const head1 = await g.originSha("refs/heads/task-1");
  const creates = await g.callsOf("pr", "create");
  assert.deepEqual(creates.map((c) => c.argv), [[
    "pr",
    "create",
    "--head",
    "task-1",
    "--base",
    "main",
    "--title",
    "Task #1: First",
    "--body-file",
    "-",
  ]]);
  assert.match(creates[0]!.stdin ?? "", /src\/feature-1\.txt/);
  assert.match(await g.onMain("COWORK-STATUS.md"), /^PR: #1$/m);
  assert.match(await g.onMain("COWORK-STATUS.md"), new RegExp(`^Head: ${head1}$`, "m"));
  assert.equal((await g.pr(1)).state, "OPEN");
  assert.equal((await g.pr(1)).headRefOid, head1);

  const main1 = await g.originSha("main");
  const reviewed = await g.relay(["review"]);
  assert.equal(reviewed.code, 0, all(reviewed));
  assert.match(reviewed.stdout, /promoted task 2/, all(reviewed));
  // The verdict went to GitHub as a COMMENT review naming the head it judged.
  const reviews = await g.callsOf("pr", "review");
  assert.deepEqual(reviews.map((c) => c.argv), [[
    "pr",
    "review",
    "1",
    "--comment",
    "--body-file",
    "-",
  ]]);
  assert.match(reviews[0]!.stdin ?? "", /Verdict: PASS/);
  assert.ok(reviews[0]!.stdin?.includes(head1), reviews[0]!.stdin);
  // The merge is gh's compare-and-swap at the reviewed head, and nothing more.
  const merges = await g.callsOf("pr", "merge");
  assert.equal(merges.length, 1);
  assert.deepEqual(
    merges[0]!.argv.slice(0, 8),
    mergeArgv(1, head1, "Merge task-1: First (task 1, reviewed by relay)"),
  );
  for (const flag of ["--admin", "--auto", "--delete-branch"]) {
    assert.ok(!merges[0]!.argv.includes(flag), merges[0]!.argv.join(" "));
  }
  // main on the origin is a real merge of the reviewed head, and the stand-in says so too.
  const merge1 = await g.originSha("main");
  assert.deepEqual(await g.parents("main"), [main1, head1]);
  assert.deepEqual(
    [(await g.pr(1)).state, (await g.pr(1)).mergeCommit],
    ["MERGED", merge1],
  );
  assert.match(await g.scene.read("NEXT-STEPS.md"), /^Status: OPEN\nTask: 2\n/);

  await g.ship();
  const head2 = await g.originSha("refs/heads/task-2");
  assert.deepEqual((await g.callsOf("pr", "create")).map((c) => c.argv[3]), ["task-1", "task-2"]);
  assert.match(await g.onMain("COWORK-STATUS.md"), /^PR: #2$/m);
  // task-2 starts from main with task-1 merged in.
  assert.equal(
    (await g.scene.git(
      g.scene.work,
      ["merge-base", "--is-ancestor", merge1, "origin/task-2"],
      true,
    ))
      .code,
    0,
  );

  const second = await g.relay(["review"]);
  assert.equal(second.code, 0, all(second));
  const merges2 = await g.callsOf("pr", "merge");
  assert.equal(merges2.length, 2);
  assert.deepEqual(
    merges2[1]!.argv.slice(0, 8),
    mergeArgv(2, head2, "Merge task-2: Second (task 2, reviewed by relay)"),
  );
  assert.equal((await g.parents("main"))[1], head2);
  assert.deepEqual((await g.prs()).map((p) => [p.number, p.state]), [[1, "MERGED"], [2, "MERGED"]]);
  assert.deepEqual(await assertOnlyPaperworkAndMerges(g), [
    "paperwork",
    "merge",
    "paperwork",
    "merge",
  ]);

  // Idle afterwards: no new PR, no new merge.
  const idle = await g.relay(["review"]);
  assert.equal(idle.code, 0, all(idle));
  assert.equal((await g.callsOf("pr", "merge")).length, 2);
});

Deno.test("with forge: github a FAIL sends the PR back and the fix lands on the same PR", async () => {
  await using g = await githubScene();
  const failOnce = join(g.scene.dir, "fail-once");
  await g.queue(brief({ title: "Needs a fix" }));
  await g.promote();
  await g.ship();
  const first = await g.originSha("refs/heads/task-1");

  const failed = await g.relay(["review"], { FAKE_FAIL_ONCE: failOnce });
  assert.equal(failed.code, 0, all(failed));
  assert.match(failed.stdout, /sent back — fix brief 2/, all(failed));
  assert.match(await g.scene.read("NEXT-STEPS.md"), /^Branch: task-1$/m);
  const fail = await g.callsOf("pr", "review");
  assert.equal(fail.length, 1);
  assert.match(fail[0]!.stdin ?? "", /Verdict: FAIL/);
  assert.equal((await g.callsOf("pr", "merge")).length, 0);

  await g.ship();
  const second = await g.originSha("refs/heads/task-1");
  assert.notEqual(second, first);
  // The fix is on the same PR: relay found it open (`pr list --head`) and created no other.
  assert.equal((await g.callsOf("pr", "create")).length, 1);
  assert.ok(
    (await g.calls()).some((c) =>
      c.argv.join(" ") === `pr list --head task-1 --state open --json ${PR_FIELDS}`
    ),
  );
  assert.match(await g.onMain("COWORK-STATUS.md"), /^Task: 2$/m);
  assert.match(await g.onMain("COWORK-STATUS.md"), /^PR: #1$/m);
  assert.equal((await g.prs()).length, 1);
  assert.equal((await g.pr(1)).headRefOid, second);

  const merged = await g.relay(["review"], { FAKE_FAIL_ONCE: failOnce });
  assert.equal(merged.code, 0, all(merged));
  const merges = await g.callsOf("pr", "merge");
  assert.equal(merges.length, 1);
  assert.deepEqual(merges[0]!.argv.slice(0, 6), [
    "pr",
    "merge",
    "1",
    "--merge",
    "--match-head-commit",
    second,
  ]);
  assert.equal((await g.parents("main"))[1], second);
  assert.deepEqual(
    [(await g.pr(1)).state, (await g.pr(1)).mergeCommit],
    ["MERGED", await g.originSha("main")],
  );
  assert.deepEqual(
    (await g.pr(1)).reviews.map((r) => /Verdict: (\w+)/.exec(r.body)?.[1]),
    ["FAIL", "PASS"],
  );
});

Deno.test("with forge: github a PR that adds package.json is refused by the gate and never sent to gh pr merge", async () => {
  await using g = await githubScene({ agent: "custom.sh" });
  await g.queue(brief({ title: "Sneaky dependency" }));
  await g.promote();
  await g.ship({ FAKE_EXTRA: "echo {} > package.json" });
  assert.equal((await g.pr(1)).state, "OPEN");

  const gate = await g.relay(["gate"]);
  assert.equal(gate.code, 10, all(gate));
  assert.match(gate.stdout, /REFUSE +scope .*package\.json/, all(gate));
  assert.match(gate.stdout, /PR #1 /, all(gate));

  const res = await g.relay(["review"]);
  assert.equal(res.code, 0, all(res));
  assert.match(res.stdout, /sent back/, all(res));
  assert.match(await g.scene.read("NEXT-STEPS.md"), /package\.json/);
  assert.equal((await g.callsOf("pr", "merge")).length, 0);
  assert.equal((await g.pr(1)).state, "OPEN");
  assert.equal(
    await g.scene.out(["--git-dir", g.scene.origin, "ls-tree", "main", "package.json"]),
    "",
  );
  assert.equal((await g.parents("main")).length, 1);
});

Deno.test("with forge: github a PR merged by a person is noticed and the next brief promoted", async () => {
  await using g = await githubScene();
  await g.queue(brief({ title: "By hand on GitHub" }));
  await g.queue(brief({ title: "By hand with git" }));
  await g.queue(brief({ title: "Third" }));
  await g.promote();
  await g.ship();

  // A person presses the merge button (gh pr merge, no --match-head-commit).
  const pressed = await g.gh(["pr", "merge", "1", "--merge"]);
  assert.equal(pressed.code, 0, pressed.stderr);
  const byPerson = await g.originSha("main");
  assert.match(
    await g.scene.out(["--git-dir", g.scene.origin, "log", "-1", "--format=%s", "main"]),
    /^Merge pull request #1 from octo-org\/task-1$/,
  );

  const noticed = await g.relay(["review"]);
  assert.equal(noticed.code, 0, all(noticed));
  assert.match(noticed.stdout, /promoted task 2/, all(noticed));
  // relay merged nothing itself: the only merge call is the person's.
  assert.deepEqual((await g.callsOf("pr", "merge")).map((c) => c.argv), [[
    "pr",
    "merge",
    "1",
    "--merge",
  ]]);
  assert.equal(await g.originSha("main"), byPerson);
  assert.equal((await reviewRecord(g.scene)).merged?.by, "out-of-band");

  // The next PR is merged with plain git in another clone: GitHub (the stand-in) marks it merged.
  await g.ship();
  assert.equal((await g.pr(2)).state, "OPEN");
  const other = join(g.scene.dir, "other");
  await g.scene.git(g.scene.dir, ["clone", "--quiet", `file://${g.scene.origin}`, other]);
  await g.scene.git(other, [
    "merge",
    "--quiet",
    "--no-ff",
    "-m",
    "merged by hand",
    "origin/task-2",
  ]);
  await g.scene.git(other, ["push", "--quiet", "origin", "main"]);
  const pushed = await g.originSha("main");

  const again = await g.relay(["review"]);
  assert.equal(again.code, 0, all(again));
  assert.match(again.stdout, /promoted task 3/, all(again));
  assert.deepEqual(
    [(await g.pr(2)).state, (await g.pr(2)).mergeCommit],
    ["MERGED", pushed],
  );
  assert.equal((await g.callsOf("pr", "merge")).length, 1);
  assert.match(await g.scene.read("NEXT-STEPS.md"), /^Status: OPEN\nTask: 3\n/);
});

Deno.test("with forge: github a push that beats the merge is refused by GitHub, not merged, then held", async () => {
  await using g = await githubScene();
  await g.queue(brief({ title: "Raced" }));
  await g.promote();
  await g.ship();
  const reviewedHead = await g.originSha("refs/heads/task-1");
  // Someone's commit on top of task-1, in the origin but not yet on the branch.
  const other = join(g.scene.dir, "other");
  await g.scene.git(g.scene.dir, ["clone", "--quiet", `file://${g.scene.origin}`, other]);
  await g.scene.git(other, ["switch", "--quiet", "task-1"]);
  await Deno.writeTextFile(join(other, "src", "late.txt"), "late\n");
  await g.scene.git(other, ["add", "src/late.txt"]);
  await g.scene.git(other, ["commit", "--quiet", "-m", "a late push"]);
  await g.scene.git(other, ["push", "--quiet", "origin", "HEAD:refs/racing/task-1"]);
  const late = await g.scene.out(["rev-parse", "HEAD"], other);
  const mainBefore = await g.originSha("main");

  const res = await g.relay(["review"], { FAKEGH_PUSH_BEFORE_MERGE: `task-1=${late}` });
  assert.equal(res.code, 0, all(res));
  assert.match(res.stdout, /did not land: #1 moved: GitHub refused to merge it/, all(res));
  assert.match(res.stdout, /Head branch was modified/, all(res));
  // The merge was asked for at the reviewed head only, and nothing landed.
  const merges = await g.callsOf("pr", "merge");
  assert.deepEqual(merges.map((c) => c.argv[5]), [reviewedHead]);
  assert.equal(await g.originSha("main"), mainBefore);
  assert.deepEqual([(await g.pr(1)).state, (await g.pr(1)).headRefOid], ["OPEN", late]);

  // The next tick sees a head no report stands behind: a HOLD, still no merge.
  const held = await g.relay(["review"]);
  assert.equal(held.code, 3, all(held));
  assert.match(held.stdout + held.stderr, /#1 moved to [0-9a-f]{12} outside relay/, all(held));
  assert.equal((await g.callsOf("pr", "merge")).length, 1);
  assert.equal(await g.originSha("main"), mainBefore);
});

Deno.test("with forge: github relay close closes the PR through gh, keeps the branch and moves on", async () => {
  await using g = await githubScene();
  await g.queue(brief({ title: "Given up" }));
  await g.queue(brief({ title: "Next" }));
  await g.promote();
  await g.ship();
  const head = await g.originSha("refs/heads/task-1");

  const res = await g.relay(["close", "1", "--reason", "not worth it"]);
  assert.equal(res.code, 0, all(res));
  assert.deepEqual((await g.callsOf("pr", "close")).map((c) => c.argv), [[
    "pr",
    "close",
    "1",
    "--comment",
    "Closed by a person with relay close: not worth it",
  ]]);
  assert.deepEqual([(await g.pr(1)).state, (await g.pr(1)).mergeCommit], ["CLOSED", null]);
  assert.equal(await g.originSha("refs/heads/task-1"), head);
  assert.match(await g.scene.read("NEXT-STEPS.md"), /^Status: OPEN\nTask: 2\n/);

  // A closed PR is not in flight: the next task opens PR #2.
  await g.ship();
  assert.deepEqual((await g.prs()).map((p) => [p.number, p.headRefName, p.state]), [
    [1, "task-1", "CLOSED"],
    [2, "task-2", "OPEN"],
  ]);
  assert.equal((await g.callsOf("pr", "merge")).length, 0);
});

Deno.test("the stateful gh stand-in serialises concurrent calls: one PR per branch, numbers unique", async () => {
  await using g = await githubScene();
  for (const b of ["task-1", "task-2"]) {
    await g.scene.git(g.scene.work, ["switch", "--quiet", "-c", b, "main"]);
    await g.scene.write(`src/${b}.txt`, `${b}\n`);
    await g.scene.git(g.scene.work, ["add", "src"]);
    await g.scene.git(g.scene.work, ["commit", "--quiet", "-m", b]);
    await g.scene.git(g.scene.work, ["push", "--quiet", "origin", `${b}:${b}`]);
  }
  const create = (b: string) =>
    g.gh(["pr", "create", "--head", b, "--base", "main", "--title", b, "--body", "x"]);
  const results = await Promise.all(
    [1, 2, 3, 4].flatMap(() => [create("task-1"), create("task-2")]),
  );
  assert.equal(results.filter((r) => r.code === 0).length, 2);
  for (const r of results.filter((r) => r.code !== 0)) {
    assert.match(
      r.stderr,
      /^a pull request for branch "task-\d" into branch "main" already exists:/,
    );
  }
  const prs = await g.prs();
  assert.deepEqual(prs.map((p) => p.number).sort(), [1, 2]);
  assert.deepEqual(prs.map((p) => p.headRefName).sort(), ["task-1", "task-2"]);
  assert.equal((await g.calls()).length, 8);
});

Deno.test("with forge: github a PR a person closes on GitHub ends the task and promotes the next brief", async () => {
  await using g = await githubScene({
    agent: "custom.sh",
    config: "accepted_infra:\n  - netlify.toml\n",
  });
  await g.queue(brief({ title: "Build tweak" }));
  await g.queue(brief({ title: "Next" }));
  await g.promote();
  await g.ship({ FAKE_EXTRA: "printf '[build]\\n' > netlify.toml" });
  const human = await g.relay(["review"]);
  assert.equal(human.code, 3, all(human));
  // HUMAN waits until a person merges or closes the PR. The person closes it on GitHub.
  const closed = await g.gh(["pr", "close", "1", "--comment", "not now"]);
  assert.equal(closed.code, 0, closed.stderr);
  const res = await g.relay(["review"]);
  assert.equal(res.code, 0, all(res));
  assert.match(res.stdout, /promoted task 2/, all(res));
  assert.match(await g.scene.read("NEXT-STEPS.md"), /^Status: OPEN\nTask: 2\n/);
  assert.equal((await g.callsOf("pr", "merge")).length, 0);
});
