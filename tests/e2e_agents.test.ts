/**
 * End to end with fake agents that behave badly: each case runs the real CLI
 * on a plain git remote and asserts the outcome through real git state —
 * refs on origin, files in commits, the report on origin/main, exit codes and
 * `.git/relay/hold.json`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  AGENTS,
  all,
  brief,
  countLines,
  exists,
  makeScene,
  originRefs,
  type Scene,
  stateDir,
  taskRecord,
} from "./helpers/scene.ts";

const HOLD = 3;

/** Writes NEXT-STEPS.md in the primary tree as an OPEN feature brief on branch task-<n>. */
async function openBrief(
  scene: Scene,
  opts: { task?: number; title?: string; bar?: string[] } = {},
): Promise<void> {
  const task = opts.task ?? 1;
  await scene.write(
    "NEXT-STEPS.md",
    brief({
      status: "OPEN",
      task,
      title: opts.title ?? "Add a feature",
      kind: "feature",
      extraHeader: `Branch: task-${task}`,
      ...(opts.bar ? { bar: opts.bar } : {}),
    }),
  );
}

/** The fake agent run through counted.sh, which logs each launch in $FAKE_COUNT_FILE. */
function counted(agent: string): string[] {
  return ["bash", join(AGENTS, "counted.sh"), agent, "{prompt}"];
}

/** Writes the operator profile by hand, with the executor's turn limit set to `timeout`. */
async function setProfile(scene: Scene, argv: string[], timeout: string): Promise<void> {
  await Deno.writeTextFile(
    scene.profile,
    `roles:\n  executor:\n    vendor: command\n    argv: ${JSON.stringify(argv)}\n` +
      `    timeout: ${timeout}\n` +
      `  reviewer:\n    vendor: command\n    argv: ${JSON.stringify(argv)}\n` +
      `worktree_root: ${scene.worktrees}\n`,
  );
}

function launches(countFile: string): Promise<number> {
  return countLines(countFile, "run ");
}

/** A file as committed at `rev` in the origin. */
async function originFile(scene: Scene, rev: string, path: string): Promise<string> {
  return (await scene.git(scene.origin, ["show", `${rev}:${path}`])).stdout;
}

function holdPath(scene: Scene): string {
  return join(stateDir(scene), "hold.json");
}

/** Subjects of the commits in `range`, newest first, read in the primary tree. */
async function subjects(scene: Scene, range: string): Promise<string[]> {
  return (await scene.out(["log", "--format=%s", range])).split("\n").filter((s) => s !== "");
}

/** Files a commit changes. */
async function filesOf(scene: Scene, rev: string): Promise<string[]> {
  return (await scene.out(["show", "--name-only", "--format=", rev])).split("\n")
    .filter((s) => s !== "").sort();
}

/**
 * Opens a brief titled `title`, polls once (task 1 ships), and checks that the branch on
 * origin holds exactly `files` besides relay's own; returns what the poll said on stderr.
 */
async function shipOne(scene: Scene, title: string, files: string[]): Promise<string> {
  await openBrief(scene, { title });
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 1 shipped/);
  await scene.git(scene.work, ["fetch", "--quiet", "origin"]);
  assert.deepEqual(
    (await scene.out(["ls-tree", "-r", "--name-only", "origin/task-1"])).split("\n")
      .filter((p) => !p.startsWith(".relay/")),
    files,
  );
  return poll.stderr;
}

