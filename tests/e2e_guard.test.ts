/**
 * End to end: an executor agent that runs unsandboxed beside relay and reaches
 * for relay's authority — pushes main itself, plants a program in the shared
 * git config, forges relay's review record, rewrites a queued brief — is
 * stopped with a HOLD before relay runs git again or publishes anything; and
 * the ordinary things agents and people do during a turn are not blamed.
 * Real CLI, real git, fake agents.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  AGENTS,
  all,
  brief,
  exists,
  makeScene,
  originRefs,
  type RelayResult,
  type Scene,
  stateDir,
} from "./helpers/scene.ts";
import { Git } from "../lib/git/git.ts";
import { sha256 } from "../lib/proc/hash.ts";
import {
  changedControls,
  changedPrimaryFiles,
  controlFiles,
  describeControls,
  worktreeGitDir,
} from "../lib/loop/guard.ts";

const HOLD = 3;

/** A temporary folder, removed with everything in it when the test's scope ends. */
async function tempDir(prefix: string): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.makeTempDir({ prefix });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

async function openBrief(scene: Scene, task = 1): Promise<void> {
  await scene.write(
    "NEXT-STEPS.md",
    brief({ status: "OPEN", task, kind: "feature", extraHeader: `Branch: task-${task}` }),
  );
}

async function readHoldFile(scene: Scene): Promise<{ reason: string; next: string }> {
  return JSON.parse(await Deno.readTextFile(join(stateDir(scene), "hold.json")));
}

/** Files the pushed task branch changes against origin/main. */
async function branchFiles(scene: Scene, branch = "task-1"): Promise<string[]> {
  await scene.git(scene.work, ["fetch", "--quiet", "origin"]);
  return (await scene.out(["diff", "--name-only", `origin/main...origin/${branch}`]))
    .split("\n").filter((l) => l !== "");
}

/** Waits until the executor journal says the agent is running. */
async function agentStarted(scene: Scene): Promise<void> {
  const path = join(stateDir(scene), "journal.json");
  for (let i = 0; i < 600; i++) {
    const text = await Deno.readTextFile(path).catch(() => "");
    if (text && JSON.parse(text).step === "agent-started") return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the agent never started");
}

/**
 * The first poll of an open brief: a HOLD, with nothing pushed (the remote's refs as before).
 * Returns it for the test to read what the HOLD says.
 */
async function heldPoll(scene: Scene): Promise<RelayResult> {
  await openBrief(scene);
  const before = await originRefs(scene);
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, HOLD, all(poll));
  assert.deepEqual(await originRefs(scene), before);
  // The task's history has the HOLD once: the executor's fact, not that and the error again.
  let held = 0;
  for await (const e of Deno.readDir(join(stateDir(scene), "tasks"))) {
    if (!e.name.endsWith(".events.jsonl")) continue;
    const text = await Deno.readTextFile(join(stateDir(scene), "tasks", e.name));
    held += text.split("\n").filter((l) => l.includes('"event":"held"')).length;
  }
  assert.equal(held, 1, "held events in the timeline");
  return poll;
}

async function queue(scene: Scene, text: string): Promise<string> {
  const res = await scene.relay(["inbox", "add", "--json", "-"], { stdin: text });
  assert.equal(res.code, 0, all(res));
  return JSON.parse(res.stdout).file;
}

Deno.test("an agent that pushes its commit to origin main gets a HOLD naming the commit, and relay publishes nothing on top", async () => {
  await using scene = await makeScene({ agent: "pushes-main.sh" });
  await openBrief(scene);
  const before = await originRefs(scene);

  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, HOLD, all(poll));
  const agentCommit = await scene.out(["rev-parse", "task-1"]);
  assert.match(
    poll.stderr,
    new RegExp(
      `relay: HOLD: .*origin/main now contains a commit of this turn: ${agentCommit.slice(0, 12)}`,
    ),
  );
  const hold = await readHoldFile(scene);
  assert.match(hold.next, /^relay pushed nothing\./);
  // origin/main is exactly what the agent pushed: no paperwork, no task branch, nothing else.
  assert.deepEqual(await originRefs(scene), { ...before, "refs/heads/main": agentCommit });
  assert.equal(await scene.out(["rev-parse", "main"]), before["refs/heads/main"]);

  const again = await scene.relay(["poll"]);
  assert.equal(again.code, HOLD, all(again));
  assert.deepEqual(await originRefs(scene), { ...before, "refs/heads/main": agentCommit });
});

Deno.test("an agent that writes into relay's run folder (where relay copies its report and paperwork after the turn) gets a HOLD naming the files", async () => {
  await using scene = await makeScene({ agent: "writes-run-folder.sh" });
  const poll = await heldPoll(scene);
  assert.match(poll.stderr, /changed files that steer git or relay: .*\/report\.agent\.md/);
  assert.match(poll.stderr, /\/worktree-paperwork\/\.relay/);
});

Deno.test("an agent that leaves a merge half done gets a HOLD saying so; nothing is committed or pushed, no agent starts on it until a person finishes it", async () => {
  await using scene = await makeScene({ agent: "leaves-merge.sh" });
  const poll = await heldPoll(scene);
  const before = await originRefs(scene);
  assert.match(
    poll.stderr,
    /relay: HOLD: .*in the worktree, a merge is in progress, which relay never commits half done/,
  );
  const worktree = join(scene.worktrees, "task-1");
  const hold = await readHoldFile(scene);
  assert.ok(hold.next.includes(`Finish or undo it in ${worktree} ("git status" there`), hold.next);
  // The worktree is as the agent left it: the merge still open, its conflict unresolved.
  assert.match(await scene.out(["status", "--porcelain"], worktree), /^UU src\/app\.txt$/m);
  assert.equal(await scene.out(["log", "-1", "--format=%s", "task-1"]), "our change");

  // relay resume with nothing repaired: the next tick HOLDs before any agent runs in it (an
  // agent's commit would seal the merge, conflict markers and all).
  const count = join(scene.dir, "agent-count.txt");
  await scene.setAgent(["bash", join(AGENTS, "counted.sh"), "uncommitted.sh", "{prompt}"]);
  assert.equal((await scene.relay(["resume"])).code, 0);
  const again = await scene.relay(["poll"], { env: { FAKE_COUNT_FILE: count } });
  assert.equal(again.code, HOLD, all(again));
  assert.match(again.stderr, /HOLD: In the task worktree "\S+task-1", a merge is in progress/);
  assert.equal(await Deno.readTextFile(count).catch(() => ""), "");
  assert.deepEqual(await originRefs(scene), before);
  // Once a person aborts the merge, the next tick carries on by itself, as the HOLD said (no
  // relay resume): its attempt runs, and ships the branch as it is.
  assert.match(again.stderr, /the next tick carries on by itself once it is done/);
  await scene.git(worktree, ["merge", "--abort"]);
  const next = await scene.relay(["poll"], { env: { FAKE_COUNT_FILE: count } });
  assert.equal(next.code, 0, all(next));
  assert.match(next.stdout, /task 1 shipped/);
  assert.equal((await Deno.readTextFile(count)).split("\n").filter((l) => l).length, 1);
  assert.doesNotMatch(await scene.out(["show", "origin/task-1:src/app.txt"]), /<<<<<<</);
});

Deno.test("an agent that leaves conflicted files with no merge to name (git stash pop) gets a HOLD naming them; nothing is committed or pushed", async () => {
  await using scene = await makeScene({ agent: "leaves-conflict.sh" });
  const poll = await heldPoll(scene);
  assert.match(
    poll.stderr,
    /relay: HOLD: The agent left conflicted files in \S+task-1, which relay never commits: src\/app\.txt/,
  );
  assert.doesNotMatch(await scene.out(["show", "task-1:src/app.txt"]), /<<<<<<</);
});

