/**
 * The paperwork commit and its push, in a clone of a bare origin: the brief, the report and
 * the inbox in one commit (none when nothing changed), and local main pushed only when what
 * it has over the remote's is paperwork — asked of git unless it is the very commit this
 * process made on top of the remote's main.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { HoldError } from "../lib/errors.ts";
import { Git } from "../lib/git/git.ts";
import { commitPaperwork, commitReviewerPaperwork, pushMain } from "../lib/loop/paperwork.ts";
import { git as sh, identify } from "./helpers/git_env.ts";

class RecordingGit extends Git {
  readonly ran: string[] = [];
  override run(...args: Parameters<Git["run"]>) {
    this.ran.push(args[0].join(" "));
    return super.run(...args);
  }
}

/** A clone of a bare origin with a brief and a report on main, pushed. */
async function clone(): Promise<{ dir: string; work: string } & AsyncDisposable> {
  const dir = await Deno.makeTempDir({ prefix: "relay-paperwork-commit-" });
  const work = join(dir, "work");
  await sh(dir, "init", "--quiet", "--bare", "--initial-branch=main", "origin.git");
  await sh(dir, "clone", "--quiet", `file://${join(dir, "origin.git")}`, "work");
  // relay's git reads the identity from the repository here (no global config in a test).
  await identify(work);
  await Deno.writeTextFile(join(work, "NEXT-STEPS.md"), "Status: OPEN\nTask: 1\n");
  await Deno.writeTextFile(join(work, "COWORK-STATUS.md"), "Task: 0\n");
  await Deno.writeTextFile(join(work, "app.txt"), "app\n");
  await sh(work, "add", "--all");
  await sh(work, "commit", "--quiet", "-m", "initial");
  await sh(work, "push", "--quiet", "origin", "main");
  return {
    dir,
    work,
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

const FILES = { brief: "Status: DONE\nTask: 1\n", report: "Task: 1\nOutcome: SHIPPED\n" };
const MESSAGE = "Task #1: status — SHIPPED (task-1)";
const log = { step: () => {} };

Deno.test("commitPaperwork() commits the brief, the report and the inbox in one commit, and none when asked again", async () => {
  await using repo = await clone();
  await Deno.mkdir(join(repo.work, ".relay", "inbox"), { recursive: true });
  await Deno.writeTextFile(join(repo.work, ".relay", "inbox", "0002-next.md"), "Status: QUEUED\n");
  // Someone else's change in the tree is not paperwork: it stays out of the commit.
  await Deno.writeTextFile(join(repo.work, "app.txt"), "app, edited\n");
  const git = new Git(repo.work);
  const sha = await commitPaperwork(git, FILES, MESSAGE);
  assert.equal(sha, await sh(repo.work, "rev-parse", "HEAD"));
  assert.deepEqual(
    (await sh(repo.work, "show", "--format=%s", "--name-only", "HEAD")).split("\n"),
    [MESSAGE, "", ".relay/inbox/0002-next.md", "COWORK-STATUS.md", "NEXT-STEPS.md"],
  );
  assert.equal(await sh(repo.work, "status", "--porcelain"), "M app.txt");
  assert.equal(await commitPaperwork(git, FILES, MESSAGE), sha);
  assert.equal(await sh(repo.work, "rev-parse", "HEAD"), sha);
});

Deno.test("commitPaperwork() takes a staged edit that relay's own text undoes for no change, not an error", async () => {
  await using repo = await clone();
  const git = new RecordingGit(repo.work);
  const sha = await commitPaperwork(git, FILES, MESSAGE);
  // A person stages an edit of the brief; relay then writes the brief as HEAD has it.
  await Deno.writeTextFile(join(repo.work, "NEXT-STEPS.md"), "Status: OPEN\nTask: 9\n");
  await sh(repo.work, "add", "NEXT-STEPS.md");
  git.ran.length = 0;
  assert.equal(await commitPaperwork(git, FILES, MESSAGE), sha);
  assert.equal(await sh(repo.work, "rev-parse", "HEAD"), sha);
  assert.equal(await sh(repo.work, "status", "--porcelain"), "");
  // Asked of the index, not tried: a commit with nothing to commit prints a status of the
  // whole tree, submodules included.
  assert.deepEqual(git.ran.filter((c) => c.startsWith("commit")), []);
});

Deno.test("commitPaperwork() with nothing to commit under another message says so and runs no commit", async () => {
  await using repo = await clone();
  const git = new RecordingGit(repo.work);
  const sha = await commitPaperwork(git, FILES, MESSAGE);
  git.ran.length = 0;
  await assert.rejects(
    commitPaperwork(git, FILES, "Task #1: brief — DONE (task-1)"),
    /nothing to commit for "Task #1: brief — DONE \(task-1\)".*under another message \("Task #1: status — SHIPPED \(task-1\)"\)/,
  );
  assert.deepEqual(git.ran.filter((c) => c.startsWith("commit") || c.startsWith("add")), []);
  assert.equal(await sh(repo.work, "rev-parse", "HEAD"), sha);
});

Deno.test("commitReviewerPaperwork() commits the brief it left with no inbox folder, and nothing when the add undoes a staged edit", async () => {
  // No .relay/inbox at all (a person removed its .gitkeep): not a pathspec that fails the add.
  await using repo = await clone();
  const git = new RecordingGit(repo.work);
  await Deno.writeTextFile(join(repo.work, "NEXT-STEPS.md"), "Status: DONE\nTask: 1\n");
  await Deno.writeTextFile(join(repo.work, "COWORK-STATUS.md"), "the executor's report\n");
  const sha = await commitReviewerPaperwork(git);
  assert.equal(sha, await sh(repo.work, "rev-parse", "HEAD"));
  assert.deepEqual(
    (await sh(repo.work, "show", "--format=%s", "--name-only", "HEAD")).split("\n"),
    ["Task #1: brief — DONE (task-1)", "", "NEXT-STEPS.md"],
  );
  // A person stages another brief; the reviewer's tree has the brief as HEAD has it again.
  await Deno.writeTextFile(join(repo.work, "NEXT-STEPS.md"), "Status: OPEN\nTask: 9\n");
  await sh(repo.work, "add", "NEXT-STEPS.md");
  await Deno.writeTextFile(join(repo.work, "NEXT-STEPS.md"), "Status: DONE\nTask: 1\n");
  git.ran.length = 0;
  assert.equal(await commitReviewerPaperwork(git), null);
  assert.deepEqual(git.ran.filter((c) => c.startsWith("commit")), []);
  assert.equal(await sh(repo.work, "rev-parse", "HEAD"), sha);
  assert.equal(await sh(repo.work, "status", "--porcelain"), "M COWORK-STATUS.md");
});

Deno.test("pushMain() pushes the paperwork commit this process made without asking git what is in it; anything on top is asked, and a product commit is a HOLD", async () => {
  await using repo = await clone();
  const git = new RecordingGit(repo.work);
  const sha = await commitPaperwork(git, FILES, MESSAGE);
  git.ran.length = 0;
  await pushMain(git, "origin", "main", { aside: join(repo.dir, "aside"), log });
  assert.equal(await sh(join(repo.dir, "origin.git"), "rev-parse", "main"), sha);
  // (In a test, the remote's main is resolved by a process: a tick's resolver is off here.)
  assert.deepEqual(git.ran.filter((a) => !a.startsWith("rev-parse ")), [
    "push --porcelain -- origin HEAD:refs/heads/main",
  ]);

  // The next paperwork commit, then someone's product commit on top of it: HEAD is no longer
  // the commit relay made, so git is asked, and the product commit is never pushed.
  await commitPaperwork(git, { ...FILES, report: "Task: 1\nOutcome: SHIPPED\n\nMore.\n" }, "more");
  await Deno.writeTextFile(join(repo.work, "app.txt"), "app v2\n");
  await sh(repo.work, "commit", "--quiet", "-am", "a product change");
  git.ran.length = 0;
  await assert.rejects(
    pushMain(git, "origin", "main", { aside: join(repo.dir, "aside"), log }),
    (err: unknown) =>
      err instanceof HoldError && /local main has commits that are not paperwork/.test(err.message),
  );
  assert.ok(git.ran.some((a) => a.startsWith("log ")), git.ran.join("\n"));
  assert.equal(await sh(join(repo.dir, "origin.git"), "rev-parse", "main"), sha);
});

Deno.test("pushMain() asks git when someone committed in the primary tree while relay made its paperwork commit on top: a HOLD, nothing pushed", async () => {
  await using repo = await clone();
  const initial = await sh(repo.work, "rev-parse", "HEAD");
  /** A person's product commit lands just before relay's paperwork commit. */
  class Racing extends RecordingGit {
    override run(...args: Parameters<Git["run"]>) {
      if (args[0][0] !== "commit") return super.run(...args);
      return (async () => {
        await Deno.writeTextFile(join(repo.work, "app.txt"), "app, a person's\n");
        await sh(
          repo.work,
          "commit",
          "--quiet",
          "-m",
          "a person's product change",
          "--",
          "app.txt",
        );
        return await super.run(...args);
      })();
    }
  }
  const git = new Racing(repo.work);
  const sha = await commitPaperwork(git, FILES, MESSAGE);
  assert.equal(
    await sh(repo.work, "log", "-1", "--format=%s", `${sha}^`),
    "a person's product change",
  );
  await assert.rejects(
    pushMain(git, "origin", "main", { aside: join(repo.dir, "aside"), log }),
    (err: unknown) =>
      err instanceof HoldError && /local main has commits that are not paperwork/.test(err.message),
  );
  assert.equal(await sh(join(repo.dir, "origin.git"), "rev-parse", "main"), initial);
});
