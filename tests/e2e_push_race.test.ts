/**
 * End to end, pushes to main that lose a race or find the remote away for a
 * moment (issue 6, item 11): relay retries them — in the same tick after a
 * fresh fetch, or in the next tick — and never HOLDs for them. Only a refusal
 * a person must address (a hook's message, protection) is a HOLD. Real CLI in
 * the form of the cron line, real git, a bare origin with real hooks.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  all,
  brief,
  countLines,
  exists,
  makeScene,
  originMerges,
  originRefs,
  type RelayResult,
  type Scene,
  stateDir,
} from "./helpers/scene.ts";

/** The crontab line's form: `relay -C <repo> --profile <profile> <tick> --quiet`. */
async function tick(
  scene: Scene,
  command: "poll" | "review",
  env: Record<string, string> = {},
): Promise<RelayResult> {
  return await scene.relay(["-C", scene.work, "--profile", scene.profile, command, "--quiet"], {
    env,
  });
}

async function queue(scene: Scene, text: string): Promise<void> {
  const res = await scene.relay(["inbox", "add", "-"], { stdin: text });
  assert.equal(res.code, 0, all(res));
}

async function promote(scene: Scene): Promise<void> {
  const res = await scene.relay(["promote"]);
  assert.equal(res.code, 0, all(res));
}

function sh(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** Installs an executable hook in the bare origin. */
async function hook(scene: Scene, name: string, script: string): Promise<void> {
  const path = join(scene.origin, "hooks", name);
  await Deno.writeTextFile(path, script);
  await Deno.chmod(path, 0o755);
}

/**
 * An `update` hook that, the first time main is updated, moves main to a
 * person's commit on top of it — as a person's push landing between relay's
 * fetch and its push would. receive-pack then answers relay with "[remote
 * rejected] (failed to update ref)" and "cannot lock ref 'refs/heads/main': is
 * at X but expected Y". The marker file gets the person's commit. With
 * `note`, the person's commit adds that line to the brief's goal in NEXT-STEPS.md.
 */
async function personPushesAtOnce(
  scene: Scene,
  marker: string,
  note?: string,
  /** A whole NEXT-STEPS.md the person's commit has instead (a file's path). */
  replace?: string,
): Promise<void> {
  const edit = replace !== undefined
    ? [
      `idx=${sh(`${marker}.index`)}`,
      `GIT_INDEX_FILE="$idx" git read-tree refs/heads/main || exit 1`,
      `blob=$(git hash-object -w ${sh(replace)}) || exit 1`,
      `GIT_INDEX_FILE="$idx" git update-index --add --cacheinfo "100644,$blob,NEXT-STEPS.md" || exit 1`,
      `tree=$(GIT_INDEX_FILE="$idx" git write-tree) || exit 1`,
      `rm -f "$idx"`,
    ].join("\n")
    : note === undefined
    ? ""
    : [
      `idx=${sh(`${marker}.index`)}`,
      `GIT_INDEX_FILE="$idx" git read-tree refs/heads/main || exit 1`,
      // Under the brief's "## Goal": a person's note in a place the brief allows one.
      `blob=$(git show refs/heads/main:NEXT-STEPS.md | awk -v note=${
        sh(note)
      } '{ print } /^## Goal$/ { print note }' | git hash-object -w --stdin) || exit 1`,
      `GIT_INDEX_FILE="$idx" git update-index --add --cacheinfo "100644,$blob,NEXT-STEPS.md" || exit 1`,
      `tree=$(GIT_INDEX_FILE="$idx" git write-tree) || exit 1`,
      `rm -f "$idx"`,
    ].join("\n");
  await hook(
    scene,
    "update",
    `#!/bin/sh
# update <ref> <old> <new>: a person's push to main lands while relay's is landing.
[ "$1" = refs/heads/main ] || exit 0
[ -e ${sh(marker)} ] && exit 0
export GIT_AUTHOR_NAME=Person GIT_AUTHOR_EMAIL=person@test.invalid
export GIT_COMMITTER_NAME=Person GIT_COMMITTER_EMAIL=person@test.invalid
tree=$(git rev-parse 'refs/heads/main^{tree}') || exit 1
${edit}
new=$(git commit-tree "$tree" -p refs/heads/main -m "person: pushed at the same moment") || exit 1
git update-ref refs/heads/main "$new" || exit 1
echo "$new" > ${sh(marker)}
exit 0
`,
  );
}

/** A `pre-receive` hook that refuses any update of main with a message. */
async function protectMain(scene: Scene): Promise<void> {
  await hook(
    scene,
    "pre-receive",
    `#!/bin/sh
while read -r old new ref; do
  if [ "$ref" = refs/heads/main ]; then
    echo "protected branch hook declined: main takes no direct pushes" >&2
    exit 1
  fi
done
exit 0
`,
  );
}

/** Subjects of the origin's main, newest first, read in the bare repository itself. */
async function originLog(scene: Scene, format = "%s"): Promise<string[]> {
  return (await scene.out(["log", `--format=${format}`, "refs/heads/main"], scene.origin))
    .split("\n");
}

async function noHold(scene: Scene): Promise<void> {
  const path = join(stateDir(scene), "hold.json");
  assert.ok(
    !(await exists(path)),
    `unexpected HOLD: ${await Deno.readTextFile(path).catch(() => "")}`,
  );
}

async function readMarker(marker: string): Promise<string> {
  return (await Deno.readTextFile(marker)).trim();
}

Deno.test("a person's push lands between relay's fetch and its push: paperwork and merge land on top, no HOLD", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "Race me" }));
  await promote(scene);

  // The poll's paperwork push loses the race to a person's push.
  const paperwork = join(scene.dir, "person-1");
  await personPushesAtOnce(scene, paperwork);
  const poll = await tick(scene, "poll");
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 1 shipped/);
  assert.equal(poll.stderr, "", all(poll));
  await noHold(scene);
  const person1 = await readMarker(paperwork); // the hook did move main under relay's push
  const afterPoll = await originLog(scene, "%H %P %s");
  assert.match(afterPoll[0]!, new RegExp(`^\\w+ ${person1} Task #1: status — SHIPPED`));
  assert.match(afterPoll[1]!, new RegExp(`^${person1} \\w+ person: pushed at the same moment$`));
  const shipped = (await originRefs(scene))["refs/heads/main"]!;

  // The review's merge push loses the race the same way.
  const merge = join(scene.dir, "person-2");
  await personPushesAtOnce(scene, merge);
  const review = await tick(scene, "review");
  assert.equal(review.code, 0, all(review));
  assert.match(review.stdout, /task 1 merged/);
  await noHold(scene);
  const person2 = await readMarker(merge);
  assert.equal(await scene.out(["rev-parse", `${person2}^`], scene.origin), shipped);
  const branchHead = (await originRefs(scene))["refs/heads/task-1"]!;
  const [top] = await originLog(scene, "%P %s");
  assert.equal(
    top,
    `${person2} ${branchHead} Merge task-1: Race me (task 1, reviewed by relay)`,
  );

  // Merged exactly once, and a later review tick does not merge it again.
  const again = await tick(scene, "review");
  assert.equal(again.code, 0, all(again));
  const merges = (await originMerges(scene)).filter((s) => s.startsWith("Merge task-1"));
  assert.equal(merges.length, 1, merges.join("\n"));
  const pr = JSON.parse(await Deno.readTextFile(join(stateDir(scene), "prs", "task-1.json")));
  assert.equal(pr.state, "merged");
});

