/**
 * End to end, the planner half: poll → review → gate → merge → promotion, and
 * everything that must NOT merge. Real CLI, real git, fake agents and reviewers.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { brief, makeScene, reviewRecord, type Scene } from "./helpers/scene.ts";

async function queue(scene: Scene, text: string): Promise<void> {
  const res = await scene.relay(["inbox", "add", "-"], { stdin: text });
  assert.equal(res.code, 0, res.stderr);
}

async function ship(scene: Scene, env: Record<string, string> = {}): Promise<void> {
  const res = await scene.relay(["poll"], { env });
  assert.equal(res.code, 0, res.stdout + res.stderr);
  assert.match(res.stdout, /shipped/);
}

async function review(scene: Scene, env: Record<string, string> = {}) {
  return await scene.relay(["review"], { env });
}

/** Waits until no process (zombies aside) is left in process group `pgid`; false after `ms`. */
async function groupGone(pgid: number, ms: number): Promise<boolean> {
  for (const until = Date.now() + ms; Date.now() < until;) {
    const out = await new Deno.Command("ps", {
      args: ["-e", "-o", "pgid=,stat="],
      stdout: "piped",
      stderr: "null",
    }).output();
    const alive = new TextDecoder().decode(out.stdout).split("\n").some((line) => {
      const [group, stat] = line.trim().split(/\s+/);
      return Number(group) === pgid && stat !== undefined && !stat.startsWith("Z");
    });
    if (!alive) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

async function originMainSubjects(scene: Scene): Promise<string[]> {
  await scene.git(scene.work, ["fetch", "--quiet", "origin"]);
  return (await scene.out(["log", "--format=%s", "origin/main"])).split("\n");
}

Deno.test("a PASS merges the PR server side and promotes the next brief", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "First" }));
  await queue(scene, brief({ title: "Second" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  await ship(scene);

  const res = await review(scene);
  assert.equal(res.code, 0, res.stdout + res.stderr);
  assert.match(res.stdout, /promoted task 2/);
  const subjects = await originMainSubjects(scene);
  assert.match(subjects[0]!, /^Merge task-1: First/);
  // The merge is a true merge of the reviewed head, built without touching a working tree.
  const parents = (await scene.out(["rev-list", "--parents", "-n", "1", "origin/main"])).split(" ");
  assert.equal(parents[2], await scene.out(["rev-parse", "origin/task-1"]));
  assert.match(await scene.read("NEXT-STEPS.md"), /^Status: OPEN\nTask: 2\n/);
  // The merged task's worktree is gone; its branch stays.
  assert.doesNotMatch(await scene.out(["worktree", "list"]), /task-1/);
  assert.equal(await scene.out(["rev-parse", "task-1"]), parents[2]);
  // The planner never commits: the promotion is uncommitted in the primary tree.
  assert.match(await scene.out(["status", "--porcelain"]), /NEXT-STEPS\.md/);
  // The verdict is recorded with the head it judged.
  const record = await reviewRecord(scene);
  assert.equal(record.verdicts[0]!.verdict, "PASS");
  assert.equal(record.verdicts[0]!.head, await scene.out(["rev-parse", "origin/task-1"]));

  // A second review tick has nothing to do, and the gate says there is nothing to gate.
  const again = await review(scene);
  assert.equal(again.code, 0);
  assert.deepEqual(await originMainSubjects(scene), subjects);
  const gate = await scene.relay(["gate"]);
  assert.equal(gate.code, 13, gate.stdout + gate.stderr);
  assert.match(gate.stdout, /nothing to gate: task-1 is merged/);
});

Deno.test("a FAIL writes a fix brief; the executor fixes the same branch; then it merges", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "Needs a fix" }));
  await scene.relay(["promote"]);
  await ship(scene);
  const failOnce = join(scene.dir, "fail-once");

  const res = await review(scene, { FAKE_FAIL_ONCE: failOnce });
  assert.equal(res.code, 0, res.stdout + res.stderr);
  assert.match(res.stdout, /sent back — fix brief 2/);
  const fix = await scene.read("NEXT-STEPS.md");
  assert.match(fix, /^Status: OPEN\nTask: 2\n/);
  assert.match(fix, /^Branch: task-1$/m);
  assert.match(fix, /^Kind: fix$/m);
  assert.match(fix, /^Fixes: 1$/m);
  assert.match(fix, /^Title: Fix task 1: Needs a fix$/m);
  assert.match(fix, /\[blocker\] fails: the reviewer wants a second look/);
  const firstHead = await scene.out(["rev-parse", "origin/task-1"]);

  // While the fix brief is open, the reviewer waits for the executor.
  const waiting = await review(scene, { FAKE_FAIL_ONCE: failOnce });
  assert.match(waiting.stdout, /waiting/);

  await ship(scene);
  await scene.git(scene.work, ["fetch", "--quiet", "origin"]);
  const secondHead = await scene.out(["rev-parse", "origin/task-1"]);
  assert.notEqual(secondHead, firstHead);
  assert.equal(
    (await scene.git(scene.work, ["merge-base", "--is-ancestor", firstHead, secondHead], true))
      .code,
    0,
  );

  const merged = await review(scene, { FAKE_FAIL_ONCE: failOnce });
  assert.equal(merged.code, 0, merged.stdout + merged.stderr);
  // The merge is the task's, under its own title, not the fix brief's "Fix task 1: …".
  assert.equal(
    (await originMainSubjects(scene))[0],
    "Merge task-1: Needs a fix (task 1, reviewed by relay)",
  );
});

