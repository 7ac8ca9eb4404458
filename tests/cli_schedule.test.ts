/**
 * `relay schedule`: installs the two ticks into a crontab file (or through a
 * `crontab` program), systemd user units or launchd agents in a temporary
 * folder, reads them back, and removes exactly what it wrote. A line of the
 * crontab block, run as sh would with nothing but its own environment, is a
 * real tick.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { all, exists, makeScene, type Scene } from "./helpers/scene.ts";
import { installedSchedulePath } from "../lib/cli/schedule_files.ts";
import { findProgram } from "../lib/agents/which.ts";

/** A person's crontab: a global PATH= line, a MAILTO and two jobs, one without a final newline. */
const PERSONAL = "PATH=/opt/mine/bin:/usr/bin:/bin\nMAILTO=me@example.invalid\n" +
  "0 3 * * * /usr/local/bin/backup --all\n# a comment of mine\n*/5 * * * * echo 50\\% done\n";

/** The lines of relay's block for `root` in a crontab text (BEGIN to END). */
function block(text: string, root: string): string[] {
  const lines = text.split("\n");
  const start = lines.findIndex((l) => l.startsWith(`# BEGIN relay ${root} (`));
  const end = lines.indexOf(`# END relay ${root}`);
  assert.ok(start >= 0 && end > start, text);
  return lines.slice(start, end + 1);
}

async function listDir(dir: string): Promise<string[]> {
  if (!(await exists(dir))) return [];
  return (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).sort();
}

/** A second repository, at a path with a space and a % in it (cron and systemd both care). */
async function secondRepo(scene: Scene): Promise<string> {
  const root = join(scene.dir, "my app 50%");
  await scene.git(scene.dir, ["clone", "--quiet", `file://${scene.origin}`, root]);
  return await Deno.realPath(root);
}

Deno.test("schedule install --crontab-file adds a block, keeps every other line, is idempotent, one block per repo; uninstall restores the file byte for byte; print changes nothing", async () => {
  await using scene = await makeScene();
  const work = await Deno.realPath(scene.work);
  const other = await secondRepo(scene);
  const file = join(scene.dir, "crontab");
  await Deno.writeTextFile(file, PERSONAL);

  const printed = await scene.relay(["schedule", "print", "--crontab-file", file]);
  assert.equal(printed.code, 0, all(printed));
  assert.equal(await Deno.readTextFile(file), PERSONAL);

  const first = await scene.relay(["schedule", "install", "--crontab-file", file]);
  assert.equal(first.code, 0, all(first));
  const once = await Deno.readTextFile(file);
  assert.ok(once.startsWith(PERSONAL), once);
  const lines = block(once, work);
  assert.equal(once, `${PERSONAL}${lines.join("\n")}\n`);
  // print showed exactly the block install wrote.
  assert.equal(printed.stdout.trimEnd(), lines.join("\n"));
  const ticks = lines.filter((l) => l.startsWith("* * * * * "));
  assert.equal(ticks.length, 2, once);
  // PATH travels with each command: no crontab-wide PATH= line in the block.
  assert.ok(!lines.some((l) => /^PATH=/.test(l)), once);
  for (const [i, tick] of ["poll", "review"].entries()) {
    assert.match(ticks[i]!, /^\* \* \* \* \* PATH=\S+ NO_COLOR=1 /);
    assert.ok(ticks[i]!.includes(` -C ${work} --profile ${scene.profile} ${tick} --quiet >> `));
    assert.ok(ticks[i]!.endsWith(`${join(work, ".git", "relay", "cron.log")} 2>&1`), ticks[i]);
  }
  assert.match(first.stdout, /added the relay block/);
  assert.ok(
    first.stdout.includes(`relay -C ${work} schedule uninstall --cron --crontab-file ${file}`),
  );

  // The same install again: the same bytes, and it says so.
  const again = await scene.relay(["schedule", "install", "--crontab-file", file]);
  assert.equal(again.code, 0, all(again));
  assert.match(again.stdout, /^unchanged: /m);
  assert.equal(await Deno.readTextFile(file), once);

  // A second repository gets its own block after the first; the first stays as it was.
  const second = await scene.relay(["-C", other, "schedule", "install", "--crontab-file", file]);
  assert.equal(second.code, 0, all(second));
  const twice = await Deno.readTextFile(file);
  assert.ok(twice.startsWith(once), twice);
  const otherLines = block(twice, other);
  assert.equal(twice, `${once}${otherLines.join("\n")}\n`);
  // The path's % is escaped for cron, its space quoted for sh.
  assert.ok(otherLines.some((l) => l.includes(`-C '${other.replace("%", "\\%")}'`)), twice);

  // The doctor's reader finds each repository's PATH in its own block.
  const read = await installedSchedulePath(work, { crontabFile: file });
  assert.equal(read?.kind, "cron");
  assert.equal(read?.path, /PATH=(\S+)/.exec(ticks[0]!)![1]);
  assert.equal((await installedSchedulePath(other, { crontabFile: file }))?.path, read?.path);
  assert.equal(
    await installedSchedulePath(join(scene.dir, "nowhere"), { crontabFile: file }),
    null,
  );

  // Uninstall the first: only its block goes. Then the second: the file is what it was.
  const off = await scene.relay(["schedule", "uninstall", "--crontab-file", file]);
  assert.equal(off.code, 0, all(off));
  assert.equal(await Deno.readTextFile(file), `${PERSONAL}${otherLines.join("\n")}\n`);
  const off2 = await scene.relay(["-C", other, "schedule", "uninstall", "--crontab-file", file]);
  assert.equal(off2.code, 0, all(off2));
  assert.equal(await Deno.readTextFile(file), PERSONAL);
  const none = await scene.relay(["schedule", "uninstall", "--crontab-file", file]);
  assert.equal(none.code, 0, all(none));
  assert.match(none.stdout, /nothing to remove/);
  assert.equal(await Deno.readTextFile(file), PERSONAL);
});