/** Processes (not zombies) whose process group is `pgid`. */
async function groupMembers(pgid: number): Promise<string[]> {
  const out = await new Deno.Command("ps", {
    args: ["-e", "-o", "pid=,pgid=,stat=,args="],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(out.stdout).split("\n").filter((line) => {
    const [, group, stat] = line.trim().split(/\s+/);
    return Number(group) === pgid && stat !== undefined && !stat.startsWith("Z");
  });
}

/** The archived journals of finished runs, keyed by run id. */
async function archivedJournals(
  scene: Scene,
): Promise<Map<string, { agentPid?: number; attempt: number }>> {
  const runs = new Map<string, { agentPid?: number; attempt: number }>();
  for await (const entry of Deno.readDir(join(stateDir(scene), "runs"))) {
    const path = join(stateDir(scene), "runs", entry.name, "journal.json");
    if (await exists(path)) runs.set(entry.name, JSON.parse(await Deno.readTextFile(path)));
  }
  return runs;
}

Deno.test("an agent that commits the paperwork to its branch still ships a product-only branch with its own commits and report", async () => {
  await using scene = await makeScene({ agent: "paperwork.sh" });
  await openBrief(scene);

  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 1 shipped/);

  await scene.git(scene.work, ["fetch", "--quiet", "origin"]);
  const branchFiles = await scene.out(["diff", "--name-only", "origin/main...origin/task-1"]);
  assert.deepEqual(branchFiles.split("\n"), ["src/feature-1.txt"]);

  // Nothing rewritten: the agent's two commits are in the pushed history, relay's commit on top.
  const log = await subjects(scene, "origin/main..origin/task-1");
  assert.deepEqual(log, ["Task #1: Add a feature", "Task #1: status", "Task #1: add the feature"]);
  const agentStatus = await scene.out(["rev-parse", "origin/task-1~1"]);
  assert.deepEqual(await filesOf(scene, agentStatus), [
    ".relay/agent-note.md",
    "COWORK-STATUS.md",
    "NEXT-STEPS.md",
  ]);
  assert.deepEqual(await filesOf(scene, "origin/task-1"), [
    ".relay/agent-note.md",
    "COWORK-STATUS.md",
    "NEXT-STEPS.md",
  ]);

  // The agent's report (its pasted run of the bar) is what landed on origin/main.
  const report = await originFile(scene, "main", "COWORK-STATUS.md");
  assert.match(report, /^Outcome: SHIPPED$/m);
  assert.match(report, /## What shipped\n\nsrc\/feature-1\.txt\n/);
  assert.match(
    report,
    /## Verification\n\n### `git ls-files src`\n\n```\nsrc\/app\.txt\nsrc\/feature-1\.txt\n```\n\nExit: 0/,
  );
  assert.match(await originFile(scene, "main", "NEXT-STEPS.md"), /^Status: DONE\nTask: 1\n/);
});

Deno.test("an agent that commits the paperwork over files already on main leaves them as main has them", async () => {
  await using scene = await makeScene({ agent: "paperwork.sh" });
  // Task 1's paperwork is on main, as relay leaves it.
  await scene.write(
    "NEXT-STEPS.md",
    brief({ status: "DONE", task: 1, kind: "feature", extraHeader: "Branch: task-1" }),
  );
  await scene.write("COWORK-STATUS.md", "Task: 1\nOutcome: SHIPPED\nBranch: task-1\n");
  await scene.git(scene.work, ["add", "NEXT-STEPS.md", "COWORK-STATUS.md"]);
  await scene.git(scene.work, ["commit", "--quiet", "-m", "Task #1: status"]);
  await scene.git(scene.work, ["push", "--quiet", "origin", "HEAD:main"]);
  await openBrief(scene, { task: 2, title: "Add another feature" });
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 2 shipped/);

  await scene.git(scene.work, ["fetch", "--quiet", "origin"]);
  const branchFiles = await scene.out(["diff", "--name-only", "origin/main...origin/task-2"]);
  assert.deepEqual(branchFiles.split("\n"), ["src/feature-2.txt"]);
  assert.deepEqual(await subjects(scene, "origin/main..origin/task-2"), [
    "Task #2: Add another feature",
    "Task #2: status",
    "Task #2: add the feature",
  ]);
  // The branch ends with main's own paperwork, byte for byte.
  assert.equal(
    await originFile(scene, "task-2", "COWORK-STATUS.md"),
    "Task: 1\nOutcome: SHIPPED\nBranch: task-1\n",
  );
  assert.match(await originFile(scene, "task-2", "NEXT-STEPS.md"), /^Status: DONE\nTask: 1\n/);
  const report = await originFile(scene, "main", "COWORK-STATUS.md");
  assert.match(report, /^Task: 2$/m);
  assert.match(report, /## What shipped\n\nsrc\/feature-2\.txt\n/);
});

Deno.test("an agent that edits a file in the primary tree gets a HOLD that names the file, and nothing is pushed", async () => {
  await using scene = await makeScene({ agent: counted("primary.sh") });
  const countFile = join(scene.dir, "count");
  const env = { FAKE_COUNT_FILE: countFile };
  await openBrief(scene);
  const originBefore = await originRefs(scene);

  const poll = await scene.relay(["poll"], { env });
  assert.equal(poll.code, HOLD, all(poll));
  assert.match(poll.stderr, /relay: HOLD: .*README\.md/);
  assert.equal(await launches(countFile), 1);

  assert.deepEqual(await originRefs(scene), originBefore);
  assert.ok(await exists(holdPath(scene)));
  const hold = JSON.parse(await Deno.readTextFile(holdPath(scene)));
  assert.equal(hold.task, 1);
  assert.match(hold.reason, /files of the primary tree changed: README\.md$/);
  // relay changed nothing in the primary tree: the agent's edit is there for a person to see.
  assert.match(await scene.read("README.md"), /edited by the agent/);

  const again = await scene.relay(["poll"], { env });
  assert.equal(again.code, HOLD, all(again));
  assert.ok(again.stderr.includes(hold.reason), again.stderr);
  assert.equal(await launches(countFile), 1, "the second poll launched the agent again");
  assert.deepEqual(await originRefs(scene), originBefore);

  const status = await scene.relay(["status"]);
  assert.equal(status.code, HOLD, all(status));
  assert.ok(status.stdout.includes(`HOLD: ${hold.reason}`), status.stdout);

  const resume = await scene.relay(["resume"]);
  assert.equal(resume.code, 0, all(resume));
  assert.match(resume.stdout, /^cleared: HOLD on task 1/);
  assert.equal(await exists(holdPath(scene)), false);
  const after = await scene.relay(["status"]);
  assert.equal(after.code, 0, all(after));
  // Only the record of the last poll still tells of it.
  assert.doesNotMatch(after.stdout.replace(/^last poll: .*\n( {2}.*\n)*/m, ""), /HOLD/);
});

Deno.test("an agent that leaves a new file in the primary tree gets a HOLD naming that file only", async () => {
  await using scene = await makeScene({ agent: "primary-new.sh" });
  await openBrief(scene);
  const originBefore = await originRefs(scene);
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, HOLD, all(poll));
  const hold = JSON.parse(await Deno.readTextFile(holdPath(scene)));
  // NEXT-STEPS.md was already changed (the open brief) before the agent ran: it is not blamed.
  assert.match(hold.reason, /files of the primary tree changed: stray\.txt$/);
  assert.deepEqual(await originRefs(scene), originBefore);
});

/**
 * A person's clone of another project inside the primary tree (untracked: status lists it as
 * one folder) and a link to a folder: the executor's `agent` script (bash) runs after the
 * honest agent's work, with PRIMARY set to the primary tree.
 */
async function nestedScene(agent = "") {
  const scene = await makeScene();
  const nested = join(scene.work, "vendor", "other");
  await scene.git(scene.work, ["init", "--quiet", nested]);
  await Deno.writeTextFile(join(nested, "lib.txt"), "v1\n");
  await scene.git(nested, ["add", "lib.txt"]);
  await scene.git(nested, ["commit", "--quiet", "-m", "their library"]);
  await Deno.writeTextFile(join(nested, "notes.txt"), "theirs, uncommitted\n");
  await Deno.symlink("src", join(scene.work, "src-link"));
  const script = join(scene.dir, "nested-agent.sh");
  await Deno.writeTextFile(
    script,
    `. "${join(AGENTS, "lib.sh")}"\nproduct_change\nhonest_report\n` +
      `PRIMARY="$(cd "$(git rev-parse --git-common-dir)/.." && pwd)"\n${agent}\n`,
  );
  await scene.setAgent(["bash", script, "{prompt}"]);
  await openBrief(scene);
  return scene;
}

Deno.test("a repository nested in the primary tree, and a link to a folder there, do not stop the executor: the task ships", async () => {
  await using scene = await nestedScene();
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 1 shipped/);
});