Deno.test("a person's edit of NEXT-STEPS.md pushed at the same moment: relay's paperwork and merge land on top, the edit stays in history", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "First" }));
  await queue(scene, brief({ title: "Second" }));
  await promote(scene);
  assert.equal((await tick(scene, "poll")).code, 0);
  const first = await tick(scene, "review");
  assert.equal(first.code, 0, all(first));
  assert.match(first.stdout, /promoted task 2/);

  // Task 2's paperwork push races a person's note on the brief.
  const paperwork = join(scene.dir, "person-1");
  await personPushesAtOnce(scene, paperwork, "A note from a person, pushed during the paperwork.");
  const poll = await tick(scene, "poll");
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 2 shipped/);
  await noHold(scene);
  const person1 = await readMarker(paperwork);
  const afterPoll = await originLog(scene, "%P %s");
  assert.match(afterPoll[0]!, new RegExp(`^${person1} Task #2: status — SHIPPED`));
  // Where both changed the brief, relay's paperwork wins: task 2 is DONE on main.
  const briefOnMain = await scene.out(["show", "refs/heads/main:NEXT-STEPS.md"], scene.origin);
  assert.match(briefOnMain, /^Status: DONE\nTask: 2\n/);
  // Task 1's brief with a note is another task's: none of it is merged into task 2's.
  assert.doesNotMatch(briefOnMain, /A note from a person/);
  assert.match(
    await scene.out(["show", `${person1}:NEXT-STEPS.md`], scene.origin),
    /A note from a person, pushed during the paperwork\./,
  );

  // Task 2's merge push races another note.
  const merge = join(scene.dir, "person-2");
  await personPushesAtOnce(scene, merge, "A note from a person, pushed during the merge.");
  const review = await tick(scene, "review");
  assert.equal(review.code, 0, all(review));
  assert.match(review.stdout, /task 2 merged/);
  await noHold(scene);
  const person2 = await readMarker(merge);
  const [top] = await originLog(scene, "%P %s");
  assert.match(top!, new RegExp(`^${person2} \\w+ Merge task-2: Second`));
  // The person's note is on main, in the merge's first parent.
  assert.match(
    await scene.out(["show", "refs/heads/main:NEXT-STEPS.md"], scene.origin),
    /A note from a person, pushed during the merge\./,
  );
  assert.deepEqual((await originMerges(scene)).map((s) => s.replace(/:.*/, "")), [
    "Merge task-2",
    "Merge task-1",
  ]);
});

