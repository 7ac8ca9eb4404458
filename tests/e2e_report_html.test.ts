/**
 * `relay report --html` on a real task's log: a FAIL, a fix round, a PASS whose merge push the
 * origin refuses (a HOLD), a person's resume, the merge — then one page with all of it, written
 * whole; and the ways it is used wrong, each exit 2 with nothing written.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, brief, exists, makeScene, queue, stateDir } from "./helpers/scene.ts";
import { textOf } from "./helpers/report_fixture.ts";

/** A `pre-receive` hook on the origin that refuses any update of main. */
async function protectMain(origin: string): Promise<string> {
  const path = join(origin, "hooks", "pre-receive");
  await Deno.writeTextFile(
    path,
    `#!/bin/sh
while read -r old new ref; do
  [ "$ref" = refs/heads/main ] && { echo "protected branch hook declined" >&2; exit 1; }
done
exit 0
`,
  );
  await Deno.chmod(path, 0o755);
  return path;
}

Deno.test("relay report --html: one page with the task's rounds, verdicts, gate, HOLD, resume and merge", async () => {
  await using scene = await makeScene();
  const env = { FAKE_FAIL_ONCE: join(scene.dir, "fail-once") };
  await queue(scene, brief({ title: "Greet <b>loudly</b>" }));
  assert.equal((await scene.relay(["promote"])).code, 0);
  for (const tick of ["poll", "review", "poll"]) {
    const res = await scene.relay([tick], { env });
    assert.equal(res.code, 0, `${tick}: ${all(res)}`);
  }
  // The PASS's merge push is refused: a HOLD on task 1; the person lifts it and resumes.
  const hook = await protectMain(scene.origin);
  const held = await scene.relay(["review"], { env });
  assert.equal(held.code, 3, all(held));
  await Deno.remove(hook);
  const resumed = await scene.relay(["resume"]);
  assert.equal(resumed.code, 0, all(resumed));
  const merged = await scene.relay(["review"], { env });
  assert.equal(merged.code, 0, all(merged));
  assert.match(merged.stdout, /task 1 merged/);

  const before = await scene.snapshot();
  const out = join(scene.dir, "report.html");
  const res = await scene.relay(["report", "--html", out]);
  assert.equal(res.code, 0, all(res));
  assert.match(
    res.stdout,
    new RegExp(
      `^wrote ${out}: 1 task \\(1 merged\\), 2 agent turns \\([0-9hms]+\\), held [0-9hms]+\\n$`,
    ),
  );
  // Only the page was written: no ref, no tracked file, no temporary file beside it.
  assert.equal(await scene.snapshot(), before);
  assert.deepEqual(
    [...Deno.readDirSync(scene.dir)].map((e) => e.name).filter((n) => n.startsWith("report")),
    ["report.html"],
  );

  const html = await Deno.readTextFile(out);
  assert.match(html, /content="default-src 'none'; style-src 'unsafe-inline'"/);
  assert.match(html, /<meta name="generator" content="relay \d+\.\d+\.\d+">/);
  assert.doesNotMatch(html, /<b>/); // the title's markup is text
  const text = textOf(html);
  assert.match(text, /relay report — work/);
  assert.match(text, /1 Greet <b>loudly<\/b> merged 2 2 2 \S+ 2 \S+ MERGE \S+/);
  assert.match(text, /Round 1 \(brief 1\)/);
  assert.match(text, /Round 2 \(fix brief 2\)/);
  assert.match(text, /executor executor turn \S+, exit 0/);
  assert.match(text, /bar: 1\/1 passed at [0-9a-f]{12}/);
  assert.match(
    text,
    /verdict: FAIL at [0-9a-f]{12} blocker fails: the reviewer wants a second look/,
  );
  assert.match(text, /sent back as fix brief 2 \(round 2\)/);
  assert.match(text, /verdict: PASS at [0-9a-f]{12}/);
  assert.match(text, /gate: MERGE/);
  assert.match(text, /relay HOLD ?: Cannot merge task-1: .*protected branch hook declined/);
  assert.match(text, /person resumed by a person: Cannot merge task-1/);
  assert.match(text, /merged [0-9a-f]{12} by relay/);
  assert.match(html, /<tr class="ev held">/);
  assert.match(html, /<tr class="ev resumed">/);

  // --task takes a fix brief's number too; the page is rewritten whole.
  const one = await scene.relay(["report", "--html", out, "--task", "2"]);
  assert.equal(one.code, 0, all(one));
  assert.match(await Deno.readTextFile(out), /id="task-1"/);
});

Deno.test("relay report without --html, with a bad --task, a missing folder or a malformed log: exit 2, nothing written", async () => {
  await using scene = await makeScene();
  const out = join(scene.dir, "page.html");

  const bare = await scene.relay(["report"]);
  assert.equal(bare.code, 2, all(bare));
  assert.match(bare.stderr, /--html <file> is required/);

  const flag = await scene.relay(["report", "--html", out, "--json"]);
  assert.equal(flag.code, 2, all(flag));

  const none = await scene.relay(["report", "--html", out, "--task", "4"]);
  assert.equal(none.code, 2, all(none));
  assert.match(none.stderr, /no events recorded for task 4; no task has a timeline yet/);

  const word = await scene.relay(["report", "--html", out, "--task", "one"]);
  assert.equal(word.code, 2, all(word));
  assert.match(word.stderr, /--task must be a task number/);

  const away = join(scene.dir, "no-such-folder", "page.html");
  const folder = await scene.relay(["report", "--html", away]);
  assert.equal(folder.code, 2, all(folder));
  assert.match(folder.stderr, /the folder .*no-such-folder does not exist/);

  const dir = await scene.relay(["report", "--html", scene.dir]);
  assert.equal(dir.code, 2, all(dir));
  assert.match(dir.stderr, /it is a folder; name a file/);

  // No task yet: a page that says so.
  const empty = await scene.relay(["report", "--html", out]);
  assert.equal(empty.code, 0, all(empty));
  assert.match(empty.stdout, /: 0 tasks \(0 merged\), 0 agent turns \(0s\), held 0s$/m);
  assert.match(textOf(await Deno.readTextFile(out)), /No task has a timeline yet/);
  await Deno.remove(out);

  // A log line that is not JSON: named, and no page.
  await Deno.mkdir(join(stateDir(scene), "tasks"), { recursive: true });
  await Deno.writeTextFile(join(stateDir(scene), "tasks", "1.events.jsonl"), "{not json\n");
  const bad = await scene.relay(["report", "--html", out]);
  assert.equal(bad.code, 2, all(bad));
  assert.match(
    bad.stderr,
    /1\.events\.jsonl:1: Cannot read the task's event log: the line is not JSON/,
  );
  assert.ok(!(await exists(out)));
});