for (
  const [what, agent] of [
    ["commits in it", `git -C "$PRIMARY/vendor/other" commit -q --allow-empty -m "the agent's"`],
    ["edits a file of it", `echo changed >> "$PRIMARY/vendor/other/notes.txt"`],
    [
      "edits a file of it, same size, and sets its time back",
      `f="$PRIMARY/vendor/other/notes.txt"; cp -p "$f" "$PRIMARY/../was"\n` +
      `printf 'THEIRS, uncommitted\\n' > "$f"; touch -r "$PRIMARY/../was" "$f"`,
    ],
  ]
) {
  Deno.test(`an agent that ${what} (a repository nested in the primary tree) gets a HOLD naming it`, async () => {
    await using scene = await nestedScene(agent);
    const originBefore = await originRefs(scene);
    const poll = await scene.relay(["poll"]);
    assert.equal(poll.code, HOLD, all(poll));
    const hold = JSON.parse(await Deno.readTextFile(holdPath(scene)));
    assert.match(hold.reason, /files of the primary tree changed: vendor\/other\/$/);
    assert.deepEqual(await originRefs(scene), originBefore);
  });
}

/**
 * A primary tree with a submodule `lib`, initialized there, on main and on the remote; the
 * executor's `agent` script (bash) runs in the worktree before the honest agent's work, with
 * PRIMARY set to the primary tree and RAN to a file a planted filter would write.
 */
async function submoduleScene(agent: string, opts: { deinit?: boolean } = {}) {
  const scene = await makeScene();
  const lib = join(scene.dir, "their-lib");
  await scene.git(scene.dir, ["init", "--quiet", "--initial-branch=main", lib]);
  await Deno.writeTextFile(join(lib, "lib.txt"), "one\n");
  await scene.git(lib, ["add", "lib.txt"]);
  await scene.git(lib, ["commit", "--quiet", "-m", "their library"]);
  const allow = ["-c", "protocol.file.allow=always"];
  await scene.git(scene.work, [...allow, "submodule", "add", "--quiet", lib, "lib"]);
  await scene.git(scene.work, ["commit", "--quiet", "-m", "their library as a submodule"]);
  await scene.git(scene.work, ["push", "--quiet", "origin", "HEAD:main"]);
  // A primary tree that never checked the submodule out: its config has no section for it.
  if (opts.deinit) await scene.git(scene.work, ["submodule", "deinit", "--quiet", "-f", "lib"]);
  const script = join(scene.dir, "submodule-agent.sh");
  await Deno.writeTextFile(
    script,
    `. "${join(AGENTS, "lib.sh")}"\n` +
      `PRIMARY="$(cd "$(git rev-parse --git-common-dir)/.." && pwd)"\nRAN="${ran(scene)}"\n` +
      `${agent}\nproduct_change\nhonest_report\n`,
  );
  await scene.setAgent(["bash", script, "{prompt}"]);
  await openBrief(scene);
  return scene;
}

/** Where the filter an agent plants writes, if git ever runs it. */
function ran(scene: Scene): string {
  return join(scene.dir, "filter-ran");
}

Deno.test("an agent that initializes a submodule in its worktree is not stopped: the task ships", async () => {
  await using scene = await submoduleScene(
    `git -c protocol.file.allow=always submodule update --init --quiet\ntest -f lib/lib.txt`,
  );
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 1 shipped/);
});