Deno.test("a PR that touches package.json is refused with the file named, and never merged", async () => {
  await using scene = await makeScene({ agent: "custom.sh" });
  await queue(scene, brief({ title: "Sneaky dependency" }));
  await scene.relay(["promote"]);
  await ship(scene, { FAKE_EXTRA: `echo '{"dependencies":{"left-pad":"1"}}' > package.json` });

  const gate = await scene.relay(["gate", "--json"]);
  assert.equal(gate.code, 10, gate.stdout + gate.stderr);
  const decision = JSON.parse(gate.stdout);
  assert.equal(decision.decision, "REFUSE");
  assert.match(JSON.stringify(decision.checks), /package\.json/);

  const res = await review(scene);
  assert.match(res.stdout, /sent back/);
  assert.match(await scene.read("NEXT-STEPS.md"), /package\.json/);
  assert.doesNotMatch((await originMainSubjects(scene)).join("\n"), /^Merge /m);
});

Deno.test("a PR touching only an owner-accepted infra file goes to a person and relay never merges it", async () => {
  await using scene = await makeScene({
    agent: "custom.sh",
    config: "accepted_infra:\n  - netlify.toml\n",
  });
  await queue(scene, brief({ title: "Build tweak" }));
  await scene.relay(["promote"]);
  await ship(scene, { FAKE_EXTRA: "printf '[build]\\n' > netlify.toml" });

  // relay does not review owner-accepted infra: the gate routes it to a person without a verdict.
  assert.equal((await scene.relay(["gate"])).code, 11);
  for (let i = 0; i < 2; i++) {
    const res = await review(scene);
    assert.equal(res.code, 3, res.stdout + res.stderr);
    assert.match(res.stdout, /human path.*netlify\.toml/);
  }
  const gate = await scene.relay(["gate"]);
  assert.equal(gate.code, 11, gate.stdout + gate.stderr);
  assert.match(gate.stdout, /HUMAN .*netlify\.toml/);
  const merge = await scene.relay(["merge"]);
  assert.equal(merge.code, 11, merge.stdout + merge.stderr);
  assert.doesNotMatch((await originMainSubjects(scene)).join("\n"), /^Merge /m);
});

