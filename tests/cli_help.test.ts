/** `relay --help`, `relay <command> --help` and `relay version`, through the real CLI. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { brief, makeScene, ROOT } from "./helpers/scene.ts";
import { HELP, VERSION } from "../lib/cli/help.ts";
import { COMMANDS as DISPATCHED } from "../lib/cli/dispatch.ts";
import { profilePath } from "../lib/config/profile.ts";
import { isRelayWorktree } from "../lib/cli/args.ts";

/** The commands relay dispatches (lib/cli/dispatch.ts; importing it also type-checks it). */
const COMMANDS = Object.keys(DISPATCHED);

Deno.test("every command relay dispatches has help text, and the help names no other command", () => {
  assert.ok(COMMANDS.length >= 8, COMMANDS.join(", "));
  for (
    const command of ["init", "inbox", "promote", "poll", "status", "resume", "demo", "version"]
  ) {
    assert.ok(COMMANDS.includes(command), command);
  }
  assert.deepEqual(
    Object.keys(HELP).filter((k) => k !== "relay").sort(),
    [...COMMANDS].sort(),
  );
});

Deno.test("relay --help lists every command and the exit codes, and exits 0", async () => {
  await using scene = await makeScene();
  for (const args of [["--help"], ["-h"], ["help"]]) {
    const res = await scene.relay(args);
    assert.equal(res.code, 0, `${args.join(" ")}: ${res.stderr}`);
    assert.equal(res.stdout, `${HELP.relay}\n`);
    for (const command of COMMANDS) assert.match(res.stdout, new RegExp(`^  ${command} `, "m"));
    assert.match(res.stdout, /Exit codes: 0 done, idle or busy; 1 failure; 2 bad input/);
  }
});

Deno.test("relay with no command prints the help and exits 2", async () => {
  await using scene = await makeScene();
  const res = await scene.relay([]);
  assert.equal(res.code, 2);
  assert.equal(res.stdout, `${HELP.relay}\n`);
});

Deno.test("relay <command> --help exits 0 with that command's usage, even outside a repository", async () => {
  await using scene = await makeScene();
  for (const command of COMMANDS) {
    for (
      const args of [[command, "--help"], [command, "-h"], ["--help", command], ["help", command]]
    ) {
      // scene.dir holds the clone but is not itself a repository.
      const res = await scene.relay(args, { cwd: scene.dir });
      assert.equal(res.code, 0, `${args.join(" ")}: ${res.stderr}`);
      assert.equal(res.stdout, `${HELP[command]}\n`, args.join(" "));
      assert.match(res.stdout, new RegExp(`^Usage: relay ${command}`));
      assert.equal(res.stderr, "");
    }
  }
});

Deno.test("relay rejects an unknown command or option with exit 2 and a pointer to --help", async () => {
  await using scene = await makeScene();
  const command = await scene.relay(["frobnicate"]);
  assert.equal(command.code, 2);
  assert.match(command.stderr, /relay: error: unknown command "frobnicate"/);
  assert.match(command.stderr, /Run "relay --help" for usage\./);

  const option = await scene.relay(["status", "--bogus"]);
  assert.equal(option.code, 2);
  assert.match(option.stderr, /--bogus/);
  assert.match(option.stderr, /Run "relay status --help" for usage\./);
});

Deno.test("relay version prints the version, and --json the same as data", async () => {
  await using scene = await makeScene();
  const text = await scene.relay(["version"]);
  assert.equal(text.code, 0, text.stderr);
  assert.equal(
    text.stdout,
    `relay ${VERSION} (deno ${Deno.version.deno}, ${Deno.build.os}-${Deno.build.arch})\n`,
  );
  const flag = await scene.relay(["--version"]);
  assert.equal(flag.code, 0, flag.stderr);
  assert.equal(flag.stdout, text.stdout);

  const json = await scene.relay(["version", "--json"]);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(JSON.parse(json.stdout), {
    version: VERSION,
    deno: Deno.version.deno,
    os: Deno.build.os,
    arch: Deno.build.arch,
  });
  assert.match(VERSION, /^\d+\.\d+\.\d+/);
});