Deno.test("an agent that initializes a submodule the primary tree never initialized is not stopped either: git's url and active lines in the config are no HOLD", async () => {
  await using scene = await submoduleScene(
    `git -c protocol.file.allow=always submodule update --init --quiet\ntest -f lib/lib.txt`,
    { deinit: true },
  );
  const config = join(scene.work, ".git", "config");
  assert.doesNotMatch(await Deno.readTextFile(config), /\[submodule/);
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 1 shipped/);
  // What the agent's git wrote, and all it wrote there.
  assert.match(await Deno.readTextFile(config), /\[submodule "lib"\]\n\tactive = true\n\turl = /);
});

Deno.test("an agent that sets an update command for a submodule in the repository's config gets a HOLD naming the config", async () => {
  await using scene = await submoduleScene(
    `git -c protocol.file.allow=always submodule update --init --quiet\n` +
      `git config submodule.lib.update "!sh -c 'echo ran >> \\"$RAN\\"'"`,
    { deinit: true },
  );
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, HOLD, all(poll));
  const hold = JSON.parse(await Deno.readTextFile(holdPath(scene)));
  assert.match(
    hold.reason,
    /changed files that steer git or relay: \.git\/config \(submodule\.lib\.update set\)$/,
  );
  assert.equal(await exists(ran(scene)), false, "relay's git ran the agent's command");
});

Deno.test("an agent that makes the primary tree's .git no repository to git (HEAD a link out of refs/) and plants one above it gets a HOLD naming HEAD, and relay's git never reaches the planted one", async () => {
  await using scene = await makeScene();
  const script = join(scene.dir, "escape-agent.sh");
  await Deno.writeTextFile(
    script,
    `. "${join(AGENTS, "lib.sh")}"\nproduct_change\nhonest_report\n` +
      `PRIMARY="$(cd "$(git rev-parse --git-common-dir)/.." && pwd)"\nRAN="${ran(scene)}"\n` +
      // A repository above the primary tree, whose origin runs a program on a fetch.
      `git init -q --bare "$PRIMARY/../.git"\n` +
      `git --git-dir="$PRIMARY/../.git" config remote.origin.url "$PRIMARY/.git"\n` +
      `git --git-dir="$PRIMARY/../.git" config remote.origin.uploadpack "echo ran >> $RAN; git-upload-pack"\n` +
      // HEAD as a link to a file outside naming main: what relay reads is unchanged.
      `printf 'ref: refs/heads/main\\n' > "$PRIMARY/../head"\n` +
      `rm "$PRIMARY/.git/HEAD"; ln -s "$PRIMARY/../head" "$PRIMARY/.git/HEAD"\n`,
  );
  await scene.setAgent(["bash", script, "{prompt}"]);
  await openBrief(scene);
  const originBefore = await originRefs(scene);
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, HOLD, all(poll));
  const hold = JSON.parse(await Deno.readTextFile(holdPath(scene)));
  assert.match(hold.reason, /changed files that steer git or relay: \.git\/HEAD$/);
  assert.equal(await exists(ran(scene)), false, "relay's git ran the planted repository's program");
  assert.deepEqual(await originRefs(scene), originBefore);
});

/** An agent's script that plants a clean filter in the git folder `$m`, writing to $RAN when run. */
const PLANT_FILTER =
  `git config --file "$m/config" filter.x.clean "sh -c 'echo ran >> \\"$RAN\\"; cat'"\n` +
  `mkdir -p "$m/info"; echo '* filter=x' > "$m/info/attributes"\n`;

/** Rewrites the primary tree's lib/lib.txt at the same size with a new time: git must read it. */
const SAME_SIZE_EDIT =
  `echo two > "$PRIMARY/lib/lib.txt"; touch -d 2000-01-01 "$PRIMARY/lib/lib.txt"`;

Deno.test("an agent that plants a filter in the git folder of the primary tree's submodule gets a HOLD naming it before relay runs any git", async () => {
  await using scene = await submoduleScene(
    `m="$PRIMARY/.git/modules/lib"\n${PLANT_FILTER}${SAME_SIZE_EDIT}`,
  );
  const originBefore = await originRefs(scene);
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, HOLD, all(poll));
  const hold = JSON.parse(await Deno.readTextFile(holdPath(scene)));
  assert.match(
    hold.reason,
    /changed files that steer git or relay: \.git\/modules\/lib\/config \(filter\.x\.clean set\), \.git\/modules\/lib\/info\/attributes$/,
  );
  assert.equal(await exists(ran(scene)), false, "relay's git ran the agent's filter");
  assert.deepEqual(await originRefs(scene), originBefore);
});

Deno.test("an agent that turns the primary tree's submodule to a git folder of its own, with a filter, gets a HOLD naming the submodule, and relay never runs the filter", async () => {
  await using scene = await submoduleScene(
    `git clone -q "$PRIMARY/../their-lib" "$PRIMARY/../elsewhere"; m="$PRIMARY/../elsewhere/.git"\n` +
      `${PLANT_FILTER}echo "gitdir: $m" > "$PRIMARY/lib/.git"\n${SAME_SIZE_EDIT}`,
  );
  const originBefore = await originRefs(scene);
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, HOLD, all(poll));
  const hold = JSON.parse(await Deno.readTextFile(holdPath(scene)));
  assert.match(hold.reason, /files of the primary tree changed: lib$/);
  assert.equal(await exists(ran(scene)), false, "relay's git ran the agent's filter");
  assert.deepEqual(await originRefs(scene), originBefore);
});

