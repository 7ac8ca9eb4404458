/**
 * End to end, the reviewer's shared checkout between the turns of one review tick: review,
 * then polish, then security each run in `<worktree_root>/review`, and each turn starts there
 * at the head, with nothing git ignores or relay never commits, no operation in progress and
 * no index entry hidden from status — whatever the turn before it left, and whatever ran
 * between them (the finish stage's test_command runs the head's code). A stage's turn (not
 * only the first review turn) that leaves something behind: the next turn still finds it and
 * cleans it, moves the checkout aside, or voids the turn, as for the reviewer's own.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, brief, exists, makeScene, queue, reviewRecord, type Scene } from "./helpers/scene.ts";

/** A scene whose main ignores *.log, with polish and security played by leaves.sh. */
async function stagedScene(): Promise<Scene> {
  const scene = await makeScene({ config: "" });
  await scene.write(".gitignore", "*.log\n");
  await scene.git(scene.work, ["add", ".gitignore"]);
  await scene.git(scene.work, ["commit", "--quiet", "-m", "ignore logs"]);
  await scene.git(scene.work, ["push", "--quiet", "origin", "HEAD:main"]);
  await scene.setStage("polish", "leaves.sh");
  await scene.setStage("security", "leaves.sh");
  await queue(scene, brief({ title: "Greet" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  return scene;
}

/** What each stage's turn saw when it started: its header line, then anything it found. */
async function seen(file: string): Promise<string[]> {
  return (await Deno.readTextFile(file).catch(() => "")).split("\n").filter((l) => l !== "");
}

async function folders(scene: Scene): Promise<string[]> {
  const names = [];
  for await (const e of Deno.readDir(scene.worktrees)) names.push(e.name);
  return names.sort();
}

/** Ships task 1 and runs the review tick, which merges it; returns its output and the turns seen. */
async function shipAndReview(scene: Scene, extra: Record<string, string> = {}) {
  const env = { FAKE_SEEN: join(scene.dir, "seen.log"), ...extra };
  const poll = await scene.relay(["poll"], { env });
  assert.equal(poll.code, 0, all(poll));
  const head = await scene.out(["rev-parse", "origin/task-1"]);
  const review = await scene.relay(["review"], { env });
  assert.equal(review.code, 0, all(review));
  assert.match(review.stdout, /task 1 merged/, all(review));
  return { review, head, seen: await seen(env.FAKE_SEEN) };
}

/** Ships task 1 and runs the review tick with polish leaving `leave`; returns its output. */
async function reviewWithPolishLeaving(scene: Scene, leave: string) {
  const mark = join(scene.dir, "left");
  const reviewed = await shipAndReview(scene, {
    FAKE_LEAVE_STAGE: "polish",
    FAKE_LEAVE: leave,
    FAKE_LEAVE_MARK: mark,
  });
  assert.equal(await exists(mark), true, "polish left what the test asked");
  return reviewed;
}

for (
  const [leave, what] of [
    ["ignored", "a file git ignores"],
    ["build-output", "untracked build output"],
    ["hidden-dir", "a folder git status never lists"],
  ] as const
) {
  Deno.test(`a polish turn that leaves ${what}: the security turn starts without it, in the same checkout`, async () => {
    await using scene = await stagedScene();
    const { review, head, seen: lines } = await reviewWithPolishLeaving(scene, leave);
    // Not the polish turn's fault: nothing it may not change changed, so no void.
    assert.doesNotMatch(review.stderr, /is void|moved aside/, all(review));
    // Each turn once, at the head, with nothing in its checkout.
    assert.deepEqual(lines, [`== polish ${head}`, `== security ${head}`]);
    const review_ = join(scene.worktrees, "review");
    for (const left of ["left.log", "__pycache__", "stash"]) {
      assert.equal(await exists(join(review_, left)), false, left);
    }
    assert.deepEqual((await folders(scene)).filter((n) => n.startsWith("review")), ["review"]);
  });
}

for (
  const [leave, why] of [
    ["skip-worktree", /1 file\(s\) git is told not to look at, e\.g\. README\.md/],
    ["assume", /1 file\(s\) git is told not to look at, e\.g\. src\/app\.txt/],
    ["merge", /a merge is in progress/],
  ] as const
) {
  Deno.test(`a polish turn that leaves ${leave === "merge" ? "a merge in progress" : `a --${leave} flag`}: the security turn's checkout is moved aside, and it starts in a fresh one`, async () => {
    await using scene = await stagedScene();
    const { review, head, seen: lines } = await reviewWithPolishLeaving(scene, leave);
    assert.match(
      review.stderr,
      new RegExp(`the reviewer's checkout was not clean \\(${why.source}\\): moved aside`),
      all(review),
    );
    // The security turn saw no flag, no merge, nothing changed.
    assert.deepEqual(lines, [`== polish ${head}`, `== security ${head}`]);
    const moved = (await folders(scene)).filter((n) => n.startsWith("review.stale-"));
    assert.equal(moved.length, 1, (await folders(scene)).join(" "));
    if (leave === "assume") {
      // Moved, never cleaned: the edit under the flag is still there.
      assert.equal(
        await Deno.readTextFile(join(scene.worktrees, moved[0]!, "src/app.txt")),
        "hidden edit\n",
      );
    }
    assert.equal(
      await Deno.readTextFile(join(scene.worktrees, "review", "src/app.txt")),
      "app v1\n",
    );
  });
}

for (
  const [leave, what, change] of [
    ["commit", "a stray commit on its detached HEAD", /made commits it left on no ref/],
    ["head", "HEAD moved", /HEAD moved to/],
  ] as const
) {
  Deno.test(`a polish turn that leaves ${what} is void and runs again; the security turn starts at the head`, async () => {
    await using scene = await stagedScene();
    const { review, head, seen: lines } = await reviewWithPolishLeaving(scene, leave);
    assert.match(review.stderr, /polish turn \S+ is void: the polish stage changed its worktree/);
    // The second polish turn and the security turn start at the head, in a clean checkout.
    assert.deepEqual(lines, [`== polish ${head}`, `== polish ${head}`, `== security ${head}`]);
    const voids = (await reviewRecord(scene)).voids;
    assert.equal(voids.length, 1, JSON.stringify(voids));
    assert.match(voids[0]!.why, change);
    if (leave === "commit") {
      const kept = await scene.out([
        "for-each-ref",
        "--format=%(refname)",
        "refs/relay/void/",
      ]);
      assert.match(kept, /refs\/relay\/void\/\S+polish1-t1\/commit-1/, kept);
      assert.equal(
        await scene.out(["log", "-1", "--format=%s", kept.split("\n")[0]!]),
        "stray commit",
      );
    }
    assert.equal(await scene.out(["rev-parse", "HEAD"], join(scene.worktrees, "review")), head);
  });
}

/** A test_command that writes into the reviewer's checkout (the head's tests can). */
async function touchingTests(scene: Scene, body: string): Promise<string> {
  const script = join(scene.dir, "tests.sh");
  const review = join(scene.worktrees, "review");
  await Deno.writeTextFile(script, `set -e\nreview=${review}\n${body}\n`);
  return `test_command: /bin/bash ${script}\n`;
}

Deno.test("what the finish stage's test_command leaves in the reviewer's checkout between two turns (ignored, or invisible to status) is gone when the polish turn starts", async () => {
  await using scene = await makeScene({ config: "" });
  await scene.write(".gitignore", "*.log\n");
  await scene.git(scene.work, ["add", ".gitignore"]);
  await scene.git(scene.work, ["commit", "--quiet", "-m", "ignore logs"]);
  await scene.git(scene.work, ["push", "--quiet", "origin", "HEAD:main"]);
  await scene.setStage("polish", "leaves.sh");
  await scene.setStage("security", "leaves.sh");
  await scene.setAgent(
    "good.sh",
    await touchingTests(
      scene,
      'echo "tests ran" > "$review/finish.log"\nmkdir -p "$review/stash/.git"\necho x > "$review/stash/.git/x"',
    ),
  );
  await queue(scene, brief({ title: "Greet" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  const { review, head, seen: turns } = await shipAndReview(scene);
  assert.doesNotMatch(review.stderr, /is void|moved aside/, all(review));
  assert.deepEqual(turns, [`== polish ${head}`, `== security ${head}`]);
});

for (
  const [what, body, file, text] of [
    [
      "an edit",
      `echo "a person's edit" >> "$review/README.md"`,
      "README.md",
      "# product\na person's edit\n",
    ],
    [
      "a new file",
      `echo "a person's notes" > "$review/notes.txt"`,
      "notes.txt",
      "a person's notes\n",
    ],
  ] as const
) {
  Deno.test(`${what} someone makes in the reviewer's checkout between two turns of a tick is moved aside with it, never cleaned`, async () => {
    await using scene = await makeScene({ config: "" });
    await scene.setStage("polish", "leaves.sh");
    await scene.setStage("security", "leaves.sh");
    await scene.setAgent("good.sh", await touchingTests(scene, body));
    await queue(scene, brief({ title: "Greet" }));
    assert.equal((await scene.relay(["promote"])).code, 0);
    const { review, head, seen: turns } = await shipAndReview(scene);
    assert.match(
      review.stderr,
      new RegExp(
        `the reviewer's checkout was not clean \\(.*${file.replace(".", "\\.")}.*\\): moved aside`,
      ),
    );
    // Not blamed on the polish turn: it started in a fresh checkout.
    assert.doesNotMatch(review.stderr, /is void/, all(review));
    assert.deepEqual(turns, [`== polish ${head}`, `== security ${head}`]);
    const moved = (await folders(scene)).filter((n) => n.startsWith("review.stale-"));
    assert.equal(moved.length, 1, (await folders(scene)).join(" "));
    assert.equal(await Deno.readTextFile(join(scene.worktrees, moved[0]!, file)), text);
  });
}

Deno.test("each turn gets its procedure as it is on main (REVIEWER.md, .relay/POLISH.md, .relay/SECURITY.md), all read in the tick's one read of main", async () => {
  await using scene = await makeScene({ config: "" });
  await scene.write("REVIEWER.md", "Review as main says.\n");
  await scene.write(".relay/POLISH.md", "Polish as main says: “ünïcode” ✓\n");
  await scene.write(".relay/SECURITY.md", "Secure as main says.\n");
  await scene.git(scene.work, ["add", "--all"]);
  await scene.git(scene.work, ["commit", "--quiet", "-m", "procedures"]);
  await scene.git(scene.work, ["push", "--quiet", "origin", "HEAD:main"]);
  await queue(scene, brief({ title: "Greet" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  assert.equal((await scene.relay(["poll"])).code, 0);
  // Not main's: a copy in the primary tree is never what a turn follows.
  await scene.write(".relay/POLISH.md", "Polish as the primary tree says.\n");
  const events = join(scene.dir, "review-trace.json");
  const review = await scene.relay(["review"], { env: { GIT_TRACE2_EVENT: events } });
  assert.equal(review.code, 0, all(review));
  assert.match(review.stdout, /task 1 merged/);
  const runs = join(scene.work, ".git", "relay", "runs");
  const given = new Map<string, string>();
  for await (const run of Deno.readDir(runs)) {
    for (const name of ["REVIEWER.md", "POLISH.md", "SECURITY.md", "DOCS.md"]) {
      const text = await Deno.readTextFile(join(runs, run.name, name)).catch(() => null);
      if (text !== null) given.set(`${run.name.replace(/^.*-(\w+?)\d+-t\d$/, "$1")} ${name}`, text);
    }
  }
  assert.deepEqual(
    Object.fromEntries(given),
    {
      "review REVIEWER.md": "Review as main says.\n",
      "polish POLISH.md": "Polish as main says: “ünïcode” ✓\n",
      "security SECURITY.md": "Secure as main says.\n",
    },
  );
  const shows = (await Deno.readTextFile(events)).split("\n")
    .filter((l) => l.includes('"event":"start"'))
    .map((l) => JSON.parse(l).argv as string[])
    // relay's own git (its `-c core.fsmonitor=false`), whose command is `show`.
    .filter((a) =>
      a[2] === "core.fsmonitor=false" && a[a.findLastIndex((x) => x === "-c") + 2] === "show"
    );
  assert.deepEqual(shows, []);
});
