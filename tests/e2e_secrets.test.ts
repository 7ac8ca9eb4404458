/**
 * End to end, secrets (issue 6, item 10): a key in relay's environment reaches
 * the agent (it needs it) but nothing relay writes — not git, not the forge's
 * records, not relay's logs and records, not its output — and bar commands
 * run without it. A planted value is searched for everywhere after a full
 * poll → review → merge.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { all, brief, makeScene, type RelayResult, type Scene } from "./helpers/scene.ts";

const STANDIN_DIR = new URL("./fixtures/gh-stateful", import.meta.url).pathname;

const KEY = "sk-test-PLANTED-1234567890";
const TOKEN = "tok-PLANTED-abcdef123456";
/** In both values: a part of either one found anywhere is a leak too. */
const MARK = "PLANTED";

/** Every file under `dir` as text, except git's compressed objects (searched through git). */
async function* files(dir: string): AsyncGenerator<{ path: string; text: string }> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) {
      if (entry.name === "objects") continue;
      yield* files(path);
    } else if (entry.isFile) {
      yield { path, text: new TextDecoder().decode(await Deno.readFile(path)) };
    }
  }
}

/** Where the planted values appear: every file of the scene, both repos' whole history, the CLI's output. */
async function leaks(scene: Scene, outputs: RelayResult[]): Promise<string[]> {
  const found: string[] = [];
  for await (const f of files(scene.dir)) {
    if (f.text.includes(MARK)) found.push(relative(scene.dir, f.path));
  }
  for (const repo of [scene.origin, scene.work]) {
    const log = await scene.git(repo, ["log", "--all", "-p", "--format=%H%n%B", "--no-ext-diff"]);
    if (log.stdout.includes(MARK)) found.push(`${relative(scene.dir, repo)}: git log --all -p`);
    const revs = (await scene.out(["rev-list", "--all"], repo)).split("\n");
    const grep = await scene.git(repo, ["grep", "-I", "-l", MARK, ...revs, "--"], true);
    if (grep.stdout.trim() !== "") {
      found.push(`${relative(scene.dir, repo)}: ${grep.stdout.trim()}`);
    }
  }
  outputs.forEach((o, i) => {
    if ((o.stdout + o.stderr).includes(MARK)) found.push(`output of relay call ${i + 1}`);
  });
  return found;
}

/** The open brief: bar commands are argv without a shell, `env` prints what relay gives them. */
async function openBrief(scene: Scene): Promise<void> {
  await scene.write(
    "NEXT-STEPS.md",
    brief({
      status: "OPEN",
      task: 1,
      kind: "feature",
      extraHeader: "Branch: task-1",
      bar: ["env", "printenv DEPLOY_TOKEN", "git ls-files src"],
    }),
  );
}

/** poll → review → merge with the planted values in relay's environment; every output kept. */
async function runToMerge(
  scene: Scene,
  extra: Record<string, string> = {},
): Promise<RelayResult[]> {
  const env = { ANTHROPIC_API_KEY: KEY, DEPLOY_TOKEN: TOKEN, ...extra };
  const outputs: RelayResult[] = [];
  const poll = await scene.relay(["poll"], { env });
  outputs.push(poll);
  assert.equal(poll.code, 0, all(poll));
  assert.match(poll.stdout, /task 1 shipped/);
  const review = await scene.relay(["review"], { env });
  outputs.push(review);
  assert.equal(review.code, 0, all(review));
  assert.match(
    await scene.out(["log", "-1", "--format=%s", "main"], scene.origin),
    /^Merge task-1/,
  );
  outputs.push(
    await scene.relay(["status"], { env }),
    await scene.relay(["status", "--json"], { env }),
  );
  return outputs;
}

Deno.test("a planted API key reaches the agent but appears nowhere relay writes: git, records, logs, output", async () => {
  await using scene = await makeScene({
    agent: "dumps-env.sh",
    config: "bar_env: [DEPLOY_TOKEN]\n",
  });
  await openBrief(scene);
  const outputs = await runToMerge(scene);

  assert.deepEqual(await leaks(scene, outputs), []);

  // The agent had the key (it pasted it) and relay's copies say what was taken out.
  const runs = join(scene.work, ".git", "relay", "runs");
  const [run] = [...Deno.readDirSync(runs)].map((e) => e.name).filter((n) => n.endsWith("-a1"));
  assert.ok(run, "the executor's run folder");
  assert.match(
    await Deno.readTextFile(join(runs, run, "agent.log")),
    /ANTHROPIC_API_KEY=\[redacted:ANTHROPIC_API_KEY\]/,
  );
  const report = await scene.out(["show", "main:COWORK-STATUS.md"], scene.origin);
  assert.match(report, /the key is \[redacted:ANTHROPIC_API_KEY\]/);
  // relay's own run of the bar: `env` ran, and without the key or the token in it…
  const evidence = report.slice(report.indexOf("## Relay evidence"));
  const envRun = evidence.slice(evidence.indexOf("### `env`"), evidence.indexOf("### `printenv"));
  assert.match(envRun, /Exit: 0/);
  assert.match(envRun, /^PATH=/m);
  assert.doesNotMatch(envRun, /ANTHROPIC_API_KEY|GIT_AUTHOR_NAME|XDG_CONFIG_HOME/);
  // …while the token the repo passes through with bar_env was there, and is redacted.
  assert.match(
    evidence,
    /### `printenv DEPLOY_TOKEN`\n\nExit: 0 [^\n]*\n\n```\n\[redacted:DEPLOY_TOKEN\]\n```/,
  );
});

Deno.test("with forge: github the PR body and verdict relay sends through gh carry no planted key", async () => {
  await using scene = await makeScene({
    agent: "dumps-env.sh",
    // Writes its verdict file (in relay's run folder) quoting the key.
    reviewer: "quotes-key.sh",
    config: "forge: github\nbar_env: [DEPLOY_TOKEN]\n",
  });
  const state = join(scene.dir, "gh.json");
  await openBrief(scene);
  const outputs = await runToMerge(scene, {
    PATH: `${STANDIN_DIR}:${scene.env.PATH}`,
    FAKEGH_ORIGIN: scene.origin,
    FAKEGH_STATE: state,
  });
  // The stand-in's state and its log of every argv and stdin relay sent are in the scene.
  assert.deepEqual(await leaks(scene, outputs), []);
  const calls = (await Deno.readTextFile(`${state}.log`)).split("\n").filter((l) => l !== "")
    .map((l) => JSON.parse(l) as { argv: string[]; stdin?: string });
  const create = calls.find((c) => c.argv[0] === "pr" && c.argv[1] === "create");
  assert.match(create?.stdin ?? "", /the key is \[redacted:ANTHROPIC_API_KEY\]/);
  const review = calls.find((c) => c.argv[0] === "pr" && c.argv[1] === "review");
  assert.match(review?.stdin ?? "", /ANTHROPIC_API_KEY=\[redacted:ANTHROPIC_API_KEY\]/);
});
