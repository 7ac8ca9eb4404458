/**
 * queueAgain: a brief that left NEXT-STEPS.md without running goes back to the queue, under its
 * own number while that is free, and both ticks of a minute may queue the same one at once.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { queueAgain, queueFromMain } from "../lib/loop/inbox.ts";
import { brief } from "./helpers/scene.ts";

async function repo(): Promise<
  { root: string; gitDir: string; commonDir: string } & AsyncDisposable
> {
  const root = await Deno.makeTempDir({ prefix: "relay-queue-" });
  const init = await new Deno.Command("git", {
    args: ["init", "--quiet", "-b", "main", root],
    env: { GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
  }).output();
  assert.equal(init.code, 0);
  const gitDir = join(root, ".git");
  return {
    root,
    gitDir,
    commonDir: gitDir,
    [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }),
  };
}

const HOTFIX = brief({ task: 9, title: "Hotfix", status: "OPEN" });

Deno.test("queueAgain keeps a free number, and makes one file when the other tick queued the same brief a moment before", async () => {
  await using r = await repo();
  const [a, b] = await Promise.all([
    queueAgain(r, HOTFIX, "main's NEXT-STEPS.md", { keep: true }),
    queueAgain(r, HOTFIX, "main's NEXT-STEPS.md", { keep: true }),
  ]);
  assert.deepEqual(a, { task: 9, file: ".relay/inbox/0009-hotfix.md" });
  assert.deepEqual(b, a);
  const names = [...Deno.readDirSync(join(r.root, ".relay", "inbox"))].map((e) => e.name);
  assert.deepEqual(names, ["0009-hotfix.md"]);
  const text = await Deno.readTextFile(join(r.root, a.file));
  assert.match(text, /^Status: QUEUED\nTask: 9\nTitle: Hotfix\n/);
  assert.match(text, /^Branch: task-9$/m);
});

Deno.test("queueFromMain queues a brief from main once: not again after it left the queue, nor under a second number", async () => {
  await using r = await repo();
  const first = await queueFromMain(r, HOTFIX, "main");
  assert.equal(first, "the open brief in main went to the queue as .relay/inbox/0009-hotfix.md");
  assert.equal(await queueFromMain(r, HOTFIX, "main"), null);
  // Dropped by a person (or promoted, run, closed): main still shows it until relay's next
  // paperwork commit, and it is not queued again.
  await Deno.remove(join(r.root, ".relay", "inbox", "0009-hotfix.md"));
  assert.equal(await queueFromMain(r, HOTFIX, "main"), null);
  assert.deepEqual([...Deno.readDirSync(join(r.root, ".relay", "inbox"))], []);
  // Another text is another brief.
  const other = HOTFIX.replace("Add the feature file.", "Something else.");
  assert.match((await queueFromMain(r, other, "main"))!, /went to the queue as .*0009-hotfix\.md/);
});

Deno.test("queueFromMain takes a brief queued here under the same number and title to be that one", async () => {
  await using r = await repo();
  await queueAgain(r, brief({ task: 9, title: "Hotfix", status: "QUEUED" }), "inbox", {
    keep: true,
  });
  assert.equal(
    await queueFromMain(r, HOTFIX, "main"),
    "the open brief in main is queued already, as .relay/inbox/0009-hotfix.md",
  );
  assert.deepEqual(
    [...Deno.readDirSync(join(r.root, ".relay", "inbox"))].map((e) => e.name),
    ["0009-hotfix.md"],
  );
});

Deno.test("queueAgain gives a number relay has used to no second brief: the next free one, its branch too", async () => {
  await using r = await repo();
  await Deno.mkdir(join(r.commonDir, "relay", "tasks"), { recursive: true });
  await Deno.writeTextFile(join(r.commonDir, "relay", "tasks", "9.json"), "{}");
  const moved = await queueAgain(r, HOTFIX, "main's NEXT-STEPS.md", { keep: true });
  assert.deepEqual(moved, { task: 10, file: ".relay/inbox/0010-hotfix.md" });
  const text = await Deno.readTextFile(join(r.root, moved.file));
  assert.match(text, /^Task: 10$/m);
  assert.match(text, /^Branch: task-10$/m);
});
