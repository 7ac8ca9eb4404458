/**
 * `relay guard`: the pre-receive hook on a bare repository in a temp folder,
 * judged by real pushes from a clone over file:// (the hook runs under
 * /bin/sh, dash here): what lands on main, what is refused and with which
 * words, who counts as a person, and that install never replaces a hook
 * relay did not write.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, makeScene, type RelayResult, type Scene } from "./helpers/scene.ts";
import { GUARD_MARKER, guardHook } from "../lib/cli/guard.ts";
import { PAPERWORK_PATHS } from "../lib/state/paths.ts";

/** git in a folder with the scene's pinned environment plus `env` (REMOTE_USER, GL_USER). */
async function gitEnv(
  scene: Scene,
  cwd: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<RelayResult> {
  const out = await new Deno.Command("git", {
    args,
    cwd,
    env: { ...scene.env, ...env },
    clearEnv: true,
    stdin: "null",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

async function push(
  scene: Scene,
  refspec: string,
  opts: { env?: Record<string, string>; force?: boolean } = {},
): Promise<RelayResult> {
  return await gitEnv(
    scene,
    scene.work,
    ["push", ...(opts.force ? ["--force"] : []), "origin", refspec],
    opts.env ?? {},
  );
}

async function originMain(scene: Scene, branch = "main"): Promise<string> {
  return await scene.out(["rev-parse", `refs/heads/${branch}`], scene.origin);
}

/** Commits the given files (path → text) in the primary clone on whatever is checked out. */
async function commit(scene: Scene, files: Record<string, string>, message: string) {
  for (const [path, text] of Object.entries(files)) await scene.write(path, text);
  await scene.git(scene.work, ["add", "--all"]);
  await scene.git(scene.work, ["commit", "--quiet", "-m", message]);
  return await scene.out(["rev-parse", "HEAD"]);
}

/** A scene whose origin carries the guard; `persons` go to --person. */
async function guarded(persons: string[] = []): Promise<Scene> {
  const scene = await makeScene();
  const res = await scene.relay([
    "guard",
    "install",
    "--bare",
    scene.origin,
    ...persons.flatMap((p) => ["--person", p]),
  ]);
  assert.equal(res.code, 0, all(res));
  return scene;
}

/**
 * Pushes task-<n> with one product commit, then builds and pushes the merge the
 * way lib/forge/plain_planner.ts does: merge-tree + commit-tree onto origin's
 * main, with relay's subject. Returns the push of the merge and its sha.
 */
async function relayMerge(
  scene: Scene,
  task: number,
  files: Record<string, string>,
  subject = `Merge task-${task}: Add a feature (task ${task}, reviewed by relay)`,
): Promise<{ res: RelayResult; sha: string; head: string }> {
  const branch = `task-${task}`;
  await scene.git(scene.work, ["fetch", "--quiet", "origin"]);
  await scene.git(scene.work, ["switch", "--quiet", "-c", branch, "origin/main"]);
  const head = await commit(scene, files, `task ${task}: work`);
  const pushed = await push(scene, `${branch}:refs/heads/${branch}`);
  assert.equal(pushed.code, 0, all(pushed));
  await scene.git(scene.work, ["switch", "--quiet", "main"]);
  const base = await scene.out(["rev-parse", "origin/main"]);
  const tree = (await scene.out(["merge-tree", "--write-tree", "--no-messages", base, head]))
    .split("\n")[0]!;
  const sha = (await gitEnv(scene, scene.work, [
    "commit-tree",
    tree,
    "-p",
    base,
    "-p",
    head,
    "-m",
    subject,
  ])).stdout.trim();
  return { res: await push(scene, `${sha}:refs/heads/main`), sha, head };
}

const REFUSED = /pre-receive hook declined/;

Deno.test("a paperwork-only fast-forward lands, also with paths that hold spaces", async () => {
  await using scene = await guarded();
  const sha = await commit(scene, {
    "NEXT-STEPS.md": "Status: OPEN\n",
    "COWORK-STATUS.md": "report\n",
    ".relay/inbox/0002 a brief.md": "queued\n",
  }, "relay: paperwork");
  const res = await push(scene, "HEAD:main");
  assert.equal(res.code, 0, all(res));
  assert.equal(await originMain(scene), sha);
});

Deno.test("relay's merge of a task branch lands; other merges and branches that touch paperwork do not", async () => {
  await using scene = await guarded();
  const merged = await relayMerge(scene, 1, { "src/feature-1.txt": "one\n" });
  assert.equal(merged.res.code, 0, all(merged.res));
  assert.equal(await originMain(scene), merged.sha);

  // A merge git writes by itself ("Merge branch 'task-2'") is not relay's.
  await scene.git(scene.work, ["fetch", "--quiet", "origin"]);
  await scene.git(scene.work, ["reset", "--quiet", "--keep", "origin/main"]);
  await scene.git(scene.work, ["switch", "--quiet", "-c", "task-2"]);
  await commit(scene, { "src/feature-2.txt": "two\n" }, "task 2: work");
  assert.equal((await push(scene, "task-2:refs/heads/task-2")).code, 0);
  await scene.git(scene.work, ["switch", "--quiet", "main"]);
  await scene.git(scene.work, ["merge", "--quiet", "--no-ff", "--no-edit", "task-2"]);
  const plain = await push(scene, "HEAD:main");
  assert.equal(plain.code, 1, all(plain));
  assert.match(plain.stderr, REFUSED);
  assert.match(
    plain.stderr,
    /commit [0-9a-f]{12} "Merge branch 'task-2'" is a merge, but not relay's merge of a task branch/,
  );
  assert.equal(await originMain(scene), merged.sha);
  await scene.git(scene.work, ["reset", "--quiet", "--keep", "origin/main"]);

  // A task branch that changed NEXT-STEPS.md: refused even with relay's subject.
  const sneaky = await relayMerge(scene, 3, { "src/f3.txt": "3\n", "NEXT-STEPS.md": "mine\n" });
  assert.equal(sneaky.res.code, 1, all(sneaky.res));
  assert.match(sneaky.res.stderr, /merges task-3, which changes paperwork/);

  // relay's subject, but the second parent is not where task-4 is on the server.
  const stale = await relayMerge(
    scene,
    4,
    { "src/f4.txt": "4\n" },
    "Merge task-5: Elsewhere (task 5, reviewed by relay)",
  );
  assert.equal(stale.res.code, 1, all(stale.res));
  assert.match(stale.res.stderr, /merges [0-9a-f]{12}, but task-5 here is at nothing/);
  assert.equal(await originMain(scene), merged.sha);
});

Deno.test("a direct product commit is refused, naming the commit and the way through", async () => {
  await using scene = await guarded();
  const before = await originMain(scene);
  const sha = await commit(scene, { "src/app.txt": "app v2\n" }, "Fix the app");
  const res = await push(scene, "HEAD:main");
  assert.equal(res.code, 1, all(res));
  assert.match(res.stderr, REFUSED);
  assert.ok(
    res.stderr.includes(
      `refusing refs/heads/main: commit ${
        sha.slice(0, 12)
      } "Fix the app" changes files that are not paperwork (src/app.txt) and is not a merge of a task branch.`,
    ),
    res.stderr,
  );
  assert.match(res.stderr, /send it through relay/);
  assert.match(res.stderr, /relay\.person/);
  assert.equal(await originMain(scene), before);
});

Deno.test("a paperwork commit that also touches src/ is refused; so is one riding behind paperwork", async () => {
  await using scene = await guarded();
  const before = await originMain(scene);
  await commit(scene, { "NEXT-STEPS.md": "x\n", "src/app.txt": "changed\n" }, "relay: paperwork");
  const mixed = await push(scene, "HEAD:main");
  assert.equal(mixed.code, 1, all(mixed));
  assert.match(
    mixed.stderr,
    /"relay: paperwork" changes files that are not paperwork \(src\/app\.txt\)/,
  );

  // A clean paperwork commit on top does not carry the mixed one through.
  await commit(scene, { "COWORK-STATUS.md": "y\n" }, "relay: more paperwork");
  const both = await push(scene, "HEAD:main");
  assert.equal(both.code, 1, all(both));
  assert.equal(await originMain(scene), before);
});

Deno.test("a non-fast-forward is refused, even forced; deleting main is refused even for a person", async () => {
  const me = (await new Deno.Command("id", { args: ["-un"], stdout: "piped" }).output()).stdout;
  const user = new TextDecoder().decode(me).trim();
  await using scene = await guarded(["alice"]);
  const before = await originMain(scene);
  await scene.git(scene.work, ["commit", "--quiet", "--amend", "-m", "rewritten"]);
  const forced = await push(scene, "HEAD:main", { force: true });
  assert.equal(forced.code, 1, all(forced));
  assert.match(forced.stderr, /is not a fast-forward of [0-9a-f]{12}; main is never/);
  assert.equal(await originMain(scene), before);

  const deleted = await push(scene, ":refs/heads/main", { env: { REMOTE_USER: "alice" } });
  assert.equal(deleted.code, 1, all(deleted));
  assert.match(deleted.stderr, /refusing to delete refs\/heads\/main/);
  assert.equal(await originMain(scene), before);
  assert.notEqual(user, "alice", "the test needs a pusher that is not listed");
});

Deno.test("a listed person pushes anything: by REMOTE_USER, by GL_USER first, by the account", async () => {
  const me = (await new Deno.Command("id", { args: ["-un"], stdout: "piped" }).output()).stdout;
  const user = new TextDecoder().decode(me).trim();
  await using scene = await guarded(["alice"]);
  await commit(scene, { "src/app.txt": "by alice\n" }, "Alice's fix");
  // GL_USER wins over REMOTE_USER: bob through gitolite is not alice.
  const bob = await push(scene, "HEAD:main", { env: { GL_USER: "bob", REMOTE_USER: "alice" } });
  assert.equal(bob.code, 1, all(bob));
  assert.match(bob.stderr, /this push came from "bob"/);

  const alice = await push(scene, "HEAD:main", { env: { REMOTE_USER: "alice" } });
  assert.equal(alice.code, 0, all(alice));
  assert.match(
    alice.stderr,
    /alice is listed as a person \(relay\.person\): refs\/heads\/main goes to/,
  );
  assert.equal(await originMain(scene), await scene.out(["rev-parse", "HEAD"]));
  // A person may also rewrite main.
  await scene.git(scene.work, ["commit", "--quiet", "--amend", "-m", "Alice's fix, reworded"]);
  const forced = await push(scene, "HEAD:main", { env: { REMOTE_USER: "alice" }, force: true });
  assert.equal(forced.code, 0, all(forced));

  // Reinstalling with the ssh account as the person replaces the list.
  const re = await scene.relay(["guard", "install", "--bare", scene.origin, "--person", user]);
  assert.equal(re.code, 0, all(re));
  assert.match(re.stdout, /^replaced relay's pre-receive hook/);
  assert.match(re.stdout, new RegExp(`relay\\.person\\): ${user}\\n`));
  await commit(scene, { "src/app.txt": "by the account\n" }, "Account fix");
  assert.equal((await push(scene, "HEAD:main", { env: { REMOTE_USER: "alice" } })).code, 1);
  const account = await push(scene, "HEAD:main");
  assert.equal(account.code, 0, all(account));
  assert.match(account.stderr, new RegExp(`${user} is listed as a person`));
});

Deno.test("other branches pass untouched; --main moves the guard to another branch", async () => {
  await using scene = await guarded();
  await commit(scene, { "src/app.txt": "feature\n" }, "Feature work");
  assert.equal((await push(scene, "HEAD:refs/heads/feature")).code, 0);
  await scene.git(scene.work, ["commit", "--quiet", "--amend", "-m", "Feature work, amended"]);
  const forced = await push(scene, "HEAD:refs/heads/feature", { force: true });
  assert.equal(forced.code, 0, all(forced));
  assert.doesNotMatch(forced.stderr, /relay guard/);

  const re = await scene.relay(["guard", "install", "--bare", scene.origin, "--main", "trunk"]);
  assert.equal(re.code, 0, all(re));
  assert.equal(await scene.out(["config", "relay.main"], scene.origin), "trunk");
  assert.equal((await push(scene, "HEAD:main")).code, 0, "main is not guarded any more");
  const trunk = await push(scene, "HEAD:refs/heads/trunk");
  assert.equal(trunk.code, 1, all(trunk));
  assert.match(trunk.stderr, /refusing to create refs\/heads\/trunk/);
});

Deno.test("creating main: allowed as the first push of an empty repository, else only for a person", async () => {
  await using scene = await makeScene();
  const empty = join(scene.dir, "empty.git");
  await scene.git(scene.dir, ["init", "--quiet", "--bare", empty]);
  assert.equal((await scene.relay(["guard", "install", "--bare", empty])).code, 0);
  const first = await gitEnv(scene, scene.work, ["push", empty, "HEAD:refs/heads/other"]);
  assert.equal(first.code, 0, all(first));
  const main = await gitEnv(scene, scene.work, ["push", empty, "HEAD:refs/heads/main"]);
  assert.equal(main.code, 1, all(main));
  assert.match(main.stderr, /only a listed person creates it/);

  const fresh = join(scene.dir, "fresh.git");
  await scene.git(scene.dir, ["init", "--quiet", "--bare", fresh]);
  assert.equal((await scene.relay(["guard", "install", "--bare", fresh])).code, 0);
  const created = await gitEnv(scene, scene.work, ["push", fresh, "HEAD:refs/heads/main"]);
  assert.equal(created.code, 0, all(created));
  assert.match(created.stderr, /creating refs\/heads\/main in a repository with no branch yet/);
});

Deno.test("install refuses a foreign hook and a non-bare path; uninstall removes only relay's", async () => {
  await using scene = await makeScene();
  const hook = join(scene.origin, "hooks", "pre-receive");
  const foreign = "#!/bin/sh\necho mine\n";
  await Deno.writeTextFile(hook, foreign, { mode: 0o755 });
  const refused = await scene.relay(["guard", "install", "--bare", scene.origin, "--person", "a"]);
  assert.equal(refused.code, 2, all(refused));
  assert.match(
    refused.stderr,
    /pre-receive: a pre-receive hook is already there and was not written by relay/,
  );
  assert.match(refused.stderr, /relay guard print/);
  assert.equal(await Deno.readTextFile(hook), foreign);
  const config = await scene.git(scene.origin, ["config", "--get-all", "relay.person"], true);
  assert.equal(config.code, 1, "nothing was written to the config either");
  const kept = await scene.relay(["guard", "uninstall", "--bare", scene.origin]);
  assert.equal(kept.code, 2, all(kept));
  assert.equal(await Deno.readTextFile(hook), foreign);
  await Deno.remove(hook);

  const notBare = await scene.relay(["guard", "install", "--bare", scene.work]);
  assert.equal(notBare.code, 2, all(notBare));
  assert.match(notBare.stderr, /is not a bare git repository \(it has a working tree\)/);
  const inside = await scene.relay(["guard", "install", "--bare", join(scene.origin, "hooks")]);
  assert.equal(inside.code, 2, all(inside));
  assert.match(inside.stderr, /is inside the bare repository/);
  const missing = await scene.relay(["guard", "install", "--bare", join(scene.dir, "nope")]);
  assert.equal(missing.code, 2, all(missing));
  const noBare = await scene.relay(["guard", "install"]);
  assert.equal(noBare.code, 2, all(noBare));
  const badFlag = await scene.relay(["guard", "print", "--bare", scene.origin]);
  assert.equal(badFlag.code, 2, all(badFlag));

  const installed = await scene.relay(["guard", "install", "--bare", scene.origin]);
  assert.equal(installed.code, 0, all(installed));
  assert.match(installed.stdout, /^installed relay's pre-receive hook/);
  assert.match(installed.stdout, /no person is listed/);
  assert.equal((await Deno.stat(hook)).mode! & 0o777, 0o755);
  assert.equal(await Deno.readTextFile(hook), await guardHook());
  const removed = await scene.relay(["guard", "uninstall", "--bare", scene.origin]);
  assert.equal(removed.code, 0, all(removed));
  assert.match(removed.stdout, /removed relay's pre-receive hook/);
  assert.equal(await Deno.stat(hook).then(() => true, () => false), false);
  const again = await scene.relay(["guard", "uninstall", "--bare", scene.origin]);
  assert.equal(again.code, 0, all(again));
  assert.match(again.stdout, /nothing to remove/);
});

Deno.test("relay guard print is the hook: POSIX sh, marked, with relay's paperwork paths", async () => {
  await using scene = await makeScene();
  const printed = await scene.relay(["guard", "print"]);
  assert.equal(printed.code, 0, all(printed));
  assert.equal(printed.stdout, await guardHook());
  assert.match(printed.stdout, /^#!\/bin\/sh\n/);
  assert.ok(printed.stdout.split("\n").slice(0, 5).includes(GUARD_MARKER));
  assert.doesNotMatch(printed.stdout, /@[A-Z_]+@/, "every placeholder is filled");
  for (const path of PAPERWORK_PATHS) {
    assert.ok(printed.stdout.includes(`':(top,literal,exclude)${path}'`), path);
  }
  // dash parses it (sh -n); bash-only syntax would not get this far on every server.
  const file = join(scene.dir, "hook.sh");
  await Deno.writeTextFile(file, printed.stdout);
  const parsed = await new Deno.Command("sh", { args: ["-n", file], stderr: "piped" }).output();
  assert.equal(parsed.code, 0, new TextDecoder().decode(parsed.stderr));
});