Deno.test("an agent that leaves git's index lock in its worktree gets a HOLD naming the file; removed, the task ships", async () => {
  await using scene = await makeScene({ agent: "leaves-index-lock.sh" });
  const poll = await heldPoll(scene);
  const lock = join(scene.work, ".git", "worktrees", "task-1", "index.lock");
  assert.ok(
    poll.stderr.includes(
      `in the worktree, git's index lock is left in its git folder (${lock}): a git command was stopped mid-write`,
    ),
    poll.stderr,
  );
  const hold = await readHoldFile(scene);
  assert.match(hold.next, /a stale index\.lock goes once no git runs there/);
  // Resumed with the lock still there: a HOLD again, before any agent runs.
  assert.equal((await scene.relay(["resume"])).code, 0);
  const again = await scene.relay(["poll"]);
  assert.equal(again.code, HOLD, all(again));
  assert.ok(again.stderr.includes(`git's index lock is left in its git folder (${lock})`));
  // As the advice says: the lock goes, and the next tick's attempt ships (no relay resume).
  await Deno.remove(lock);
  await scene.setAgent("good.sh");
  const next = await scene.relay(["poll"]);
  assert.equal(next.code, 0, all(next));
  assert.match(next.stdout, /task 1 shipped/);
});

Deno.test("an agent that pushes to a remote branch other than its own gets a HOLD naming that branch", async () => {
  await using scene = await makeScene({ agent: "pushes-other.sh" });
  await openBrief(scene);
  const before = await originRefs(scene);

  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, HOLD, all(poll));
  assert.match(poll.stderr, /relay: HOLD: .*it pushed to origin\/release/);
  const after = await originRefs(scene);
  assert.equal(after["refs/heads/main"], before["refs/heads/main"]);
  assert.equal(after["refs/heads/task-1"], undefined);
});

Deno.test("an agent that pushes its own branch with -u (an upstream in .git/config) ships as usual", async () => {
  await using scene = await makeScene({ agent: "pushes-upstream.sh" });
  await openBrief(scene);
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 1 shipped/);
  assert.match(await Deno.readTextFile(join(scene.work, ".git", "config")), /\[branch "task-1"\]/);
  assert.deepEqual(await branchFiles(scene), ["src/feature-1.txt"]);
});

Deno.test("an agent that plants core.fsmonitor in .git/config gets a HOLD naming it, and relay never runs the program", async () => {
  await using scene = await makeScene({ agent: "fsmonitor.sh" });
  const marker = join(scene.dir, "fsmonitor-ran");
  const env = { FAKE_MARKER: marker };
  await openBrief(scene);
  const before = await originRefs(scene);

  const poll = await scene.relay(["poll"], { env });
  assert.equal(poll.code, HOLD, all(poll));
  assert.match(
    poll.stderr,
    /relay: HOLD: .*it changed files that steer git or relay: \.git\/config \(core\.fsmonitor set\)/,
  );
  assert.match(await Deno.readTextFile(join(scene.work, ".git", "config")), /fsmonitor = /);
  assert.equal(await exists(marker), false, "relay ran the planted fsmonitor program");
  assert.deepEqual(await originRefs(scene), before);

  // Later commands run git with core.fsmonitor off, whatever the repository says.
  for (const args of [["status"], ["poll"], ["gate"]]) {
    await scene.relay(args, { env });
    assert.equal(await exists(marker), false, `relay ${args[0]} ran the planted program`);
  }
});

Deno.test("an agent that writes a PASS into its task's record under .git/relay gets a HOLD naming the file", async () => {
  await using scene = await makeScene({ agent: "forges-verdict.sh" });
  const poll = await heldPoll(scene);
  assert.match(
    poll.stderr,
    /relay: HOLD: .*steer git or relay: \.git\/relay\/tasks\/1\.json/,
  );
});

Deno.test("an agent that writes relay's git note (a forged PASS for its head) gets a HOLD naming the notes ref; nothing is pushed", async () => {
  await using scene = await makeScene({ agent: "forges-note.sh" });
  const poll = await heldPoll(scene);
  assert.match(poll.stderr, /relay: HOLD: .*steer git or relay: \.git\/refs\/notes\/relay/);
});

Deno.test("an agent that rewrites a queued brief in the inbox gets a HOLD naming it", async () => {
  await using scene = await makeScene({ agent: "edits-inbox.sh" });
  const file = await queue(scene, brief({ title: "Next" }));
  await scene.git(scene.work, ["add", "--all", ".relay/inbox"]);
  await scene.git(scene.work, ["commit", "--quiet", "-m", "queue task 1"]);
  await scene.git(scene.work, ["push", "--quiet", "origin", "HEAD:main"]);
  await openBrief(scene, 2);
  const before = await originRefs(scene);

  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, HOLD, all(poll));
  const hold = await readHoldFile(scene);
  assert.ok(file.startsWith(".relay/inbox/"), file);
  assert.ok(
    hold.reason.endsWith(`files of the primary tree changed: ${file}`),
    hold.reason,
  );
  assert.deepEqual(await originRefs(scene), before);
});

Deno.test("briefs a person adds to or drops from the inbox during a turn are not blamed on the agent", async () => {
  await using scene = await makeScene({ agent: "waits.sh" });
  const go = join(scene.dir, "go");
  await queue(scene, brief({ title: "Dropped later" }));
  await scene.git(scene.work, ["add", "--all", ".relay/inbox"]);
  await scene.git(scene.work, ["commit", "--quiet", "-m", "queue task 1"]);
  await scene.git(scene.work, ["push", "--quiet", "origin", "HEAD:main"]);
  await openBrief(scene, 2);

  const polling = scene.relay(["poll"], { env: { FAKE_GO: go } });
  try {
    await agentStarted(scene);
    await queue(scene, brief({ title: "Added during the turn" }));
    const dropped = await scene.relay(["inbox", "drop", "1"]);
    assert.equal(dropped.code, 0, all(dropped));
  } finally {
    await Deno.writeTextFile(go, "");
  }
  const poll = await polling;
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 2 shipped/);
});

Deno.test("relay review writes nothing while an executor turn is open", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "In flight" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  const shipped = await scene.relay(["poll"]);
  assert.match(shipped.stdout, /task 1 shipped/, all(shipped));
  const failed = await scene.relay(["review"], {
    env: { FAKE_FAIL_ONCE: join(scene.dir, "fail-once") },
  });
  assert.match(failed.stdout, /sent back — fix brief 2/, all(failed));
  const record = join(stateDir(scene), "tasks", "1.json");
  const recordBefore = await Deno.readTextFile(record);

  await scene.setAgent("waits.sh");
  const go = join(scene.dir, "go");
  const polling = scene.relay(["poll"], { env: { FAKE_GO: go } });
  try {
    await agentStarted(scene);
    // A person merges task-1 in another clone while the fix brief's turn is open.
    const other = join(scene.dir, "other");
    await scene.git(scene.dir, ["clone", "--quiet", `file://${scene.origin}`, other]);
    await scene.git(other, [
      "merge",
      "--quiet",
      "--no-ff",
      "-m",
      "merged by hand",
      "origin/task-1",
    ]);
    await scene.git(other, ["push", "--quiet", "origin", "main"]);

    const review = await scene.relay(["review"]);
    assert.equal(review.code, 0, all(review));
    assert.match(review.stdout, /^\S+Z waiting: the executor is mid-tick$/m);
    assert.equal(await Deno.readTextFile(record), recordBefore);
  } finally {
    await Deno.writeTextFile(go, "");
  }
  // The person's merge is not the agent's push: the fix ships.
  const poll = await polling;
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 2 shipped/);
});

