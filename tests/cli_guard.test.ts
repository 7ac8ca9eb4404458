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
import { PAPERWORK_PATHS, RELAY_PAPERWORK_PATHS } from "../lib/state/paths.ts";

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
  assert.doesNotMatch(res.stderr, /warning/, "the persons here are not the account");
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
  // Nor does an environment that tells git to read the hook's pathspecs as file names (a
  // file:// push hands the pusher's environment to the hook).
  for (const name of ["GIT_LITERAL_PATHSPECS", "GIT_ICASE_PATHSPECS"]) {
    const literal = await push(scene, "HEAD:main", { env: { [name]: "1" } });
    assert.equal(literal.code, 1, `${name}: ${all(literal)}`);
  }
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
  assert.ok(
    re.stderr.includes(
      `warning: relay.person lists "${user}", the account this runs as. Every push made as ${user}`,
    ),
    all(re),
  );
  assert.match(re.stderr, /relay's loop and its agents included/);
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
  // Commits on main may touch only what relay commits; task branches none of the paperwork.
  for (const path of RELAY_PAPERWORK_PATHS) {
    assert.ok(printed.stdout.includes(`':(top,literal,exclude)${path}'`), path);
  }
  for (const path of PAPERWORK_PATHS) {
    assert.ok(printed.stdout.includes(`':(top,literal)${path}'`), path);
  }
  assert.doesNotMatch(
    printed.stdout,
    /':\(top,literal,exclude\)\.relay' ':\(top,literal,exclude\)/,
  );
  // dash parses it (sh -n); bash-only syntax would not get this far on every server.
  const file = join(scene.dir, "hook.sh");
  await Deno.writeTextFile(file, printed.stdout);
  const parsed = await new Deno.Command("sh", { args: ["-n", file], stderr: "piped" }).output();
  assert.equal(parsed.code, 0, new TextDecoder().decode(parsed.stderr));
});