Deno.test("a crontab block's line, run by sh with nothing but the environment it sets itself, is a real idle tick", async () => {
  await using scene = await makeScene();
  // A clone at a path with a space and a %: the line's quoting and cron's \% are exercised.
  const other = await secondRepo(scene);
  const file = join(scene.dir, "crontab");
  const res = await scene.relay(["-C", other, "schedule", "install", "--crontab-file", file]);
  assert.equal(res.code, 0, all(res));
  const poll = block(await Deno.readTextFile(file), other).find((l) => / poll --quiet /.test(l))!;
  // What cron hands to sh: the line after the five time fields, each \% turned into %.
  const command = poll.replace(/^(\S+\s+){5}/, "").replaceAll("\\%", "%");
  const out = await new Deno.Command("env", {
    args: ["-i", "sh", "-c", command],
    cwd: scene.dir,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const log = join(other, ".git", "relay", "cron.log");
  const logged = await Deno.readTextFile(log).catch(() => "(no log)");
  assert.equal(out.code, 0, `${new TextDecoder().decode(out.stderr)}\n${logged}`);
  assert.ok(await exists(log), "the tick's output went to the clone's cron.log");
  assert.doesNotMatch(logged, /error|not found|denied/i);
  // The idle tick starts no process: that git (which any busy tick runs) resolves under the
  // line's PATH is checked apart.
  const path = /^PATH=(\S+) /.exec(command)![1]!;
  const git = await new Deno.Command("sh", {
    args: ["-c", "command -v git"],
    env: { PATH: path },
    clearEnv: true,
    stdout: "piped",
  }).output();
  assert.equal(git.code, 0, path);
});

Deno.test("schedule install --cron warns of relay init's tick lines pasted by hand for this repository (by line number, to remove with crontab -e) and leaves them as they are", async () => {
  await using scene = await makeScene();
  // A root with a space and a %: init quotes it for sh and writes the % as \% for cron.
  const other = await secondRepo(scene);
  const init = await scene.relay(["-C", other, "init"]);
  assert.equal(init.code, 0, all(init));
  const printed = init.stdout.split("\n").filter((l) => /^(PATH=|\* \* \* \* \* )/.test(l));
  assert.equal(printed.length, 3, init.stdout);
  assert.ok(printed[1]!.includes(`-C '${other.replace("%", "\\%")}' `), printed[1]);
  // Not this repository's: another root that starts the same, and a commented-out paste.
  const lookalike = printed[2]!.replaceAll(`${other.replace("%", "\\%")}'`, `${other} old'`);
  assert.notEqual(lookalike, printed[2]);
  const pasted = `${PERSONAL}${printed[0]}\n${printed[1]}\n${printed[2]}\n# ${
    printed[1]
  }\n${lookalike}\n`;
  const file = join(scene.dir, "crontab");
  await Deno.writeTextFile(file, pasted);
  const lineOf = (l: string) => pasted.split("\n").indexOf(l) + 1;
  const [poll, review] = [lineOf(printed[1]!), lineOf(printed[2]!)];
  assert.deepEqual([poll, review], [7, 8]);

  const res = await scene.relay(["-C", other, "schedule", "install", "--crontab-file", file]);
  assert.equal(res.code, 0, all(res));
  const warning = new RegExp(
    `warning: ${file} already runs relay for .*my app 50%.* outside relay's block, on lines ${poll}, ${review} .*Remove those lines \\(edit ${file}\\)`,
  );
  assert.match(res.stdout, warning);
  assert.ok(res.stdout.includes(`    ${poll}: ${printed[1]}\n    ${review}: ${printed[2]}\n`));
  assert.ok(!res.stdout.includes(lookalike), res.stdout);
  // Nothing of the person's changed: the block is added after it, lines and all.
  const installed = await Deno.readTextFile(file);
  assert.equal(installed, `${pasted}${block(installed, other).join("\n")}\n`);

  // Installed again: unchanged, and said again while the pasted lines are there.
  const again = await scene.relay(["-C", other, "schedule", "install", "--crontab-file", file]);
  assert.match(again.stdout, /^unchanged: /m, all(again));
  assert.match(again.stdout, warning);
  assert.equal(await Deno.readTextFile(file), installed);

  // Without --crontab-file the fix is crontab -e (a fake crontab(1) holding the same text).
  const bin = join(scene.dir, "bin");
  const store = join(scene.dir, "stored-crontab");
  await Deno.mkdir(bin);
  await Deno.writeTextFile(
    join(bin, "crontab"),
    `#!/bin/sh\n[ "$1" = -l ] && exec cat '${store}'\n[ "$1" = - ] && exec cat > '${store}'\nexit 2\n`,
  );
  await Deno.chmod(join(bin, "crontab"), 0o755);
  await Deno.writeTextFile(store, pasted);
  const git = (await findProgram("git", scene.env.PATH!))!;
  const deno = (await findProgram("deno", scene.env.PATH!)) ?? Deno.execPath();
  const viaCrontab = await scene.relay(["-C", other, "schedule", "install"], {
    env: { PATH: [bin, dirname(git), dirname(deno)].join(":") },
  });
  assert.equal(viaCrontab.code, 0, all(viaCrontab));
  assert.match(
    viaCrontab.stdout,
    new RegExp(
      `warning: the crontab already runs relay .* on lines ${poll}, ${review} .*\\(crontab -e\\)`,
    ),
  );

  // One pasted line left: said in the singular. The first repository has none: nothing said.
  await Deno.writeTextFile(file, `${PERSONAL}${printed[2]}\n`);
  const one = await scene.relay(["-C", other, "schedule", "install", "--crontab-file", file]);
  assert.match(one.stdout, /on line 6 .*Remove that line/, all(one));
  const mine = await scene.relay(["schedule", "install", "--crontab-file", file]);
  assert.equal(mine.code, 0, all(mine));
  assert.doesNotMatch(mine.stdout, /outside relay's block/);
  // Uninstall says nothing of them and leaves them.
  const off = await scene.relay(["-C", other, "schedule", "uninstall", "--crontab-file", file]);
  assert.doesNotMatch(off.stdout, /outside relay's block/);
  assert.ok((await Deno.readTextFile(file)).includes(`${PERSONAL}${printed[2]}\n`));
});

Deno.test("schedule install uses a crontab program when there is one (no crontab yet is an empty one), and without one says what to use instead", async () => {
  await using scene = await makeScene();
  const work = await Deno.realPath(scene.work);
  // A fake crontab(1): -l prints the stored crontab or "no crontab for …" (exit 1), - stores stdin.
  const bin = join(scene.dir, "bin");
  const store = join(scene.dir, "stored-crontab");
  await Deno.mkdir(bin);
  await Deno.writeTextFile(
    join(bin, "crontab"),
    `#!/bin/sh\nif [ "$1" = -l ]; then\n  [ -f '${store}' ] || { echo "no crontab for tester" >&2; exit 1; }\n  exec cat '${store}'\nfi\n[ "$1" = - ] && exec cat > '${store}'\nexit 2\n`,
  );
  await Deno.chmod(join(bin, "crontab"), 0o755);
  const git = (await findProgram("git", scene.env.PATH!))!;
  const deno = (await findProgram("deno", scene.env.PATH!)) ?? Deno.execPath();
  const withCrontab = [bin, dirname(git), dirname(deno)].join(":");

  const res = await scene.relay(["schedule", "install"], { env: { PATH: withCrontab } });
  assert.equal(res.code, 0, all(res));
  const stored = await Deno.readTextFile(store);
  assert.equal(stored, `${block(stored, work).join("\n")}\n`);
  assert.match(res.stdout, /in the crontab:/);
  const again = await scene.relay(["schedule", "install"], { env: { PATH: withCrontab } });
  assert.match(again.stdout, /^unchanged: /m, all(again));
  const off = await scene.relay(["schedule", "uninstall"], { env: { PATH: withCrontab } });
  assert.equal(off.code, 0, all(off));
  assert.equal(await Deno.readTextFile(store), "");

  // No crontab program on PATH, no --crontab-file: exit 2, and what to do instead.
  const bare = join(scene.dir, "bare-bin");
  await Deno.mkdir(bare);
  await Deno.symlink(git, join(bare, "git"));
  await Deno.symlink(deno, join(bare, "deno"));
  const absent = await scene.relay(["schedule", "install"], { env: { PATH: bare } });
  assert.equal(absent.code, 2, all(absent));
  for (const hint of ["--systemd", "--launchd", "--crontab-file", "relay schedule print"]) {
    assert.ok(absent.stderr.includes(hint), all(absent));
  }
});

Deno.test("schedule --systemd writes four marked units into --unit-dir, reads back, is idempotent, and uninstall removes exactly those", async () => {
  await using scene = await makeScene();
  const other = await secondRepo(scene);
  const dir = join(scene.dir, "units");
  const mine = join(dir, "someone-else.timer");
  await Deno.mkdir(dir);
  await Deno.writeTextFile(mine, "[Timer]\nOnCalendar=daily\n");

  const printed = await scene.relay([
    "-C",
    other,
    "schedule",
    "print",
    "--systemd",
    "--unit-dir",
    dir,
  ]);
  assert.equal(printed.code, 0, all(printed));
  assert.deepEqual(await listDir(dir), ["someone-else.timer"]);

  const res = await scene.relay([
    "-C",
    other,
    "schedule",
    "install",
    "--systemd",
    "--unit-dir",
    dir,
  ]);
  assert.equal(res.code, 0, all(res));
  const names = (await listDir(dir)).filter((n) => n !== "someone-else.timer");
  assert.equal(names.length, 4, names.join(" "));
  const slug = /^relay-(.+)-poll\.service$/.exec(
    names.find((n) => n.endsWith("poll.service"))!,
  )![1]!;
  assert.match(slug, /^my-app-50-[0-9a-f]{8}$/);
  assert.deepEqual(
    names,
    ["poll.service", "poll.timer", "review.service", "review.timer"].map((n) =>
      `relay-${slug}-${n}`
    ),
  );
  const service = await Deno.readTextFile(join(dir, `relay-${slug}-poll.service`));
  const timer = await Deno.readTextFile(join(dir, `relay-${slug}-poll.timer`));
  // print showed exactly what install wrote.
  assert.ok(
    printed.stdout.includes(`==> ${join(dir, `relay-${slug}-poll.service`)} <==\n${service}`),
  );
  assert.ok(service.startsWith(`# Written by relay schedule install for ${other};`), service);
  assert.match(service, /^Type=oneshot$/m);
  assert.match(service, /^TimeoutStartSec=\d+min$/m);
  // The profile's roles time out at 60s: four turns plus an hour, in minutes.
  assert.match(service, /^TimeoutStartSec=64min$/m);
  // systemd expands % and splits on spaces: the path is quoted and its % doubled.
  assert.ok(service.includes(` -C "${other.replace("%", "%%")}" `), service);
  assert.match(service, /^StandardOutput=append:.*cron\.log$/m);
  assert.match(timer, /^OnCalendar=minutely$/m);
  assert.match(timer, /^WantedBy=timers\.target$/m);
  assert.ok(res.stdout.includes("systemctl --user enable --now"), res.stdout);
  // User timers stop at logout unless the user lingers: install says how to turn it on.
  assert.match(res.stdout, /stop when you log out .*: loginctl enable-linger \$USER/);

  const read = await installedSchedulePath(other, { kind: "systemd", unitDir: dir });
  assert.equal(read?.where, join(dir, `relay-${slug}-poll.service`));
  const envPath = /^Environment="PATH=([^"]*)"$/m.exec(service)![1]!;
  assert.equal(read?.path, envPath);
  for (const d of ["/usr/bin", "/bin"]) assert.ok(envPath.split(":").includes(d), envPath);

  const before = await Promise.all(names.map((n) => Deno.readTextFile(join(dir, n))));
  const again = await scene.relay([
    "-C",
    other,
    "schedule",
    "install",
    "--systemd",
    "--unit-dir",
    dir,
  ]);
  assert.equal(again.code, 0, all(again));
  assert.match(again.stdout, /^unchanged: /m);
  assert.deepEqual(await Promise.all(names.map((n) => Deno.readTextFile(join(dir, n)))), before);

  // A unit in the way that relay did not write: uninstall leaves it, removes the rest, exit 1.
  const foreign = join(dir, `relay-${slug}-review.timer`);
  await Deno.writeTextFile(foreign, "[Timer]\nOnCalendar=hourly\n");
  const off = await scene.relay([
    "-C",
    other,
    "schedule",
    "uninstall",
    "--systemd",
    "--unit-dir",
    dir,
  ]);
  assert.equal(off.code, 1, all(off));
  assert.ok(off.stdout.includes(`left alone ${foreign}`), all(off));
  assert.deepEqual(await listDir(dir), [`relay-${slug}-review.timer`, "someone-else.timer"]);
  assert.equal(await Deno.readTextFile(foreign), "[Timer]\nOnCalendar=hourly\n");
  assert.equal(await Deno.readTextFile(mine), "[Timer]\nOnCalendar=daily\n");

  // And install refuses to overwrite it: exit 2, nothing written.
  const blocked = await scene.relay([
    "-C",
    other,
    "schedule",
    "install",
    "--systemd",
    "--unit-dir",
    dir,
  ]);
  assert.equal(blocked.code, 2, all(blocked));
  assert.ok(blocked.stderr.includes(foreign), all(blocked));
  assert.deepEqual(await listDir(dir), [`relay-${slug}-review.timer`, "someone-else.timer"]);
});

Deno.test("the systemd units relay writes pass systemd-analyze verify", {
  ignore: Deno.build.os !== "linux",
}, async () => {
  const analyze = await findProgram("systemd-analyze", Deno.env.get("PATH") ?? "");
  assert.ok(analyze, "systemd-analyze is installed on this Linux machine");
  await using scene = await makeScene();
  const other = await secondRepo(scene);
  const dir = join(scene.dir, "units");
  const res = await scene.relay([
    "-C",
    other,
    "schedule",
    "install",
    "--systemd",
    "--unit-dir",
    dir,
  ]);
  assert.equal(res.code, 0, all(res));
  const files = (await listDir(dir)).map((n) => join(dir, n));
  const out = await new Deno.Command(analyze, {
    args: ["verify", ...files],
    cwd: dir,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, text);
  assert.doesNotMatch(text, /relay-/, text);
});

Deno.test("schedule --launchd writes two marked plists into --unit-dir, reads back, and uninstall removes them", async () => {
  await using scene = await makeScene();
  const work = await Deno.realPath(scene.work);
  const dir = join(scene.dir, "LaunchAgents");
  const res = await scene.relay(["schedule", "install", "--launchd", "--unit-dir", dir]);
  assert.equal(res.code, 0, all(res));
  assert.doesNotMatch(res.stdout, /enable-linger/);
  const names = await listDir(dir);
  assert.equal(names.length, 2, names.join(" "));
  assert.match(names[0]!, /^dev\.relay\.work-[0-9a-f]{8}\.poll\.plist$/);
  assert.equal(names[1], names[0]!.replace(".poll.", ".review."));
  const plist = await Deno.readTextFile(join(dir, names[0]!));
  assert.ok(plist.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n'), plist);
  assert.ok(plist.includes(`<!-- Written by relay schedule install for ${work};`), plist);
  assert.match(plist, /<key>StartInterval<\/key>\s*<integer>60<\/integer>/);
  assert.match(plist, /<key>Label<\/key>\s*<string>dev\.relay\.work-[0-9a-f]{8}\.poll<\/string>/);
  const array = /<key>ProgramArguments<\/key>\s*<array>\n([\s\S]*?)\n {2}<\/array>/.exec(
    plist,
  )![1]!;
  const args = [...array.matchAll(/^ {4}<string>([^<]*)<\/string>$/gm)].map((m) => m[1]);
  assert.deepEqual(args.slice(-6), ["-C", work, "--profile", scene.profile, "poll", "--quiet"]);
  const log = join(work, ".git", "relay", "cron.log");
  assert.match(plist, new RegExp(`<key>StandardOutPath</key>\\s*<string>${log}</string>`));
  assert.match(plist, new RegExp(`<key>StandardErrorPath</key>\\s*<string>${log}</string>`));
  assert.ok(res.stdout.includes(`launchctl load -w ${join(dir, names[0]!)}`), res.stdout);

  const read = await installedSchedulePath(work, { kind: "launchd", unitDir: dir });
  assert.equal(read?.kind, "launchd");
  assert.equal(read?.path, /<key>PATH<\/key>\s*<string>([^<]*)<\/string>/.exec(plist)![1]);

  const again = await scene.relay(["schedule", "install", "--launchd", "--unit-dir", dir]);
  assert.match(again.stdout, /^unchanged: /m, all(again));
  const off = await scene.relay(["schedule", "uninstall", "--launchd", "--unit-dir", dir]);
  assert.equal(off.code, 0, all(off));
  assert.deepEqual(await listDir(dir), []);
  assert.equal(await installedSchedulePath(work, { kind: "launchd", unitDir: dir }), null);
});

Deno.test("schedule refuses an unknown flag, two kinds at once, a flag of another kind or a missing action: exit 2, nothing written", async () => {
  await using scene = await makeScene();
  const file = join(scene.dir, "crontab");
  await Deno.writeTextFile(file, PERSONAL);
  const dir = join(scene.dir, "units");
  for (
    const [args, why] of [
      [["install", "--crontab-file", file, "--every", "5"], /--every/],
      [
        ["install", "--cron", "--systemd", "--crontab-file", file],
        /--cron and --systemd: pick one/,
      ],
      [["install", "--systemd", "--launchd", "--unit-dir", dir], /pick one/],
      [["install", "--systemd", "--crontab-file", file], /--crontab-file goes with --cron/],
      [["install", "--unit-dir", dir], /--unit-dir goes with --systemd or --launchd/],
      [["reinstall", "--crontab-file", file], /unknown action "reinstall"/],
      [[], /missing argument/],
    ] as const
  ) {
    const res = await scene.relay(["schedule", ...args]);
    assert.equal(res.code, 2, `${args.join(" ")}\n${all(res)}`);
    assert.match(res.stderr, why, all(res));
  }
  assert.equal(await Deno.readTextFile(file), PERSONAL);
  assert.equal(await exists(dir), false);
});
