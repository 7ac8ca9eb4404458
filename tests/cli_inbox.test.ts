/** `relay inbox add | list | drop` through the real CLI. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { brief, makeScene, type Scene } from "./helpers/scene.ts";

async function add(scene: Scene, text: string, name = "brief.md") {
  await scene.write(name, text);
  return await scene.relay(["inbox", "add", name]);
}

async function queued(scene: Scene): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(`${scene.work}/.relay/inbox`)) {
    if (e.name.endsWith(".md")) names.push(e.name);
  }
  return names.sort();
}

Deno.test("relay inbox add numbers briefs 1, 2; keeps an explicit Task: 7; then continues at 8", async () => {
  await using scene = await makeScene();
  const steps: [string, number, string][] = [
    [brief({ title: "First thing" }), 1, "0001-first-thing.md"],
    [brief({ title: "Second thing" }), 2, "0002-second-thing.md"],
    [brief({ title: "Lucky seven", task: 7 }), 7, "0007-lucky-seven.md"],
    [brief({ title: "After seven" }), 8, "0008-after-seven.md"],
  ];
  for (const [text, task, file] of steps) {
    const res = await add(scene, text);
    assert.equal(res.code, 0, res.stderr);
    assert.match(
      res.stdout,
      new RegExp(`^queued task ${task}: .* \\(\\.relay/inbox/${file}\\)\\n$`),
    );
    const stored = await scene.read(`.relay/inbox/${file}`);
    assert.match(stored, new RegExp(`^Status: QUEUED\\nTask: ${task}\\n`));
    assert.match(stored, new RegExp(`^Branch: task-${task}$`, "m"));
    assert.match(stored, /^Kind: feature$/m);
  }
  assert.deepEqual(await queued(scene), steps.map(([, , f]) => f));
});

Deno.test("relay inbox add refuses a task number already in use (exit 2) and queues nothing", async () => {
  await using scene = await makeScene();
  assert.equal((await add(scene, brief({ title: "One" }))).code, 0);
  assert.equal((await add(scene, brief({ title: "Two" }))).code, 0);
  const before = await queued(scene);

  const res = await add(scene, brief({ title: "Two again", task: 2 }), "dup.md");
  assert.equal(res.code, 2, res.stdout);
  assert.match(
    res.stderr,
    /dup\.md \(key "Task"\): task number 2 is already used \(by \.relay\/inbox\/0002-two\.md\)/,
  );
  assert.match(res.stderr, /fix: remove the "Task:" line to get the next free number \(3\)/);
  assert.equal(res.stdout, "");
  assert.deepEqual(await queued(scene), before);
});

Deno.test("relay inbox add counts the open brief and task branches as used numbers", async () => {
  await using scene = await makeScene();
  await scene.write(
    "NEXT-STEPS.md",
    brief({ task: 4, status: "DONE", extraHeader: "Branch: task-4\nKind: feature" }),
  );
  await scene.git(scene.work, ["branch", "task-9"]);
  const used = await add(scene, brief({ task: 4 }));
  assert.equal(used.code, 2);
  assert.match(used.stderr, /task number 4 is already used \(by NEXT-STEPS\.md\)/);
  const branch = await add(scene, brief({ task: 9 }));
  assert.equal(branch.code, 2);
  assert.match(branch.stderr, /task number 9 is already used \(by branch task-9\)/);
  const next = await add(scene, brief({}));
  assert.equal(next.code, 0, next.stderr);
  assert.match(next.stdout, /^queued task 10: /);
});

Deno.test("relay inbox add counts a task's fix rounds as used: a fix brief's number is never handed out again", async () => {
  await using scene = await makeScene();
  // Task 1 went through fix brief 2 (sent back by relay) and 3 (queued by a person) and merged;
  // none of the three numbers is in NEXT-STEPS.md or COWORK-STATUS.md any more.
  const tasks = join(scene.work, ".git", "relay", "tasks");
  await Deno.mkdir(tasks, { recursive: true });
  await Deno.writeTextFile(
    join(tasks, "1.json"),
    JSON.stringify({
      version: 2,
      task: 1,
      rounds: [1, 2, 3].map((b, i) => ({ round: i + 1, brief: b, attempts: [], receipts: [] })),
      review: {
        task: 1,
        branch: "task-1",
        verdicts: [],
        voids: [],
        fixes: [{ task: 2, at: "t", head: "h" }],
      },
    }),
  );
  const dup = await add(scene, brief({ task: 3 }));
  assert.equal(dup.code, 2, dup.stdout);
  assert.match(
    dup.stderr,
    /task number 3 is already used \(by relay's record of task 1 \(a fix round\)\)/,
  );
  const next = await add(scene, brief({ title: "Next" }));
  assert.equal(next.code, 0, next.stderr);
  assert.match(next.stdout, /^queued task 4: /);
});

Deno.test("relay inbox add - reads the brief from stdin", async () => {
  await using scene = await makeScene();
  const res = await scene.relay(["inbox", "add", "-"], {
    stdin: brief({ title: "From a pipe" }),
  });
  assert.equal(res.code, 0, res.stderr);
  assert.equal(res.stdout, "queued task 1: From a pipe (.relay/inbox/0001-from-a-pipe.md)\n");
  assert.match(await scene.read(".relay/inbox/0001-from-a-pipe.md"), /^Title: From a pipe$/m);

  const bad = await scene.relay(["inbox", "add", "-"], { stdin: "Status: QUEUED\nTitle: x\n" });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /<stdin>:\d+: Cannot read the brief: no "## Goal" section/);
});

Deno.test("relay inbox add refuses a malformed brief or a missing file with exit 2, naming the file", async () => {
  await using scene = await makeScene();
  const shell = await add(scene, brief({ bar: ["npm test | tee out.txt"] }), "pipe.md");
  assert.equal(shell.code, 2);
  assert.match(shell.stderr, /^\S+Z relay: error: pipe\.md:\d+: Cannot use verification command/);
  assert.match(shell.stderr, /fix: /);

  const missing = await scene.relay(["inbox", "add", "nowhere.md"]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /Cannot read "nowhere\.md": no such file/);
  assert.deepEqual(await queued(scene), []);
});

Deno.test("relay inbox list shows the queue lowest number first, and --json gives the same as data", async () => {
  await using scene = await makeScene();
  const empty = await scene.relay(["inbox", "list"]);
  assert.equal(empty.code, 0, empty.stderr);
  assert.equal(empty.stdout, "the inbox is empty\n");
  assert.deepEqual(JSON.parse((await scene.relay(["inbox", "list", "--json"])).stdout), []);

  for (const [task, title] of [[12, "Twelve"], [3, "Three"], [7, "Seven"]] as const) {
    assert.equal((await add(scene, brief({ task, title }))).code, 0);
  }
  const list = await scene.relay(["inbox", "list"]);
  assert.equal(list.code, 0, list.stderr);
  assert.equal(
    list.stdout,
    "   3  feature  Three\n   7  feature  Seven\n  12  feature  Twelve\n",
  );
  const json = await scene.relay(["inbox", "list", "--json"]);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(JSON.parse(json.stdout), [
    { task: 3, title: "Three", kind: "feature", file: ".relay/inbox/0003-three.md" },
    { task: 7, title: "Seven", kind: "feature", file: ".relay/inbox/0007-seven.md" },
    { task: 12, title: "Twelve", kind: "feature", file: ".relay/inbox/0012-twelve.md" },
  ]);
});

Deno.test("relay inbox drop removes one queued brief; an unknown number is exit 2", async () => {
  await using scene = await makeScene();
  for (const title of ["Keep me", "Drop me"]) {
    assert.equal((await add(scene, brief({ title }))).code, 0);
  }
  const drop = await scene.relay(["inbox", "drop", "2"]);
  assert.equal(drop.code, 0, drop.stderr);
  assert.equal(drop.stdout, "dropped task 2: Drop me (.relay/inbox/0002-drop-me.md)\n");
  assert.deepEqual(await queued(scene), ["0001-keep-me.md"]);

  const again = await scene.relay(["inbox", "drop", "2"]);
  assert.equal(again.code, 2);
  assert.match(again.stderr, /no queued brief for task 2/);
  const word = await scene.relay(["inbox", "drop", "two"]);
  assert.equal(word.code, 2);
  assert.match(word.stderr, /"two" is not a task number/);
  assert.deepEqual(await queued(scene), ["0001-keep-me.md"]);
});

Deno.test("relay inbox without a known subcommand is a usage error (exit 2)", async () => {
  await using scene = await makeScene();
  for (const args of [["inbox"], ["inbox", "pop"], ["inbox", "add"], ["inbox", "list", "x"]]) {
    const res = await scene.relay(args);
    assert.equal(res.code, 2, args.join(" "));
    assert.match(res.stderr, /Run "relay inbox --help" for usage\./);
  }
});

Deno.test("relay inbox add keeps the Branch of a fix brief that has no Task line", async () => {
  await using scene = await makeScene();
  const res = await add(
    scene,
    brief({ title: "Fix the first", kind: "fix", extraHeader: "Fixes: 1\nBranch: task-1" }),
  );
  assert.equal(res.code, 0, res.stderr);
  const [file] = await queued(scene);
  const stored = await scene.read(`.relay/inbox/${file}`);
  assert.match(stored, /^Task: \d+$/m);
  assert.match(stored, /^Branch: task-1$/m);
  assert.match(stored, /^Fixes: 1$/m);
});