Deno.test("a rename of a product file into netlify/functions/ is refused", async () => {
  await using scene = await makeScene({ agent: "custom.sh" });
  await queue(scene, brief({ title: "Move it" }));
  await scene.relay(["promote"]);
  await ship(scene, {
    FAKE_EXTRA: "mkdir -p netlify/functions && git mv src/app.txt netlify/functions/x.js",
  });
  const gate = await scene.relay(["gate"]);
  assert.equal(gate.code, 10, gate.stdout + gate.stderr);
  assert.match(gate.stdout, /netlify\/functions\/x\.js/);
});

Deno.test("main moved only by paperwork between verdict and merge: the PASS stands and it merges", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "Paperwork race" }));
  await scene.relay(["promote"]);
  await ship(scene);
  const killed = await review(scene, { RELAY_FAILPOINT: "review-after-verdict" });
  assert.notEqual(killed.code, 0);
  // Someone edits the report on main (paperwork only).
  await scene.git(scene.work, ["pull", "--quiet", "--ff-only"]);
  await scene.write(
    "COWORK-STATUS.md",
    (await scene.read("COWORK-STATUS.md")).replace("## Pushback", "## Pushback\n\nA note."),
  );
  await scene.git(scene.work, ["commit", "--quiet", "-am", "paperwork edit"]);
  await scene.git(scene.work, ["push", "--quiet", "origin", "main"]);

  const res = await review(scene);
  assert.equal(res.code, 0, res.stdout + res.stderr);
  assert.match((await originMainSubjects(scene))[0]!, /^Merge task-1: /);
  const record = await reviewRecord(scene);
  assert.equal(record.verdicts.length, 1, "no second review was needed");
});

Deno.test("main moved by product code that breaks the bar on the merge: WAIT, then a fresh review", async () => {
  await using scene = await makeScene();
  await queue(
    scene,
    brief({ title: "Product race", bar: ["git ls-files --error-unmatch src/app.txt"] }),
  );
  await scene.relay(["promote"]);
  await ship(scene);
  await review(scene, { RELAY_FAILPOINT: "review-after-verdict" });
  // A product commit lands on main and removes what the bar checks.
  await scene.git(scene.work, ["pull", "--quiet", "--ff-only"]);
  await scene.git(scene.work, ["rm", "--quiet", "src/app.txt"]);
  await scene.git(scene.work, ["commit", "--quiet", "-m", "product change on main"]);
  await scene.git(scene.work, ["push", "--quiet", "origin", "main"]);

  const res = await review(scene);
  assert.equal(res.code, 0, res.stdout + res.stderr);
  assert.match(res.stdout, /waiting: .*stale/i);
  assert.doesNotMatch((await originMainSubjects(scene)).join("\n"), /^Merge /m);
  const record = await reviewRecord(scene);
  assert.equal(record.verdicts[0]!.stale, true);
  // The next tick reviews again; the head still passes on its own, the merge still fails:
  // that is for the executor to fix, so the PR goes back instead of being reviewed every minute.
  const again = await review(scene);
  assert.equal(again.code, 0, again.stdout + again.stderr);
  assert.match(again.stdout, /sent back/);
  assert.match(await scene.read("NEXT-STEPS.md"), /fails on the merge of task-1 with main/);
  const after = await reviewRecord(scene);
  assert.equal(after.verdicts.length, 2, "a stale PASS triggers a new review");
});

Deno.test("when the PR head changes after a PASS, relay does not merge", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "Moving head" }));
  await scene.relay(["promote"]);
  await ship(scene);
  await review(scene, { RELAY_FAILPOINT: "review-after-verdict" });
  // Someone pushes to the PR branch after the verdict.
  const wt = join(scene.worktrees, "task-1");
  await Deno.writeTextFile(join(wt, "src/late.txt"), "late\n");
  await scene.git(wt, ["add", "src/late.txt"]);
  await scene.git(wt, ["commit", "--quiet", "-m", "late push"]);
  await scene.git(wt, ["push", "--quiet", "origin", "task-1"]);

  // Nothing in the loop pushed that commit: a person has to look.
  const res = await review(scene);
  assert.equal(res.code, 3, res.stdout + res.stderr);
  assert.match(res.stderr, /moved to [0-9a-f]{12} outside relay/);
  assert.doesNotMatch((await originMainSubjects(scene)).join("\n"), /^Merge /m);
  const gate = await scene.relay(["gate"]);
  assert.equal(gate.code, 10, gate.stdout);
  assert.match(gate.stdout, /WAIT +verdict +no verdict for this head/);
});

