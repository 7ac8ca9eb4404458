/**
 * End to end, checkouts that cost what the change costs (issue 10, goal 3): a
 * finished task's clean worktree is parked and the next task switches it to
 * its branch instead of writing the whole tree again; reviewer-side turns share
 * one checkout switched with `git checkout --detach`, which starts clean and is
 * verified clean. Nothing that is not relay's leftover is ever deleted: a
 * checkout holding anything else is moved aside or left alone.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, brief, exists, makeScene, queue, type Scene } from "./helpers/scene.ts";
import { addSubmodule, assertSubmoduleWorks } from "./helpers/submodule.ts";

async function status(scene: Scene, dir: string): Promise<string> {
  return (await scene.git(dir, ["status", "--porcelain", "--untracked-files=all", "--ignored"]))
    .stdout;
}

async function shipAndMerge(scene: Scene, task: number): Promise<{ poll: string; review: string }> {
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, new RegExp(`task ${task} shipped`));
  const review = await scene.relay(["review"]);
  assert.equal(review.code, 0, all(review));
  assert.match(review.stdout, new RegExp(`task ${task} merged`));
  return { poll: poll.stderr, review: review.stderr };
}

/** A scene with briefs "First" and "Second" queued, the first promoted, shipped and merged. */
async function firstOfTwoMerged(): Promise<Scene> {
  const scene = await makeScene({ config: "" });
  try {
    await queue(scene, brief({ title: "First" }));
    await queue(scene, brief({ title: "Second" }));
    assert.equal((await scene.relay(["promote"])).code, 0);
    await shipAndMerge(scene, 1);
    return scene;
  } catch (err) {
    await scene[Symbol.asyncDispose]();
    throw err;
  }
}

async function folders(scene: Scene): Promise<string[]> {
  const names = [];
  for await (const e of Deno.readDir(scene.worktrees)) names.push(e.name);
  return names.sort();
}

Deno.test("the next task switches the last task's parked worktree; reviewer turns share one checkout, cleaned and verified", async () => {
  await using scene = await makeScene({ config: "" });
  // A file git ignores: a fresh checkout never has one, so a reused one must not either.
  await scene.write(".gitignore", "*.log\n");
  await scene.git(scene.work, ["add", ".gitignore"]);
  await scene.git(scene.work, ["commit", "--quiet", "-m", "ignore logs"]);
  await scene.git(scene.work, ["push", "--quiet", "origin", "HEAD:main"]);
  await queue(scene, brief({ title: "First" }));
  await queue(scene, brief({ title: "Second" }));
  assert.equal((await scene.relay(["promote"])).code, 0);

  const first = await shipAndMerge(scene, 1);
  assert.match(first.poll, /task 1: worktree created at .*task-1 on task-1/);
  assert.match(
    first.review,
    /parked the worktree of task-1 for the next task \(the branch stays\)/,
  );
  assert.deepEqual(await folders(scene), ["review", "spare"]);
  const review = join(scene.worktrees, "review");
  assert.equal(await status(scene, review), "");
  // What an earlier turn left that git ignores, in both kept checkouts.
  await Deno.writeTextFile(join(review, "turn.log"), "left by a turn\n");

  const second = await shipAndMerge(scene, 2);
  assert.match(second.poll, /task 2: worktree recycled at .*task-2 on task-2/);
  assert.doesNotMatch(second.poll, /worktree created/);
  // The branch it switched to starts at main with task 1 merged, not at task 1's branch.
  const merge1 = await scene.out(["log", "--format=%H", "--merges", "--reverse", "origin/main"]);
  assert.equal(
    (await scene.git(
      scene.work,
      ["merge-base", "--is-ancestor", merge1.split("\n")[0]!, "task-2"],
      true,
    ))
      .code,
    0,
  );
  assert.deepEqual(
    (await scene.out(["ls-tree", "--name-only", "task-2", "src/"])).split("\n"),
    ["src/app.txt", "src/feature-1.txt", "src/feature-2.txt"],
  );
  // The reviewer's checkout was switched, not made again, and started without the ignored file.
  assert.equal(await exists(join(review, "turn.log")), false);
  assert.equal(await status(scene, review), "");
  assert.equal(
    await scene.out(["rev-parse", "HEAD"], review),
    await scene.out(["rev-parse", "refs/remotes/origin/main^2"]),
  );
  assert.deepEqual(await folders(scene), ["review", "spare"]);
  const list = await scene.out(["worktree", "list", "--porcelain"]);
  assert.equal(list.split("\n").filter((l) => l.startsWith("worktree ")).length, 3, list);
});