Deno.test("an agent that plants a filter in its own worktree's submodule: relay's git never runs it, and the task ships", async () => {
  await using scene = await submoduleScene(
    `git -c protocol.file.allow=always submodule update --init --quiet\n` +
      `m="$(git rev-parse --git-dir)/modules/lib"\n` +
      `git config --file "$m/config" filter.x.clean "sh -c 'echo ran >> \\"$RAN\\"; cat'"\n` +
      `mkdir -p "$m/info"; echo '* filter=x' > "$m/info/attributes"\n` +
      // Its commit moved (one relay must not stage), and a file changed at the same size.
      `echo two > lib/lib.txt; git -C lib -c filter.x.clean=cat commit -q -am moved\n` +
      `echo ten > lib/lib.txt; touch -d 2000-01-01 lib/lib.txt`,
  );
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 1 shipped/);
  assert.equal(await exists(ran(scene)), false, "relay's git ran the agent's filter");
  // And a person's look at the loop does not run it either.
  const doctor = await scene.relay(["doctor"]);
  assert.equal(
    await exists(ran(scene)),
    false,
    `relay doctor ran the agent's filter: ${all(doctor)}`,
  );
});

Deno.test("an agent that commits a repository of its own under .relay/ (paperwork): relay takes it off the branch without running that repository's filter", async () => {
  await using scene = await submoduleScene(
    // Its git folder where the agent can write it; a filter there; an edit at the same size.
    `m="$(git rev-parse --absolute-git-dir)/evil"\n` +
      `git clone -q --separate-git-dir="$m" "$PRIMARY/../their-lib" .relay/evil\n` +
      `git add .relay/evil 2>/dev/null; git commit -q -m "a repository under .relay"\n` +
      `git config --file "$m/config" filter.x.clean "sh -c 'echo ran >> \\"$RAN\\"; cat'"\n` +
      `mkdir -p "$m/info"; echo '* filter=x' > "$m/info/attributes"\n` +
      `echo two > .relay/evil/lib.txt; touch -d 2000-01-01 .relay/evil/lib.txt`,
  );
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  assert.equal(await exists(ran(scene)), false, "relay's git ran the agent's filter");
  const shipped = await scene.out(["ls-tree", "-r", "--name-only", "task-1"]);
  assert.doesNotMatch(shipped, /^\.relay\/evil/m, "paperwork paths never ship on a branch");
});

Deno.test("an agent that moves main gets a HOLD, nothing is pushed, and its commit stays reachable", async () => {
  await using scene = await makeScene({ agent: "moves-main.sh" });
  await openBrief(scene);
  const originBefore = await originRefs(scene);

  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, HOLD, all(poll));
  assert.match(poll.stderr, /relay: HOLD: .*main moved from/);
  assert.deepEqual(await originRefs(scene), originBefore);
  assert.ok(await exists(holdPath(scene)));

  assert.equal(await scene.out(["log", "-1", "--format=%s", "task-1"]), "Task #1: add the feature");
  assert.deepEqual(await filesOf(scene, "task-1"), ["src/feature-1.txt"]);
  const anchors = await scene.out([
    "for-each-ref",
    "--format=%(refname)",
    "refs/relay/anchors/task-1/",
  ]);
  assert.match(anchors, /-before$/m);
});

Deno.test("a commit made on main in the primary tree during a turn is kept under an anchor, and the HOLD's advice, followed word for word, gets the loop going", async () => {
  await using scene = await makeScene({ agent: "commits-primary.sh" });
  await openBrief(scene);
  const mainBefore = await scene.out(["rev-parse", "main"]);

  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, HOLD, all(poll));
  const onMain = await scene.out(["rev-parse", "main"]);
  assert.notEqual(onMain, mainBefore);
  const hold = JSON.parse(await Deno.readTextFile(holdPath(scene)));
  const kept = /is kept under (refs\/relay\/anchors\/task-1\/\S+-main)\./.exec(hold.next)?.[1];
  assert.ok(kept, hold.next);
  assert.equal(await scene.out(["rev-parse", kept]), onMain);

  // The advice, word for word: main back where it was, relay's brief (which the commit took
  // along) back from the anchor, then resume.
  const advice = /"(git switch --detach && git branch -f main [0-9a-f]+ && git switch main)"/
    .exec(hold.next)?.[1];
  assert.ok(advice, hold.next);
  const back =
    /That commit also holds relay's paperwork \(NEXT-STEPS\.md: .*"(git checkout \S+ -- NEXT-STEPS\.md)"/
      .exec(hold.next)?.[1];
  assert.ok(back, hold.next);
  for (const step of [...advice.split(" && "), back]) {
    await scene.git(scene.work, step.split(" ").slice(1));
  }
  assert.equal(await scene.out(["rev-parse", "main"]), mainBefore);
  assert.match(await scene.read("NEXT-STEPS.md"), /^Status: OPEN\nTask: 1\n/);
  assert.equal((await scene.relay(["resume"])).code, 0);
  await scene.setAgent("revise.sh");
  const next = await scene.relay(["poll"]);
  assert.equal(next.code, 0, all(next));
  assert.match(next.stdout, /task 1 shipped/);
  assert.equal(await scene.out(["rev-parse", kept]), onMain, "the anchor stays");
});