Deno.test("an untracked CLAUDE.md that git does not ignore stays out of the worktree and the task branch", async () => {
  await using scene = await makeScene();
  await scene.write("CLAUDE.md", "# Not for the branch\n");
  await openBrief(scene);
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 1 shipped/);
  assert.deepEqual(await branchFiles(scene), ["src/feature-1.txt"]);
  assert.equal(await exists(join(scene.worktrees, "task-1", "CLAUDE.md")), false);
});

Deno.test("with --web-root, the git-ignored CLAUDE.md is copied for the agent and never committed", async () => {
  await using scene = await makeScene({ agent: "reads-instructions.sh" });
  await Deno.writeTextFile(join(scene.work, ".git", "info", "exclude"), "/CLAUDE.md\n", {
    append: true,
  });
  await scene.write("CLAUDE.md", "# What this project is NOT\n");
  const seen = join(scene.dir, "seen");
  await openBrief(scene);
  const poll = await scene.relay(["poll"], { env: { FAKE_SEEN: seen } });
  assert.equal(poll.code, 0, all(poll));
  assert.equal(await Deno.readTextFile(seen), "# What this project is NOT\n");
  assert.deepEqual(await branchFiles(scene), ["src/feature-1.txt"]);
});

Deno.test("relay's git calls never run a planted core.fsmonitor or hook", async () => {
  await using scene = await makeScene();
  const marker = join(scene.dir, "ran");
  const program = join(scene.dir, "program.sh");
  await Deno.writeTextFile(program, `#!/bin/sh\necho "$0 $*" >> "${marker}"\nexit 1\n`);
  await Deno.chmod(program, 0o755);
  await scene.git(scene.work, ["config", "core.fsmonitor", program]);
  const hooks = join(scene.work, ".git", "hooks");
  for (const hook of ["post-checkout", "post-commit", "pre-push", "reference-transaction"]) {
    await Deno.writeTextFile(join(hooks, hook), `#!/bin/sh\n"${program}" ${hook}\n`);
    await Deno.chmod(join(hooks, hook), 0o755);
  }
  // The plants are live for a plain git call...
  await scene.git(scene.work, ["status", "--porcelain"]);
  assert.ok(await exists(marker), "the planted fsmonitor did not run for plain git");
  await Deno.remove(marker);

  // ...and never run for relay's.
  const git = new Git(scene.work);
  await git.run(["status", "--porcelain"]);
  await git.run(["worktree", "add", "--quiet", "-b", "side", "--", join(scene.dir, "side")]);
  await git.run(["commit", "--quiet", "--allow-empty", "-m", "empty"]);
  await git.run(["push", "--quiet", "origin", "HEAD:refs/heads/side"]);
  assert.equal(await exists(marker), false, await Deno.readTextFile(marker).catch(() => ""));
});

/**
 * What the guard calls a change of a repository's config from `before` to `after`, through
 * controlFiles() and changedControls(), with `read` what git itself reads from `after`
 * (`git config --list`, outside any repository; "(refused)" when git refuses the file).
 */