Deno.test("a reviewer that edits its worktree is void twice: HOLD, nothing merged, its edits kept aside", async () => {
  await using scene = await makeScene({ reviewer: "edits.sh" });
  await queue(scene, brief({ title: "Tamper" }));
  await scene.relay(["promote"]);
  await ship(scene);
  const res = await review(scene);
  assert.equal(res.code, 3, res.stdout + res.stderr);
  assert.match(res.stderr, /changed its worktree twice/);
  assert.doesNotMatch((await originMainSubjects(scene)).join("\n"), /^Merge /m);
  const aside = [];
  for await (const e of Deno.readDir(scene.worktrees)) {
    if (e.name.endsWith(".void")) aside.push(e.name);
  }
  assert.equal(aside.length, 2);
  const status = await scene.relay(["status"]);
  assert.equal(status.code, 3);
  assert.match(status.stdout, /HOLD/);
});

Deno.test("a reviewer void once is dispatched again and its second verdict counts", async () => {
  await using scene = await makeScene({ reviewer: "edits-once.sh" });
  await queue(scene, brief({ title: "Tamper once" }));
  await scene.relay(["promote"]);
  await ship(scene);
  const res = await review(scene, { FAKE_STATE: join(scene.dir, "edited") });
  assert.equal(res.code, 0, res.stdout + res.stderr);
  assert.match((await originMainSubjects(scene))[0]!, /^Merge task-1: /);
});

Deno.test("a reviewer that prints no verdict is asked twice, then HOLD — never a pass", async () => {
  await using scene = await makeScene({ reviewer: "silent.sh" });
  await queue(scene, brief({ title: "Silence" }));
  await scene.relay(["promote"]);
  await ship(scene);
  const count = join(scene.dir, "reviews");
  const res = await review(scene, { FAKE_REVIEW_COUNT: count });
  assert.equal(res.code, 3, res.stdout + res.stderr);
  assert.match(res.stderr, /no valid verdict twice/);
  assert.equal((await Deno.readTextFile(count)).trim().split("\n").length, 2);
  assert.doesNotMatch((await originMainSubjects(scene)).join("\n"), /^Merge /m);
});

Deno.test("a verdict written to $RELAY_VERDICT wins over stdout", async () => {
  await using scene = await makeScene({ reviewer: "file-verdict.sh" });
  await queue(scene, brief({ title: "File verdict" }));
  await scene.relay(["promote"]);
  await ship(scene);
  const res = await review(scene);
  assert.equal(res.code, 0, res.stdout + res.stderr);
  assert.match((await originMainSubjects(scene))[0]!, /^Merge task-1: /);
});

Deno.test("a lying reviewer cannot merge work whose own evidence fails", async () => {
  await using scene = await makeScene({ agent: "liar.sh", reviewer: "lying.sh" });
  await queue(scene, brief({ title: "Lies", bar: ["git ls-files --error-unmatch nothing-here"] }));
  await scene.relay(["promote"]);
  await ship(scene);
  const gate = await scene.relay(["gate"]);
  assert.equal(gate.code, 10, gate.stdout + gate.stderr);
  assert.match(gate.stdout, /evidence/);
  const res = await review(scene);
  assert.match(res.stdout, /sent back/);
  assert.doesNotMatch((await originMainSubjects(scene)).join("\n"), /^Merge /m);
});

