/**
 * The crontab lines `relay init` prints: a PATH of safe folders only (existing,
 * not world-writable, no cache or temp folder) that still finds git and the
 * agents; a stable command that never downloads (from source: an absolute
 * deno, --cached-only, a pinned DENO_DIR) and writes no colour codes; and the
 * lines, run as cron runs them, take a brief to merged.
 */
import assert from "node:assert/strict";
import { delimiter, dirname, join } from "node:path";
import { AGENTS, all, brief, makeScene, ROOT, type Scene } from "./helpers/scene.ts";
import { cronCommand } from "../lib/cli/crontab.ts";
import { cronPath, programNotes, type SafetyContext, unsafeDir } from "../lib/cli/cron_path.ts";
import { findProgram } from "../lib/agents/which.ts";

async function mkdir(path: string, mode = 0o755): Promise<string> {
  await Deno.mkdir(path, { recursive: true });
  await Deno.chmod(path, mode);
  return path;
}

async function script(path: string, text: string): Promise<string> {
  await Deno.writeTextFile(path, text);
  await Deno.chmod(path, 0o755);
  return path;
}

/** The PATH= line and the two tick lines of init's output. */
function printed(stdout: string): { path: string; poll: string; review: string } {
  const lines = stdout.split("\n");
  const path = lines.find((l) => l.startsWith("PATH="));
  const ticks = lines.filter((l) => l.startsWith("* * * * * "));
  assert.ok(path, stdout);
  assert.equal(ticks.length, 2, stdout);
  return {
    path: path.slice("PATH=".length),
    poll: ticks[0]!.slice("* * * * * ".length),
    review: ticks[1]!.slice("* * * * * ".length),
  };
}

