/**
 * What a Git remembers and what it runs once: answers about objects named by a full id
 * (a commit's tree, a file at a commit, a merge of two commits) are read once, answers about names that move
 * (HEAD) every time; git's automatic maintenance runs after a process's first fetch in a
 * repository, not after its later fetches nor any other git command relay runs.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Git } from "../lib/git/git.ts";
import { git as sh, GIT_ENV as ENV } from "./helpers/git_env.ts";

/** A Git that writes down the argv of every command it runs. */
class RecordingGit extends Git {
  readonly ran: string[][] = [];
  override run(...args: Parameters<Git["run"]>) {
    this.ran.push([...args[0]]);
    return super.run(...args);
  }
}

async function commit(dir: string, file: string, text: string): Promise<string> {
  await Deno.writeTextFile(join(dir, file), text);
  await sh(dir, "add", "--", file);
  await sh(dir, "commit", "--quiet", "-m", `write ${file}`);
  return await sh(dir, "rev-parse", "HEAD");
}

Deno.test("Git reads a full id's tree and files once, and HEAD's every time", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-fixed-objects-" });
  try {
    await sh(dir, "init", "--quiet", "--initial-branch=main");
    const first = await commit(dir, "REPORT.md", "one\n");
    const git = new RecordingGit(dir);

    assert.equal(await git.showFile(first, "REPORT.md"), "one\n");
    assert.equal(await git.showFile(first, "REPORT.md"), "one\n");
    // Not there: null, asked again each time (git says the same of a commit not fetched yet).
    assert.equal(await git.showFile(first, "MISSING.md"), null);
    assert.equal(await git.showFile(first, "MISSING.md"), null);
    const tree = await sh(dir, "rev-parse", `${first}^{tree}`);
    assert.equal(await git.treeOf(first), tree);
    assert.equal(await git.treeOf(first), tree);
    // Concurrent asks share one read.
    const [a, b] = await Promise.all([git.treeOf(first), git.treeOf(first)]);
    assert.equal(a, tree);
    assert.equal(b, tree);
    assert.equal(git.ran.length, 4, git.ran.map((r) => r.join(" ")).join("\n"));

    // A name that moves is asked again: the new commit's file and tree, not the first's.
    assert.equal(await git.showFile("HEAD", "REPORT.md"), "one\n");
    const second = await commit(dir, "REPORT.md", "two\n");
    assert.equal(await git.showFile("HEAD", "REPORT.md"), "two\n");
    assert.equal(await git.treeOf("HEAD"), await sh(dir, "rev-parse", `${second}^{tree}`));
    assert.equal(git.ran.length, 7);
    // A commit this clone does not have yet: null now, the file once it is there.
    const elsewhere = await Deno.makeTempDir({ prefix: "relay-fixed-objects-other-" });
    try {
      await sh(elsewhere, "init", "--quiet", "--initial-branch=main");
      const later = await commit(elsewhere, "LATER.md", "later\n");
      assert.equal(await git.showFile(later, "LATER.md"), null);
      await sh(dir, "fetch", "--quiet", elsewhere, "main");
      assert.equal(await git.showFile(later, "LATER.md"), "later\n");
    } finally {
      await Deno.remove(elsewhere, { recursive: true });
    }
    // A failure to run git is not kept as an answer.
    await assert.rejects(new Git(join(dir, "no-such-folder")).treeOf(first));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Git.showFiles() reads a full id's files in one cat-file --batch, each as git show gives it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-show-files-" });
  try {
    await sh(dir, "init", "--quiet", "--initial-branch=main");
    await Deno.mkdir(join(dir, "sub"));
    await Deno.writeTextFile(join(dir, "sub", "x.txt"), "x\n");
    // A textconv git show does not apply to a blob, nor cat-file: the file's own bytes.
    await Deno.writeTextFile(join(dir, ".gitattributes"), "*.md diff=upper\n");
    await sh(dir, "config", "diff.upper.textconv", "tr a-z A-Z");
    await sh(dir, "add", ".");
    await commit(dir, "REVIEWER.md", "Täsk — “review” ✓\nno newline at the end");
    const head = await commit(dir, "EMPTY.md", "");
    const plain = new Git(dir);
    const expected = await Promise.all(
      ["REVIEWER.md", "EMPTY.md", "sub", "MISSING.md"].map((p) => plain.showFile(head, p)),
    );
    assert.equal(expected[0], "Täsk — “review” ✓\nno newline at the end");
    assert.match(expected[2]!, /^tree [0-9a-f]+:sub\n\nx\.txt\n$/);
    assert.equal(expected[3], null);

    const git = new RecordingGit(dir);
    const paths = ["REVIEWER.md", "EMPTY.md", "sub", "MISSING.md", "REVIEWER.md"];
    assert.deepEqual(await git.showFiles(head, paths), [...expected, expected[0]]);
    // One batch; the folder (a tree, not a blob) is git show's to print, as before.
    assert.deepEqual(git.ran.map((r) => r.join(" ")), ["cat-file --batch", `show ${head}:sub`]);
    // Asked again, one at a time or together: nothing runs, the missing file included (the
    // batch found the commit, so the file is not in it, and never will be).
    assert.equal(await git.showFile(head, "REVIEWER.md"), expected[0]);
    assert.equal(await git.showFile(head, "MISSING.md"), null);
    assert.deepEqual(await git.showFiles(head, ["EMPTY.md", "MISSING.md", "sub"]), [
      expected[1],
      null,
      expected[2],
    ]);
    assert.equal(git.ran.length, 2, git.ran.map((r) => r.join(" ")).join("\n"));
    // A name that moves: one git show each, as showFile.
    assert.deepEqual(await git.showFiles("HEAD", ["EMPTY.md", "MISSING.md"]), ["", null]);
    assert.deepEqual(git.ran.slice(2).map((r) => r.join(" ")), [
      "show HEAD:EMPTY.md",
      "show HEAD:MISSING.md",
    ]);
    // A commit this clone does not have: null, and not kept (it may be fetched later).
    const absent = "0123456789abcdef0123456789abcdef01234567";
    assert.deepEqual(await git.showFiles(absent, ["REVIEWER.md"]), [null]);
    assert.deepEqual(await git.showFiles(absent, ["REVIEWER.md"]), [null]);
    assert.equal(git.ran.filter((r) => r[0] === "cat-file").length, 3);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Git asks a merge of two full ids, whether one is the other's ancestor, and a diff between them once; a name that moves and a failed ask every time", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-settled-" });
  try {
    await sh(dir, "init", "--quiet", "--initial-branch=main");
    const base = await commit(dir, "a.txt", "a\n");
    await sh(dir, "switch", "--quiet", "-c", "topic");
    const head = await commit(dir, "b.txt", "b\n");
    await sh(dir, "switch", "--quiet", "main");
    const clash = await commit(dir, "b.txt", "other\n");
    const git = new RecordingGit(dir);
    const ran = () => git.ran.map((r) => r.join(" ")).join("\n");

    // Clean: the merged tree, as git merge-tree writes it; asked once, concurrently or not.
    const [clean, again] = await Promise.all([
      git.mergeTree(base, head),
      git.mergeTree(base, head),
    ]);
    const expected = await sh(dir, "merge-tree", "--write-tree", base, head);
    assert.deepEqual(clean, { code: 0, tree: expected, conflicts: [], stderr: "" });
    assert.deepEqual(again, clean);
    assert.deepEqual(await git.mergeTree(base, head), clean);
    // Conflicts are an answer too: the paths, kept.
    const conflicted = await git.mergeTree(clash, head);
    assert.equal(conflicted.code, 1);
    assert.deepEqual(conflicted.conflicts, ["b.txt"]);
    assert.deepEqual(await git.mergeTree(clash, head), conflicted);
    assert.equal(git.ran.length, 2, ran());

    assert.equal(await git.isAncestor(base, head), true);
    assert.equal(await git.isAncestor(head, clash), false);
    assert.equal(await git.isAncestor(base, head), true);
    assert.equal(await git.isAncestor(head, clash), false);
    assert.equal(git.ran.length, 4, ran());

    const args = ["--name-only", base, head, "--"];
    assert.equal(await git.outViaFile("diff", args, [base, head]), "b.txt");
    assert.equal(await git.outViaFile("diff", args, [base, head]), "b.txt");
    assert.equal(git.ran.length, 5, ran());

    // Names that move are asked each time: main moves on.
    assert.equal(await git.isAncestor("main", "topic"), false);
    assert.equal((await git.mergeTree("main", "topic")).code, 1);
    await sh(dir, "merge", "--quiet", "-X", "theirs", "--no-edit", "topic");
    assert.equal(await git.isAncestor("topic", "main"), true);
    assert.equal((await git.mergeTree("main", "topic")).code, 0);
    // The merge took topic's b.txt: nothing between them now. Asked twice, run twice.
    const between = ["--name-only", "main", "topic", "--"];
    assert.equal(await git.outViaFile("diff", between, ["main", "topic"]), "");
    assert.equal(await git.outViaFile("diff", between, ["main", "topic"]), "");
    assert.equal(git.ran.length, 11, ran());
    // A commit this clone lacks: git cannot merge it (exit 1 as for conflicts, but no tree), so
    // it is asked again once fetched.
    const elsewhere = await Deno.makeTempDir({ prefix: "relay-settled-other-" });
    try {
      await sh(elsewhere, "clone", "--quiet", "--branch", "main", dir, "clone");
      const later = await commit(join(elsewhere, "clone"), "c.txt", "c\n");
      const missing = await git.mergeTree(head, later);
      assert.deepEqual([missing.code, missing.tree], [1, ""], missing.stderr);
      assert.equal(await git.isAncestor(base, later), false); // exit 128: not kept either
      await sh(dir, "fetch", "--quiet", join(elsewhere, "clone"), "main");
      const fetched = await git.mergeTree(head, later);
      assert.equal(fetched.code, 0, fetched.stderr);
      assert.match(fetched.tree, /^[0-9a-f]{40}$/);
      assert.equal(await git.isAncestor(base, later), true);
      assert.equal(git.ran.length, 15, ran());
    } finally {
      await Deno.remove(elsewhere, { recursive: true });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Git lets git's automatic maintenance run after its first fetch in a repository, and never after", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-fetch-maintenance-" });
  try {
    const origin = join(dir, "origin.git");
    const work = join(dir, "work");
    const other = join(dir, "other");
    await sh(dir, "init", "--quiet", "--bare", "--initial-branch=main", origin);
    await sh(dir, "clone", "--quiet", `file://${origin}`, work);
    await sh(dir, "clone", "--quiet", `file://${origin}`, other);
    await commit(work, "a.txt", "a\n");
    await sh(work, "push", "--quiet", "origin", "main");
    // One process of its own (what it has fetched is its own), with git's trace2 events on
    // (GIT_TRACE2_EVENT is read from the environment only): each step, then `git version`
    // as a mark between steps.
    const script = join(dir, "steps.ts");
    const gitModule = new URL("../lib/git/git.ts", import.meta.url).href;
    await Deno.writeTextFile(
      script,
      `import { Git } from ${JSON.stringify(gitModule)};
const work = new Git(${JSON.stringify(work)});
const mark = () => work.run(["version"]);
await work.fetch("origin", { maintenance: false }); await mark();
await work.fetch("origin"); await mark();
await work.fetch("origin"); await mark();
await Deno.writeTextFile(${JSON.stringify(join(work, "b.txt"))}, "b\\n");
await work.run(["add", "--", "b.txt"]);
await work.run(["commit", "--quiet", "-m", "b"]); await mark();
await new Git(${JSON.stringify(other)}).fetch("origin");
`,
    );
    const events = join(dir, "events.json");
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "--allow-all", "--no-config", script],
      env: { ...ENV, GIT_TRACE2_EVENT: events },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const argvs = (await Deno.readTextFile(events)).split("\n")
      .filter((l) => l.includes('"event":"start"'))
      .map((l) => (JSON.parse(l).argv as string[]).slice(1).join(" "));
    // The steps, as the marks cut them; in each, the maintenance runs git started.
    const steps: string[][] = [[]];
    for (const argv of argvs) {
      if (/^-c .* version$/.test(argv)) steps.push([]);
      else steps.at(-1)!.push(argv);
    }
    const maintenance = steps.map((step) => step.filter((a) => a.startsWith("maintenance run")));
    assert.deepEqual(maintenance.map((m) => m.length), [0, 1, 0, 0, 1], argvs.join("\n"));
    assert.ok(steps[3]!.some((a) => a.endsWith("commit --quiet -m b")), steps[3]!.join("\n"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Git's pathspecs mean what relay wrote, whatever GIT_*_PATHSPECS relay's environment sets; a call that sets one itself keeps it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-pathspecs-" });
  const names = ["GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_ICASE_PATHSPECS"];
  try {
    await sh(dir, "init", "--quiet", "--initial-branch=main");
    const base = await commit(dir, "keep.txt", "a\n");
    await commit(dir, "NEXT-STEPS.md", "b\n");
    const head = await commit(dir, "[1].md", "c\n");
    const git = new Git(dir);
    for (const name of names) {
      Deno.env.set(name, "1");
      try {
        // As the gate asks whether main moved by more than paperwork: ":(exclude)" is magic.
        assert.deepEqual(
          await git.changedPaths(base, head, [".", ":(exclude)NEXT-STEPS.md"]),
          ["[1].md"],
          name,
        );
        // A call that asks for literal paths gets them: "[1].md" is that file, not "1.md".
        assert.equal(
          await git.out(["ls-files", "--", "[1].md"], { env: { GIT_LITERAL_PATHSPECS: "1" } }),
          "[1].md",
          name,
        );
      } finally {
        Deno.env.delete(name);
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