async function configChange(before: string, after: string): Promise<{
  changed: string[];
  read: string[];
}> {
  await using temp = await tempDir("relay-guard-config-");
  const dir = temp.path;
  const common = join(dir, ".git");
  await Deno.mkdir(common);
  const file = join(common, "config");
  const scope = { commonDir: common, gitDirs: [common] };
  await Deno.writeTextFile(file, before);
  const was = await controlFiles(scope);
  await Deno.writeTextFile(file, after);
  const changed = changedControls(was, await controlFiles(scope));
  const out = await new Deno.Command("git", {
    args: ["config", "--file", file, "--no-includes", "--list", "-z"],
    cwd: dir,
    env: { GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const read = out.success
    ? new TextDecoder().decode(out.stdout).split("\0").filter((e) => e !== "")
      .map((e) => e.replace("\n", "="))
    : ["(refused)"];
  return { changed, read };
}

const BASE_CONFIG = '[core]\n\tbare = false\n[remote "origin"]\n\turl = file:///origin\n' +
  "\tfetch = +refs/heads/*:refs/remotes/origin/*\n";

Deno.test("the guard takes what git writes on its own in a repository's config for no change: an upstream, a submodule's url and active where there were none", async () => {
  for (
    const after of [
      // git push -u, git branch --set-upstream-to, git switch --track.
      '[branch "task-1"]\n\tremote = origin\n\tmerge = refs/heads/task-1\n',
      '[branch "task-1"]\n\tremote = .\n\tmerge = refs/heads/main\n\trebase = true\n',
      // git submodule update --init in a worktree, the primary tree never having run it.
      '[submodule "vendor/lib"]\n\tactive = true\n\turl = /tmp/lib\n',
      '[submodule "lib"]\r\n\tURL = https://example.com/lib.git\r\n\tActive = true\r\n',
      '\n[submodule "a"]\n\turl = git@example.com:a.git\n\n[submodule "b"]\n\tactive = true\n',
      // A relative url in .gitmodules, as git resolves it against origin's.
      '[submodule "rel"]\n\tactive = true\n\turl = file:///libs/rel.git\n',
    ]
  ) {
    const { changed } = await configChange(BASE_CONFIG, BASE_CONFIG + after);
    assert.deepEqual(changed, [], after);
  }
});

Deno.test("the guard sees every other change of a repository's config, however git would read it", async () => {
  const cases: [string, string][] = [
    // [what is appended, what git then reads (lower-cased key=value)]
    [
      '[submodule "lib"]\n\turl = /tmp/lib\n\tupdate = !sh /tmp/evil.sh\n',
      "submodule.lib.update=!sh /tmp/evil.sh",
    ],
    ['[submodule "lib"]\n\turl = ext::sh -c evil\n', "submodule.lib.url=ext::sh -c evil"],
    ['[submodule "lib"]\n\turl = "ext::sh -c evil"\n', "submodule.lib.url=ext::sh -c evil"],
    ['[submodule "lib"]\n\turl = ext:"":sh -c evil\n', "submodule.lib.url=ext::sh -c evil"],
    ['[submodule "lib"]\n\turl = ""-oProxyCommand=evil\n', "submodule.lib.url=-oProxyCommand=evil"],
    ['[submodule "lib"]\n\turl = -oProxyCommand=evil\n', "submodule.lib.url=-oProxyCommand=evil"],
    ['[submodule "lib"]\n\tactive = "true"\n', "submodule.lib.active=true"],
    [
      '[submodule "lib"]\n\tfetchRecurseSubmodules = true\n',
      "submodule.lib.fetchrecursesubmodules=true",
    ],
    // A header git reads as more than one section.
    ['[submodule "lib"][core]fsmonitor = /tmp/evil\n', "core.fsmonitor=/tmp/evil"],
    ['[branch "x"][core]fsmonitor = /tmp/evil\n', "core.fsmonitor=/tmp/evil"],
    // A value continued on the next line: git reads the "header" as part of the url, and
    // what follows in the submodule's section (a CRLF is a line end to git).
    [
      '[submodule "lib"]\n\turl = /tmp/lib\\\r\n[branch "zz"]\n\tupdate = !touch /tmp/evil\n',
      "submodule.lib.update=!touch /tmp/evil",
    ],
    [
      '[submodule "lib"]\n\turl = /tmp/lib\\\n[branch "zz"]\n\tupdate = !touch /tmp/evil\n',
      "submodule.lib.update=!touch /tmp/evil",
    ],
    [
      '[core]\n\tpager = less\\\n[branch "zz"]\n\tfsmonitor = /tmp/evil\n',
      "core.fsmonitor=/tmp/evil",
    ],
    // A line git refuses in a branch section (then git refuses the file, and every command):
    // not dropped unread.
    ['[branch "main"]\n\u000b[core]\n\tfsmonitor = /tmp/evil\n', "(refused)"],
    // An upstream at an address rather than a remote: a person's next pull fetches from it.
    [
      '[branch "main"]\n\tremote = /tmp/evil\n\tmerge = refs/heads/main\n',
      "branch.main.remote=/tmp/evil",
    ],
    ['[branch "main"]\n\tremote = "origin"\n', "branch.main.remote=origin"],
    [
      '[branch "main"]\n\tpushRemote = https://example.com/evil.git\n',
      "branch.main.pushremote=https://example.com/evil.git",
    ],
  ];
  for (const [after, reads] of cases) {
    const { changed, read } = await configChange(BASE_CONFIG, BASE_CONFIG + after);
    assert.ok(
      read.includes(reads),
      `git reads ${JSON.stringify(read)} from ${JSON.stringify(after)}`,
    );
    assert.ok(changed.includes(".git/config"), `${after}: ${changed}`);
  }
});

Deno.test("the guard takes what submodule init copies from .gitmodules for no change where nothing was set (any plain url, a non-command update), and an update command for a change", async () => {
  // Any plain url: init copies the one the worktree's .gitmodules names, which may be newer
  // than the primary tree's, or resolved against the worktree's path (no upstream). A wrong
  // one sends nothing elsewhere by itself: a later update fetches the commit main records.
  for (
    const after of [
      '[submodule "lib"]\n\tactive = true\n\turl = https://elsewhere.example/lib.git\n',
      '[submodule "rel"]\n\tactive = true\n\turl = /tmp/worktrees/task-1/rel.git\n\tupdate = rebase\n',
      '[submodule "n"]\n\tupdate = none\n',
    ]
  ) {
    const { changed } = await configChange(BASE_CONFIG, BASE_CONFIG + after);
    assert.deepEqual(changed, [], after);
  }
  const { changed, read } = await configChange(
    BASE_CONFIG,
    BASE_CONFIG + '[submodule "lib"]\n\turl = /tmp/lib\n\tupdate = !sh /tmp/evil.sh\n',
  );
  assert.ok(read.includes("submodule.lib.update=!sh /tmp/evil.sh"));
  assert.deepEqual(changed, [".git/config"]);
});

Deno.test("the guard sees a submodule's url or active in a config file git's submodule init never writes: a change, set before or not", async () => {
  await using temp = await tempDir("relay-guard-config-");
  const dir = temp.path;
  const common = join(dir, ".git");
  await Deno.mkdir(common);
  const init = '[submodule "lib"]\n\tactive = true\n\turl = https://example.com/lib.git\n';
  // A repository whose worktrees have configs of their own (git sparse-checkout sets this).
  await Deno.writeTextFile(
    join(common, "config"),
    `${BASE_CONFIG}[extensions]\n\tworktreeConfig = true\n${init}`,
  );
  const worktreeConfig = join(common, "config.worktree");
  await Deno.writeTextFile(worktreeConfig, "[core]\n\tsparseCheckout = true\n");
  const global = join(dir, "gitconfig");
  await Deno.writeTextFile(global, "[user]\n\tname = A Person\n");
  const scope = { commonDir: common, gitDirs: [common], gitConfigFiles: [global] };
  const before = await controlFiles(scope);
  // Lines added to files that were there: a second active in the global config, and a url
  // in config.worktree, which git reads after the repository's config (the last url wins).
  await Deno.writeTextFile(global, '[submodule "lib"]\n\tactive = true\n', { append: true });
  await Deno.writeTextFile(
    worktreeConfig,
    '[submodule "lib"]\n\turl = https://example.com/evil.git\n',
    { append: true },
  );
  assert.deepEqual(changedControls(before, await controlFiles(scope)), [
    ".git/config.worktree",
    "gitconfig",
    "submodule.lib.active (git config, set by submodule init)",
    "submodule.lib.url (git config, set by submodule init)",
  ]);
  // A submodule no file names: its url in the global config (which every repository of
  // this user reads) is no appearance either.
  const now = await controlFiles(scope);
  await Deno.writeTextFile(global, '[submodule "other"]\n\turl = /tmp/evil\n', { append: true });
  assert.deepEqual(changedControls(now, await controlFiles(scope)), ["gitconfig"]);
});

Deno.test("the guard reads what a config includes, whatever the condition: a target written, changed or made, a cycle read once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-guard-config-" });
  const home = Deno.env.get("HOME");
  try {
    Deno.env.set("HOME", join(dir, "home"));
    const common = join(dir, "repo", ".git");
    await Deno.mkdir(common, { recursive: true });
    await Deno.mkdir(join(dir, "home"));
    // The repository's config includes the tree's shared config (which includes it back);
    // the global one a local file not there yet, and another under a condition, quoted.
    await Deno.writeTextFile(
      join(common, "config"),
      `${BASE_CONFIG}[include]\n\tpath = ../.gitconfig ; shared\n`,
    );
    await Deno.writeTextFile(
      join(dir, "repo", ".gitconfig"),
      "[include]\n\tpath = .git/config\n[core]\n\tautocrlf = false\n",
    );
    const global = join(dir, "home", ".gitconfig");
    await Deno.writeTextFile(
      global,
      '[include]\n\tpath = ~/.gitconfig.local\n[includeIf "gitdir:~/work/"]\n\tpath = "work config"\n',
    );
    await Deno.writeTextFile(join(dir, "home", "work config"), "[user]\n\tname = A\n");
    const scope = { commonDir: common, gitDirs: [common], gitConfigFiles: [global] };
    const before = await controlFiles(scope);
    await Deno.writeTextFile(
      join(dir, "repo", ".gitconfig"),
      '[include]\n\tpath = .git/config\n[filter "p"]\n\tclean = evil\n',
    );
    await Deno.writeTextFile(
      join(dir, "home", ".gitconfig.local"),
      "[core]\n\tsshCommand = evil\n",
    );
    await Deno.writeTextFile(join(dir, "home", "work config"), "[core]\n\tfsmonitor = evil\n");
    assert.deepEqual(changedControls(before, await controlFiles(scope)), [
      ".gitconfig",
      join(dir, "home", ".gitconfig.local"),
      join(dir, "home", "work config"),
    ]);
    // A key on its header's line, as git reads it too: `[include] path = …`.
    await Deno.writeTextFile(global, "[include] path = ~/one-line\n");
    await Deno.writeTextFile(join(dir, "home", "one-line"), "[user]\n\tname = A\n");
    const oneLine = await controlFiles(scope);
    await Deno.writeTextFile(join(dir, "home", "one-line"), "[core]\n\tpager = evil\n");
    assert.deepEqual(changedControls(oneLine, await controlFiles(scope)), [
      join(dir, "home", "one-line"),
    ]);
  } finally {
    if (home === undefined) Deno.env.delete("HOME");
    else Deno.env.set("HOME", home);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the guard reads the hooks a config points git at outside .git: core.hooksPath (husky's .husky/_, helper beside the hooks), init.templateDir's hooks/", async () => {
  await using temp = await tempDir("relay-guard-config-");
  const dir = temp.path;
  const root = join(dir, "repo");
  const common = join(root, ".git");
  const husky = join(root, ".husky", "_");
  const template = join(dir, "template", "hooks");
  const wide = join(dir, "wide");
  for (const d of [common, husky, template, wide]) await Deno.mkdir(d, { recursive: true });
  await Deno.writeTextFile(
    join(common, "config"),
    `${BASE_CONFIG}[core]\n\thooksPath = .husky/_\n`,
  );
  await Deno.writeTextFile(join(husky, "pre-commit"), '. "$(dirname "$0")/h"\n');
  await Deno.writeTextFile(join(husky, "h"), "exec npx lint-staged\n");
  const global = join(dir, "gitconfig");
  await Deno.writeTextFile(
    global,
    `[init]\n\ttemplateDir = ${join(dir, "template")}\n[core]\n\thooksPath = "${wide}"\n`,
  );
  // A hooksPath of a folder of many files: only the names git runs as hooks are read.
  for (let i = 0; i < 201; i++) await Deno.writeTextFile(join(wide, `f${i}`), "");
  const scope = { commonDir: common, gitDirs: [common], gitConfigFiles: [global] };
  const before = await controlFiles(scope);
  await Deno.writeTextFile(join(husky, "h"), "touch /tmp/evil\n");
  await Deno.writeTextFile(join(template, "post-checkout"), "#!/bin/sh\n");
  await Deno.writeTextFile(join(wide, "pre-push"), "#!/bin/sh\n");
  await Deno.writeTextFile(join(wide, "f7"), "not a hook\n");
  assert.deepEqual(changedControls(before, await controlFiles(scope)), [
    ".husky/_/h",
    join(template, "post-checkout"),
    join(wide, "pre-push"),
  ]);
});

Deno.test("the guard sees a config or a hook kept elsewhere behind a link edited there, a git folder's objects made unsearchable, and a template's config", async () => {
  await using temp = await tempDir("relay-guard-config-");
  const dir = temp.path;
  const common = join(dir, "repo", ".git");
  for (const d of ["hooks", "objects", "refs"]) {
    await Deno.mkdir(join(common, d), { recursive: true });
  }
  await Deno.writeTextFile(join(common, "HEAD"), "ref: refs/heads/main\n");
  await Deno.writeTextFile(join(common, "config"), BASE_CONFIG);
  // A dotfiles manager's links: the global config and a hook.
  const dotfiles = join(dir, "dotfiles");
  await Deno.mkdir(join(dotfiles, "template"), { recursive: true });
  await Deno.writeTextFile(
    join(dotfiles, "gitconfig"),
    `[init]\n\ttemplateDir = ${join(dotfiles, "template")}\n`,
  );
  await Deno.writeTextFile(join(dotfiles, "pre-commit"), "#!/bin/sh\n");
  const global = join(dir, "gitconfig");
  await Deno.symlink(join(dotfiles, "gitconfig"), global);
  await Deno.symlink(join(dotfiles, "pre-commit"), join(common, "hooks", "pre-commit"));
  const scope = { commonDir: common, gitDirs: [common], gitConfigFiles: [global] };
  const before = await controlFiles(scope);
  await Deno.writeTextFile(
    join(dotfiles, "gitconfig"),
    `[init]\n\ttemplateDir = ${join(dotfiles, "template")}\n[core]\n\tpager = evil\n`,
  );
  await Deno.writeTextFile(join(dotfiles, "pre-commit"), "#!/bin/sh\ntouch /tmp/evil\n");
  await Deno.writeTextFile(join(dotfiles, "template", "config"), "[core]\n\tfsmonitor = evil\n");
  await Deno.chmod(join(common, "objects"), 0o644);
  assert.deepEqual(changedControls(before, await controlFiles(scope)), [
    ".git/hooks/pre-commit",
    ".git/objects",
    join(dir, "dotfiles", "template", "config"),
    join(dir, "gitconfig"),
  ]);
});

Deno.test({
  name:
    "the guard takes a control file it may not read (chmod 000 during the turn) for a change, not an error",
  // root reads any file: only another user meets the refusal.
  ignore: Deno.uid() === 0,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "relay-guard-config-" });
    try {
      const common = join(dir, "repo", ".git");
      await Deno.mkdir(join(common, "hooks"), { recursive: true });
      await Deno.writeTextFile(join(common, "HEAD"), "ref: refs/heads/main\n");
      await Deno.writeTextFile(join(common, "config"), BASE_CONFIG);
      const scope = { commonDir: common, gitDirs: [common] };
      const before = await controlFiles(scope);
      await Deno.chmod(join(common, "HEAD"), 0o000);
      await Deno.chmod(join(common, "hooks"), 0o000);
      assert.deepEqual(changedControls(before, await controlFiles(scope)), [
        ".git/HEAD",
        ".git/hooks",
      ]);
    } finally {
      await Deno.chmod(join(dir, "repo", ".git", "hooks"), 0o755).catch(() => {});
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("the guard compares a config that is not UTF-8 by its bytes", async () => {
  await using temp = await tempDir("relay-guard-config-");
  const dir = temp.path;
  const common = join(dir, ".git");
  await Deno.mkdir(common);
  const file = join(common, "config");
  const bytes = (last: number) =>
    new Uint8Array([...new TextEncoder().encode('[submodule "lib"]\n\turl = /g'), last, 10]);
  const scope = { commonDir: common, gitDirs: [common] };
  await Deno.writeFile(file, bytes(0xe9));
  const before = await controlFiles(scope);
  await Deno.writeFile(file, bytes(0xe8));
  assert.deepEqual(changedControls(before, await controlFiles(scope)), [".git/config"]);
});

Deno.test("the guard compares a config whole where a line of it runs on: text appended after it is seen, whatever it looks like", async () => {
  // A person's config whose last value runs on (a trailing backslash): git reads the next
  // line as part of it, a "header" included, and what follows in [core].
  for (const eol of ["\n", "\r\n"]) {
    const before = `${BASE_CONFIG}[core]${eol}\tpager = less -R\\${eol}`;
    const { changed, read } = await configChange(
      before,
      `${before}[branch "zz"]${eol}\tfsmonitor = /tmp/evil${eol}`,
    );
    assert.ok(read.includes("core.fsmonitor=/tmp/evil"), JSON.stringify(read));
    assert.deepEqual(changed, [".git/config"]);
  }
});

Deno.test("the guard sees a submodule's url change or go where it was set before, and names it", async () => {
  const init = '[submodule "lib"]\n\tactive = true\n\turl = https://example.com/lib.git\n';
  const moved = await configChange(
    BASE_CONFIG + init,
    BASE_CONFIG + init.replace("lib.git", "evil.git"),
  );
  assert.deepEqual(moved.changed, ["submodule.lib.url (git config, set by submodule init)"]);
  const gone = await configChange(BASE_CONFIG + init, BASE_CONFIG);
  assert.deepEqual(gone.changed, [
    "submodule.lib.active (git config, set by submodule init)",
    "submodule.lib.url (git config, set by submodule init)",
  ]);
  // A second url where there was one: git reads the last.
  const twice = await configChange(
    BASE_CONFIG + init,
    BASE_CONFIG + init + '[submodule "lib"]\n\turl = https://example.com/evil.git\n',
  );
  assert.deepEqual(twice.changed, ["submodule.lib.url (git config, set by submodule init)"]);
  // After another key of the section (what submodule init writes for update = rebase), a
  // second url, or an active turned off.
  const withUpdate = '[submodule "lib"]\n\tactive = true\n\turl = /tmp/lib\n\tupdate = rebase\n';
  for (
    const [extra, reads] of [
      ["\turl = /tmp/evil\n", "submodule.lib.url=/tmp/evil"],
      ["\tactive = false\n", "submodule.lib.active=false"],
    ]
  ) {
    const after = await configChange(BASE_CONFIG + withUpdate, BASE_CONFIG + withUpdate + extra);
    assert.ok(after.read.includes(reads!), JSON.stringify(after.read));
    assert.equal(after.changed.length, 1, `${extra}: ${after.changed}`);
  }
  // Where the url was set in a form kept whole (a transport helper, quoted, under a header
  // git writes otherwise), a plain one after it is a change too.
  for (
    const set of [
      '[submodule "lib"]\n\tactive = true\n\turl = codecommit::us-east-1://lib\n',
      '[submodule "lib"]\n\tactive = true\n\turl = "https://example.com/a#b"\n',
      "[submodule.lib]\n\tactive = true\n\turl = https://example.com/lib.git\n",
      '[submodule "lib"] url = https://example.com/lib.git\n',
    ]
  ) {
    const plain = '[submodule "lib"]\n\turl = https://example.com/evil.git\n';
    const after = await configChange(BASE_CONFIG + set, BASE_CONFIG + set + plain);
    assert.ok(after.read.includes("submodule.lib.url=https://example.com/evil.git"), set);
    assert.notDeepEqual(after.changed, [], set);
  }
  // The same, under a header spelled another way that git reads as the same section.
  for (const header of ['[submodule  "lib"]', '[submodule "l\\ib"]', '\t[submodule\t"lib"]  ']) {
    const after = `${BASE_CONFIG}${init}${header}\n\turl = https://example.com/evil.git\n`;
    const respelled = await configChange(BASE_CONFIG + init, after);
    assert.ok(respelled.read.includes("submodule.lib.url=https://example.com/evil.git"), header);
    assert.deepEqual(respelled.changed, ["submodule.lib.url (git config, set by submodule init)"]);
  }
});

Deno.test("controlFiles() sees a new hook, a changed info/attributes and a forged task record, and not info/refs or another file in info/ git never reads", async () => {
  await using temp = await tempDir("relay-guard-");
  const dir = temp.path;
  const common = join(dir, "repo", ".git");
  for (const sub of ["hooks", "info", "relay/tasks", "worktrees/other", "modules"]) {
    await Deno.mkdir(join(common, sub), { recursive: true });
  }
  await Deno.writeTextFile(join(common, "config"), "[core]\n\tbare = false\n");
  await Deno.writeTextFile(join(common, "info", "attributes"), "");
  // Another worktree than the turn's: where its git finds the repository.
  await Deno.writeTextFile(join(common, "worktrees", "other", "commondir"), "../..\n");
  const scope = { commonDir: common, gitDirs: [common] };
  const before = await controlFiles(scope);
  await Deno.writeTextFile(join(common, "hooks", "pre-push"), "#!/bin/sh\n");
  await Deno.writeTextFile(join(common, "info", "attributes"), "* filter=x\n");
  await Deno.writeTextFile(join(common, "info", "refs"), "regenerated by git gc\n");
  // A hook manager's own file there, which git never reads (lefthook's checksum).
  await Deno.writeTextFile(join(common, "info", "lefthook.checksum"), "1234\n");
  await Deno.writeTextFile(join(common, "relay", "tasks", "1.json"), "{}\n");
  await Deno.writeTextFile(join(common, "worktrees", "other", "commondir"), "/tmp/evil\n");
  // The common git folder told to find the repository elsewhere.
  await Deno.writeTextFile(join(common, "commondir"), "/tmp/evil\n");
  // A file named like the entry a submodule's url gets when it appears: still a new file.
  const named = "x: submodule.lib.url (git config, set by submodule init)";
  await Deno.writeTextFile(join(common, "modules", named), "#!/bin/sh\n");
  assert.deepEqual(changedControls(before, await controlFiles(scope)), [
    ".git/commondir",
    ".git/hooks/pre-push",
    ".git/info/attributes",
    `.git/modules/${named}`,
    ".git/relay/tasks/1.json",
    ".git/worktrees/other/commondir",
  ]);
});

Deno.test("controlFiles() before a turn takes a file's hash from this process's last read only while its stamp is as then and two seconds old: a record rewritten in place (same size, its time put back), swapped for a copy, or written in the second of the look is read again", async () => {
  await using temp = await tempDir("relay-guard-");
  const common = join(temp.path, "repo", ".git");
  const tasks = join(common, "relay", "tasks");
  await Deno.mkdir(tasks, { recursive: true });
  await Deno.writeTextFile(join(common, "config"), "[core]\n\tbare = false\n");
  const record = (n: number) => join(tasks, `${n}.json`);
  for (const n of [1, 2, 3]) await Deno.writeTextFile(record(n), `{"verdict":"FAIL","n":${n}}\n`);
  const scope = { commonDir: common, gitDirs: [common] };
  const before = () => controlFiles(scope, { beforeTurn: true });
  // Written long enough ago that a later look may take their hashes from this one's reads.
  await new Promise((r) => setTimeout(r, 2100));
  const first = await controlFiles(scope);
  assert.deepEqual(changedControls(first, await before()), []);
  // 1: rewritten in place, the same size, its modification time put back as it was.
  const { mtime, atime } = await Deno.stat(record(1));
  await Deno.writeTextFile(record(1), `{"verdict":"PASS","n":1}\n`);
  await Deno.utime(record(1), atime!, mtime!);
  // 2: a copy with other content renamed over it, its time put back.
  const { mtime: mtime2, atime: atime2 } = await Deno.stat(record(2));
  await Deno.writeTextFile(join(tasks, "copy"), `{"verdict":"PASS","n":2}\n`);
  await Deno.utime(join(tasks, "copy"), atime2!, mtime2!);
  await Deno.rename(join(tasks, "copy"), record(2));
  // 3: written just now, so read at every look: written again within its second, its time put
  // back, it is still seen.
  await Deno.writeTextFile(record(3), `{"verdict":"FAIL","n":3}\n`);
  const fresh = await before();
  const stat3 = await Deno.stat(record(3));
  await Deno.writeTextFile(record(3), `{"verdict":"PASS","n":3}\n`);
  await Deno.utime(record(3), stat3.atime!, stat3.mtime!);
  assert.deepEqual(changedControls(fresh, await before()), [".git/relay/tasks/3.json"]);
  // Looked at long after those writes (an agent's turn takes minutes), each is still a change.
  await new Promise((r) => setTimeout(r, 2100));
  assert.deepEqual(changedControls(first, await before()), [
    ".git/relay/tasks/1.json",
    ".git/relay/tasks/2.json",
    ".git/relay/tasks/3.json",
  ]);
});

Deno.test("controlFiles() after a turn reads every file, whatever its stamp says: a change lstat cannot show (a write through a mapping, a file system that lets a utime set the change time) is seen, and a baseline taken by a stale stamp before the turn is a HOLD, never a change unseen", async () => {
  await using temp = await tempDir("relay-guard-");
  const common = join(temp.path, "repo", ".git");
  const hooks = join(common, "hooks");
  await Deno.mkdir(hooks, { recursive: true });
  const hook = join(hooks, "pre-commit");
  await Deno.writeTextFile(hook, "#!/bin/sh\ntrue\n");
  const scope = { commonDir: common, gitDirs: [common] };
  await new Promise((r) => setTimeout(r, 2100));
  const first = await controlFiles(scope);
  // The hook rewritten, the same size, while lstat goes on saying what it said before.
  const stale = Deno.lstatSync(hook);
  await Deno.writeTextFile(hook, "#!/bin/sh\nevil\n");
  const lstat = Deno.lstatSync;
  Deno.lstatSync = (path: string | URL) => String(path) === hook ? stale : lstat(path);
  try {
    // Before a turn, by the stale stamp: the hash read before (the true hook's) …
    const baseline = await controlFiles(scope, { beforeTurn: true });
    assert.equal(baseline[".git/hooks/pre-commit"], first[".git/hooks/pre-commit"]);
    // … so the look after the turn, which reads the file, differs from it: a HOLD.
    const after = await controlFiles(scope);
    assert.deepEqual(changedControls(baseline, after), [".git/hooks/pre-commit"]);
    assert.deepEqual(changedControls(first, after), [".git/hooks/pre-commit"]);
  } finally {
    Deno.lstatSync = lstat;
  }
});

Deno.test("controlFiles(): another worktree's commondir may go as git prunes it, unless a config names its folder for hooks; a path under the repository whose first name starts with .. is labeled by its whole path", async () => {
  await using temp = await tempDir("relay-guard-");
  const common = join(temp.path, "repo", ".git");
  const other = join(common, "worktrees", "other");
  await Deno.mkdir(other, { recursive: true });
  await Deno.writeTextFile(join(common, "config"), "[core]\n\tbare = false\n");
  await Deno.writeTextFile(join(other, "HEAD"), "ref: refs/heads/other\n");
  await Deno.writeTextFile(join(other, "commondir"), "../..\n");
  const odd = join(temp.path, "repo", "..hooks", "x");
  await Deno.mkdir(join(temp.path, "repo", "..hooks"));
  await Deno.writeTextFile(odd, "#!/bin/sh\n");
  const scope = { commonDir: common, gitDirs: [common], files: [odd] };
  const look = await controlFiles(scope);
  assert.ok(odd in look, `labeled by its whole path: ${Object.keys(look).join(", ")}`);
  await Deno.remove(join(other, "commondir"));
  assert.deepEqual(changedControls(look, await controlFiles(scope)), []);
  // The same folder named as git's hooks folder: every file in it is a hook's, and counts.
  await Deno.writeTextFile(join(other, "commondir"), "../..\n");
  await Deno.writeTextFile(
    join(common, "config"),
    `[core]\n\tbare = false\n\thooksPath = ${other}\n`,
  );
  const hooked = await controlFiles(scope);
  await Deno.remove(join(other, "commondir"));
  assert.deepEqual(changedControls(hooked, await controlFiles(scope)), [
    ".git/worktrees/other/commondir",
  ]);
});

Deno.test("a HOLD names what changed in a config file by key (set, changed, removed), never a value, and only the label where this process did not read the file before", async () => {
  await using temp = await tempDir("relay-guard-");
  const common = join(temp.path, "repo", ".git");
  await Deno.mkdir(common, { recursive: true });
  const config = join(common, "config");
  await Deno.writeTextFile(
    config,
    '[core]\n\tbare = false\n[remote "origin"]\n\turl = https://user:s3cret@example.com/r.git\n' +
      '[alias]\n\tst = status\n[url "https://user:t0ken@example.com/"]\n\tinsteadOf = https://example.com/\n',
  );
  const scope = { commonDir: common, gitDirs: [common] };
  const before = await controlFiles(scope);
  await Deno.writeTextFile(
    config,
    '[core]\n\tbare = false\n\thooksPath = .husky/_\n[remote "origin"]\n' +
      "\turl = https://user:other@example.com/r.git\n",
  );
  const after = await controlFiles(scope);
  const labels = changedControls(before, after);
  assert.deepEqual(describeControls(before, after, labels), [
    ".git/config (alias.st removed, core.hookspath set, remote.origin.url changed, url.‹…›.insteadof removed)",
  ]);
  assert.doesNotMatch(describeControls(before, after, labels).join(), /s3cret|other@|t0ken/);
  // Keys that run a program first; a key on a header's line; a subsection only when it is a
  // plain name of a section of names; nothing by key where a value goes on over lines.
  const said = async (text: string) => {
    const was = await controlFiles(scope);
    await Deno.writeTextFile(config, text);
    const is = await controlFiles(scope);
    return describeControls(was, is, changedControls(was, is));
  };
  await Deno.writeTextFile(config, "[core]\n\tbare = false\n");
  assert.deepEqual(
    await said(
      '[core] fsmonitor = /tmp/x\n\tbare = false\n[a]\n\tb = 1\n[url "user:S3CRET@h:"]\n\tinsteadOf = h:\n' +
        '[remote "o\\"x"]\n\turl = u\n[remote "up"]\n\turl = u\n',
    ),
    [
      ".git/config (core.fsmonitor set, a.b set, remote.‹…›.url set, remote.up.url set, url.‹…›.insteadof set)",
    ],
  );
  assert.deepEqual(
    await said("[core]\n\tbare = false\n[http]\n\textraHeader = Bearer \\\nS3CRETtoken\n"),
    [".git/config"],
  );

  // A baseline from another process (a journal read after a crash): the label alone.
  const journaled = { ...before, ".git/config": "33188:0000" };
  assert.deepEqual(describeControls(journaled, after, labels), [".git/config"]);
});

Deno.test("controlFiles() hashes a file the same whichever digest it takes: WebCrypto's for a few files, node:crypto's from a thousand", async () => {
  await using temp = await tempDir("relay-guard-");
  const common = join(temp.path, "repo", ".git");
  const prs = join(common, "relay", "prs");
  await Deno.mkdir(prs, { recursive: true });
  await Deno.writeTextFile(join(prs, "task-1.json"), `{"state":"open"}\n`);
  const scope = { commonDir: common, gitDirs: [common] };
  const entry = async () => (await controlFiles(scope))[".git/relay/prs/task-1.json"];
  const { mode } = await Deno.stat(join(prs, "task-1.json"));
  const expected = `${mode}:${await sha256(`{"state":"open"}\n`)}`;
  assert.equal(await entry(), expected);
  for (let n = 2; n <= 1001; n++) Deno.writeTextFileSync(join(prs, `task-${n}.json`), `${n}\n`);
  assert.equal(await entry(), expected);
});

Deno.test("controlFiles() sees a git folder git would no longer take (HEAD out of refs/, objects or refs replaced), not a branch switched or a HEAD detached", async () => {
  await using temp = await tempDir("relay-guard-");
  const dir = temp.path;
  const common = join(dir, "repo", ".git");
  const other = join(common, "worktrees", "other");
  for (const sub of [other, join(common, "objects"), join(common, "refs")]) {
    await Deno.mkdir(sub, { recursive: true });
  }
  await Deno.writeTextFile(join(common, "HEAD"), "ref: refs/heads/main\n");
  await Deno.writeTextFile(join(other, "HEAD"), "ref: refs/heads/task-1\n");
  const scope = { commonDir: common, gitDirs: [common] };
  const before = await controlFiles(scope);
  await Deno.writeTextFile(join(common, "HEAD"), "ref: refs/heads/other\n");
  await Deno.writeTextFile(join(other, "HEAD"), `${"ab".repeat(20)}\n`);
  assert.deepEqual(changedControls(before, await controlFiles(scope)), []);
  await Deno.writeTextFile(join(dir, "head"), "ref: refs/heads/main\n");
  await Deno.remove(join(other, "HEAD"));
  await Deno.symlink(join(dir, "head"), join(other, "HEAD"));
  await Deno.writeTextFile(join(common, "HEAD"), "not a ref\n");
  await Deno.remove(join(common, "objects"));
  await Deno.symlink(dir, join(common, "objects"));
  await Deno.remove(join(common, "refs"));
  assert.deepEqual(changedControls(before, await controlFiles(scope)), [
    ".git/HEAD",
    ".git/objects",
    ".git/refs",
    ".git/worktrees/other/HEAD",
  ]);
});

Deno.test("controlFiles() lets what git itself does in a turn pass: another worktree added or pruned, relay's notes ref packed by gc; and never hangs or fails on a loop, a pipe or many includes", async () => {
  await using temp = await tempDir("relay-guard-");
  const dir = temp.path;
  const common = join(dir, "repo", ".git");
  for (const d of ["objects", "refs/notes", "worktrees/gone"]) {
    await Deno.mkdir(join(common, d), { recursive: true });
  }
  await Deno.writeTextFile(join(common, "HEAD"), "ref: refs/heads/main\n");
  const notes = "ab".repeat(20);
  await Deno.writeTextFile(join(common, "refs", "notes", "relay"), `${notes}\n`);
  await Deno.writeTextFile(join(common, "worktrees", "gone", "HEAD"), "ref: refs/heads/x\n");
  await Deno.writeTextFile(join(common, "worktrees", "gone", "commondir"), "../..\n");
  // Nine configs that each include all the others: each read once.
  const incs = [...Array(9).keys()].map((i) => join(dir, `inc${i}`));
  for (const f of incs) {
    await Deno.writeTextFile(f, incs.map((t) => `[include]\n\tpath = ${t}\n`).join(""));
  }
  await Deno.symlink("loop", join(dir, "loop"));
  await Deno.writeTextFile(
    join(common, "config"),
    `${BASE_CONFIG}[include]\n\tpath = ${incs[0]}\n[core]\n\thooksPath = ${join(dir, "loop")}\n`,
  );
  const scope = { commonDir: common, gitDirs: [common] };
  const started = performance.now();
  const before = await controlFiles(scope);
  assert.ok(performance.now() - started < 5_000, "nine includes read once each");
  // git worktree add, git worktree prune, git gc (pack-refs).
  await Deno.mkdir(join(common, "worktrees", "helper"));
  await Deno.writeTextFile(join(common, "worktrees", "helper", "HEAD"), `${"cd".repeat(20)}\n`);
  await Deno.writeTextFile(join(common, "worktrees", "helper", "commondir"), "../..\n");
  await Deno.remove(join(common, "worktrees", "gone"), { recursive: true });
  await Deno.remove(join(common, "refs", "notes", "relay"));
  await Deno.writeTextFile(
    join(common, "packed-refs"),
    `# pack-refs with: peeled fully-peeled sorted\n${notes} refs/notes/relay\n`,
  );
  assert.deepEqual(changedControls(before, await controlFiles(scope)), []);
  // The notes moved in packed-refs, and a worktree's git sent elsewhere: changes.
  await Deno.writeTextFile(join(common, "packed-refs"), `${"ef".repeat(20)} refs/notes/relay\n`);
  await Deno.writeTextFile(join(common, "worktrees", "helper", "commondir"), "/tmp/evil\n");
  assert.deepEqual(changedControls(before, await controlFiles(scope)), [
    ".git/refs/notes/relay",
    ".git/worktrees/helper/commondir",
  ]);
  // A named pipe where a worktree's .git file goes is not read.
  const wt = join(dir, "wt");
  await Deno.mkdir(wt);
  const fifo = await new Deno.Command("mkfifo", { args: [join(wt, ".git")] }).output();
  assert.equal(fifo.code, 0);
  assert.equal(worktreeGitDir(wt), null);
});

Deno.test("controlFiles() sees what steers git in the primary tree's submodules (checked out or not, nested, a name with a slash), not their objects or index; a named pipe is never read", async () => {
  await using temp = await tempDir("relay-guard-");
  const dir = temp.path;
  const common = join(dir, "repo", ".git");
  // Git folders as `git submodule` leaves them: modules/<name>/, a name that holds a slash,
  // a submodule's own submodule, and a submodule named HEAD (a folder, not a git folder's file).
  const gitDirs = ["lib", "vendor/other", "lib/modules/inner", "HEAD"].map((n) =>
    join(common, "modules", ...n.split("/"))
  );
  for (const g of gitDirs) {
    await Deno.mkdir(join(g, "hooks"), { recursive: true });
    await Deno.mkdir(join(g, "objects", "ab"), { recursive: true });
    await Deno.writeTextFile(join(g, "HEAD"), "ref: refs/heads/main\n");
    await Deno.writeTextFile(join(g, "config"), "[core]\n\tbare = false\n");
  }
  const scope = { commonDir: common, gitDirs: [] };
  const before = await controlFiles(scope);
  for (const g of gitDirs.slice(0, 3)) {
    await Deno.writeTextFile(join(g, "objects", "ab", "cdef"), "an object\n");
    await Deno.writeTextFile(join(g, "index"), "an index\n");
  }
  assert.deepEqual(changedControls(before, await controlFiles(scope)), [], "objects and index");
  await Deno.writeTextFile(join(gitDirs[0]!, "hooks", "post-checkout"), "#!/bin/sh\n");
  await Deno.writeTextFile(join(gitDirs[1]!, "config"), '[filter "x"]\n\tclean = evil\n');
  await Deno.mkdir(join(gitDirs[2]!, "info"));
  await Deno.writeTextFile(join(gitDirs[2]!, "info", "attributes"), "* filter=x\n");
  await Deno.writeTextFile(join(gitDirs[3]!, "config"), "[core]\n\tfsmonitor = evil\n");
  const fifo = await new Deno.Command("mkfifo", {
    args: [join(gitDirs[3]!, "hooks", "pre-commit")],
  })
    .output();
  assert.equal(fifo.code, 0);
  assert.deepEqual(changedControls(before, await controlFiles(scope)), [
    ".git/modules/HEAD/config",
    ".git/modules/HEAD/hooks/pre-commit",
    ".git/modules/lib/hooks/post-checkout",
    ".git/modules/lib/modules/inner/info/attributes",
    ".git/modules/vendor/other/config",
  ]);
});

Deno.test("controlFiles() sees a submodule git folder planted with a symlinked HEAD, or linked in from elsewhere, and never follows the link", async () => {
  await using temp = await tempDir("relay-guard-");
  const dir = temp.path;
  const common = join(dir, "repo", ".git");
  await Deno.mkdir(join(common, "modules"), { recursive: true });
  // A git folder elsewhere, with a hook: git takes it for a submodule's through the link.
  const elsewhere = join(dir, "elsewhere");
  await Deno.mkdir(join(elsewhere, "hooks"), { recursive: true });
  await Deno.writeTextFile(join(elsewhere, "HEAD"), "ref: refs/heads/main\n");
  await Deno.writeTextFile(join(elsewhere, "hooks", "post-checkout"), "#!/bin/sh\n");
  const scope = { commonDir: common, gitDirs: [] };
  const before = await controlFiles(scope);
  // modules/lib: a git folder whose HEAD is a symlink (git accepts one), with a hook.
  const lib = join(common, "modules", "lib");
  await Deno.mkdir(join(lib, "hooks"), { recursive: true });
  await Deno.symlink("refs/heads/main", join(lib, "HEAD"));
  await Deno.writeTextFile(join(lib, "hooks", "post-checkout"), "#!/bin/sh\n");
  await Deno.writeTextFile(join(lib, "config"), "[core]\n\tworktree = ../../../lib\n");
  // modules/vendor/other: a link to the git folder elsewhere.
  await Deno.mkdir(join(common, "modules", "vendor"));
  await Deno.symlink(elsewhere, join(common, "modules", "vendor", "other"));
  const now = await controlFiles(scope);
  assert.deepEqual(changedControls(before, now), [
    ".git/modules/lib/config",
    ".git/modules/lib/hooks/post-checkout",
    ".git/modules/vendor/other",
  ]);
  assert.equal(now[".git/modules/vendor/other"], `symlink -> ${elsewhere}`);
});

Deno.test("changedPrimaryFiles() blames a rewritten inbox brief, not one added or dropped", () => {
  const before = {
    ".relay/inbox/0001-a.md": "h1",
    ".relay/inbox/0002-b.md": "h2",
    ".relay/inbox/0003-c.md": "h3",
    "README.md": "r1",
  };
  const now = {
    ".relay/inbox/0001-a.md": "h1-changed",
    ".relay/inbox/0002-b.md": "(deleted)",
    ".relay/inbox/0004-d.md": "h4",
    "README.md": "r2",
  };
  assert.deepEqual(changedPrimaryFiles(before, now, ".relay/inbox"), [
    ".relay/inbox/0001-a.md",
    "README.md",
  ]);
});
