/**
 * `relay doctor` through the real CLI on real scenes: healthy after a tick,
 * several problems planted at once (each listed with its fix), --json, the
 * notifier told once per problem, nothing changed; and each check's cases on
 * a snapshot, table-driven.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, brief, makeScene, type RelayResult, type Scene, stateDir } from "./helpers/scene.ts";
import { type Finding, runChecks, type Snapshot, STALE_MS } from "../lib/cli/doctor_checks.ts";
import { tryLock } from "../lib/state/lock.ts";

const HOUR_AGO = () => new Date(Date.now() - 60 * 60_000);

async function notifier(scene: Scene): Promise<{ file: string; profile: string }> {
  const file = join(scene.dir, "events.jsonl");
  const script = join(scene.dir, "notifier.sh");
  await Deno.writeTextFile(script, `cat >> ${JSON.stringify(file)}\n`);
  return { file, profile: `notify:\n  - ["bash", ${JSON.stringify(script)}]\n` };
}

async function events(file: string): Promise<{ kind: string; reason: string; next: string }[]> {
  const text = await Deno.readTextFile(file).catch(() => "");
  return text.split("\n").filter((l) => l).map((l) => JSON.parse(l));
}

/** git with extra environment (a pinned commit date). */
async function gitEnv(scene: Scene, cwd: string, args: string[], env: Record<string, string>) {
  const out = await new Deno.Command("git", {
    args,
    cwd,
    env: { ...scene.env, ...env },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
}

/** Everything doctor must leave alone: refs, the tree, and relay's state files but notified.json. */
async function untouched(scene: Scene): Promise<string> {
  const files: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const path = join(dir, e.name);
      if (e.isDirectory) await walk(path);
      else if (e.name !== "notified.json") {
        files.push(`${path}\n${await Deno.readTextFile(path).catch(() => "(unreadable)")}`);
      }
    }
  };
  await walk(stateDir(scene)).catch(() => {});
  const worktrees = await scene.out(["worktree", "list", "--porcelain"]);
  return [await scene.snapshot(), worktrees, ...files.sort()].join("\n===\n");
}

function problemIds(res: RelayResult): string[] {
  const data = JSON.parse(res.stdout);
  return data.findings.filter((f: Finding) => f.severity === "problem").map((f: Finding) => f.id)
    .sort();
}

Deno.test("relay doctor after a tick in a healthy setup: exit 0, heartbeats written, checks it could not run listed as skipped", async () => {
  await using scene = await makeScene();
  await Deno.chmod(scene.profile, 0o600);
  assert.equal((await scene.relay(["poll"])).code, 0);
  assert.equal((await scene.relay(["review"])).code, 0);
  for (const tick of ["poll", "review"]) {
    const at = (await Deno.readTextFile(join(stateDir(scene), `heartbeat-${tick}`))).trim();
    assert.ok(Date.now() - Date.parse(at) < 60_000, `heartbeat-${tick}: ${at}`);
  }
  const res = await scene.relay(["doctor"]);
  assert.equal(res.code, 0, all(res));
  assert.match(res.stdout, /^skipped: github-protection: the forge is plain git, not GitHub$/m);
  assert.match(res.stdout, /^doctor: healthy$/m);
  assert.doesNotMatch(res.stdout, /^problem:/m);

  const json = await scene.relay(["doctor", "--json"]);
  assert.equal(json.code, 0, all(json));
  const data = JSON.parse(json.stdout);
  assert.equal(data.healthy, true);
  assert.equal(data.problems, 0);
  assert.deepEqual(data.findings, []);
  assert.ok(data.skipped.some((s: { id: string }) => s.id === "github-protection"));

  const bad = await scene.relay(["doctor", "--fix"]);
  assert.equal(bad.code, 2, all(bad));
});

