/**
 * relay note: a person's note reaches the next agent turn of the task — the
 * executor's or the reviewer's, whichever runs first — once; it is recorded
 * as shown to that run and listed by relay show; it is never added while a
 * tick runs (the record is one the turn guard watches).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, brief, makeScene, type Scene, taskRecord } from "./helpers/scene.ts";

async function queue(scene: Scene, title: string): Promise<void> {
  const res = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title }) });
  assert.equal(res.code, 0, all(res));
}

Deno.test("a note goes to the next turn of its task, once: the executor's, then a later note to the reviewer's", async () => {
  await using scene = await makeScene({
    agent: "records-prompt.sh",
    reviewer: "records-prompt.sh",
  });
  const prompts = join(scene.dir, "prompts");
  const reviews = join(scene.dir, "review-prompts");
  const env = { FAKE_PROMPT_FILE: prompts, FAKE_REVIEW_PROMPT_FILE: reviews };
  await queue(scene, "Palette");
  assert.equal((await scene.relay(["promote"])).code, 0);

  const noted = await scene.relay(["note", "1", "use the blue palette"]);
  assert.equal(noted.code, 0, all(noted));
  assert.match(noted.stdout, /noted for task 1: the next agent turn of task 1 is shown it/);
  assert.equal((await scene.relay(["poll"], { env })).code, 0);
  const executor = await Deno.readTextFile(prompts);
  assert.match(
    executor,
    /Notes from the operator \(a person\) for this turn; the rules above still win:\n- use the blue palette\n/,
  );

  assert.equal((await scene.relay(["note", "1", "check the mobile layout"])).code, 0);
  const review = await scene.relay(["review"], { env });
  assert.equal(review.code, 0, all(review));
  const reviewer = await Deno.readTextFile(reviews);
  assert.match(reviewer, /Notes from the operator .*\n- check the mobile layout\n/);
  assert.doesNotMatch(reviewer, /blue palette/, "a note was shown twice");

  const notes = (await taskRecord(scene)).notes!;
  assert.deepEqual(notes.map((n) => [n.text, n.delivered?.role]), [
    ["use the blue palette", "executor"],
    ["check the mobile layout", "reviewer"],
  ]);
  assert.match(notes[0]!.delivered!.runId, /task1-a1$/);
  assert.match(notes[1]!.delivered!.runId, /review1-t1$/);
  const show = await scene.relay(["show", "1"]);
  assert.match(show.stdout, /note from a person for the next turn: use the blue palette/);
  assert.match(show.stdout, /note from a person for the next turn: check the mobile layout/);
});

Deno.test("relay note while a tick runs notes nothing (exit 1); bad input is exit 2", async () => {
  await using scene = await makeScene({ agent: "waits.sh" });
  await queue(scene, "Slow");
  assert.equal((await scene.relay(["promote"])).code, 0);
  const go = join(scene.dir, "go");
  const poll = scene.relay(["poll"], { env: { FAKE_GO: go } });
  try {
    let res = await scene.relay(["note", "1", "too late"]);
    for (let i = 0; i < 100 && res.code === 0; i++) {
      // The poll had not taken its lock yet: that note went in before the tick; wait for the turn.
      await new Promise((r) => setTimeout(r, 100));
      res = await scene.relay(["note", "1", "too late"]);
    }
    assert.equal(res.code, 1, all(res));
    assert.match(res.stdout, /not noted: a tick is running/);
  } finally {
    await Deno.writeTextFile(go, "");
  }
  assert.equal((await poll).code, 0);
  for (
    const [args, message] of [
      [["note", "x", "t"], /"x" is not a task number/],
      [["note", "1", "  "], /the note is empty/],
      [["note", "1"], /missing argument: <task> TEXT/],
      [["note", "99", "hello"], /task 99 is neither running nor queued/],
    ] as const
  ) {
    const res = await scene.relay([...args]);
    assert.equal(res.code, 2, `${args.join(" ")}: ${all(res)}`);
    assert.match(res.stderr, message);
  }
});