Deno.test("a PR merged by a person out of band is noticed and the next brief promoted", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "By hand" }));
  await queue(scene, brief({ title: "Next" }));
  await scene.relay(["promote"]);
  await ship(scene);
  // A person merges task-1 themselves in another clone.
  const other = join(scene.dir, "other");
  await scene.git(scene.dir, ["clone", "--quiet", `file://${scene.origin}`, other]);
  await scene.git(other, ["merge", "--quiet", "--no-ff", "-m", "merged by hand", "origin/task-1"]);
  await scene.git(other, ["push", "--quiet", "origin", "main"]);

  const res = await review(scene);
  assert.equal(res.code, 0, res.stdout + res.stderr);
  assert.match(res.stdout, /promoted task 2/);
  assert.match(await scene.read("NEXT-STEPS.md"), /^Status: OPEN\nTask: 2\n/);
});

Deno.test("poll will not start a new task while a PR is in flight", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "In flight" }));
  await queue(scene, brief({ title: "Too early" }));
  await scene.relay(["promote"]);
  await ship(scene);
  // A person promotes the next brief before the review: the executor must wait.
  assert.match((await scene.relay(["promote"])).stdout, /promoted task 2/);
  const res = await scene.relay(["poll"]);
  assert.equal(res.code, 0, res.stderr);
  assert.match(res.stdout, /task-1 is in flight/);
  assert.equal(
    (await scene.git(scene.work, ["rev-parse", "--verify", "--quiet", "task-2"], true)).code,
    1,
  );
  // The reviewer does not wait for that brief (it waits for the PR): no deadlock.
  const reviewed = await review(scene);
  assert.equal(reviewed.code, 0, reviewed.stdout + reviewed.stderr);
  assert.match((await originMainSubjects(scene))[0]!, /^Merge task-1: /);
  await ship(scene);
  assert.match((await originMainSubjects(scene))[0]!, /^Task #2: status — SHIPPED/);
});

Deno.test("a fix brief for the PR in flight moves an early-promoted brief back to the inbox", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "In flight" }));
  await queue(scene, brief({ title: "Too early" }));
  await scene.relay(["promote"]);
  await ship(scene);
  await scene.relay(["promote"]);
  const res = await review(scene, { FAKE_FAIL_ONCE: join(scene.dir, "fail-once") });
  assert.equal(res.code, 0, res.stdout + res.stderr);
  assert.match(res.stdout, /sent back — fix brief 3/);
  assert.match(await scene.read("NEXT-STEPS.md"), /^Status: OPEN\nTask: 3\n[\s\S]*^Fixes: 1$/m);
  const inbox = JSON.parse((await scene.relay(["inbox", "list", "--json"])).stdout);
  assert.deepEqual(inbox.map((e: { task: number; title: string }) => [e.task, e.title]), [[
    2,
    "Too early",
  ]]);
});

Deno.test("a reviewer that moves refs is void: main and the new branch are put back, the commits kept aside", async () => {
  await using scene = await makeScene({ reviewer: "makes-ref.sh" });
  await queue(scene, brief({ title: "Refs" }));
  await scene.relay(["promote"]);
  await ship(scene);
  const mainBefore = await scene.out(["rev-parse", "main"]);
  const res = await review(scene);
  assert.equal(res.code, 3, res.stdout + res.stderr);
  assert.match(res.stderr, /changed its worktree twice/);
  assert.equal(await scene.out(["rev-parse", "main"]), mainBefore, "main is back where it was");
  assert.equal(
    (await scene.git(scene.work, ["rev-parse", "--verify", "--quiet", "reviewer-was-here"], true))
      .code,
    1,
  );
  const kept = await scene.out(["for-each-ref", "--format=%(refname)", "refs/relay/void/"]);
  assert.match(kept, /refs\/relay\/void\/.*\/refs\/heads\/reviewer-was-here/);
  assert.match(kept, /refs\/relay\/void\/.*\/refs\/heads\/main/);
});