Deno.test("after a resumed moves-main HOLD, relay never pushes the agent's commit to origin/main", async () => {
  await using scene = await makeScene({ agent: "moves-main.sh" });
  await openBrief(scene);
  const initial = (await originRefs(scene))["refs/heads/main"]!;
  const hold = await scene.relay(["poll"]);
  assert.equal(hold.code, HOLD, all(hold));
  const agentCommit = await scene.out(["rev-parse", "task-1"]);
  assert.equal(await scene.out(["rev-parse", "main"]), agentCommit);

  // A person resumes without repairing main, and the next brief ships on its own branch.
  assert.equal((await scene.relay(["resume"])).code, 0);
  await scene.setAgent("good.sh");
  await openBrief(scene, { task: 2, title: "Add another feature" });
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, HOLD, all(poll));
  assert.match(poll.stderr, /relay: HOLD: .*local main has commits .* not paperwork/);
  assert.equal((await originRefs(scene))["refs/heads/main"], initial);

  // The HOLD is recorded: it stays until a person has repaired main and says so.
  assert.equal((await scene.relay(["poll"])).code, HOLD);
  // Once main is repaired and the HOLD cleared, the next poll finishes the same run (its branch
  // was already pushed, so resume keeps it): paperwork only on origin/main.
  await scene.git(scene.work, ["update-ref", "refs/heads/main", initial]);
  assert.equal((await scene.relay(["resume"])).code, 0);
  const after = await scene.relay(["poll"]);
  assert.equal(after.code, 0, all(after));
  assert.match(after.stdout, /task 2 shipped/);
  const main = (await originRefs(scene))["refs/heads/main"]!;
  assert.equal(await scene.out(["rev-parse", `${main}~1`], scene.origin), initial);
  assert.deepEqual(await filesOf(scene, main), ["COWORK-STATUS.md", "NEXT-STEPS.md"]);
  const merged = await scene.git(scene.origin, [
    "merge-base",
    "--is-ancestor",
    agentCommit,
    main,
  ], true);
  assert.notEqual(merged.code, 0, "the agent's commit reached origin/main");
});

Deno.test("an agent that switches its worktree to another branch gets a HOLD, nothing is pushed, and its commit stays reachable", async () => {
  await using scene = await makeScene({ agent: "switches.sh" });
  await openBrief(scene);
  const originBefore = await originRefs(scene);

  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, HOLD, all(poll));
  assert.match(poll.stderr, /relay: HOLD: .*the worktree is on "elsewhere" instead of "task-1"/);
  assert.deepEqual(await originRefs(scene), originBefore);
  assert.ok(await exists(holdPath(scene)));

  assert.equal(await scene.out(["log", "-1", "--format=%s", "task-1"]), "Task #1: add the feature");
  assert.deepEqual(await filesOf(scene, "task-1"), ["src/feature-1.txt"]);
  assert.equal(
    await scene.out(["rev-parse", "elsewhere"]),
    await scene.out(["rev-parse", "task-1"]),
  );
});

Deno.test("an agent that hangs is stopped at the turn limit, its work kept, and after the cap relay reports BLOCKED", async () => {
  await using scene = await makeScene();
  await setProfile(scene, counted("hang.sh"), "1s");
  const countFile = join(scene.dir, "count");
  const env = { FAKE_COUNT_FILE: countFile };
  await openBrief(scene);
  const mainBefore = (await originRefs(scene))["refs/heads/main"];

  const started = performance.now();
  const poll = await scene.relay(["poll"], { env });
  const elapsed = performance.now() - started;
  assert.equal(poll.code, 1, all(poll));
  assert.match(poll.stdout, /attempt 1\/2 failed: the agent timed out: limit 1s, ran \d+s/);
  // Far below hang.sh's `sleep 300` (so a tick that waits for the agent still fails) and far above
  // what a busy machine needs for one tick.
  assert.ok(elapsed < 120_000, `the tick took ${Math.round(elapsed)}ms`);
  assert.match(poll.stderr, /starting the executor .*-task1-a1, timeout 1s\n/);
  assert.equal(await launches(countFile), 1);

  // The partial work is committed on the local branch (and anchored), never pushed.
  assert.match(
    await scene.out(["log", "-1", "--format=%s", "task-1"]),
    /^WIP: Task #1 attempt 1 \(the agent timed out: limit 1s, ran \d+s.*\) \[relay\]$/,
  );
  assert.deepEqual(await filesOf(scene, "task-1"), ["src/partial-1.txt"]);
  const anchors = await scene.out([
    "for-each-ref",
    "--format=%(refname) %(objectname)",
    "refs/relay/anchors/task-1/",
  ]);
  assert.match(anchors, new RegExp(`-a1-after ${await scene.out(["rev-parse", "task-1"])}$`, "m"));
  const origin = await originRefs(scene);
  assert.equal(origin["refs/heads/task-1"], undefined);
  assert.equal(origin["refs/heads/main"], mainBefore);

  // No process of the agent's group (the `sleep 300` above all) outlived the tick.
  const runs = await archivedJournals(scene);
  const first = [...runs.entries()].find(([id]) => id.endsWith("-a1"));
  assert.ok(first?.[1].agentPid, "no archived journal with the agent's pid");
  assert.deepEqual(await groupMembers(first[1].agentPid), []);

  const round = (await taskRecord(scene)).rounds[0]!;
  assert.equal(round.attempts.length, 1);
  assert.equal(round.attempts[0]!.result, "failed");

  // Attempt 2 hangs as well: the cap (2) is reached and relay writes the BLOCKED report itself.
  const second = await scene.relay(["poll"], { env });
  assert.equal(second.code, 1, all(second));
  assert.match(second.stderr, /starting the executor .*-task1-a2/);
  assert.match(second.stdout, /task 1 BLOCKED: 2 attempt\(s\) failed; last: the agent timed out/);
  assert.equal(await launches(countFile), 2);
  const secondRun = [...(await archivedJournals(scene)).entries()].find(([id]) =>
    id.endsWith("-a2")
  );
  assert.ok(secondRun?.[1].agentPid);
  assert.deepEqual(await groupMembers(secondRun[1].agentPid), []);

  const report = await originFile(scene, "main", "COWORK-STATUS.md");
  assert.match(report, /^Outcome: BLOCKED$/m);
  assert.match(report, /Written by relay, not by the agent/);
  assert.match(await originFile(scene, "main", "NEXT-STEPS.md"), /^Status: DONE\n/);

  const idle = await scene.relay(["poll"], { env });
  assert.equal(idle.code, 0, all(idle));
  assert.equal(await launches(countFile), 2, "a poll after BLOCKED launched the agent");
});