Deno.test("relay doctor with five problems planted at once: each with its fix, exit 1; the notifier hears of each once; nothing changed", async () => {
  await using scene = await makeScene();
  const n = await notifier(scene);
  await scene.setAgent("good.sh", n.profile);
  // 1. An OPEN brief, committed an hour ago, that no executor run started; the ticks stopped then.
  await scene.write(
    "NEXT-STEPS.md",
    brief({ task: 1, status: "OPEN", extraHeader: "Branch: task-1\nKind: feature" }),
  );
  const date = HOUR_AGO().toISOString();
  await scene.git(scene.work, ["add", "NEXT-STEPS.md"]);
  await gitEnv(scene, scene.work, ["commit", "--quiet", "-m", "relay: task 1 OPEN"], {
    GIT_COMMITTER_DATE: date,
    GIT_AUTHOR_DATE: date,
  });
  await scene.git(scene.work, ["push", "--quiet", "origin", "HEAD:main"]);
  await Deno.mkdir(stateDir(scene), { recursive: true });
  for (const tick of ["poll", "review"]) {
    await Deno.writeTextFile(join(stateDir(scene), `heartbeat-${tick}`), `${date}\n`);
  }
  // 2. Paperwork committed on the task branch, 3. whose worktree folder is then deleted.
  const wt = join(scene.worktrees, "task-1");
  await scene.git(scene.work, ["worktree", "add", "--quiet", "-b", "task-1", wt, "origin/main"]);
  await Deno.writeTextFile(join(wt, "COWORK-STATUS.md"), "Task: 1\n");
  await scene.git(wt, ["add", "COWORK-STATUS.md"]);
  await scene.git(wt, ["commit", "--quiet", "-m", "report on the branch"]);
  await Deno.remove(wt, { recursive: true });
  // 4. A stale index.lock, 5. a profile others can read.
  await Deno.writeTextFile(join(scene.work, ".git", "index.lock"), "");
  await Deno.utime(join(scene.work, ".git", "index.lock"), HOUR_AGO(), HOUR_AGO());
  await Deno.chmod(scene.profile, 0o644);

  const before = await untouched(scene);
  const res = await scene.relay(["doctor"]);
  assert.equal(res.code, 1, all(res));
  console.log(res.stdout);
  const expect: [RegExp, RegExp][] = [
    [/^problem: the ticks are not running: relay poll last ran at .*/m, /schedule install/],
    [
      /^problem: .*\.git\/index\.lock is left over: (no git process works in this repository|it is 60 minutes old, .*)$/m,
      /^ {2}fix: rm \S+\.git\/index\.lock$/m,
    ],
    [
      /^problem: task 1 has been OPEN for 60 minutes and no executor run started$/m,
      /^ {2}fix: relay -C \S+ poll /m,
    ],
    [
      /^problem: task-1 changes relay's paperwork: COWORK-STATUS\.md$/m,
      /^ {2}fix: git -C \S+ worktree prune && git -C \S+ worktree add \S+ task-1 && git -C \S+ rm -q -r -- COWORK-STATUS\.md && .* push origin task-1$/m,
    ],
    [
      /^problem: the worktree \S+task-1 \(task-1\) is registered but its folder is gone$/m,
      /^ {2}fix: git -C \S+ worktree prune$/m,
    ],
    [
      /^problem: the operator profile \S+ is readable by others \(mode 644\)$/m,
      /^ {2}fix: chmod 600 \S+profile\.yaml$/m,
    ],
  ];
  for (const [what, fix] of expect) {
    assert.match(res.stdout, what);
    assert.match(res.stdout, fix);
  }
  assert.match(res.stdout, /^doctor: 6 problems: a person is needed$/m);
  assert.equal(await untouched(scene), before, "doctor changed something");

  // One event per problem, none on a repeat run.
  const told = await events(n.file);
  assert.equal(told.length, 6, JSON.stringify(told, null, 2));
  assert.ok(told.every((e) => e.kind === "doctor"));
  assert.ok(told.some((e) => e.next === "git -C " + scene.work + " worktree prune"));
  const json = await scene.relay(["doctor", "--json"]);
  assert.equal(json.code, 1, all(json));
  assert.equal((await events(n.file)).length, 6, "a repeat run told the notifier again");
  const data = JSON.parse(json.stdout);
  assert.equal(data.healthy, false);
  assert.equal(data.problems, 6);
  for (const f of data.findings) {
    assert.deepEqual(Object.keys(f).sort(), ["fix", "id", "severity", "what", "why"]);
  }
  assert.deepEqual(problemIds(json), [
    "index-lock",
    "open-brief-not-started",
    "paperwork-on-branch",
    "profile-permissions",
    "ticks-not-running",
    "worktree-missing",
  ]);

  // A problem that goes away and comes back is told again.
  await Deno.remove(join(scene.work, ".git", "index.lock"));
  assert.equal((await scene.relay(["doctor"])).code, 1);
  assert.equal((await events(n.file)).length, 6);
  await Deno.writeTextFile(join(scene.work, ".git", "index.lock"), "");
  await Deno.utime(join(scene.work, ".git", "index.lock"), HOUR_AGO(), HOUR_AGO());
  assert.equal((await scene.relay(["doctor"])).code, 1);
  const again = await events(n.file);
  assert.equal(again.length, 7);
  assert.match(again[6]!.reason, /index\.lock is left over/);
});