Deno.test("relay close gives up on a PR that used its fix rounds: HOLD cleared, branch kept, next brief runs", async () => {
  await using scene = await makeScene({ config: "fix_rounds: 0\n" });
  await queue(scene, brief({ title: "Hopeless" }));
  await queue(scene, brief({ title: "Next one" }));
  await scene.relay(["promote"]);
  await ship(scene);
  const held = await review(scene, { FAKE_FAIL_ONCE: join(scene.dir, "fail-once") });
  assert.equal(held.code, 3, held.stdout + held.stderr);
  assert.match(held.stderr, /relay close 1 --reason/);
  const head = await scene.out(["rev-parse", "origin/task-1"]);

  assert.equal((await scene.relay(["close", "1"])).code, 2, "a reason is required");
  const closed = await scene.relay(["close", "1", "--reason", "not worth it"]);
  assert.equal(closed.code, 0, closed.stdout + closed.stderr);
  assert.match(closed.stdout, /closed task-1 without merging/);
  assert.match(closed.stdout, /cleared the HOLD/);
  assert.match(closed.stdout, /promoted task 2: Next one/);
  assert.equal(await scene.out(["rev-parse", "origin/task-1"]), head, "the branch stays");
  // The task's timeline has who closed it, the HOLD it cleared, and what it promoted.
  const shown = await scene.relay(["show", "1"]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /closed unmerged by relay close: not worth it/);
  assert.match(shown.stdout, /resumed by a person: .*\(cleared by relay close 1\)/);
  assert.match(shown.stdout, /promoted task 2: Next one/);
  assert.equal((await scene.relay(["status"])).code, 0);

  await ship(scene);
  assert.match((await originMainSubjects(scene))[0]!, /^Task #2: status — SHIPPED/);
  assert.doesNotMatch((await originMainSubjects(scene)).join("\n"), /^Merge task-1/m);
  assert.equal(
    (await scene.relay(["close", "1", "--reason", "again"])).code,
    2,
    "nothing open to close",
  );
});

Deno.test("a review worktree left by a killed review tick is removed when clean, kept when dirty", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "Leftovers" }));
  await scene.relay(["promote"]);
  await ship(scene);
  const clean = join(scene.worktrees, "review-20260101T000000Z-review1-t1");
  const dirty = join(scene.worktrees, "review-20260101T000001Z-review1-t2");
  for (const path of [clean, dirty]) {
    await scene.git(scene.work, ["worktree", "add", "--quiet", "--detach", path, "origin/task-1"]);
  }
  await Deno.writeTextFile(join(dirty, "notes.txt"), "someone's notes\n");
  const res = await review(scene);
  assert.equal(res.code, 0, res.stdout + res.stderr);
  const list = await scene.out(["worktree", "list", "--porcelain"]);
  assert.doesNotMatch(list, /review1-t1\n/);
  assert.match(list, /review1-t2/);
  assert.equal(await Deno.readTextFile(join(dirty, "notes.txt")), "someone's notes\n");
});