Deno.test("an agent that exits 1 is launched exactly `attempts` times, then relay reports BLOCKED and stops", async () => {
  await using scene = await makeScene({ agent: "exit1.sh", config: "attempts: 3\n" });
  const countFile = join(scene.dir, "count");
  const env = { FAKE_COUNT_FILE: countFile };
  await openBrief(scene);
  const mainBefore = (await originRefs(scene))["refs/heads/main"];

  for (const n of [1, 2]) {
    const poll = await scene.relay(["poll"], { env });
    assert.equal(poll.code, 1, all(poll));
    assert.match(
      poll.stdout,
      new RegExp(`attempt ${n}/3 failed: the agent exited 1; the agent wrote no report`),
    );
    assert.equal(await launches(countFile), n);
    assert.equal((await originRefs(scene))["refs/heads/main"], mainBefore);
    assert.equal((await originRefs(scene))["refs/heads/task-1"], undefined);
  }
  const last = await scene.relay(["poll"], { env });
  assert.equal(last.code, 1, all(last));
  assert.match(last.stdout, /task 1 BLOCKED: 3 attempt\(s\) failed; last: the agent exited 1/);
  assert.equal(await launches(countFile), 3);

  const report = await originFile(scene, "main", "COWORK-STATUS.md");
  assert.match(report, /^Outcome: BLOCKED$/m);
  assert.match(await originFile(scene, "main", "NEXT-STEPS.md"), /^Status: DONE\n/);
  // The partial work is visible on origin, in a WIP commit of the first attempt.
  const origin = await originRefs(scene);
  assert.ok(origin["refs/heads/task-1"]);
  await scene.git(scene.work, ["fetch", "--quiet", "origin"]);
  assert.deepEqual(
    (await scene.out(["diff", "--name-only", "origin/main...origin/task-1"])).split("\n"),
    ["src/partial-1.txt"],
  );

  for (let i = 0; i < 2; i++) {
    const idle = await scene.relay(["poll"], { env });
    assert.equal(idle.code, 0, all(idle));
  }
  assert.equal(await launches(countFile), 3, "a poll after BLOCKED launched the agent");
});

Deno.test("an agent that writes 'verified' with no output fails the attempt, naming the command without output", async () => {
  await using scene = await makeScene({ agent: "verified.sh" });
  await openBrief(scene);
  const originBefore = await originRefs(scene);

  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 1, all(poll));
  assert.match(
    poll.stdout,
    /attempt 1\/2 failed: invalid report: .*No pasted output for `git ls-files src`/,
  );
  assert.deepEqual(await originRefs(scene), originBefore);

  // The second attempt fails the same way: the cap is reached and the report is BLOCKED, never SHIPPED.
  const second = await scene.relay(["poll"]);
  assert.equal(second.code, 1, all(second));
  assert.match(second.stdout, /task 1 BLOCKED/);
  const report = await originFile(scene, "main", "COWORK-STATUS.md");
  assert.match(report, /^Outcome: BLOCKED$/m);
  assert.doesNotMatch(report, /SHIPPED/);
  assert.match(report, /No pasted output for `git ls-files src`/);
});

Deno.test("a report that pastes passing output for a failing bar command carries a DISAGREEMENT line and relay's real exit code", async () => {
  await using scene = await makeScene({ agent: "liar.sh" });
  const failing = "git ls-files --error-unmatch nothing-here";
  await openBrief(scene, { bar: ["git ls-files src", failing] });

  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 1 shipped: .* 1 warning\(s\) in the report/);

  const report = await originFile(scene, "main", "COWORK-STATUS.md");
  const top = report.slice(0, report.indexOf("## What shipped"));
  assert.match(
    top,
    /^> relay: DISAGREEMENT: the report shows `git ls-files --error-unmatch nothing-here` passing, but relay's own run exited 1\.$/m,
  );
  assert.equal(report.match(/DISAGREEMENT/g)?.length, 1);
  const evidence = report.slice(report.indexOf("## Relay evidence"));
  assert.match(
    evidence,
    /### `git ls-files --error-unmatch nothing-here`\n\nExit: 1 · tree [0-9a-f]{40}/,
  );
  assert.match(evidence, /did not match any file/);
  assert.match(evidence, /### `git ls-files src`\n\nExit: 0 · tree/);
  // The agent's pasted (false) output is kept as it wrote it.
  assert.match(
    report,
    /## Verification\n\n### `git ls-files src`\n\n```\nall 12 tests passed\n```/,
  );
});