Deno.test("a reviewer's checkout holding someone's change is moved aside, never cleaned; a spare with a stray file is left alone", async () => {
  await using scene = await firstOfTwoMerged();
  const review = join(scene.worktrees, "review");
  const spare = join(scene.worktrees, "spare");
  // A person's edit in the reviewer's checkout, and a stray file in the parked worktree.
  await Deno.writeTextFile(join(review, "README.md"), "a person's edit\n");
  await Deno.writeTextFile(join(spare, "stray.txt"), "someone's file\n");

  const second = await shipAndMerge(scene, 2);
  assert.match(second.poll, /task 2: worktree created at .*task-2 on task-2/);
  assert.equal(await Deno.readTextFile(join(spare, "stray.txt")), "someone's file\n");
  const moved = (await folders(scene)).filter((n) => n.startsWith("review.stale-"));
  assert.equal(moved.length, 1, (await folders(scene)).join(" "));
  assert.match(
    second.review,
    /the reviewer's checkout was not clean \(.*README\.md.*\): moved aside/,
  );
  assert.equal(
    await Deno.readTextFile(join(scene.worktrees, moved[0]!, "README.md")),
    "a person's edit\n",
  );
  assert.equal(await status(scene, review), "");
  // The spare stays as it is (not clean: never used), so task 2's worktree is not parked:
  // it goes as before.
  assert.match(second.review, /removed the worktree of task-2 \(the branch stays\)/);
  assert.equal((await folders(scene)).includes("task-2"), false);
});

Deno.test("what status does not show keeps a checkout from reuse: an edit under --skip-worktree in the reviewer's checkout is moved aside; a task worktree with hidden entries is not parked", async () => {
  await using scene = await firstOfTwoMerged();
  const review = join(scene.worktrees, "review");
  // Hidden from `git status`: a plain status check would call this checkout clean.
  await scene.git(review, ["update-index", "--skip-worktree", "src/app.txt"]);
  await Deno.writeTextFile(join(review, "src/app.txt"), "hidden edit\n");
  assert.equal(await status(scene, review), "");

  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  const wt = join(scene.worktrees, "task-2");
  await scene.git(wt, ["update-index", "--assume-unchanged", "README.md"]);
  const res = await scene.relay(["review"]);
  assert.equal(res.code, 0, all(res));
  assert.match(res.stdout, /task 2 merged/);
  assert.match(
    res.stderr,
    /the reviewer's checkout was not clean \(1 file\(s\) git is told not to look at, e\.g\. src\/app\.txt\): moved aside/,
  );
  const moved = (await folders(scene)).filter((n) => n.startsWith("review.stale-"));
  assert.equal(moved.length, 1);
  assert.equal(
    await Deno.readTextFile(join(scene.worktrees, moved[0]!, "src/app.txt")),
    "hidden edit\n",
  );
  // Still a worktree git knows: a person can look with git there.
  assert.match(await scene.out(["worktree", "list"]), /review\.stale-/);
  assert.equal(await Deno.readTextFile(join(review, "src/app.txt")), "app v1\n");
  // The task worktree had hidden entries: removed as before (no --force), not parked.
  assert.doesNotMatch(res.stderr, /parked the worktree of task-2/);
  assert.match(res.stderr, /removed the worktree of task-2 \(the branch stays\)/);
});

Deno.test("a reviewer's checkout that holds a submodule (git moves no such worktree), left not clean, is moved aside still a worktree, its submodule still working", async () => {
  await using scene = await firstOfTwoMerged();
  await addSubmodule(scene, scene.work, join(scene.worktrees, "review"));
  await shipAndMerge(scene, 2);
  const moved = (await folders(scene)).filter((n) => n.startsWith("review.stale-"));
  assert.equal(moved.length, 1);
  assert.match(await scene.out(["worktree", "list"]), /review\.stale-/);
  await assertSubmoduleWorks(scene, join(scene.worktrees, moved[0]!));
});