Deno.test("relay refuses to act on a task worktree or on relay's own source checkout, and says where to run", async () => {
  await using scene = await makeScene();
  await scene.relay(["inbox", "add", "-"], { stdin: brief({ title: "Somewhere" }) });
  await scene.relay(["promote"]);
  assert.equal((await scene.relay(["poll"])).code, 0);
  const inWorktree = await scene.relay(["status"], { cwd: join(scene.worktrees, "task-1") });
  assert.equal(inWorktree.code, 2);
  assert.match(
    inWorktree.stderr,
    /is one of relay's task or review worktrees; .* relay -C .*\/work /,
  );
  const inSource = await scene.relay(["status"], { cwd: ROOT });
  assert.equal(inSource.code, 2);
  assert.match(
    inSource.stderr,
    /relay's own source checkout, not your project .* Pass -C <your repository>/,
  );
});

Deno.test("relay's worktrees are known by name, and so is what relay moved aside: a stale review checkout, a voided turn's folder, a set-aside run's worktree", () => {
  const root = "/home/me/app.relay-worktrees";
  for (
    const name of [
      "task-1",
      "task-12",
      "review",
      "review-20261206T024536.467Z-4c53ab",
      "review-20261206T024536.467Z-4c53ab.void",
      "review.stale-20261206T024536.467Z-4c53ab",
      "spare",
      "task-3.void",
    ]
  ) {
    assert.ok(isRelayWorktree(join(root, name)), name);
    // Wherever the worktree root is (worktree_root in the profile), the names say it.
    assert.ok(isRelayWorktree(join("/srv/wt", name)), `/srv/wt/${name}`);
  }
  // A set-aside run's worktree: by the folder relay moves it to.
  assert.ok(isRelayWorktree("/srv/wt/.relay-aside/task-1-20261206T024536.467Z-4c53ab-task1-a1"));
  for (const other of ["/srv/app", "/srv/wt/tasks", "/srv/wt/task-1b", "/srv/wt/reviewer"]) {
    assert.equal(isRelayWorktree(other), false, other);
  }
});

Deno.test("relay --help names every place the profile is looked for, in profilePath()'s order", () => {
  const env = (vars: Record<string, string>) => ({ get: (name: string) => vars[name] });
  const all = { RELAY_PROFILE: "/p.yaml", XDG_CONFIG_HOME: "/x", HOME: "/h" };
  assert.equal(profilePath("/f.yaml", env(all)), "/f.yaml");
  assert.equal(profilePath(undefined, env(all)), "/p.yaml");
  assert.equal(profilePath(undefined, env({ ...all, RELAY_PROFILE: "" })), "/x/relay/profile.yaml");
  assert.equal(profilePath(undefined, env({ HOME: "/h" })), "/h/.config/relay/profile.yaml");
  const places = [
    "--profile <file>",
    "$RELAY_PROFILE",
    "$XDG_CONFIG_HOME/relay/profile.yaml",
    "~/.config/relay/profile.yaml",
  ].map((place) => [place, HELP.relay!.indexOf(place)] as const);
  for (const [place, at] of places) assert.ok(at >= 0, `relay --help does not name ${place}`);
  const found = places.map(([, at]) => at);
  assert.deepEqual(found, [...found].sort((a, b) => a - b), "out of order");
});

Deno.test("init --help counts the crontab lines relay init prints; demo --help says it reviews and merges", async () => {
  await using scene = await makeScene({ bare: true });
  await Deno.remove(scene.profile);
  const res = await scene.relay(["init"]);
  assert.equal(res.code, 0, res.stderr);
  const lines = res.stdout.split("\n").filter((l) => /^(PATH=|\* \* \* \* \* )/.test(l));
  const words = ["none", "one", "two", "three", "four", "five"];
  assert.match(
    HELP.init!,
    new RegExp(`prints the ${words[lines.length]} crontab lines`),
    res.stdout,
  );
  assert.match(HELP.init!, /\(PATH, the poll tick\s+and the review tick\)/);
  assert.match(HELP.demo!, /runs promote, then poll and review for\s+each brief/);
  assert.match(HELP.demo!, /the gate, the merge/);
});

Deno.test("every command's module exports the function dispatch calls (loaded by a computed specifier, unchecked by deno check main.ts)", async () => {
  for (const [command, [file, name]] of Object.entries(DISPATCHED)) {
    const module = await import(new URL(`../lib/cli/${file}`, import.meta.url).href);
    assert.equal(typeof module[name], "function", `${command}: lib/cli/${file} exports ${name}`);
  }
});
