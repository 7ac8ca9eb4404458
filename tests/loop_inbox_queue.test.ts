/**
 * queueAgain: a brief that left NEXT-STEPS.md without running goes back to the queue, under its
 * own number while that is free, and both ticks of a minute may queue the same one at once.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { queueAgain } from "../lib/loop/inbox.ts";
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

Deno.test("queueAgain keeps a free number, and two ticks queueing the same brief at once make one file", async () => {
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