Deno.test("a worktree_root reached through a symbolic link (macOS's /tmp, a linked home): a fix round works in the task's worktree (was a HOLD: git names it by its real path), and the finished worktree is parked", async () => {
  await using scene = await makeScene({ config: "" });
  const real = join(scene.dir, "real-worktrees");
  await Deno.mkdir(real);
  const link = join(scene.dir, "link-worktrees");
  await Deno.symlink(real, link);
  const profile = await Deno.readTextFile(scene.profile);
  await Deno.writeTextFile(
    scene.profile,
    profile.replace(/^worktree_root: .*$/m, `worktree_root: ${link}`),
  );
  await queue(scene, brief({ title: "First" }));
  await queue(scene, brief({ title: "Second" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  const shipped = await scene.relay(["poll"]);
  assert.match(shipped.stdout, /task 1 shipped/, all(shipped));
  const failed = await scene.relay(["review"], {
    env: { FAKE_FAIL_ONCE: join(scene.dir, "failed") },
  });
  assert.match(failed.stdout, /task 1: sent back — fix brief 3/, all(failed));
  const fixed = await scene.relay(["poll"]);
  assert.equal(fixed.code, 0, all(fixed));
  assert.match(fixed.stdout, /task 3 shipped: task-1/, all(fixed));
  const merged = await scene.relay(["review"]);
  assert.match(merged.stdout, /task 1 merged/, all(merged));
  assert.match(merged.stderr, /parked the worktree of task-1 for the next task/, all(merged));
  await shipAndMerge(scene, 2);
  const names = [];
  for await (const e of Deno.readDir(real)) names.push(e.name);
  assert.deepEqual(names.sort(), ["review", "spare"]);
});

Deno.test("relay -C through a symbolic link: a worktree_root inside the repository, named through the link, is still refused (a HOLD), nothing made there", async () => {
  await using scene = await makeScene({ config: "" });
  const link = join(scene.dir, "link");
  await Deno.symlink(scene.dir, link);
  const work = join(link, "work");
  const profile = await Deno.readTextFile(scene.profile);
  await Deno.writeTextFile(
    scene.profile,
    profile.replace(/^worktree_root: .*$/m, `worktree_root: ${join(work, "wt")}`),
  );
  await queue(scene, brief({ title: "First" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  const held = await scene.relay(["-C", work, "poll"], { cwd: scene.dir });
  assert.equal(held.code, 3, all(held));
  assert.match(
    held.stderr,
    /HOLD: Cannot use ".*" for task worktrees: it is inside the repository/,
  );
  assert.equal(await exists(join(scene.work, "wt")), false, "no worktree made in the repository");
});

/** The git processes relay itself started (its own `-c core.fsmonitor=false`), from trace2 events. */
async function relayGit(events: string): Promise<string[]> {
  return (await Deno.readTextFile(events)).split("\n")
    .filter((l) => l.includes('"event":"start"'))
    .map((l) => JSON.parse(l).argv as string[])
    .filter((argv) => argv[1] === "-c" && argv[2] === "core.fsmonitor=false")
    .map((argv) => {
      const args: string[] = [];
      for (let i = 1; i < argv.length; i++) {
        if (argv[i] === "-c") i++;
        else args.push(argv[i]!);
      }
      return args.join(" ");
    });
}

Deno.test("a review tick's git: review, finish, polish and security, the gate and the merge in at most 48 git processes; each turn's checkout is switched by one checkout and read from main once", async () => {
  await using scene = await makeScene({ config: "" });
  await queue(scene, brief({ title: "First" }));
  await queue(scene, brief({ title: "Second" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  // The reviewer's checkout and the spare exist: the second task is a tick like any later one.
  await shipAndMerge(scene, 1);
  assert.equal((await scene.relay(["poll"])).code, 0);
  const events = join(scene.dir, "review-trace.json");
  const res = await scene.relay(["review"], { env: { GIT_TRACE2_EVENT: events } });
  assert.equal(res.code, 0, all(res));
  assert.match(res.stdout, /task 2 merged/);
  assert.match(res.stderr, /polish stage PASS/);
  assert.match(res.stderr, /security stage PASS/);
  const git = await relayGit(events);
  const listing = git.map((a, i) => `${i + 1} ${a}`).join("\n");
  // 77 before the reviewer-side turns stopped asking git what they can read from its files or
  // what it said a moment ago; 58 then, and 51 since a tick resolves refs through one
  // `git cat-file --batch-check` (lib/git/resolver.ts); 46 since the finish stage, the gate
  // and the merge ask git about the same two commits once, and parking lists the worktrees
  // once. Two more: a merge whose fetch a slow machine does not reuse from the gate's, and a
  // resolver that had to ask a process after all. (tests/git_budget.test.ts holds every
  // command's count exactly.)
  assert.ok(git.length <= 48, `${git.length} git processes:\n${listing}`);
  const count = (re: RegExp) => git.filter((a) => re.test(a)).length;
  assert.equal(count(/^--git-dir=\S+ cat-file --batch-check=/), 1, listing); // the resolver
  // Three turns in the one checkout: switched to the head once, listed once (its first turn).
  assert.equal(count(/^checkout --quiet --detach /), 1, listing);
  assert.equal(count(/^worktree add /), 0, listing);
  assert.equal(count(/^worktree list /), 2, listing); // the review's first turn, then parking
  // The finish stage's, the gate's and the merge's merge of the head onto main: one.
  assert.equal(count(/^merge-tree /), 1, listing);
  assert.equal(
    count(/^status --porcelain=v1 -z --untracked-files=normal --ignore-submodules=dirty$/),
    1,
    listing,
  ); // parking
  // Every turn still looks: hidden index entries, status with what git ignores, and a clean.
  assert.equal(count(/^ls-files -v -z$/), 4, listing); // three turns, then parking
  assert.equal(
    count(
      /^status --porcelain=v1 -z --untracked-files=normal --ignored --ignore-submodules=dirty$/,
    ),
    3,
    listing,
  );
  assert.equal(count(/^clean -d -x -f -q$/), 3, listing);
  // The report, the brief and every procedure: one read of main, no `git show` each.
  assert.equal(count(/^show /), 0, listing);
  // A turn that made no commit has nothing to keep under refs/relay/void/.
  assert.equal(count(/^for-each-ref .*refs\/relay\/void\//), 0, listing);
});