Deno.test("unsafeDir() refuses missing, world-writable (also sticky), cache and temp folders, and keeps a plain one", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-path-" });
  try {
    const ctx: SafetyContext = { home: dir, denoDir: join(dir, "deno-dir"), tmpDirs: [] };
    const plain = await mkdir(join(dir, "bin"));
    assert.equal(unsafeDir(plain, ctx), null);
    assert.equal(unsafeDir(join(dir, "missing"), ctx), "does not exist");
    assert.equal(unsafeDir(await mkdir(join(dir, "ww"), 0o777), ctx), "world-writable");
    assert.match(
      unsafeDir(await mkdir(join(dir, "sticky"), 0o1777), ctx)!,
      /^world-writable \(sticky/,
    );
    assert.match(
      unsafeDir(await mkdir(join(dir, ".npm", "_npx", "1a2b", "node_modules", ".bin")), ctx)!,
      /npx cache/,
    );
    assert.match(
      unsafeDir(await mkdir(join(dir, "app", "node_modules", ".bin")), ctx)!,
      /node_modules\/\.bin/,
    );
    assert.match(unsafeDir(await mkdir(join(dir, "deno-dir", "bin")), ctx)!, /Deno's module cache/);
    await Deno.writeTextFile(join(dir, "file"), "");
    assert.equal(unsafeDir(join(dir, "file"), ctx), "not a folder");
    assert.equal(unsafeDir("bin", ctx), "a relative folder");
    // A folder under a temp folder, however its bits are set.
    assert.match(unsafeDir(plain, { ...ctx, tmpDirs: [dir] })!, /^under .* \(a temp folder\)$/);
    // A symlink into a cache counts as the cache.
    await Deno.symlink(join(dir, "app", "node_modules", ".bin"), join(dir, "link"));
    assert.match(unsafeDir(join(dir, "link"), ctx)!, /node_modules\/\.bin/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cronPath() keeps the safe entries in order, then relay's folder and the standard ones", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-path-" });
  try {
    const ctx: SafetyContext = { home: dir, tmpDirs: [] };
    const a = await mkdir(join(dir, "a"));
    const b = await mkdir(join(dir, "b"));
    const ww = await mkdir(join(dir, "ww"), 0o1777);
    const relayDir = await mkdir(join(dir, "relay-bin"));
    const { dirs, dropped } = cronPath(
      [ww, b, "", "rel", `${a}/`, join(dir, "gone"), b, "/usr/bin"].join(delimiter),
      [relayDir],
      ctx,
    );
    const std = ["/usr/local/bin", "/bin"].filter((d) => unsafeDir(d, ctx) === null);
    assert.deepEqual(dirs, [b, a, "/usr/bin", relayDir, ...std]);
    assert.deepEqual(dropped.map((d) => d.dir), [ww, "(empty)", "rel", join(dir, "gone")]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("programNotes() says which program cron finds elsewhere or not at all, including a script's interpreter", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-path-" });
  try {
    const ww = await mkdir(join(dir, "ww"), 0o777);
    const ok = await mkdir(join(dir, "ok"));
    const git = (await findProgram("git", Deno.env.get("PATH") ?? ""))!;
    await script(join(ww, "git"), `#!/bin/sh\nexec ${git} "$@"\n`);
    await script(join(ww, "only-here"), "#!/bin/sh\n");
    await script(join(ww, "interp"), "#!/bin/sh\n");
    await script(join(ok, "agent"), "#!/usr/bin/env interp\n");
    await script(join(ok, "gone-interp"), "#!/opt/relay-no-such/node\n");
    const cron = [ok, dirname(git)];
    const notes = await programNotes(
      ["git", "only-here", "agent", join(dir, "absent"), "gone-interp"],
      [ww, ok, dirname(git)].join(delimiter),
      cron,
    );
    assert.deepEqual(notes, [
      `note: "git" is ${join(ww, "git")} here, but under cron ${
        join(dirname(git), "git")
      }: the folder of ${join(ww, "git")} is left out of PATH`,
      `warning: cron will not find "only-here": here it is ${
        join(ww, "only-here")
      }, in a folder left out of PATH; install it in a safe folder (e.g. /usr/local/bin or ~/.local/bin)`,
      `warning: "${join(dir, "absent")}" is not an executable file: fix the operator profile`,
      `warning: "gone-interp" (${
        join(ok, "gone-interp")
      }) will not start: its first line (#!/opt/relay-no-such/node) names /opt/relay-no-such/node, which is not an executable file`,
      `warning: cron will not find "interp": here it is ${
        join(ww, "interp")
      }, in a folder left out of PATH; install it in a safe folder (e.g. /usr/local/bin or ~/.local/bin)`,
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cronCommand() quotes what needs quoting and escapes cron's %", () => {
  const line = cronCommand(
    {
      env: { NO_COLOR: "1", DENO_DIR: "/srv/deno dir" },
      argv: ["/opt/relay"],
      dir: "/opt",
      notes: [],
    },
    ["-C", "/srv/app 50%", "poll", "--quiet"],
    "/srv/app/.git/relay/cron.log",
  );
  assert.equal(
    line,
    "NO_COLOR=1 DENO_DIR='/srv/deno dir' /opt/relay -C '/srv/app 50\\%' poll --quiet >> /srv/app/.git/relay/cron.log 2>&1",
  );
});

Deno.test("relay init's PATH line leaves out a world-writable, a cache and a missing folder and says why; git still resolves", async () => {
  await using scene = await makeScene({ bare: true });
  const ww = await mkdir(join(scene.dir, "shared"), 0o1777);
  const git = (await findProgram("git", scene.env.PATH!))!;
  // Someone planted a `git` in the world-writable folder, first on PATH.
  await script(join(ww, "git"), `#!/bin/sh\nexec ${git} "$@"\n`);
  const cache = await mkdir(join(scene.env.HOME!, ".npm", "_npx", "9f8e", "node_modules", ".bin"));
  const missing = join(scene.dir, "not-there");
  const PATH = [ww, cache, missing, scene.env.PATH!].join(delimiter);

  const res = await scene.relay(["init"], { env: { PATH } });
  assert.equal(res.code, 0, all(res));
  const dirs = printed(res.stdout).path.split(":");
  for (const bad of [ww, cache, missing]) assert.ok(!dirs.includes(bad), `${bad} in ${dirs}`);
  assert.ok(dirs.includes(dirname(git)), dirs.join(":"));
  for (const std of ["/usr/bin", "/bin"]) assert.ok(dirs.includes(std), dirs.join(":"));
  for (const d of dirs) assert.equal(unsafeDir(d, { tmpDirs: ["/tmp"] }), null, d);
  assert.match(res.stdout, new RegExp(`Left out of PATH: ${ww} \\(world-writable \\(sticky`));
  assert.ok(
    res.stdout.includes(`${cache} (inside npm's npx cache (npm may delete it))`),
    res.stdout,
  );
  assert.ok(res.stdout.includes(`${missing} (does not exist)`), res.stdout);
  assert.ok(
    res.stdout.includes(`note: "git" is ${join(ww, "git")} here, but under cron ${git}`),
    res.stdout,
  );
  assert.doesNotMatch(res.stdout, /warning: cron will not find/);
});

Deno.test("from source, relay init prints a stable deno command: absolute deno, --cached-only, pinned DENO_DIR, NO_COLOR, -P=relay, relay's deno.json and main.ts", async () => {
  await using scene = await makeScene({ bare: true });
  const res = await scene.relay(["init"]);
  assert.equal(res.code, 0, all(res));
  const { poll, review } = printed(res.stdout);
  // The deno running relay now (by its path on PATH when it has one), not a cached one.
  const deno = poll.split(" ")[2]!;
  assert.equal(await Deno.realPath(deno), await Deno.realPath(Deno.execPath()));
  const prefix =
    `NO_COLOR=1 DENO_DIR=${scene.env.DENO_DIR} ${deno} run --quiet --cached-only --frozen --config ${
      join(ROOT, "deno.json")
    } -P=relay ${join(ROOT, "main.ts")} -C ${scene.work} --profile ${scene.profile} `;
  assert.equal(
    poll,
    `${prefix}poll --quiet >> ${join(scene.work, ".git", "relay", "cron.log")} 2>&1`,
  );
  assert.equal(
    review,
    `${prefix}review --quiet >> ${join(scene.work, ".git", "relay", "cron.log")} 2>&1`,
  );
  assert.doesNotMatch(res.stdout, /warning:/);
});

/** Runs a crontab line the way cron does: sh, from HOME, with only cron's environment. */
async function asCron(scene: Scene, path: string, line: string): Promise<number> {
  const out = await new Deno.Command("sh", {
    args: ["-c", line],
    cwd: scene.env.HOME!,
    env: { HOME: scene.env.HOME!, PATH: path, SHELL: "/bin/sh", LOGNAME: "relay-test" },
    clearEnv: true,
    stdin: "null",
  }).output();
  return out.code;
}

Deno.test("the printed lines, run as cron runs them, take a brief to merged, and cron.log has no colour codes", async () => {
  await using scene = await makeScene();
  // cron has no GIT_CONFIG_GLOBAL: the identity comes from ~/.gitconfig.
  await Deno.copyFile(scene.env.GIT_CONFIG_GLOBAL!, join(scene.env.HOME!, ".gitconfig"));
  // An executor that writes colour codes to both streams.
  const colourful = await script(
    join(scene.dir, "colourful.sh"),
    `#!/usr/bin/env bash\nprintf '\\033[31mred\\033[0m\\n'; printf '\\033[32mgreen\\033[0m\\n' >&2\nexec bash ${
      join(AGENTS, "good.sh")
    } "$@"\n`,
  );
  await scene.setAgent(["bash", colourful, "{prompt}"]);
  const init = await scene.relay(["init"]);
  assert.equal(init.code, 0, all(init));
  const cron = printed(init.stdout);
  const queued = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title: "By cron" }) });
  assert.equal(queued.code, 0, all(queued));
  assert.equal((await scene.relay(["promote"])).code, 0);

  assert.equal(await asCron(scene, cron.path, cron.poll), 0);
  assert.equal(await asCron(scene, cron.path, cron.review), 0);
  const log = await Deno.readTextFile(join(scene.work, ".git", "relay", "cron.log"));
  assert.match(log, /task 1 shipped/);
  assert.match(log, /task 1 merged/);
  assert.ok(!log.includes("\x1b"), JSON.stringify(log));
  assert.match(await scene.out(["log", "-1", "--format=%s", "origin/main"]), /^Merge task-1: /);
});

Deno.test("a tick whose pinned cache lost relay's dependencies fails in cron.log without downloading and without colour codes", async () => {
  await using scene = await makeScene();
  const init = await scene.relay(["init"]);
  assert.equal(init.code, 0, all(init));
  const cron = printed(init.stdout);
  const queued = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title: "No cache" }) });
  assert.equal(queued.code, 0, all(queued));
  assert.equal((await scene.relay(["promote"])).code, 0);
  // The common profile is read without yaml or zod (lib/config/profile_load.ts): this one
  // starts with a document marker, so the full parser reads it and the tick needs both.
  await Deno.writeTextFile(scene.profile, `---\n${await Deno.readTextFile(scene.profile)}`);
  // The same line with the pinned DENO_DIR swapped for an empty one.
  const empty = await mkdir(join(scene.dir, "empty-deno-dir"));
  const pinned = `DENO_DIR=${scene.env.DENO_DIR} `;
  assert.ok(cron.poll.includes(pinned), cron.poll);
  const code = await asCron(scene, cron.path, cron.poll.replace(pinned, `DENO_DIR=${empty} `));
  assert.notEqual(code, 0);
  const log = await Deno.readTextFile(join(scene.work, ".git", "relay", "cron.log"));
  assert.match(log, /--cached-only/);
  assert.ok(!log.includes("\x1b"), JSON.stringify(log));
  // Nothing was fetched into the empty cache.
  const npm = join(empty, "npm");
  const fetched = await Array.fromAsync(Deno.readDir(npm)).catch(() => []);
  assert.deepEqual(fetched, []);
});

/** relay init run by a deno at `deno` (as `npx deno` would run it), with this PATH. */
async function initWith(scene: Scene, deno: string, PATH: string) {
  const out = await new Deno.Command(deno, {
    args: [
      "run",
      "--quiet",
      `--config=${join(ROOT, "deno.json")}`,
      "-P=relay",
      join(ROOT, "main.ts"),
      "init",
    ],
    cwd: scene.work,
    env: { ...scene.env, PATH },
    clearEnv: true,
    stdin: "null",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test("run by a deno in npm's npx cache, relay init uses a stable deno from PATH, or warns and says how to install one", async () => {
  await using scene = await makeScene({ bare: true });
  // The deno binary as npx installs it, under ~/.npm/_npx/<hash>/.
  const npx = join(scene.env.HOME!, ".npm", "_npx", "5c1d", "node_modules");
  const npxDeno = join(npx, "deno", "deno");
  await mkdir(join(npx, "deno"));
  await mkdir(join(npx, ".bin"));
  const real = await Deno.realPath(Deno.execPath());
  await Deno.link(real, npxDeno).catch(() => Deno.copyFile(real, npxDeno));
  await Deno.symlink(npxDeno, join(npx, ".bin", "deno"));
  const git = (await findProgram("git", scene.env.PATH!))!;
  const stable = (await findProgram("deno", scene.env.PATH!))!;
  assert.ok(stable, "this machine has a deno on PATH");

  // A stable deno on PATH: the lines use it, and init says why.
  const withStable = await initWith(
    scene,
    npxDeno,
    [join(npx, ".bin"), dirname(stable), dirname(git)].join(":"),
  );
  assert.equal(withStable.code, 0, all(withStable));
  assert.ok(
    withStable.stdout.includes(
      `note: the deno running relay init (${npxDeno}) is inside npm's npx cache (npm may delete it); the crontab lines use ${stable} instead`,
    ),
    withStable.stdout,
  );
  assert.equal(printed(withStable.stdout).poll.split(" ")[2], stable);

  // Only the npx deno: the lines name it, with a warning that says what to install.
  const gitOnly = await mkdir(join(scene.dir, "git-only"));
  await Deno.symlink(git, join(gitOnly, "git"));
  const alone = await initWith(scene, npxDeno, [join(npx, ".bin"), gitOnly].join(":"));
  assert.equal(alone.code, 0, all(alone));
  assert.ok(
    alone.stdout.includes(
      `warning: the only deno found is ${npxDeno}, inside npm's npx cache (npm may delete it): the crontab lines stop working when it goes. Install a stable one (npm install -g deno@${Deno.version.deno}) and run relay init again`,
    ),
    alone.stdout,
  );
  assert.equal(printed(alone.stdout).poll.split(" ")[2], npxDeno);
  assert.ok(!printed(alone.stdout).path.split(":").includes(join(npx, ".bin")));
});
