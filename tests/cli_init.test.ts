/** `relay init` through the real CLI, in a bare product repository (no relay files yet). */
import assert from "node:assert/strict";
import { join } from "node:path";
import { exists, makeScene, ROOT, type Scene } from "./helpers/scene.ts";
import { renderDefaultRepoConfig } from "../lib/config/repo.ts";
import { renderDefaultProfile } from "../lib/config/profile.ts";

const INSTALLED = [
  ".relay/config.yaml",
  ".relay/inbox/.gitkeep",
  "REVIEWER.md",
  ".relay/PLAN.md",
  ".relay/POLISH.md",
  ".relay/DOCS.md",
  ".relay/SECURITY.md",
  "CLAUDE.md",
  "AGENTS.md",
];

/** A product repo without relay's files and without an operator profile. */
async function bareScene(): Promise<Scene> {
  const scene = await makeScene({ bare: true });
  await Deno.remove(scene.profile);
  return scene;
}

async function template(name: string): Promise<string> {
  return await Deno.readTextFile(join(ROOT, "relay", name));
}

/** Every installed file and the profile, byte for byte. */
async function installedBytes(scene: Scene): Promise<Map<string, Uint8Array>> {
  const bytes = new Map<string, Uint8Array>();
  for (const file of INSTALLED) bytes.set(file, await Deno.readFile(join(scene.work, file)));
  bytes.set("profile", await Deno.readFile(scene.profile));
  return bytes;
}

Deno.test("relay init writes config, inbox, agent instructions and the profile, and prints a crontab line", async () => {
  await using scene = await bareScene();
  const res = await scene.relay(["init"]);
  assert.equal(res.code, 0, res.stderr);

  assert.equal(await scene.read(".relay/config.yaml"), renderDefaultRepoConfig());
  assert.equal(await scene.read(".relay/inbox/.gitkeep"), "");
  for (const name of ["REVIEWER.md", "CLAUDE.md", "AGENTS.md"]) {
    assert.equal(await scene.read(name), await template(name), name);
  }
  for (const name of ["PLAN.md", "POLISH.md", "DOCS.md", "SECURITY.md"]) {
    assert.equal(await scene.read(`.relay/${name}`), await template(name), name);
  }
  // The profile goes to $XDG_CONFIG_HOME/relay/profile.yaml, outside the repository.
  assert.equal(scene.profile, join(scene.env.XDG_CONFIG_HOME!, "relay", "profile.yaml"));
  assert.equal(await Deno.readTextFile(scene.profile), renderDefaultProfile());
  // Readable by its owner alone (umask may take bits away, never add them).
  assert.equal((await Deno.stat(scene.profile)).mode! & 0o077, 0);

  for (const file of INSTALLED) assert.match(res.stdout, new RegExp(`^wrote +${file}$`, "m"));
  assert.match(res.stdout, new RegExp(`^wrote +operator profile ${scene.profile}$`, "m"));
  const cron = res.stdout.split("\n").filter((l) => l.startsWith("* * * * * "));
  assert.equal(cron.length, 2, res.stdout);
  assert.match(cron[0]!, / -C \S+ --profile \S+ poll --quiet >> \S+cron\.log 2>&1$/);
  assert.match(cron[1]!, / -C \S+ --profile \S+ review --quiet >> \S+cron\.log 2>&1$/);
  // cron's environment has no XDG_CONFIG_HOME: the line names the profile init wrote.
  assert.ok(cron[0]!.includes(` -C ${scene.work} --profile ${scene.profile} poll `), cron[0]);
  assert.match(res.stdout, /^PATH=\S+$/m);
  assert.match(
    res.stdout,
    /git add \.relay\/config\.yaml \.relay\/inbox\/\.gitkeep REVIEWER\.md \.relay\/PLAN\.md \.relay\/POLISH\.md \.relay\/DOCS\.md \.relay\/SECURITY\.md CLAUDE\.md AGENTS\.md\n/,
  );
});