Deno.test("a person's open brief for another task pushed at the same moment as relay's paperwork: relay's brief lands whole, the person's is queued and runs next", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "First" }));
  await promote(scene);
  const theirs = join(scene.dir, "brief-9.md");
  await Deno.writeTextFile(
    theirs,
    brief({ task: 9, title: "Hotfix by a person", status: "OPEN" }).replace(
      "Add the feature file.",
      "Fix the outage.",
    ),
  );
  const marker = join(scene.dir, "person-1");
  await personPushesAtOnce(scene, marker, undefined, theirs);
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 1 shipped/);
  assert.match(
    poll.stderr,
    /NEXT-STEPS\.md as relay committed it \(task 1\); the open brief in main's NEXT-STEPS\.md \(task 9\) went to the queue as \.relay\/inbox\/0009-hotfix-by-a-person\.md/,
  );
  await noHold(scene);
  const onMain = await scene.out(["show", "refs/heads/main:NEXT-STEPS.md"], scene.origin);
  assert.match(onMain, /^Status: DONE\nTask: 1\nTitle: First\n/);
  assert.doesNotMatch(onMain, /outage|Hotfix/);
  assert.match(
    await scene.out(["show", `${await readMarker(marker)}:NEXT-STEPS.md`], scene.origin),
    /Fix the outage\./,
  );
  const review = await tick(scene, "review");
  assert.match(review.stdout, /task 1 merged .*promoted task 9/, all(review));
  const next = await tick(scene, "poll");
  assert.match(next.stdout, /task 9 shipped/, all(next));
});

Deno.test("the remote unreachable at push time is retried by the next tick, never a HOLD", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "Away for a minute" }));
  await promote(scene);
  const count = join(scene.dir, "count");
  const env = { FAKE_COUNT_FILE: count };
  const gone = join(scene.dir, "remote-is-away.git");
  const away = () => scene.git(scene.work, ["config", "remote.origin.pushurl", gone]);
  const back = () => scene.git(scene.work, ["config", "--unset", "remote.origin.pushurl"]);
  const before = await originRefs(scene);

  // The executor's branch push: fetching works, pushing does not.
  await away();
  const branch = await tick(scene, "poll", env);
  assert.equal(branch.code, 1, all(branch));
  assert.match(
    branch.stderr,
    /relay: not yet: Cannot push "task-1" to "origin" yet: the remote could not be reached/,
  );
  assert.match(branch.stderr, /the next tick tries again/);
  assert.doesNotMatch(branch.stderr, /HOLD/);
  await noHold(scene);
  assert.deepEqual(await originRefs(scene), before, "nothing was pushed");
  assert.equal(await countLines(count, "run "), 1);

  // Still away the next minute: the same, and the agent is not run again.
  const still = await tick(scene, "poll", env);
  assert.equal(still.code, 1, all(still));
  await noHold(scene);
  assert.equal(await countLines(count, "run "), 1);

  // Back: the next tick pushes the branch and ships, from the same turn.
  await back();
  const shipped = await tick(scene, "poll", env);
  assert.equal(shipped.code, 0, all(shipped));
  assert.match(shipped.stdout, /task 1 shipped/);
  assert.equal(await countLines(count, "run "), 1);
  assert.match((await originLog(scene))[0]!, /^Task #1: status — SHIPPED/);

  // The review's merge push: waiting (exit 0), no HOLD, merged once the remote is back.
  const reviews = join(scene.dir, "reviews");
  const renv = { FAKE_REVIEW_COUNT: reviews };
  await away();
  const waiting = await tick(scene, "review", renv);
  assert.equal(waiting.code, 0, all(waiting));
  assert.match(
    waiting.stdout,
    /waiting: merge of task-1 did not land: the remote could not be reached.*the next tick tries again/,
  );
  await noHold(scene);
  assert.doesNotMatch((await originLog(scene)).join("\n"), /^Merge /m);
  await back();
  const merged = await tick(scene, "review", renv);
  assert.equal(merged.code, 0, all(merged));
  assert.match(merged.stdout, /task 1 merged/);
  assert.match((await originLog(scene))[0]!, /^Merge task-1: Away for a minute/);
  // The verdict stood: one reviewer turn for the whole thing.
  assert.equal(await countLines(reviews, "review "), 1);
});

