/**
 * `relay gate` and `relay merge` in the ordinary states where there is no PR to
 * judge — nothing in flight, the PR already merged, the task BLOCKED: one clear
 * line, a documented exit code (gate 13, merge 0), and `--json` always an object
 * with a `decision`. Real CLI, real git, a file:// origin.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, brief, makeScene, type RelayResult, type Scene } from "./helpers/scene.ts";

async function openTask(scene: Scene, title: string): Promise<void> {
  const queued = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title }) });
  assert.equal(queued.code, 0, all(queued));
  assert.equal((await scene.relay(["promote"])).code, 0);
}

/** The text form: one line naming the state, the decision NONE, exit 13, nothing on stderr. */
async function gateSaysNone(scene: Scene, why: RegExp): Promise<void> {
  const text = await scene.relay(["gate"]);
  assert.equal(text.code, 13, all(text));
  assert.equal(text.stderr, "", all(text));
  assert.match(text.stdout, new RegExp(`^gate: nothing to gate: .*${why.source}`, "m"));
  assert.match(text.stdout, /^decision: NONE$/m);
  const json = await scene.relay(["gate", "--json"]);
  assert.equal(json.code, 13, all(json));
  const data = JSON.parse(json.stdout);
  assert.equal(data.decision, "NONE");
  assert.match(data.reason, why);
  assert.deepEqual(data.checks, []);
}

async function mergeSaysNone(scene: Scene, why: RegExp): Promise<RelayResult> {
  const json = await scene.relay(["merge", "--json"]);
  assert.equal(json.code, 0, all(json));
  const data = JSON.parse(json.stdout);
  assert.equal(data.decision, "NONE");
  assert.equal(data.result, "idle");
  assert.match(data.reason, why);
  const text = await scene.relay(["merge"]);
  assert.equal(text.code, 0, all(text));
  assert.match(text.stdout, new RegExp(`^nothing to merge: .*${why.source}`, "m"));
  return text;
}

Deno.test("with nothing in flight, relay gate says so (NONE, exit 13) and relay merge exits 0; --json has a decision", async () => {
  await using scene = await makeScene();
  await gateSaysNone(scene, /no COWORK-STATUS\.md on origin\/main/);
  await mergeSaysNone(scene, /no report on origin\/main/);
  // Asked about a task that is not the one on main: the same ordinary state.
  await openTask(scene, "Shipped");
  assert.equal((await scene.relay(["poll"])).code, 0);
  const other = await scene.relay(["gate", "7", "--json"]);
  assert.equal(other.code, 13, all(other));
  assert.deepEqual(
    [JSON.parse(other.stdout).decision, JSON.parse(other.stdout).task],
    ["NONE", 1],
  );
  const merge = await scene.relay(["merge", "7", "--json"]);
  assert.equal(merge.code, 0, all(merge));
  assert.equal(JSON.parse(merge.stdout).decision, "NONE");
  // The gate still judges the PR that is in flight: WAIT until it has a verdict.
  const gate = await scene.relay(["gate", "--json"]);
  assert.equal(gate.code, 12, all(gate));
  assert.equal(JSON.parse(gate.stdout).decision, "WAIT");
});

Deno.test("on a merged PR relay gate says NONE with the PR named, and relay merge has nothing to merge", async () => {
  await using scene = await makeScene();
  await openTask(scene, "Merged soon");
  assert.equal((await scene.relay(["poll"])).code, 0);
  const review = await scene.relay(["review"]);
  assert.equal(review.code, 0, all(review));
  assert.match(review.stdout, /task 1 merged/);
  await gateSaysNone(scene, /task-1 is merged/);
  const json = JSON.parse((await scene.relay(["gate", "--json"])).stdout);
  assert.deepEqual([json.task, json.pr], [1, "task-1"]);
  await mergeSaysNone(scene, /task-1 is merged/);
});

Deno.test("on a BLOCKED task relay gate says NONE and points at relay status, and relay merge merges nothing", async () => {
  await using scene = await makeScene({ agent: "exit1.sh", config: "attempts: 1\n" });
  await openTask(scene, "Cannot be done");
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 1, all(poll));
  assert.match(poll.stdout, /task 1 BLOCKED/);
  await gateSaysNone(scene, /task 1 is BLOCKED.*relay status/);
  await mergeSaysNone(scene, /task 1 is BLOCKED/);
});