Deno.test("relay's settings under .relay/ are not paperwork: only a person pushes them", async () => {
  await using scene = await guarded(["alice"]);
  // relay's own paperwork: the brief, the report and the inbox.
  const inbox = await commit(scene, {
    "NEXT-STEPS.md": "Status: OPEN\n",
    ".relay/inbox/0003-next.md": "queued\n",
  }, "relay: paperwork");
  assert.equal((await push(scene, "HEAD:main")).code, 0);
  assert.equal(await originMain(scene), inbox);

  // A sibling of the inbox (.relay/inbox-notes.md) is not in it.
  for (const path of [".relay/config.yaml", ".relay/review.md", ".relay/inbox-notes.md"]) {
    await scene.git(scene.work, ["reset", "--quiet", "--keep", "origin/main"]);
    const sha = await commit(scene, { [path]: "weaker: true\n" }, "relay: paperwork");
    const res = await push(scene, "HEAD:main");
    assert.equal(res.code, 1, all(res));
    assert.match(res.stderr, REFUSED);
    assert.ok(
      res.stderr.includes(
        `commit ${
          sha.slice(0, 12)
        } "relay: paperwork" changes relay's settings (${path}), which only a listed person changes`,
      ),
      all(res),
    );
    assert.equal(await originMain(scene), inbox);
  }

  // Beside the brief, the settings still refuse the push; product files are named first.
  await scene.git(scene.work, ["reset", "--quiet", "--keep", "origin/main"]);
  await commit(scene, {
    "COWORK-STATUS.md": "report\n",
    ".relay/config.yaml": "version: 1\nmerge: auto\n",
  }, "relay: paperwork");
  const mixed = await push(scene, "HEAD:main");
  assert.equal(mixed.code, 1, all(mixed));
  assert.match(mixed.stderr, /changes relay's settings \(\.relay\/config\.yaml\)/);
  await scene.git(scene.work, ["reset", "--quiet", "--keep", "origin/main"]);
  await commit(scene, { "src/app.txt": "v3\n", ".relay/plan.md": "x\n" }, "Both");
  const both = await push(scene, "HEAD:main");
  assert.equal(both.code, 1, all(both));
  assert.match(both.stderr, /"Both" changes files that are not paperwork \(src\/app\.txt\)/);
  assert.equal(await originMain(scene), inbox);

  // A listed person pushes the settings.
  await scene.git(scene.work, ["reset", "--quiet", "--keep", "origin/main"]);
  const settings = await commit(
    scene,
    { ".relay/config.yaml": "version: 1\nmerge: auto\n" },
    "Merge policy",
  );
  const person = await push(scene, "HEAD:main", { env: { REMOTE_USER: "alice" } });
  assert.equal(person.code, 0, all(person));
  assert.equal(await originMain(scene), settings);
});

Deno.test("refs/notes/relay: relay's pushes and merged notes pass; a rewrite or a deletion needs a person", async () => {
  await using scene = await guarded(["alice"]);
  const notes = (cwd: string, args: string[]) => scene.git(cwd, ["notes", "--ref=relay", ...args]);
  const originNotes = () => scene.out(["rev-parse", "refs/notes/relay"], scene.origin);
  const pushNotes = (cwd: string, opts: { env?: Record<string, string>; force?: boolean } = {}) =>
    gitEnv(
      scene,
      cwd,
      ["push", ...(opts.force ? ["--force"] : []), "origin", "refs/notes/relay:refs/notes/relay"],
      opts.env ?? {},
    );
  const head = await scene.out(["rev-parse", "HEAD"]);
  const line = (kind: string) =>
    JSON.stringify({ kind, task: 1, head, at: "2025-01-01T00:00:00.000Z" });

  // Creation, then a fast-forward: what relay's reviewer pushes (lib/git/notes.ts pushNotes).
  await notes(scene.work, ["append", "-m", line("verdict"), head]);
  const created = await pushNotes(scene.work);
  assert.equal(created.code, 0, all(created));
  await notes(scene.work, ["append", "-m", line("gate"), head]);
  const forward = await pushNotes(scene.work);
  assert.equal(forward.code, 0, all(forward));
  assert.doesNotMatch(forward.stderr, /relay guard/);

  // A second clone wrote notes too: the plain push is rejected, the cat_sort_uniq merge passes.
  const other = join(scene.dir, "other");
  await scene.git(scene.dir, ["clone", "--quiet", `file://${scene.origin}`, other]);
  await scene.git(other, ["fetch", "--quiet", "origin", "refs/notes/relay:refs/notes/relay"]);
  await notes(other, ["append", "-m", line("merge"), head]);
  assert.equal((await pushNotes(other)).code, 0);
  await notes(scene.work, ["append", "-m", line("accept"), head]);
  assert.equal((await pushNotes(scene.work)).code, 1, "git itself refuses a non-fast-forward");
  await scene.git(scene.work, [
    "fetch",
    "--quiet",
    "origin",
    "+refs/notes/relay:refs/notes/relay-remote",
  ]);
  await notes(scene.work, ["merge", "--quiet", "-s", "cat_sort_uniq", "refs/notes/relay-remote"]);
  const merged = await pushNotes(scene.work);
  assert.equal(merged.code, 0, all(merged));
  const kept = await originNotes();
  const text = await scene.out(["notes", "--ref=relay", "show", head], scene.origin);
  for (const kind of ["verdict", "gate", "merge", "accept"]) assert.match(text, new RegExp(kind));

  // A forced rewrite by somebody who is not a person: refused, the record stays.
  await scene.git(scene.work, ["update-ref", "refs/notes/relay", "refs/notes/relay^"]);
  await notes(scene.work, ["add", "--force", "-m", "nothing happened here", head]);
  const rewrite = await pushNotes(scene.work, { force: true });
  assert.equal(rewrite.code, 1, all(rewrite));
  assert.match(rewrite.stderr, REFUSED);
  assert.match(
    rewrite.stderr,
    /refusing refs\/notes\/relay: [0-9a-f]{12} is not a fast-forward of [0-9a-f]{12}; relay's record/,
  );
  assert.match(rewrite.stderr, /this push came from "/);
  assert.equal(await originNotes(), kept);

  // A deletion, even under gitolite's name for somebody else: refused.
  const deleted = await gitEnv(scene, scene.work, ["push", "origin", ":refs/notes/relay"], {
    GL_USER: "mallory",
  });
  assert.equal(deleted.code, 1, all(deleted));
  assert.match(
    deleted.stderr,
    /refusing to delete refs\/notes\/relay: it is relay's record of its verdicts and gate decisions/,
  );
  assert.equal(await originNotes(), kept);

  // A person may rewrite and delete it.
  const personRewrite = await pushNotes(scene.work, { force: true, env: { REMOTE_USER: "alice" } });
  assert.equal(personRewrite.code, 0, all(personRewrite));
  assert.match(
    personRewrite.stderr,
    /alice is listed as a person \(relay\.person\): refs\/notes\/relay/,
  );
  assert.notEqual(await originNotes(), kept);
  const personDelete = await gitEnv(scene, scene.work, ["push", "origin", ":refs/notes/relay"], {
    REMOTE_USER: "alice",
  });
  assert.equal(personDelete.code, 0, all(personDelete));
  const gone = await scene.git(scene.origin, ["rev-parse", "--verify", "refs/notes/relay"], true);
  assert.notEqual(gone.code, 0, "the person deleted the notes");
});

Deno.test("install outside a relay repository needs --main, and writes nothing without it", async () => {
  await using scene = await makeScene();
  const hook = join(scene.origin, "hooks", "pre-receive");
  const hookless = async () => await Deno.stat(hook).then(() => false, () => true);
  const outside = join(scene.dir, "elsewhere");
  await Deno.mkdir(outside);
  const noRepo = await scene.relay(["guard", "install", "--bare", scene.origin], { cwd: outside });
  assert.equal(noRepo.code, 2, all(noRepo));
  assert.match(noRepo.stderr, /cannot tell which branch to guard: .* is not in a git repository/);
  assert.match(noRepo.stderr, /--main <branch>/);
  assert.ok(await hookless(), "no hook was written");
  const config = await scene.git(scene.origin, ["config", "relay.main"], true);
  assert.equal(config.code, 1, "nor any config");

  // A git repository that is not relay's (no .relay/config.yaml) is the same.
  const plain = join(scene.dir, "plain");
  await scene.git(scene.dir, ["init", "--quiet", plain]);
  const notRelay = await scene.relay(["guard", "install", "--bare", scene.origin], { cwd: plain });
  assert.equal(notRelay.code, 2, all(notRelay));
  assert.match(notRelay.stderr, /has no \.relay\/config\.yaml/);
  assert.ok(await hookless(), "no hook was written");

  const named = await scene.relay(
    ["guard", "install", "--bare", scene.origin, "--main", "trunk"],
    { cwd: outside },
  );
  assert.equal(named.code, 0, all(named));
  assert.equal(await scene.out(["config", "relay.main"], scene.origin), "trunk");
  assert.equal(await hookless(), false);
});