Deno.test("work an agent leaves uncommitted is committed by relay as `Task #1: <title>`, product files only", async () => {
  await using scene = await makeScene({ agent: "uncommitted.sh" });
  await openBrief(scene, { title: "Add the widget" });

  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 1 shipped/);

  await scene.git(scene.work, ["fetch", "--quiet", "origin"]);
  assert.deepEqual(await subjects(scene, "origin/main..origin/task-1"), [
    "Task #1: Add the widget",
  ]);
  assert.deepEqual(await filesOf(scene, "origin/task-1"), ["src/feature-1.txt"]);
  assert.equal(await scene.out(["status", "--porcelain"], join(scene.worktrees, "task-1")), "");
  const report = await originFile(scene, "main", "COWORK-STATUS.md");
  assert.match(
    report,
    new RegExp(`^Head: ${await scene.out(["rev-parse", "origin/task-1"])}$`, "m"),
  );
  assert.match(report, /## What shipped\n\nsrc\/feature-1\.txt\n/);
});

Deno.test("work an agent left staged and uncommitted (git rm, git mv) is committed by relay with the rest", async () => {
  await using scene = await makeScene({ agent: "stages-removal.sh" });
  const said = await shipOne(scene, "Tidy up", ["README.txt", "src/feature-1.txt"]);
  assert.match(
    said,
    /committing what the agent left uncommitted \(4 file\(s\)\): README\.md, README\.txt, src\/app\.txt, src\/feature-1\.txt/,
  );
  assert.deepEqual(await subjects(scene, "origin/main..origin/task-1"), ["Task #1: Tidy up"]);
  assert.equal(await scene.out(["status", "--porcelain"], join(scene.worktrees, "task-1")), "");
});

Deno.test("a git repository an agent made inside the worktree is left there, not committed, and said", async () => {
  await using scene = await makeScene({ agent: "nested-repo.sh" });
  // No gitlink (a submodule nobody can check out), no file of theirs.
  const said = await shipOne(scene, "Scaffold", ["README.md", "src/app.txt", "src/feature-1.txt"]);
  assert.match(
    said,
    /left out git repositories the agent made inside the worktree \(relay never commits one repository into another; to commit the files, remove the inner \.git folder\): vendor\/lib\/, web\/\n/,
  );
  // Nothing deleted: both are where the agent left them.
  const worktree = join(scene.worktrees, "task-1");
  assert.equal(await Deno.readTextFile(join(worktree, "web", "index.html")), "hello\n");
  assert.equal(
    await scene.out(["log", "--format=%s"], join(worktree, "vendor", "lib")),
    "a library",
  );
});

Deno.test("a fix brief reuses the task's worktree and branch and fast-forwards it on origin", async () => {
  await using scene = await makeScene();
  await openBrief(scene);
  const first = await scene.relay(["poll"]);
  assert.equal(first.code, 0, all(first));
  const shipped = (await originRefs(scene))["refs/heads/task-1"];
  assert.ok(shipped);

  await scene.setAgent("fixer.sh");
  await scene.write(
    "NEXT-STEPS.md",
    brief({
      status: "OPEN",
      task: 2,
      title: "Fix the feature",
      kind: "fix",
      extraHeader: "Fixes: 1\nBranch: task-1",
    }),
  );
  const fix = await scene.relay(["poll"]);
  assert.equal(fix.code, 0, all(fix));
  assert.match(fix.stdout, /task 2 shipped: task-1 at/);
  assert.match(
    fix.stderr,
    new RegExp(`task 2: worktree reused at ${scene.worktrees}/task-1 on task-1`),
  );

  const origin = await originRefs(scene);
  const fixed = origin["refs/heads/task-1"];
  assert.ok(fixed && fixed !== shipped, "origin/task-1 did not advance");
  assert.equal(origin["refs/heads/task-2"], undefined);
  await scene.git(scene.work, ["fetch", "--quiet", "origin"]);
  // A fast-forward: the shipped head is the parent of the fix commit.
  assert.equal(await scene.out(["rev-parse", `${fixed}~1`]), shipped);
  assert.equal(await scene.out(["log", "-1", "--format=%s", fixed]), "Task #2: add the feature");
  assert.deepEqual(
    (await scene.out(["diff", "--name-only", "origin/main...origin/task-1"])).split("\n"),
    ["src/feature-1.txt", "src/feature-2.txt"],
  );
  const worktrees = (await scene.out(["worktree", "list", "--porcelain"])).split("\n")
    .filter((l) => l.startsWith("worktree "));
  assert.deepEqual(worktrees, [`worktree ${scene.work}`, `worktree ${scene.worktrees}/task-1`]);

  const report = await originFile(scene, "main", "COWORK-STATUS.md");
  assert.match(report, /^Task: 2\nOutcome: SHIPPED\nBranch: task-1\n/);
  assert.match(report, new RegExp(`^Head: ${fixed}$`, "m"));
  assert.match(await originFile(scene, "main", "NEXT-STEPS.md"), /^Status: DONE\nTask: 2\n/);
});