Deno.test("relay close on a fix run held at its push abandons that run: it never reopens or merges the PR, and the next brief survives", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "Stuck" }));
  await queue(scene, brief({ title: "Survivor" }));
  await scene.relay(["promote"]);
  await ship(scene);
  await review(scene, { FAKE_FAIL_ONCE: join(scene.dir, "fail-once") });
  assert.match(await scene.read("NEXT-STEPS.md"), /^Kind: fix$/m);
  // The remote now refuses pushes to task-1 (a protected branch).
  const hook = join(scene.origin, "hooks", "pre-receive");
  await Deno.writeTextFile(
    hook,
    '#!/bin/sh\nwhile read old new ref; do [ "$ref" = refs/heads/task-1 ] && { echo "protected branch" >&2; exit 1; }; done\nexit 0\n',
  );
  await Deno.chmod(hook, 0o755);
  const held = await scene.relay(["poll"]);
  assert.equal(held.code, 3, held.stdout + held.stderr);

  // (relay abort is the same command under the paired-session workflow's name.)
  const closed = await scene.relay(["abort", "1", "--reason", "give up"]);
  assert.equal(closed.code, 0, closed.stdout + closed.stderr);
  assert.match(closed.stdout, /abandoned run .* on task-1/);
  assert.match(closed.stdout, /promoted task 2: Survivor/);

  const next = await scene.relay(["poll"]);
  assert.equal(next.code, 0, next.stdout + next.stderr);
  assert.match(next.stdout, /task 2 shipped/);
  await scene.git(scene.work, ["fetch", "--quiet", "origin"]);
  assert.match(await scene.out(["show", "origin/main:NEXT-STEPS.md"]), /^Status: DONE\nTask: 2\n/);
  const pr = JSON.parse(await Deno.readTextFile(join(scene.work, ".git/relay/prs/task-1.json")));
  assert.equal(pr.state, "closed");
  const reviewed = await review(scene);
  assert.equal(reviewed.code, 0, reviewed.stdout + reviewed.stderr);
  const subjects = (await originMainSubjects(scene)).join("\n");
  assert.match(subjects, /^Merge task-2: /m);
  assert.doesNotMatch(subjects, /^Merge task-1/m);
});

Deno.test("a fix answered without a new commit is reviewed again, not waited on forever", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "Push back" }));
  await scene.relay(["promote"]);
  await ship(scene);
  const failOnce = join(scene.dir, "fail-once");
  assert.match(
    (await review(scene, { FAKE_FAIL_ONCE: failOnce })).stdout,
    /sent back — fix brief 2/,
  );
  const head = await scene.out(["rev-parse", "origin/task-1"]);
  await scene.setAgent("pushback.sh");
  await ship(scene);
  await scene.git(scene.work, ["fetch", "--quiet", "origin"]);
  assert.equal(await scene.out(["rev-parse", "origin/task-1"]), head, "the fix added no commit");
  const res = await review(scene, { FAKE_FAIL_ONCE: failOnce });
  assert.equal(res.code, 0, res.stdout + res.stderr);
  assert.match((await originMainSubjects(scene))[0]!, /^Merge task-1: /);
  const record = await reviewRecord(scene);
  assert.deepEqual(record.verdicts.map((v) => v.verdict), ["FAIL", "PASS"]);
});

Deno.test("a SHIPPED report on a branch with no new commit is not mistaken for a merge: the gate sends it back", async () => {
  await using scene = await makeScene({ agent: "pushback.sh" });
  await queue(scene, brief({ title: "Nothing to do" }));
  await queue(scene, brief({ title: "Next" }));
  await scene.relay(["promote"]);
  await ship(scene);
  const res = await review(scene);
  assert.equal(res.code, 0, res.stdout + res.stderr);
  assert.doesNotMatch(res.stdout + res.stderr, /merged outside relay|promoted task 2/);
  assert.match(res.stdout, /sent back/);
  assert.match(await scene.read("NEXT-STEPS.md"), /changes nothing/);
});

Deno.test("a merge the remote refuses (protected main) is a HOLD quoting the remote, not a silent retry every minute", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "Protected" }));
  await scene.relay(["promote"]);
  await ship(scene);
  const hook = join(scene.origin, "hooks", "pre-receive");
  await Deno.writeTextFile(
    hook,
    '#!/bin/sh\nwhile read old new ref; do\n  n=$(git rev-list --parents -n 1 "$new" | wc -w)\n  [ "$ref" = refs/heads/main ] && [ "$n" -gt 2 ] && { echo "GH006: Protected branch update failed: merges need approval" >&2; exit 1; }\ndone\nexit 0\n',
  );
  await Deno.chmod(hook, 0o755);
  const res = await review(scene);
  assert.equal(res.code, 3, res.stdout + res.stderr);
  assert.match(
    res.stderr,
    /Cannot merge task-1: pushing the merge to origin\/main failed: the remote refused it/,
  );
  assert.match(res.stderr, /GH006: Protected branch update failed/);
  assert.doesNotMatch((await originMainSubjects(scene)).join("\n"), /^Merge /m);
});