Deno.test("the remote unreachable for the paperwork push: the commit waits on local main, the next tick pushes it", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "Paperwork later" }));
  await promote(scene);
  const count = join(scene.dir, "count");
  // Killed right after the PR opened (the branch is pushed); the remote is then away.
  const killed = await tick(scene, "poll", {
    FAKE_COUNT_FILE: count,
    RELAY_FAILPOINT: "after-pr-opened",
  });
  assert.notEqual(killed.code, 0, all(killed));
  await scene.git(scene.work, ["config", "remote.origin.pushurl", join(scene.dir, "away.git")]);
  const before = await originRefs(scene);

  const notYet = await tick(scene, "poll", { FAKE_COUNT_FILE: count });
  assert.equal(notYet.code, 1, all(notYet));
  assert.match(
    notYet.stderr,
    /relay: not yet: Cannot push the paperwork commit to "origin\/main" yet: the remote could not be reached: .*; the next tick tries again/,
  );
  await noHold(scene);
  assert.deepEqual(await originRefs(scene), before, "nothing was pushed");
  assert.match(await scene.out(["log", "-1", "--format=%s", "main"]), /^Task #1: status — SHIPPED/);

  await scene.git(scene.work, ["config", "--unset", "remote.origin.pushurl"]);
  const shipped = await tick(scene, "poll", { FAKE_COUNT_FILE: count });
  assert.equal(shipped.code, 0, all(shipped));
  assert.match(shipped.stdout, /task 1 shipped/);
  assert.equal(await countLines(count, "run "), 1);
  assert.equal(
    (await originRefs(scene))["refs/heads/main"],
    await scene.out(["rev-parse", "main"]),
  );
});

Deno.test("a refusal by the remote's hook is still a HOLD, recorded for both ticks", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "Protected" }));
  await promote(scene);
  await protectMain(scene);

  const held = await tick(scene, "poll");
  assert.equal(held.code, 3, all(held));
  assert.match(
    held.stderr,
    /relay: HOLD: Cannot push the paperwork commit to "origin\/main": the remote refused it/,
  );
  assert.match(held.stderr, /protected branch hook declined/);
  const hold = JSON.parse(await Deno.readTextFile(join(stateDir(scene), "hold.json")));
  assert.equal(hold.task, 1);
  assert.match(hold.reason, /protected branch hook declined/);
  assert.doesNotMatch((await originLog(scene)).join("\n"), /^Task #1/m);
  // Both ticks stop at it, and cron.log already has it.
  for (const command of ["review", "poll"] as const) {
    const again = await tick(scene, command);
    assert.equal(again.code, 3, all(again));
    assert.equal(again.stdout + again.stderr, "", all(again));
  }
});

Deno.test("a push refused for want of access is a HOLD quoting git, not a blip", async () => {
  await using scene = await makeScene();
  await queue(scene, brief({ title: "No key" }));
  await promote(scene);
  // The remote answers, and turns the key down: ssh's own words, through a stand-in ssh.
  const ssh = join(scene.dir, "fake-ssh");
  await Deno.writeTextFile(
    ssh,
    "#!/bin/sh\necho 'git@relay.invalid: Permission denied (publickey).' >&2\nexit 255\n",
  );
  await Deno.chmod(ssh, 0o755);
  await scene.git(scene.work, ["config", "core.sshCommand", ssh]);
  await scene.git(scene.work, [
    "config",
    "remote.origin.pushurl",
    "ssh://git@relay.invalid/app.git",
  ]);

  const held = await tick(scene, "poll");
  assert.equal(held.code, 3, all(held));
  assert.match(
    held.stderr,
    /relay: HOLD: Cannot push "task-1" to "origin": git push failed: ".*Permission denied \(publickey\)/,
  );
  assert.match(
    held.stderr,
    /Check that "origin" is reachable and that this clone's credentials may push/,
  );
  const hold = JSON.parse(await Deno.readTextFile(join(stateDir(scene), "hold.json")));
  assert.match(hold.reason, /Permission denied \(publickey\)/);
  assert.match(hold.next, /relay resume/);
});