Deno.test("the crontab line relay init prints runs an idle tick that exits 0 and logs nothing", async () => {
  await using scene = await bareScene();
  const res = await scene.relay(["init"]);
  assert.equal(res.code, 0, res.stderr);
  const line = res.stdout.split("\n").find((l) => l.startsWith("* * * * * "));
  assert.ok(line, res.stdout);
  // What cron does with the line: hand the command part to sh, from the home folder.
  const out = await new Deno.Command("sh", {
    args: ["-c", line.slice("* * * * * ".length)],
    cwd: scene.env.HOME!,
    env: scene.env,
    clearEnv: true,
    stdin: "null",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  assert.equal(stderr, "");
  assert.equal(await Deno.readTextFile(join(scene.work, ".git", "relay", "cron.log")), "");
});

Deno.test("relay init commits nothing and changes no ref", async () => {
  await using scene = await bareScene();
  const log = await scene.out(["log", "--all", "--format=%H %s"]);
  const refs = await scene.out(["for-each-ref", "--format=%(refname) %(objectname)"]);
  const res = await scene.relay(["init", "--web-root"]);
  assert.equal(res.code, 0, res.stderr);
  assert.equal(await scene.out(["log", "--all", "--format=%H %s"]), log);
  assert.equal(await scene.out(["for-each-ref", "--format=%(refname) %(objectname)"]), refs);
  assert.equal(await scene.out(["diff", "--cached", "--name-only"]), "");
  const untracked = await scene.out(["status", "--porcelain=v1", "--untracked-files=all"]);
  assert.deepEqual(untracked.split("\n").sort(), [
    "?? .relay/DOCS.md",
    "?? .relay/PLAN.md",
    "?? .relay/POLISH.md",
    "?? .relay/SECURITY.md",
    "?? .relay/config.yaml",
    "?? .relay/inbox/.gitkeep",
    "?? REVIEWER.md",
  ]);
});

Deno.test("a second relay init overwrites nothing, not even a file edited by hand", async () => {
  await using scene = await bareScene();
  assert.equal((await scene.relay(["init"])).code, 0);
  await scene.write("CLAUDE.md", "# What this project is NOT\n\n- Not the billing service.\n");
  await scene.write(".relay/config.yaml", "version: 1\nattempts: 3\n");
  await Deno.writeTextFile(scene.profile, "roles:\n  executor: { vendor: demo }\n");
  const before = await installedBytes(scene);

  const again = await scene.relay(["init"]);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(await installedBytes(scene), before);
  for (const file of INSTALLED) {
    assert.match(again.stdout, new RegExp(`^kept +${file} \\(already there\\)$`, "m"));
  }
  assert.match(again.stdout, /^kept +operator profile .* \(already there\)$/m);
  assert.doesNotMatch(again.stdout, /^wrote/m);
  assert.doesNotMatch(again.stdout, /git add/, "nothing new to commit: no commit advice");
  assert.match(again.stdout, /already set up here; nothing to commit/);
});

Deno.test("relay init --web-root git-excludes CLAUDE.md and AGENTS.md once, however often it runs", async () => {
  await using scene = await bareScene();
  const exclude = join(scene.work, ".git", "info", "exclude");
  const original = await Deno.readTextFile(exclude).catch(() => "");

  const first = await scene.relay(["init", "--web-root"]);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /excluded CLAUDE\.md and AGENTS\.md from git/);
  // The suggested `git add` leaves out the two excluded files.
  assert.match(
    first.stdout,
    /git add \.relay\/config\.yaml \.relay\/inbox\/\.gitkeep REVIEWER\.md \.relay\/PLAN\.md \.relay\/POLISH\.md \.relay\/DOCS\.md \.relay\/SECURITY\.md\n/,
  );

  const second = await scene.relay(["init", "--web-root"]);
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, /kept +\.git\/info\/exclude/);

  const text = await Deno.readTextFile(exclude);
  assert.ok(text.startsWith(original), "the existing exclude lines are kept");
  const lines = text.split("\n");
  assert.equal(lines.filter((l) => l === "/CLAUDE.md").length, 1, text);
  assert.equal(lines.filter((l) => l === "/AGENTS.md").length, 1, text);
  assert.ok(await exists(join(scene.work, "CLAUDE.md")));
  assert.equal(await scene.out(["check-ignore", "CLAUDE.md", "AGENTS.md"]), "CLAUDE.md\nAGENTS.md");
});

Deno.test("relay -C <path> init works from another folder", async () => {
  await using scene = await bareScene();
  for (const path of [scene.work, "work"]) {
    const res = await scene.relay(["-C", path, "init"], { cwd: scene.dir });
    assert.equal(res.code, 0, res.stderr);
    assert.ok(res.stdout.includes(` -C ${scene.work} --profile `), res.stdout);
  }
  for (const file of INSTALLED) assert.ok(await exists(join(scene.work, file)), file);
  assert.ok(!(await exists(join(scene.dir, ".relay"))), "nothing is written in the current folder");
});

Deno.test("relay init from a subfolder installs at the repository root, and its git add and commit work from there", async () => {
  await using scene = await bareScene();
  const src = join(scene.work, "src");
  const res = await scene.relay(["init"], { cwd: src });
  assert.equal(res.code, 0, res.stderr);
  for (const file of INSTALLED) assert.ok(await exists(join(scene.work, file)), file);
  assert.ok(!(await exists(join(scene.work, "src", ".relay"))));
  assert.ok(!(await exists(join(scene.work, "src", "CLAUDE.md"))));
  assert.ok(res.stdout.includes(` -C ${scene.work} --profile `), res.stdout);

  // The person pastes the two git lines init printed, in the subfolder they ran it from.
  const lines = res.stdout.split("\n").map((l) => l.trim());
  const add = lines.find((l) => / add /.test(l) && l.startsWith("git"));
  const commit = lines.find((l) => / commit -m /.test(l) && l.startsWith("git"));
  assert.ok(add && commit, res.stdout);
  assert.equal(add, `git -C ${scene.work} add ${INSTALLED.join(" ")}`);
  for (const line of [add, commit]) {
    const out = await new Deno.Command("sh", {
      args: ["-c", line],
      cwd: src,
      env: scene.env,
      clearEnv: true,
      stdin: "null",
    }).output();
    assert.equal(out.code, 0, `${line}: ${new TextDecoder().decode(out.stderr)}`);
  }
  const pushed = await scene.out(["ls-tree", "-r", "--name-only", "origin/main"]);
  for (const file of INSTALLED) assert.ok(pushed.split("\n").includes(file), pushed);
});

Deno.test("relay init --profile <file> writes the profile there", async () => {
  await using scene = await bareScene();
  const res = await scene.relay(["--profile", "../operator.yaml", "init"]);
  assert.equal(res.code, 0, res.stderr);
  const path = join(scene.dir, "operator.yaml");
  assert.equal(await Deno.readTextFile(path), renderDefaultProfile());
  assert.ok(!(await exists(scene.profile)));
  assert.ok(res.stdout.includes(` --profile ${path} poll --quiet `), res.stdout);
});

Deno.test("relay init outside a repository is a usage error (exit 2) that writes nothing", async () => {
  await using scene = await bareScene();
  const res = await scene.relay(["init"], { cwd: scene.dir });
  assert.equal(res.code, 2);
  assert.match(res.stderr, /Cannot find a git repository at or above/);
  assert.ok(!(await exists(join(scene.dir, ".relay"))));
  assert.ok(!(await exists(scene.profile)));
});
