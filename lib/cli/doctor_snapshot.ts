/**
 * What `relay doctor` looks at, gathered once: relay's state files, the
 * locks, git (read-only commands: nothing is fetched, written or pruned), the
 * operator profile and the environment a cron tick will have. The checks are
 * doctor_checks.ts; they see only this snapshot.
 */
import { join, resolve } from "../path.ts";
import type { RepoPaths } from "../git/discover.ts";
import { Git, NO_SUBMODULE_STATUS } from "../git/git.ts";
import {
  BRIEF_FILE,
  CONFIG_FILE,
  heartbeatPath,
  PAPERWORK_PATHS,
  REPORT_FILE,
  statePaths,
} from "../state/paths.ts";
import type { LockView, OpenPr, Skipped, Snapshot } from "./doctor_checks.ts";
import type { Profile } from "../config/profile_load.ts";
import type { RepoConfig } from "../config/repo_load.ts";

async function readTextOrNull(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch {
    return null;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

function newest(...times: (string | null | undefined)[]): string | null {
  let best: string | null = null;
  for (const t of times) {
    if (!t || Number.isNaN(Date.parse(t))) continue;
    if (best === null || Date.parse(t) > Date.parse(best)) best = t;
  }
  return best;
}

/**
 * Whether a git process works in one of `trees`. Deno reads /proc only with
 * --allow-all, so ps lists the git processes and, on Linux, readlink tells each
 * one's folder (git -C changes into it); elsewhere any git process counts,
 * which errs on the side of "in use".
 */
async function gitRunning(trees: string[]): Promise<boolean> {
  const { run } = await import("../proc/run.ts");
  const ps = await run(["ps", "-A", "-o", "pid=,comm="], {
    cwd: "/",
    allowFail: true,
    timeoutMs: 10_000,
  }).catch(() => null);
  if (!ps || ps.code !== 0) return false;
  const pids = ps.stdout.split("\n").map((l) => /^\s*(\d+)\s+(\S+)\s*$/.exec(l))
    .filter((m) => m !== null && /(^|\/)git$/.test(m[2]!)).map((m) => m![1]!);
  if (Deno.build.os !== "linux") return pids.length > 0;
  for (const pid of pids) {
    const link = await run(["readlink", "--", `/proc/${pid}/cwd`], {
      cwd: "/",
      allowFail: true,
      timeoutMs: 10_000,
    }).catch(() => null);
    if (!link || link.code !== 0) continue; // It ended meanwhile.
    const cwd = link.stdout.trim();
    if (trees.some((t) => cwd === t || cwd.startsWith(`${t}/`))) return true;
  }
  return false;
}

/** When the file last changed on HEAD (commit time), or its mtime when the tree differs. */
async function since(git: Git, root: string, file: string): Promise<number | null> {
  const edited = !(await git.ok(["diff", "--quiet", NO_SUBMODULE_STATUS, "HEAD", "--", file]));
  if (!edited) {
    const ct = (await git.run(["log", "-1", "--format=%ct", "HEAD", "--", file], {
      allowFail: true,
    })).stdout.trim();
    if (/^\d+$/.test(ct)) return Number(ct) * 1000;
  }
  try {
    return (await Deno.stat(join(root, file))).mtime?.getTime() ?? null;
  } catch {
    return null;
  }
}

export interface GatherOptions {
  profileFlag: string | undefined;
  /**
   * The installed schedule (`relay schedule install`'s crontab block, systemd
   * unit or launchd agent) and the PATH its ticks run under; without one, the
   * PATH `relay init` prints (cron_path.ts) is what a tick would have.
   */
  schedule?: { kind: string; where: string; path: string } | null;
  now?: number;
}

export async function gather(
  repo: RepoPaths,
  opts: GatherOptions,
): Promise<{ snapshot: Snapshot; skipped: Skipped[]; profile: Profile | null }> {
  const now = opts.now ?? Date.now();
  const state = statePaths(repo.commonDir);
  const git = new Git(repo.root);
  const skipped: Skipped[] = [];
  const { preflight } = await import("./status_checks.ts");
  const { readJournal } = await import("../state/journal.ts");
  const { readHold } = await import("../state/hold.ts");
  const { readPause } = await import("../state/pause.ts");
  const { readLastTick } = await import("../state/last_tick.ts");
  const { lockState } = await import("../state/lock.ts");
  const { loadRepoConfig } = await import("../config/repo_load.ts");
  const { loadProfile, profilePath } = await import("../config/profile_load.ts");

  const setUp = await exists(join(repo.root, CONFIG_FILE));
  const config: RepoConfig | null = await loadRepoConfig(repo.root).catch(() => null);
  const remote = config?.remote ?? "origin";
  const main = config?.main ?? "main";
  let profileFile: string | null = null;
  try {
    profileFile = profilePath(opts.profileFlag);
  } catch {
    // No HOME and no flag: preflight says so when an agent is needed.
  }
  const profile: Profile | null = profileFile
    ? await loadProfile(profileFile).catch(() => null)
    : null;

  const journal = await readJournal(state.journal).catch(() => null);
  const hold = await readHold(state.hold).catch(() => null);
  const pause = await readPause(state.pause);
  const lastPoll = await readLastTick(repo.commonDir, "poll");
  const lastReview = await readLastTick(repo.commonDir, "review");
  const heart = async (tick: "poll" | "review") =>
    (await readTextOrNull(heartbeatPath(repo.commonDir, tick)))?.trim() ?? null;
  const ticks = {
    poll: newest(await heart("poll"), lastPoll?.at),
    review: newest(await heart("review"), lastReview?.at),
  };

  // The brief and the report, as the ticks read them.
  const { parseBrief } = await import("../protocol/brief.ts");
  const { parseReport } = await import("../protocol/report.ts");
  const { readRound, readTask } = await import("../state/tasks.ts");
  const briefText = await readTextOrNull(join(repo.root, BRIEF_FILE));
  let brief: Snapshot["brief"] = null;
  let owner: Snapshot["owner"] = null;
  let report: Snapshot["report"] = null;
  let parsedBrief = null;
  let briefProblem: Snapshot["briefProblem"] = null;
  try {
    parsedBrief = briefText === null ? null : parseBrief(briefText, BRIEF_FILE);
  } catch (err) {
    // An empty file is no brief, as the poll reads it; anything else that does not parse stops it.
    if (briefText?.trim()) {
      briefProblem = {
        what: (err as Error).message.split("\n")[0]!,
        fix: (err as { fix?: string }).fix ?? null,
      };
    }
  }
  const reviewJournal = await readTextOrNull(state.reviewJournal);
  if (parsedBrief) {
    const ownerTask = parsedBrief.fixes ?? parsedBrief.task;
    const round = await readRound(state, parsedBrief).catch(() => null);
    brief = {
      task: parsedBrief.task,
      owner: ownerTask,
      status: parsedBrief.status,
      branch: parsedBrief.branch,
      since: await since(git, repo.root, BRIEF_FILE),
      attempts: round?.attempts.length ?? 0,
    };
    const record = await readTask(state, ownerTask).catch(() => null);
    const frozen = (record?.config as { fixRounds?: { value?: unknown } } | undefined)?.fixRounds
      ?.value;
    owner = {
      task: ownerTask,
      merged: record?.review?.merged !== undefined,
      closed: record?.review?.closed !== undefined,
      fixes: record?.review?.fixes.length ?? 0,
      cap: typeof frozen === "number" ? frozen : config?.fixRounds ?? 3,
    };
    const reportText = await readTextOrNull(join(repo.root, REPORT_FILE));
    let parsed = null;
    try {
      parsed = reportText === null ? null : parseReport(reportText, REPORT_FILE);
    } catch {
      // Said by relay status.
    }
    if (parsed) {
      const { verdictFor } = await import("../state/reviews.ts");
      const review = record?.review ?? null;
      const settled = review !== null && (
        review.merged !== undefined || review.closed?.head === parsed.head ||
        review.human?.head === parsed.head || verdictFor(review, parsed.head) !== undefined
      );
      report = {
        task: parsed.task,
        outcome: parsed.outcome,
        head: parsed.head,
        since: await since(git, repo.root, REPORT_FILE),
        settled,
        inReview: reviewJournal !== null,
      };
    }
  }

  // The locks, and whether their holders are who the records say.
  const { isAlive } = await import("../proc/alive.ts");
  const { hostname } = await import("../state/lock.ts");
  const { effectiveAgentTimeoutMs } = await import("../config/repo_load.ts");
  const locks: LockView[] = [];
  for (const tick of ["poll", "review"] as const) {
    const path = tick === "poll" ? state.pollLock : state.reviewLock;
    const { held, info } = await lockState(path).catch(() => ({ held: false, info: null }));
    const holderAlive = info && info.host === hostname() ? await isAlive(info.pid) : null;
    const role = tick === "poll" ? profile?.roles.executor : profile?.roles.reviewer;
    const turnLimitMs = role && config ? effectiveAgentTimeoutMs(role.timeoutMs, config) : null;
    let turnDeadline: string | null = null;
    if (tick === "poll") turnDeadline = journal?.agentDeadline ?? null;
    else if (reviewJournal) {
      try {
        const d = JSON.parse(reviewJournal).deadline;
        if (typeof d === "string") turnDeadline = d;
      } catch {
        // An unreadable journal: the review tick says so.
      }
    }
    locks.push({ tick, path, held, info, holderAlive, turnDeadline, turnLimitMs });
  }

  // PRs in flight: plain-git records, or relay's own open PRs on GitHub.
  const trackingRef = (branch: string) => `refs/remotes/${remote}/${branch}`;
  const fetched = (await git.resolve(trackingRef(main))) !== null;
  const prs: OpenPr[] = [];
  if ((config?.forge ?? "plain") === "plain") {
    const { openPrRecords } = await import("../forge/plain_executor.ts");
    const split = config?.machines === "split" ? { git, remote } : undefined;
    for (const r of await openPrRecords(state.prs, split).catch(() => [])) {
      prs.push({
        task: r.task,
        branch: r.branch,
        id: r.id,
        branchGone: fetched && (await git.resolve(trackingRef(r.branch))) === null,
      });
    }
  } else {
    const open = await githubOpenPrs(repo.root).catch((err) => {
      skipped.push({
        id: "github-prs",
        why: `the open PRs could not be read with gh: ${(err as Error).message.split("\n")[0]}`,
      });
      return [];
    });
    for (const p of open) {
      prs.push({
        task: Number(p.headRefName.slice("task-".length)),
        branch: p.headRefName,
        id: `#${p.number}`,
        branchGone: fetched && (await git.resolve(trackingRef(p.headRefName))) === null,
      });
    }
  }

  // Worktrees: registered ones whose folder is gone, folders that are no worktree.
  const { parseWorktreeList, realPathSoFar, worktreeRootOf } = await import(
    "../loop/worktree.ts"
  );
  const list = parseWorktreeList(await git.out(["worktree", "list", "--porcelain", "-z"]));
  const linked = list.slice(1);
  const missing: Snapshot["worktrees"]["missing"] = [];
  const present: { path: string; branch: string | null }[] = [];
  for (const w of linked) {
    if (!(await exists(w.path))) {
      // An interrupted run's worktree is preflight's: its fix depends on the run's step.
      if (journal && realPathSoFar(journal.worktree) === realPathSoFar(w.path)) continue;
      missing.push({ path: w.path, branch: w.branch });
    } else present.push(w);
  }
  const wtRoot = worktreeRootOf(profile?.worktreeRoot, repo.root);
  const real = (p: string) => {
    try {
      return Deno.realPathSync(p);
    } catch {
      return resolve(p);
    }
  };
  const registered = new Set(linked.map((w) => real(w.path)));
  const orphans: string[] = [];
  try {
    for await (const e of Deno.readDir(wtRoot)) {
      const path = join(wtRoot, e.name);
      if (e.isDirectory && !registered.has(real(path)) && !e.name.endsWith(".moved-aside")) {
        orphans.push(path);
      }
    }
  } catch {
    // No worktree folder yet.
  }
  orphans.sort();

  // Paperwork on task branches not merged into main.
  const paperwork: Snapshot["paperwork"] = [];
  const base = trackingRef(main);
  if (fetched) {
    const refs = (await git.out([
      "for-each-ref",
      "--format=%(refname)",
      "refs/heads/task-*",
      `refs/remotes/${remote}/task-*`,
    ])).split("\n").filter((r) => r !== "");
    const seen = new Set<string>();
    for (const ref of refs) {
      const branch = ref.replace(/^refs\/(heads|remotes\/[^/]+)\//, "");
      if (seen.has(branch)) continue;
      if (await git.ok(["merge-base", "--is-ancestor", ref, base])) continue;
      const files = (await git.run(
        ["diff", "--name-only", `${base}...${ref}`, "--", ...PAPERWORK_PATHS],
        { allowFail: true },
      )).stdout.split("\n").filter((f) => f !== "");
      if (!files.length) continue;
      seen.add(branch);
      const onMain = (await git.run(["ls-tree", "-r", "--name-only", base, "--", ...files], {
        allowFail: true,
      })).stdout.split("\n").filter((f) => f !== "");
      const wt = present.find((w) => w.branch === branch)?.path ?? null;
      paperwork.push({
        branch,
        ref: ref.replace(/^refs\/(heads|remotes)\//, ""),
        files,
        onMain,
        worktree: wt,
      });
    }
  }

  // Stale index.lock files: the primary tree's and each worktree's.
  const lockFiles = [join(repo.gitDir, "index.lock")];
  try {
    for await (const e of Deno.readDir(join(repo.commonDir, "worktrees"))) {
      lockFiles.push(join(repo.commonDir, "worktrees", e.name, "index.lock"));
    }
  } catch {
    // No linked worktrees.
  }
  const indexLocks: Snapshot["indexLocks"] = [];
  const found: { path: string; mtime: number }[] = [];
  for (const path of lockFiles) {
    const info = await Deno.stat(path).catch(() => null);
    if (info) found.push({ path, mtime: info.mtime?.getTime() ?? now });
  }
  if (found.length) {
    const trees = [repo.root, repo.commonDir, ...linked.map((w) => w.path)].map(real);
    const running = await gitRunning(trees);
    for (const f of found) {
      indexLocks.push({ path: f.path, ageMs: now - f.mtime, gitRunning: running });
    }
  }

  // relay init's files: committed, and on origin/main.
  const { INIT_FILES } = await import("./init.ts");
  const here: string[] = [];
  for (const f of INIT_FILES) if (await exists(join(repo.root, f))) here.push(f);
  const ignored = here.length
    ? (await git.run(["check-ignore", "--no-index", "--", ...here], { allowFail: true })).stdout
      .split("\n").filter((l) => l !== "")
    : [];
  const ours = here.filter((f) => !ignored.includes(f));
  const changed = ours.length
    ? (await git.run([
      "status",
      "--porcelain=v1",
      "-z",
      "--untracked-files=all",
      NO_SUBMODULE_STATUS,
      "--",
      ...ours,
    ]))
      .stdout.split("\0")
      .filter((e) => e !== "").map((e) => e.slice(3))
    : [];
  const uncommitted = ours.filter((f) => changed.includes(f));
  let unpushed: string[] = [];
  if (fetched && ours.length) {
    const onRemote = (await git.run(["ls-tree", "-r", "--name-only", base, "--", ...ours], {
      allowFail: true,
    })).stdout.split("\n");
    unpushed = ours.filter((f) => !uncommitted.includes(f) && !onRemote.includes(f));
  }

  // Build output git does not ignore, in the primary tree and each task worktree.
  const { buildOutputMatcher } = await import("../git/build_output.ts");
  const matcher = buildOutputMatcher(config?.neverCommit ?? []);
  const buildOutput: Snapshot["buildOutput"] = [];
  for (const tree of [repo.root, ...present.map((w) => w.path)]) {
    const out = await new Git(tree).run(
      // A look, never an index write: a turn's agent, or its guard, may be at work there.
      [
        "--no-optional-locks",
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=normal",
        NO_SUBMODULE_STATUS,
      ],
      { allowFail: true },
    );
    if (out.code !== 0) continue;
    const paths = out.stdout.split("\0").filter((e) => e.startsWith("?? ")).map((e) => e.slice(3));
    const hits = paths.filter((p) => matcher.match(p) !== undefined);
    if (!hits.length) continue;
    buildOutput.push({
      tree,
      entries: [...new Set(hits.map((p) => matcher.entry(p)))],
      globs: [...new Set(hits.map((p) => matcher.match(p)!))],
    });
  }

  // The profile's programs under the schedule's PATH; the agent CLIs' logins.
  let programNotes: string[] = [];
  let pathSource = "the installed schedule";
  if (profile) {
    const cron = await import("./cron_path.ts");
    const pathEnv = Deno.env.get("PATH") ?? "";
    let dirs = opts.schedule?.path.split(":").filter((d) => d !== "");
    if (opts.schedule) pathSource = `the installed schedule (${opts.schedule.where})`;
    if (!dirs) {
      dirs = cron.cronPath(pathEnv, [], cron.safetyContext()).dirs;
      pathSource = "relay init's crontab lines (no installed schedule found)";
    }
    const programs = [
      ...cron.profilePrograms(profile),
      ...profile.notify.map((argv) => argv[0]!),
    ];
    programNotes = await cron.programNotes([...new Set(programs)], pathEnv, dirs);
  } else {
    skipped.push({
      id: "program-path",
      why: "the operator profile does not load, so its programs were not checked",
    });
    skipped.push({ id: "agent-login", why: "the operator profile does not load" });
  }
  const logins = profile ? await agentLogins(profile, skipped) : [];

  let profileMode: Snapshot["profile"] = null;
  if (profileFile) {
    try {
      const info = await Deno.stat(profileFile);
      profileMode = { path: profileFile, mode: info.mode };
      if (info.mode === null) {
        skipped.push({ id: "profile-permissions", why: "this system reports no file modes" });
      }
    } catch {
      // No profile: preflight says so when an agent is needed.
    }
  }

  // GitHub: main's protection, and whether relay's identity can get past it.
  let github: Snapshot["github"] = null;
  if ((config?.forge ?? "plain") !== "github") {
    skipped.push({ id: "github-protection", why: "the forge is plain git, not GitHub" });
  } else {
    github = await githubProtection(repo.root, main).catch((err) => {
      skipped.push({
        id: "github-protection",
        why: `gh could not tell: ${(err as Error).message.split("\n")[0]}`,
      });
      return null;
    });
  }

  const blockers = setUp
    ? await preflight(
      repo,
      opts.profileFlag,
      journal,
      journal !== null || brief?.status === "OPEN" || report !== null,
    )
    : [];

  return {
    snapshot: {
      now,
      root: repo.root,
      commonDir: repo.commonDir,
      remote,
      main,
      setUp,
      blockers,
      ticks,
      hold: hold ? { task: hold.task, reason: hold.reason, next: hold.next, at: hold.at } : null,
      pause: pause ? { by: pause.by, at: pause.at, reason: pause.reason } : null,
      locks,
      brief,
      briefProblem,
      journal: journal !== null,
      lastPoll: lastPoll ? lastPoll.message.split("\n")[0]! : null,
      report,
      owner,
      prs,
      paperwork,
      worktrees: { missing, orphans },
      indexLocks,
      initFiles: { uncommitted, unpushed },
      buildOutput,
      programNotes,
      pathSource,
      logins,
      profile: profileMode,
      github,
    },
    skipped,
    profile,
  };
}

/**
 * Whether each agent CLI the profile uses has a login, as far as files and the
 * environment tell offline: Claude Code's credentials file or an API key,
 * Codex's auth.json or an API key. Where a login lives elsewhere (the macOS
 * keychain, a custom Codex provider) the check is skipped, not passed.
 */
async function agentLogins(profile: Profile, skipped: Skipped[]): Promise<Snapshot["logins"]> {
  const home = Deno.env.get("HOME") ?? "";
  const out: Snapshot["logins"] = [];
  const roles = [profile.roles.executor, profile.roles.reviewer, profile.roles.security];
  for (const vendor of ["claude", "codex"] as const) {
    const using = roles.filter((r) => r.vendor === vendor);
    if (!using.length) continue;
    const keys = vendor === "claude"
      ? ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"]
      : ["OPENAI_API_KEY", "CODEX_API_KEY"];
    if (using.every((r) => keys.some((k) => r.env[k]))) {
      out.push({ vendor, state: "found", where: "the role's env" });
      continue;
    }
    const dir = vendor === "claude"
      ? Deno.env.get("CLAUDE_CONFIG_DIR") || join(home, ".claude")
      : Deno.env.get("CODEX_HOME") || join(home, ".codex");
    const file = join(dir, vendor === "claude" ? ".credentials.json" : "auth.json");
    if (await exists(file)) {
      out.push({ vendor, state: "found", where: file });
      continue;
    }
    if (vendor === "claude" && Deno.build.os === "darwin") {
      skipped.push({ id: "agent-login", why: "Claude Code keeps its login in the macOS keychain" });
      continue;
    }
    const toml = vendor === "codex" ? await readTextOrNull(join(dir, "config.toml")) : null;
    if (toml !== null && /^\s*model_provider\s*=/m.test(toml)) {
      skipped.push({
        id: "agent-login",
        why: `Codex uses a custom model provider (${
          join(dir, "config.toml")
        }): its key is that provider's`,
      });
      continue;
    }
    const shell = keys.some((k) => Deno.env.get(k));
    out.push({ vendor, state: shell ? "shell-only" : "missing", where: file });
  }
  return out;
}

/** gh with a short limit: doctor should answer in seconds, not wait a minute per call. */
const GH_DOCTOR_TIMEOUT_MS = 20_000;

async function ghOrNull(root: string) {
  const { findProgram } = await import("../agents/which.ts");
  if (!(await findProgram("gh", Deno.env.get("PATH") ?? ""))) return null;
  const { Gh } = await import("../forge/gh.ts");
  return new Gh(root, GH_DOCTOR_TIMEOUT_MS);
}

async function githubOpenPrs(root: string) {
  const gh = await ghOrNull(root);
  if (!gh) throw new Error("gh is not on PATH");
  const { listRelayOpen } = await import("../forge/gh.ts");
  return await listRelayOpen(gh);
}

async function githubProtection(root: string, main: string): Promise<Snapshot["github"]> {
  const gh = await ghOrNull(root);
  if (!gh) throw new Error("gh is not on PATH");
  const api = async (path: string) => {
    const res = await gh.run(["api", "--", path], { allowFail: true });
    return { ok: res.code === 0, data: res.code === 0 ? JSON.parse(res.stdout) : null, res };
  };
  const branch = await api(`repos/{owner}/{repo}/branches/${main}`);
  if (!branch.ok) throw gh.failure(["api", `repos/{owner}/{repo}/branches/${main}`], branch.res);
  const user = await api("user");
  const repo = await api("repos/{owner}/{repo}");
  const login = typeof user.data?.login === "string" ? user.data.login : "(unknown)";
  const admin = repo.data?.permissions?.admin === true;
  if (branch.data?.protected !== true) {
    return { protected: false, login, admin, enforceAdmins: null };
  }
  let enforceAdmins: boolean | null = null;
  if (admin) {
    const protection = await api(`repos/{owner}/{repo}/branches/${main}/protection`);
    const e = protection.data?.enforce_admins?.enabled;
    if (typeof e === "boolean") enforceAdmins = e;
  }
  return { protected: true, login, admin, enforceAdmins };
}