Deno.test("a reviewer that pushes a merge to origin main itself is a HOLD naming the push", async () => {
  await using scene = await makeScene({ reviewer: "pushes.sh" });
  await queue(scene, brief({ title: "Sneaky" }));
  await scene.relay(["promote"]);
  await ship(scene);
  const res = await review(scene);
  assert.equal(res.code, 3, res.stdout + res.stderr);
  assert.match(res.stderr, /the reviewer pushed to origin\/main/);
  // And the next tick does not call it "merged outside relay": the HOLD stands.
  const again = await review(scene);
  assert.equal(again.code, 3);
  assert.doesNotMatch(again.stdout + again.stderr, /merged outside relay|promoted/);
});

Deno.test("a reviewer that plants a program in .git/config is a HOLD, and relay never runs it", async () => {
  await using scene = await makeScene({ reviewer: "steers.sh" });
  await queue(scene, brief({ title: "Steer" }));
  await scene.relay(["promote"]);
  await ship(scene);
  const mark = join(scene.dir, "fsmonitor-ran");
  const res = await review(scene, { FAKE_MARK: mark });
  assert.equal(res.code, 3, res.stdout + res.stderr);
  assert.match(res.stderr, /the reviewer changed files that steer git or relay: .*config/);
  assert.doesNotMatch((await originMainSubjects(scene)).join("\n"), /^Merge /m);
  // The reviewer's own git calls may have run it; relay's (status, merge) must not have.
  await Deno.remove(mark).catch(() => {});
  await scene.relay(["status"]);
  await scene.relay(["gate"]);
  assert.equal(await Deno.stat(mark).then(() => true, () => false), false);
});

Deno.test("a PR a person merged before relay's paperwork landed is seen as merged, not as an empty PR", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "Quick hands" }));
  await queue(scene, brief({ title: "After" }));
  await scene.relay(["promote"]);
  const killed = await scene.relay(["poll"], { env: { RELAY_FAILPOINT: "after-pr-opened" } });
  assert.equal(killed.code, 137);
  const other = join(scene.dir, "other");
  await scene.git(scene.dir, ["clone", "--quiet", `file://${scene.origin}`, other]);
  await scene.git(other, ["merge", "--quiet", "--no-ff", "-m", "merged by hand", "origin/task-1"]);
  await scene.git(other, ["push", "--quiet", "origin", "main"]);
  await ship(scene);
  const res = await review(scene);
  assert.equal(res.code, 0, res.stdout + res.stderr);
  assert.match(res.stdout, /promoted task 2/);
  assert.doesNotMatch(res.stdout + res.stderr, /sent back/);
});

Deno.test("relay close stops an agent still running on that branch from a killed tick", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "Close mid-turn" }));
  await scene.relay(["promote"]);
  await ship(scene);
  await review(scene, { FAKE_FAIL_ONCE: join(scene.dir, "fail-once") });
  const killed = await scene.relay(["poll"], {
    env: { RELAY_FAILPOINT: "agent-running", FAKE_SLEEP: "3" },
  });
  assert.equal(killed.code, 137);
  const before = await scene.out(["rev-parse", "task-1"]);
  const closed = await scene.relay(["close", "1", "--reason", "changed my mind"]);
  assert.equal(closed.code, 0, closed.stdout + closed.stderr);
  const pid = Number(closed.stdout.match(/stopped the agent of run .* \(pid (\d+)\)/)?.[1]);
  assert.ok(pid > 0, closed.stdout);
  // Wait for a state, not a time: once no process of the agent's group is left, nothing can commit.
  // An agent relay failed to stop would end by itself in about 3 s, after its commit.
  assert.ok(await groupGone(pid, 60_000), `the agent's process group ${pid} is still running`);
  assert.equal(
    await scene.out(["rev-parse", "task-1"]),
    before,
    "the stopped agent committed nothing more",
  );
});