Deno.test("relay doctor reads the rest from a real scene: a lock with a dead holder, a stranded PR, an orphan folder, relay's files not committed, build output, programs cron will not find, a missing login, GitHub protection", async () => {
  await using scene = await makeScene({ config: "forge: github\n" });
  await Deno.chmod(scene.profile, 0o600);
  // The executor is claude (no login here), the reviewer a program no PATH has; a notifier too.
  await Deno.writeTextFile(
    scene.profile,
    `roles:\n  executor:\n    vendor: claude\n  reviewer:\n    vendor: command\n    argv: ["no-such-agent-doctor", "{prompt}"]\nworktree_root: ${scene.worktrees}\n`,
  );
  // A stand-in gh: logged in, no open PRs, main not protected.
  const bin = join(scene.dir, "bin");
  await Deno.mkdir(bin);
  await Deno.writeTextFile(
    join(bin, "gh"),
    `#!/bin/bash
case "$*" in
  "auth status") echo "Logged in to github.com as robot" >&2 ;;
  "pr list"*) echo "[]" ;;
  "api -- repos/{owner}/{repo}/branches/main") echo '{"name":"main","protected":false}' ;;
  "api -- user") echo '{"login":"robot"}' ;;
  "api -- repos/{owner}/{repo}") echo '{"permissions":{"admin":true}}' ;;
  *) echo "unexpected: $*" >&2; exit 1 ;;
esac
`,
  );
  await Deno.chmod(join(bin, "gh"), 0o755);
  const env = { PATH: `${bin}:${scene.env.PATH}` };
  // Ticks ran just now.
  await Deno.mkdir(stateDir(scene), { recursive: true });
  for (const tick of ["poll", "review"]) {
    await Deno.writeTextFile(join(stateDir(scene), `heartbeat-${tick}`), new Date().toISOString());
  }
  // A lock held (by this test process) whose record names a pid that is gone.
  await using lock = await tryLock(join(stateDir(scene), "review.lock"), "review");
  assert.ok(lock);
  await Deno.writeTextFile(
    join(stateDir(scene), "review.lock.json"),
    JSON.stringify({
      pid: 999_999_999,
      host: Deno.hostname(),
      started: new Date().toISOString(),
      command: "review",
    }),
  );
  // A folder in the worktree root that is no worktree; REVIEWER.md not committed; build output.
  await Deno.mkdir(join(scene.worktrees, "task-7"), { recursive: true });
  await scene.write("REVIEWER.md", "# Review\n");
  await scene.write("src/__pycache__/app.cpython-312.pyc", "x");

  const before = await untouched(scene);
  const res = await scene.relay(["doctor", "--json"], { env });
  assert.equal(res.code, 1, all(res));
  assert.equal(await untouched(scene), before, "doctor changed something");
  const data = JSON.parse(res.stdout);
  const by = (id: string) => data.findings.filter((f: Finding) => f.id === id);
  assert.match(by("lock-dead-holder")[0].what, /review\.lock is held, but pid 999999999/);
  assert.match(by("lock-dead-holder")[0].fix, /fuser -v \S+review\.lock/);
  assert.match(by("worktree-orphan")[0].what, /task-7 is in relay's worktree folder/);
  assert.equal(by("worktree-orphan")[0].severity, "problem");
  assert.match(by("init-uncommitted")[0].what, /not committed: REVIEWER\.md$/);
  assert.match(by("init-uncommitted")[0].fix, /add -- REVIEWER\.md && .* push origin main$/);
  assert.match(by("build-output-not-ignored")[0].what, /src\/__pycache__\/$/);
  assert.match(by("build-output-not-ignored")[0].fix, /^printf '%s\\n' __pycache__\/ >> /);
  assert.ok(
    by("program-path").some((f: Finding) => /"no-such-agent-doctor" is not on PATH/.test(f.what)),
    JSON.stringify(by("program-path")),
  );
  assert.match(by("agent-login")[0].what, /^Claude Code is not logged in/);
  assert.match(by("github-unprotected")[0].what, /^main is not protected on GitHub$/);
  assert.match(by("github-unprotected")[0].fix, /^gh api -X PUT repos\/\{owner\}\/\{repo\}/);
  assert.ok(!data.skipped.some((s: { id: string }) => s.id === "github-protection"));

  // A stranded PR: a plain-git record whose branch is gone from the remote.
  await Deno.writeTextFile(
    join(scene.work, ".relay", "config.yaml"),
    "version: 1\n",
  );
  await scene.git(scene.work, ["commit", "--quiet", "-am", "plain forge"]);
  await scene.git(scene.work, ["push", "--quiet", "origin", "HEAD:main"]);
  await Deno.mkdir(join(stateDir(scene), "prs"), { recursive: true });
  await Deno.writeTextFile(
    join(stateDir(scene), "prs", "task-3.json"),
    JSON.stringify({
      id: "task-3",
      branch: "task-3",
      head: "0".repeat(40),
      task: 3,
      base: "main",
      title: "Gone",
      state: "open",
      opened: new Date().toISOString(),
      updated: new Date().toISOString(),
    }),
  );
  const plain = await scene.relay(["doctor"], { env });
  assert.equal(plain.code, 1, all(plain));
  assert.match(
    plain.stdout,
    /^problem: PR task-3 \(task 3\) is open, but its branch task-3 is gone from origin$/m,
  );
  assert.match(
    plain.stdout,
    /^ {2}fix: relay -C \S+ close 3 --reason "branch task-3 was deleted"$/m,
  );
  assert.match(plain.stdout, /^skipped: github-protection: the forge is plain git, not GitHub$/m);
});

/** A snapshot with nothing wrong, for the table below. */
function healthy(): Snapshot {
  const now = Date.parse("2030-01-01T12:00:00Z");
  return {
    now,
    root: "/r",
    commonDir: "/r/.git",
    remote: "origin",
    main: "main",
    setUp: true,
    blockers: [],
    ticks: { poll: new Date(now - 30_000).toISOString(), review: new Date(now).toISOString() },
    hold: null,
    pause: null,
    locks: [],
    brief: null,
    briefProblem: null,
    journal: false,
    lastPoll: null,
    report: null,
    owner: null,
    prs: [],
    paperwork: [],
    worktrees: { missing: [], orphans: [] },
    indexLocks: [],
    initFiles: { uncommitted: [], unpushed: [] },
    buildOutput: [],
    programNotes: [],
    pathSource: "the installed schedule",
    logins: [],
    profile: { path: "/h/profile.yaml", mode: 0o100600 },
    github: null,
  };
}

const OLD = (s: Snapshot) => s.now - STALE_MS - 60_000;
const lock = (over: Partial<Snapshot["locks"][number]>): Snapshot["locks"][number] => ({
  tick: "poll",
  path: "/r/.git/relay/poll.lock",
  held: true,
  info: { pid: 42, host: "h", started: "2030-01-01T09:00:00Z", command: "poll" },
  holderAlive: true,
  turnDeadline: null,
  turnLimitMs: 60 * 60_000,
  ...over,
});
/** The review tick's lock, held by a live pid for `heldMs` (turn limit: an hour). */
const reviewLock = (s: Snapshot, heldMs: number) =>
  lock({
    tick: "review",
    path: "/r/.git/relay/review.lock",
    info: {
      pid: 42,
      host: "h",
      started: new Date(s.now - heldMs).toISOString(),
      command: "review",
    },
  });
const openBrief = (s: Snapshot): Snapshot["brief"] => ({
  task: 2,
  owner: 2,
  status: "OPEN",
  branch: "task-2",
  since: OLD(s),
  attempts: 0,
});

const CASES: [string, (s: Snapshot) => void, string | null, RegExp][] = [
  ["nothing wrong", () => {}, null, /./],
  [
    "a brief that does not parse",
    (s) =>
      s.briefProblem = {
        what: 'NEXT-STEPS.md:1: Cannot read the brief: the first line is not a "Status:" line',
        fix: 'make line 1 "Status: OPEN"',
      },
    "problem",
    /^make line 1 "Status: OPEN"$/,
  ],
  [
    "ticks never ran",
    (s) => s.ticks = { poll: null, review: null },
    "problem",
    /schedule install$/,
  ],
  [
    "not set up: no tick expected",
    (s) => {
      s.setUp = false;
      s.ticks = { poll: null, review: null };
    },
    null,
    /./,
  ],
  [
    "review tick stale",
    (s) => s.ticks.review = new Date(OLD(s)).toISOString(),
    "problem",
    /crontab -l/,
  ],
  [
    "review tick stale during a long turn (systemd and launchd start no tick while one runs)",
    (s) => {
      s.ticks.review = new Date(s.now - 20 * 60_000).toISOString();
      s.locks = [reviewLock(s, 20 * 60_000)];
    },
    null,
    /./,
  ],
  [
    "poll tick stale while the review tick runs a long turn",
    (s) => {
      s.ticks.poll = new Date(OLD(s)).toISOString();
      s.locks = [reviewLock(s, 20 * 60_000)];
    },
    "problem",
    /crontab -l/,
  ],
  [
    "review tick stale, its lock held past the turn limit: said by the lock check",
    (s) => {
      s.ticks.review = new Date(s.now - 3 * 60 * 60_000).toISOString();
      s.locks = [reviewLock(s, 3 * 60 * 60_000)];
    },
    "problem",
    /kill 42/,
  ],
  [
    "review tick stale, its lock held with a dead pid on record: said by the lock check",
    (s) => {
      s.ticks.review = new Date(OLD(s)).toISOString();
      s.locks = [{ ...reviewLock(s, 20 * 60_000), holderAlive: false }];
    },
    "problem",
    /fuser -v/,
  ],
  ["a HOLD", (s) => s.hold = { task: 1, reason: "r", next: "do x", at: "t" }, "problem", /^do x$/],
  [
    "paused",
    (s) => s.pause = { by: "me@h", at: new Date(s.now).toISOString(), reason: "lunch" },
    "notice",
    /unpause/,
  ],
  [
    "paused a day with work waiting",
    (s) => {
      s.pause = { by: "me@h", at: "2029-12-30T00:00:00Z", reason: null };
      s.brief = openBrief(s);
    },
    "problem",
    /unpause/,
  ],
  [
    "lock held by a dead pid",
    (s) => s.locks = [lock({ holderAlive: false })],
    "problem",
    /fuser -v/,
  ],
  ["lock held past the turn limit", (s) => s.locks = [lock({})], "problem", /kill 42/],
  [
    "lock held within the limit",
    (s) =>
      s.locks = [
        lock({
          info: {
            pid: 42,
            host: "h",
            started: new Date(s.now - 60_000).toISOString(),
            command: "poll",
          },
        }),
      ],
    null,
    /./,
  ],
  [
    "lock held past a journaled deadline",
    (s) =>
      s.locks = [
        lock({
          info: {
            pid: 42,
            host: "h",
            started: new Date(s.now - 60_000).toISOString(),
            command: "poll",
          },
          turnDeadline: "2030-01-01T11:00:00Z",
        }),
      ],
    "problem",
    /kill 42/,
  ],
  [
    "index.lock while git runs",
    (s) => s.indexLocks = [{ path: "/r/.git/index.lock", ageMs: 1000, gitRunning: true }],
    "notice",
    /rm /,
  ],
  [
    "index.lock an hour old while git runs",
    (s) => s.indexLocks = [{ path: "/r/.git/index.lock", ageMs: 3_600_000, gitRunning: true }],
    "problem",
    /^rm \/r\/\.git\/index\.lock$/,
  ],
  ["OPEN brief, brand new", (s) => s.brief = { ...openBrief(s)!, since: s.now }, null, /./],
  ["OPEN brief with an attempt", (s) => s.brief = { ...openBrief(s)!, attempts: 1 }, null, /./],
  [
    "report nobody reviewed",
    (s) => {
      s.brief = { ...openBrief(s)!, status: "DONE" };
      s.report = {
        task: 2,
        outcome: "SHIPPED",
        head: "a".repeat(40),
        since: OLD(s),
        settled: false,
        inReview: false,
      };
    },
    "problem",
    /review/,
  ],
  [
    "report being reviewed",
    (s) => {
      s.brief = { ...openBrief(s)!, status: "DONE" };
      s.report = {
        task: 2,
        outcome: "SHIPPED",
        head: "a".repeat(40),
        since: OLD(s),
        settled: false,
        inReview: true,
      };
    },
    null,
    /./,
  ],
  [
    "report BLOCKED",
    (s) => {
      s.brief = { ...openBrief(s)!, status: "DONE" };
      s.report = {
        task: 2,
        outcome: "BLOCKED",
        head: "",
        since: OLD(s),
        settled: false,
        inReview: false,
      };
    },
    "problem",
    /status/,
  ],
  [
    "merged but its fix brief still OPEN",
    (s) => {
      s.brief = { ...openBrief(s)!, task: 3, owner: 2, attempts: 1 };
      s.owner = { task: 2, merged: true, closed: false, fixes: 1, cap: 3 };
    },
    "problem",
    /Status: DONE/,
  ],
  [
    "PR in flight, OPEN brief not its fix",
    (s) => {
      s.brief = { ...openBrief(s)!, attempts: 0 };
      s.prs = [{ task: 1, branch: "task-1", id: "task-1", branchGone: false }];
    },
    "problem",
    /close 1/,
  ],
  [
    "PR in flight with its own fix brief",
    (s) => {
      s.brief = { ...openBrief(s)!, task: 3, owner: 1, attempts: 1 };
      s.prs = [{ task: 1, branch: "task-1", id: "task-1", branchGone: false }];
    },
    null,
    /./,
  ],
  ["a folder that is not a worktree", (s) => s.worktrees.orphans = ["/w/notes"], "notice", /mv /],
  [
    "fix rounds: one left",
    (s) => s.owner = { task: 2, merged: false, closed: false, fixes: 2, cap: 3 },
    "notice",
    /show 2/,
  ],
  [
    "fix rounds: all used",
    (s) => s.owner = { task: 2, merged: false, closed: false, fixes: 3, cap: 3 },
    "problem",
    /close 2/,
  ],
  [
    "init files committed, not pushed",
    (s) => s.initFiles.unpushed = ["REVIEWER.md"],
    "problem",
    /^git -C \/r push origin main$/,
  ],
  [
    "a program cron finds elsewhere",
    (s) =>
      s.programNotes = [
        'note: "git" is /a/git here, but under cron /usr/bin/git: the folder of /a/git is left out of PATH',
      ],
    "notice",
    /left out of PATH/,
  ],
  [
    "a key only in this shell",
    (s) => s.logins = [{ vendor: "codex", state: "shell-only", where: "/h/.codex/auth.json" }],
    "notice",
    /OPENAI_API_KEY/,
  ],
  [
    "a logged-in CLI",
    (s) => s.logins = [{ vendor: "codex", state: "found", where: "/h/.codex/auth.json" }],
    null,
    /./,
  ],
  [
    "a profile others can write",
    (s) => s.profile = { path: "/h/p.yaml", mode: 0o100666 },
    "problem",
    /chmod 600/,
  ],
  [
    "GitHub: protected, admin bypasses",
    (s) => s.github = { protected: true, login: "bot", admin: true, enforceAdmins: false },
    "problem",
    /enforce_admins/,
  ],
  [
    "GitHub: protected, enforced",
    (s) => s.github = { protected: true, login: "bot", admin: true, enforceAdmins: true },
    null,
    /./,
  ],
  [
    "a preflight blocker",
    (s) =>
      s.blockers = [{
        what: "x is invalid",
        problem: "Cannot read x.\n  fix: edit x",
        hold: false,
      }],
    "problem",
    /^edit x$/,
  ],
];

Deno.test("each doctor check, case by case, on a snapshot", () => {
  for (const [name, plant, severity, fix] of CASES) {
    const s = healthy();
    plant(s);
    const found = runChecks(s);
    if (severity === null) {
      assert.deepEqual(found, [], name);
      continue;
    }
    assert.equal(found.length, 1, `${name}: ${JSON.stringify(found, null, 2)}`);
    assert.equal(found[0]!.severity, severity, name);
    assert.match(found[0]!.fix, fix, name);
    assert.ok(found[0]!.what && found[0]!.why, name);
  }
});

Deno.test("relay doctor checks the profile's programs under the PATH of the schedule relay schedule installed", async () => {
  await using scene = await makeScene();
  await Deno.chmod(scene.profile, 0o600);
  assert.equal((await scene.relay(["poll"])).code, 0);
  assert.equal((await scene.relay(["review"])).code, 0);
  const crontab = join(scene.dir, "crontab");
  const installed = await scene.relay(["schedule", "install", "--crontab-file", crontab]);
  assert.equal(installed.code, 0, all(installed));
  const healthy = await scene.relay(["doctor", "--crontab-file", crontab]);
  assert.equal(healthy.code, 0, all(healthy));

  // The installed lines' PATH loses every folder with bash in it: the agents cannot start.
  const text = await Deno.readTextFile(crontab);
  await Deno.writeTextFile(crontab, text.replace(/PATH=[^ ]+/g, `PATH=${scene.dir}`));
  const res = await scene.relay(["doctor", "--crontab-file", crontab]);
  assert.equal(res.code, 1, all(res));
  assert.match(
    res.stdout,
    new RegExp(`^problem: .*bash.*\\(PATH of the installed schedule \\(${crontab}\\)\\)$`, "m"),
  );
});

Deno.test("relay doctor never offers to commit and push a config that does not load: it is mended first", () => {
  const s = healthy();
  s.blockers = [{ what: ".relay/config.yaml is invalid", problem: "…", hold: false }];
  s.initFiles = { uncommitted: [".relay/config.yaml"], unpushed: [] };
  const init = runChecks(s).find((f) => f.id === "init-uncommitted");
  assert.ok(init);
  assert.match(
    init.fix,
    /^once \.relay\/config\.yaml is valid again \(the problem above\): git -C /,
  );
  s.blockers = [];
  assert.match(runChecks(s).find((f) => f.id === "init-uncommitted")!.fix, /^git -C /);
});