Deno.test("relay gate survives a failed guess read when the fetch moved main", async () => {
  await using scene = await makeScene();
  const queued = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title: "One" }) });
  assert.equal(queued.code, 0, all(queued));
  assert.equal((await scene.relay(["promote"])).code, 0);
  const poll = await scene.relay(["poll"]);
  assert.equal(poll.code, 0, all(poll));
  const baseline = await scene.relay(["gate", "--json"]);
  assert.equal(baseline.code, 12, all(baseline)); // WAIT: no verdict yet

  // The main the guess reads: this clone's, before the fetch.
  const before = await scene.out(["rev-parse", "refs/remotes/origin/main"]);

  // Someone moves the remote's main (a product commit from another clone).
  const other = join(scene.dir, "other");
  await scene.git(scene.dir, ["clone", "--quiet", `file://${scene.origin}`, other]);
  await Deno.writeTextFile(join(other, "src", "other.txt"), "other\n");
  await scene.git(other, ["add", "--all"]);
  await scene.git(other, ["commit", "--quiet", "-m", "other work"]);
  await scene.git(other, ["push", "--quiet", "origin", "HEAD:main"]);

  // A git whose `cat-file --batch` fails when it is asked for the main of before the fetch:
  // the guess's read, and only it (the gate's own read names main by its ref). Told apart by
  // what is asked, not by which starts first: under load two reads may start together. Its
  // fetch waits 3 s first, so the guess, made from the ref files while the fetch runs, reads
  // them before the fetch moves main, however slowly the gate's modules load.
  const bin = join(scene.dir, "bin");
  await Deno.mkdir(bin);
  const realGit = new TextDecoder().decode(
    (await new Deno.Command("bash", { args: ["-c", "command -v git"] }).output()).stdout,
  ).trim();
  const injected = join(scene.dir, "injected");
  await Deno.writeTextFile(
    join(bin, "git"),
    `#!/bin/bash
for a in "$@"; do
  if [ "$a" = "fetch" ]; then sleep 3; break; fi
  if [ "$a" = "--batch" ]; then
    asked=$(mktemp -p ${scene.dir})
    cat > "$asked"
    if grep -q "^${before}" "$asked"; then
      rm -f "$asked"; touch ${injected}; echo "fatal: injected" >&2; exit 128
    fi
    exec ${realGit} "$@" < "$asked"
  fi
done
exec ${realGit} "$@"
`,
  );
  await Deno.chmod(join(bin, "git"), 0o755);

  const gate = await scene.relay(["gate", "--json"], {
    env: { PATH: `${bin}:${scene.env.PATH}` },
  });
  assert.equal(await Deno.stat(injected).then(() => true, () => false), true, "no guess read ran");
  assert.doesNotMatch(gate.stderr, /Uncaught/, all(gate));
  assert.equal(gate.code, 12, all(gate)); // WAIT, judged on the new main
});

Deno.test("a person's relay gate or relay merge with the remote out of reach says to run it again, not that a tick will (exit 1); a tick's says the next tick tries again", async () => {
  await using scene = await makeScene();
  const away = `${scene.origin}.away`;
  await Deno.rename(scene.origin, away);
  try {
    for (const command of ["gate", "merge"]) {
      const res = await scene.relay([command]);
      assert.equal(res.code, 1, all(res));
      assert.match(
        res.stderr,
        /relay: not yet: Cannot fetch from "origin" yet: the remote could not be reached: .*; nothing needs undoing: run the command again later$/m,
        all(res),
      );
      assert.doesNotMatch(res.stderr, /next tick/, all(res));
    }
    await openTask(scene, "Unreachable");
    const tick = await scene.relay(["poll"]);
    assert.equal(tick.code, 1, all(tick));
    assert.match(tick.stderr, /relay: not yet: .*; the next tick tries again$/m, all(tick));
  } finally {
    await Deno.rename(away, scene.origin);
  }
});
