/**
 * `relay doctor`'s checks: each a small function over the snapshot that
 * doctor_snapshot.ts gathers (files, git, the environment a cron tick has),
 * returning what is wrong, why it matters and the exact fix. No I/O here, so
 * each check is a table test away from its cases.
 */
import { shellLine, shellWord } from "../proc/shell.ts";
import { CONFIG_FILE } from "../state/paths.ts";

export interface Finding {
  /** The check that found it. */
  id: string;
  /** "problem": a person is needed (exit 1); "notice": worth knowing, nothing is wrong yet. */
  severity: "problem" | "notice";
  what: string;
  why: string;
  /** An exact command, or an exact edit. */
  fix: string;
  /**
   * Which instance of the problem this is, stable while it lasts (the lock file, the
   * branch): a notifier hears of each once, not on every doctor run.
   */
  key: string;
}

/** A check that did not run, and why: never counted as passing. */
export interface Skipped {
  id: string;
  why: string;
}

/** cron starts each tick once a minute. */
export const TICK_INTERVAL_MS = 60_000;
/** A tick with no sign of life for this long is not running. */
export const STALE_MS = 3 * TICK_INTERVAL_MS;
/** A pause older than this, with work waiting, is likely forgotten. */
export const LONG_PAUSE_MS = 24 * 60 * 60_000;
/** git holds index.lock for one command: older than this, it is left over whatever runs. */
export const INDEX_LOCK_STALE_MS = 10 * 60_000;
/** What a tick may spend beyond its agent's turn limit: fetches, the bar, pushes. */
export const TICK_GRACE_MS = 30 * 60_000;

export interface LockView {
  tick: "poll" | "review";
  path: string;
  held: boolean;
  info: { pid: number; host: string; started: string; command: string } | null;
  /** Whether the pid on record runs on this machine (null: another host, or no record). */
  holderAlive: boolean | null;
  /** The journaled turn's deadline (ISO), when a turn is on record. */
  turnDeadline: string | null;
  /** The longest turn the tick may run (ms), from the profile; null when unknown. */
  turnLimitMs: number | null;
}

export interface OpenPr {
  task: number;
  branch: string;
  id: string;
  /** The remote-tracking branch is gone (as of the last fetch, which prunes). */
  branchGone: boolean;
}

export interface Snapshot {
  now: number;
  root: string;
  commonDir: string;
  remote: string;
  main: string;
  /** `.relay/config.yaml` is in the primary tree: relay is set up here. */
  setUp: boolean;
  /** What stops every tick (status's preflight), each with its fix. */
  blockers: { what: string; problem: string; hold: boolean }[];
  /** The newest sign of life of each tick (ISO), or null. */
  ticks: { poll: string | null; review: string | null };
  hold: { task: number; reason: string; next: string; at: string } | null;
  pause: { by: string; at: string; reason: string | null } | null;
  locks: LockView[];
  /** The brief in NEXT-STEPS.md, when it parses. */
  brief: {
    task: number;
    owner: number;
    status: string;
    branch: string;
    /** Since when it reads as it does (commit time, or the file's time when edited). */
    since: number | null;
    attempts: number;
  } | null;
  /** Why NEXT-STEPS.md does not parse (file, line and problem) and its fix, or null. */
  briefProblem: { what: string; fix: string | null } | null;
  /** An interrupted executor tick is journaled. */
  journal: boolean;
  /** The last poll's one-line result. */
  lastPoll: string | null;
  report: {
    task: number;
    outcome: string;
    head: string;
    since: number | null;
    /** Reviewed, merged, closed or on the human path at this head. */
    settled: boolean;
    /** A reviewer-side turn is journaled (in flight, or uncertain). */
    inReview: boolean;
  } | null;
  /** The review record of the task in flight (the brief's owner). */
  owner: { task: number; merged: boolean; closed: boolean; fixes: number; cap: number } | null;
  prs: OpenPr[];
  /** Task branches (not merged into main) that carry paperwork. */
  paperwork: {
    branch: string;
    ref: string;
    files: string[];
    onMain: string[];
    worktree: string | null;
  }[];
  worktrees: { missing: { path: string; branch: string | null }[]; orphans: string[] };
  /** index.lock files, how old, and whether a git process works in the repository. */
  indexLocks: { path: string; ageMs: number; gitRunning: boolean }[];
  initFiles: { uncommitted: string[]; unpushed: string[] };
  /** Untracked build output git does not ignore, per tree. */
  buildOutput: { tree: string; entries: string[]; globs: string[] }[];
  /** programNotes() over the PATH of the installed schedule. */
  programNotes: string[];
  pathSource: string;
  logins: {
    vendor: "claude" | "codex";
    state: "found" | "missing" | "shell-only";
    where: string;
  }[];
  profile: { path: string; mode: number | null } | null;
  github:
    | { protected: boolean; login: string; admin: boolean; enforceAdmins: boolean | null }
    | null;
}

function ago(ms: number): string {
  const m = Math.round(ms / 60_000);
  if (m < 120) return `${m} minute${m === 1 ? "" : "s"}`;
  const h = Math.round(m / 60);
  return h < 48 ? `${h} hours` : `${Math.round(h / 24)} days`;
}

const problem = (f: Omit<Finding, "severity">): Finding => ({ severity: "problem", ...f });
const notice = (f: Omit<Finding, "severity">): Finding => ({ severity: "notice", ...f });

export function blockers(s: Snapshot): Finding[] {
  return s.blockers.map((b) => {
    const [first, ...rest] = b.problem.split("\n");
    const fix = rest.join("\n").replace(/^\s*fix:\s*/, "").trim();
    return problem({
      id: "preflight",
      key: `preflight:${b.what}`,
      what: b.what,
      why: `${first}${b.hold ? "" : " Every tick stops on it (exit 2)."}`,
      fix: fix || `see "relay status"`,
    });
  });
}

/**
 * What a tick's lock says: "free"; "running", held by a live process within its
 * turn limit; or a problem the lock check reports: "dead-holder" (the pid on
 * record is gone, another process holds it) or "overdue" (past its turn limit).
 */
export function lockStatus(
  l: LockView,
  now: number,
): "free" | "running" | "dead-holder" | "overdue" {
  if (!l.held) return "free";
  // Held with no record yet: the kernel lock goes with a live holder that is still writing it.
  if (!l.info) return "running";
  if (l.holderAlive === false) return "dead-holder";
  const deadline = l.turnDeadline !== null
    ? Date.parse(l.turnDeadline) + 5 * 60_000
    : l.turnLimitMs !== null
    ? Date.parse(l.info.started) + l.turnLimitMs + TICK_GRACE_MS
    : NaN;
  return Number.isFinite(deadline) && now > deadline ? "overdue" : "running";
}

export function ticksRunning(s: Snapshot): Finding[] {
  if (!s.setUp) return [];
  const stale: string[] = [];
  for (const tick of ["poll", "review"] as const) {
    // systemd and launchd do not start a unit that is still running: during a long turn no
    // tick starts and no heartbeat is written. A held lock is the tick's sign of life; one
    // held past its limit or by a dead pid's record is the lock check's, with its own fix.
    if (s.locks.some((l) => l.tick === tick && lockStatus(l, s.now) !== "free")) continue;
    const at = s.ticks[tick];
    if (at === null) stale.push(`relay ${tick} has never run here`);
    else if (s.now - Date.parse(at) > STALE_MS) {
      stale.push(`relay ${tick} last ran at ${at} (${ago(s.now - Date.parse(at))} ago)`);
    }
  }
  if (!stale.length) return [];
  const never = s.ticks.poll === null && s.ticks.review === null;
  return [problem({
    id: "ticks-not-running",
    key: `ticks:${never ? "never" : "stopped"}`,
    what: `the ticks are not running: ${stale.join("; ")}`,
    why: `cron starts both ticks every minute; with none for ${
      ago(STALE_MS)
    } nothing moves: no brief is worked on, no report reviewed, no PR merged.`,
    fix: never
      ? `install the schedule: relay -C ${shellWord(s.root)} schedule install`
      : `check the schedule (crontab -l) and the log (tail ${
        shellWord(`${s.commonDir}/relay/cron.log`)
      }); to install it again: relay -C ${shellWord(s.root)} schedule install`,
  })];
}

export function holdOnRecord(s: Snapshot): Finding[] {
  if (!s.hold) return [];
  return [problem({
    id: "hold",
    key: `hold:${s.hold.at}`,
    what: `HOLD on task ${s.hold.task} since ${s.hold.at}: ${s.hold.reason.split("\n")[0]}`,
    why: "both ticks stop at a recorded HOLD until a person deals with it and runs relay resume.",
    fix: s.hold.next,
  })];
}

export function paused(s: Snapshot): Finding[] {
  if (!s.pause) return [];
  const long = s.now - Date.parse(s.pause.at) > LONG_PAUSE_MS;
  const waiting = s.brief?.status === "OPEN" || (s.report !== null && !s.report.settled);
  const f = {
    id: "paused",
    key: `paused:${s.pause.at}`,
    what: `the loop is paused by ${s.pause.by} since ${s.pause.at}${
      s.pause.reason ? `: ${s.pause.reason}` : ""
    }`,
    why: `no tick starts anything until relay unpause${
      long && waiting ? `; work has waited for ${ago(s.now - Date.parse(s.pause.at))}` : ""
    }.`,
    fix: `relay -C ${shellWord(s.root)} unpause`,
  };
  return [long && waiting ? problem(f) : notice(f)];
}

export function locks(s: Snapshot): Finding[] {
  const out: Finding[] = [];
  for (const l of s.locks) {
    const status = lockStatus(l, s.now);
    if (!l.info || status === "free" || status === "running") continue;
    if (status === "dead-holder") {
      out.push(problem({
        id: "lock-dead-holder",
        key: `lock:${l.path}:${l.info.started}`,
        what:
          `${l.path} is held, but pid ${l.info.pid} on its record (${l.info.command}, since ${l.info.started}) is not running`,
        why:
          `another process holds the ${l.tick} tick's lock (a kernel lock goes with its holder): every ${l.tick} says "busy" while it lives.`,
        fix:
          `find the holder with "fuser -v ${l.path}" (or "lsof ${l.path}") and, once you know it is stuck, stop it with kill <pid>`,
      }));
      continue;
    }
    out.push(problem({
      id: "lock-overdue",
      key: `lock:${l.path}:${l.info.started}`,
      what:
        `the ${l.tick} tick has held ${l.path} since ${l.info.started} (pid ${l.info.pid} on ${l.info.host}), past its turn limit`,
      why:
        `a tick past its turn limit should have been stopped by its own timeout; while it holds the lock every ${l.tick} says "busy".`,
      fix:
        `look at what pid ${l.info.pid} runs (ps -o pid,etime,args -g ${l.info.pid}); if it is stuck, stop it with kill ${l.info.pid}: the next tick finishes or abandons the run from its journal`,
    }));
  }
  return out;
}

export function openBriefIdle(s: Snapshot): Finding[] {
  const b = s.brief;
  if (!b || b.status !== "OPEN" || b.attempts > 0 || s.journal || s.hold || s.pause) return [];
  if (s.locks.some((l) => l.tick === "poll" && l.held)) return [];
  if (s.prs.some((p) => p.task !== b.owner)) return []; // said by prInFlight
  if (b.since === null || s.now - b.since <= STALE_MS) return [];
  return [problem({
    id: "open-brief-not-started",
    key: `open-brief:${b.task}`,
    what: `task ${b.task} has been OPEN for ${ago(s.now - b.since)} and no executor run started`,
    why: `the next poll starts the executor on an OPEN brief; ${
      s.lastPoll ? `the last poll said: ${s.lastPoll}` : "no poll has recorded a result"
    }.`,
    fix: `relay -C ${
      shellWord(s.root)
    } poll (starts the executor now; "relay status" says what stops it)`,
  })];
}

/** A brief that does not parse stops every poll (exit 2): the loop does nothing until it does. */
export function briefUnreadable(s: Snapshot): Finding[] {
  if (s.briefProblem === null) return [];
  const { what, fix } = s.briefProblem;
  return [problem({
    id: "brief-unreadable",
    key: `brief-unreadable:${what}`,
    what,
    why:
      "every poll stops on it (exit 2) and starts no executor, and the review cannot tell which task it is about: the loop does nothing until it reads.",
    fix: fix || "edit NEXT-STEPS.md as the message says",
  })];
}

export function reportUnreviewed(s: Snapshot): Finding[] {
  const r = s.report;
  if (!r || s.brief?.status !== "DONE") return [];
  if (r.outcome === "BLOCKED") {
    return [problem({
      id: "blocked",
      key: `blocked:${r.task}:${r.head}`,
      what: `task ${r.task} came back BLOCKED`,
      why: "a BLOCKED task waits for a person's decision; the loop does not move on by itself.",
      fix: `relay -C ${
        shellWord(s.root)
      } status (it lists the options: close the task, or queue a new brief)`,
    })];
  }
  if (r.settled || r.inReview || s.hold || s.pause) return [];
  if (s.locks.some((l) => l.tick === "review" && l.held)) return [];
  if (r.since === null || s.now - r.since <= STALE_MS) return [];
  return [problem({
    id: "report-unreviewed",
    key: `report:${r.task}:${r.head}`,
    what: `task ${r.task}'s report (SHIPPED at ${r.head.slice(0, 12)}) has been on ${s.main} for ${
      ago(s.now - r.since)
    } and nobody reviewed it`,
    why: "the review tick reviews a SHIPPED report within a minute; until it does, nothing merges.",
    fix: `relay -C ${shellWord(s.root)} review (reviews it now; "relay status" says what stops it)`,
  })];
}

export function strandedPrs(s: Snapshot): Finding[] {
  const out: Finding[] = [];
  for (const pr of s.prs) {
    if (!pr.branchGone) continue;
    out.push(problem({
      id: "pr-branch-gone",
      key: `pr-gone:${pr.id}`,
      what:
        `PR ${pr.id} (task ${pr.task}) is open, but its branch ${pr.branch} is gone from ${s.remote}`,
      why:
        "the review tick cannot review or merge a branch that is gone, and one PR in flight stops the executor from starting the next brief.",
      fix: `relay -C ${
        shellWord(s.root)
      } close ${pr.task} --reason "branch ${pr.branch} was deleted"`,
    }));
  }
  const b = s.brief;
  if (b?.status === "OPEN" && s.owner?.task === b.owner && s.owner.merged) {
    out.push(problem({
      id: "merged-brief-waiting",
      key: `merged-brief:${b.task}`,
      what: `task ${b.owner} is merged, but NEXT-STEPS.md still has brief ${b.task} OPEN for it`,
      why:
        "the executor would work on a task that is finished; a fix for a merged PR has no PR to go to.",
      fix: `in ${s.root}, set line 1 of NEXT-STEPS.md to "Status: DONE", then: git -C ${
        shellWord(s.root)
      } commit -m "relay: task ${b.owner} is merged" -- NEXT-STEPS.md && git -C ${
        shellWord(s.root)
      } push ${shellLine([s.remote, s.main])}`,
    }));
  }
  return out;
}

export function prInFlight(s: Snapshot): Finding[] {
  const b = s.brief;
  if (b?.status !== "OPEN") return [];
  return s.prs.filter((p) => p.task !== b.owner && !p.branchGone).map((p) =>
    problem({
      id: "pr-in-flight",
      key: `in-flight:${p.id}:${b.task}`,
      what:
        `PR ${p.id} (task ${p.task}) is in flight while brief ${b.task} is OPEN and is not its fix`,
      why:
        `one PR is in flight at a time: the executor does not start task ${b.task} until PR ${p.id} is merged or closed, and a fix brief the reviewer writes for task ${p.task} moves brief ${b.task} back to the queue.`,
      fix: `finish PR ${p.id} first (relay -C ${
        shellWord(s.root)
      } review), or give up on it: relay -C ${
        shellWord(s.root)
      } close ${p.task} --reason "superseded by task ${b.task}"`,
    })
  );
}

export function paperworkOnBranch(s: Snapshot): Finding[] {
  return s.paperwork.map((p) => {
    const git = p.worktree
      ? `git -C ${shellWord(p.worktree)}`
      : `git -C ${shellWord(`${s.root}.doctor-${p.branch}`)}`;
    // A branch still checked out in a worktree whose folder is gone cannot be added again.
    const prune = !p.worktree && s.worktrees.missing.some((w) => w.branch === p.branch);
    const steps = [
      ...(prune ? [`git -C ${shellWord(s.root)} worktree prune`] : []),
      ...(p.worktree ? [] : [
        `git -C ${shellWord(s.root)} worktree add ${shellWord(`${s.root}.doctor-${p.branch}`)} ${
          shellWord(p.branch)
        }`,
      ]),
      ...(p.onMain.length
        ? [
          `${git} restore --source=${s.remote}/${s.main} --staged --worktree -- ${
            shellLine(p.onMain)
          }`,
        ]
        : []),
      ...(p.files.filter((f) => !p.onMain.includes(f)).length
        ? [`${git} rm -q -r -- ${shellLine(p.files.filter((f) => !p.onMain.includes(f)))}`]
        : []),
      `${git} commit -m "Take relay's paperwork off ${p.branch}"`,
      `${git} push ${shellLine([s.remote, p.branch])}`,
    ];
    return problem({
      id: "paperwork-on-branch",
      key: `paperwork:${p.branch}`,
      what: `${p.ref} changes relay's paperwork: ${p.files.join(", ")}`,
      why:
        `paperwork (NEXT-STEPS.md, COWORK-STATUS.md, .relay/) is committed to ${s.main} on its own; on a task branch it would be merged over the loop's own state, and the gate refuses it.`,
      fix: steps.join(" && "),
    });
  });
}

export function worktrees(s: Snapshot): Finding[] {
  const out: Finding[] = [];
  for (const w of s.worktrees.missing) {
    out.push(problem({
      id: "worktree-missing",
      key: `worktree-missing:${w.path}`,
      what: `the worktree ${w.path}${
        w.branch ? ` (${w.branch})` : ""
      } is registered but its folder is gone`,
      why:
        "the next tick that needs that worktree stops with a HOLD; git keeps the branch and relay keeps every turn's commits under refs/relay/anchors/.",
      fix: `git -C ${shellWord(s.root)} worktree prune`,
    }));
  }
  for (const path of s.worktrees.orphans) {
    const named = /\/(task-\d+|review-[^/]+)$/.test(path);
    const f = {
      id: "worktree-orphan",
      key: `worktree-orphan:${path}`,
      what: `${path} is in relay's worktree folder but is not a worktree of this repository`,
      why: named
        ? "relay creates the task's worktree at that path: the next tick that needs it stops with a HOLD."
        : "relay did not make it; it only clutters relay's worktree folder.",
      fix: `look inside, then move it aside: mv ${shellWord(path)} ${
        shellWord(`${path}.moved-aside`)
      }`,
    };
    out.push(named ? problem(f) : notice(f));
  }
  return out;
}

export function indexLocks(s: Snapshot): Finding[] {
  return s.indexLocks.map((l) =>
    l.gitRunning && l.ageMs <= INDEX_LOCK_STALE_MS
      ? notice({
        id: "index-lock",
        key: `index-lock:${l.path}`,
        what: `${l.path} exists while a git process works in this repository`,
        why:
          "it is most likely that process's; if it stays after git ends, every git command in that tree fails.",
        fix: `run relay doctor again once git is done; if it is still there: rm ${
          shellWord(l.path)
        }`,
      })
      : problem({
        id: "index-lock",
        key: `index-lock:${l.path}`,
        what: `${l.path} is left over: ${
          l.gitRunning
            ? `it is ${ago(l.ageMs)} old, and git holds it only while one command runs`
            : "no git process works in this repository"
        }`,
        why:
          `every git command that writes that tree's index fails ("Unable to create '…/index.lock': File exists"), so every tick fails.`,
        fix: `rm ${shellWord(l.path)}`,
      })
  );
}

export function fixRounds(s: Snapshot): Finding[] {
  const o = s.owner;
  if (!o || o.merged || o.closed || o.cap <= 0) return [];
  if (o.fixes >= o.cap) {
    return [problem({
      id: "fix-rounds",
      key: `fix-rounds:${o.task}:${o.fixes}`,
      what: `task ${o.task} has used all ${o.cap} of its fix rounds`,
      why: "a further FAIL cannot be sent back: the loop stops on this task with a HOLD.",
      fix: `relay -C ${
        shellWord(s.root)
      } close ${o.task} --reason "…" to give up on it, or raise fix_rounds in .relay/config.yaml (within the profile's limits)`,
    })];
  }
  if (o.fixes === o.cap - 1) {
    return [notice({
      id: "fix-rounds",
      key: `fix-rounds:${o.task}:${o.fixes}`,
      what: `task ${o.task} has one fix round left (${o.fixes} of ${o.cap} used)`,
      why: "one more FAIL uses the last round; the FAIL after it stops the loop with a HOLD.",
      fix: `relay -C ${shellWord(s.root)} show ${o.task} (read the findings so far)`,
    })];
  }
  return [];
}

export function initFiles(s: Snapshot): Finding[] {
  const out: Finding[] = [];
  const git = `git -C ${shellWord(s.root)}`;
  // A config that does not load is mended before it is committed, let alone pushed.
  const mendFirst = s.blockers.some((b) => b.what === `${CONFIG_FILE} is invalid`)
    ? `once ${CONFIG_FILE} is valid again (the problem above): `
    : "";
  if (s.initFiles.uncommitted.length) {
    const files = s.initFiles.uncommitted;
    out.push(problem({
      id: "init-uncommitted",
      key: `init-uncommitted:${files.join(",")}`,
      what: `relay's files are not committed: ${files.join(", ")}`,
      why:
        `agents and the reviewer work from ${s.remote}/${s.main}: what is only in this tree applies to this clone, and REVIEWER.md that is not there is read as absent.`,
      fix: `${mendFirst}${git} add -- ${
        shellLine(files)
      } && ${git} commit -m "relay: init" && ${git} push ${shellLine([s.remote, s.main])}`,
    }));
  }
  if (s.initFiles.unpushed.length) {
    const files = s.initFiles.unpushed;
    out.push(problem({
      id: "init-unpushed",
      key: `init-unpushed:${files.join(",")}`,
      what: `relay's files are committed but not on ${s.remote}/${s.main}: ${files.join(", ")}`,
      why:
        `the reviewer and the task worktrees start from ${s.remote}/${s.main}, which does not have them.`,
      fix: `${mendFirst}${git} push ${shellLine([s.remote, s.main])}`,
    }));
  }
  return out;
}

export function buildOutput(s: Snapshot): Finding[] {
  return s.buildOutput.map((b) =>
    problem({
      id: "build-output-not-ignored",
      key: `build-output:${b.tree}:${b.globs.join(",")}`,
      what: `build output in ${b.tree} is not in .gitignore: ${b.entries.join(", ")}`,
      why:
        `relay never commits it for the agent, but it keeps "git status" from being clean, a person's "git add -A" commits it, and the gate refuses a branch that adds it.`,
      fix: `printf '%s\\n' ${shellLine(b.globs)} >> ${
        shellWord(`${s.root}/.gitignore`)
      } && git -C ${shellWord(s.root)} add .gitignore && git -C ${
        shellWord(s.root)
      } commit -m "Ignore build output" && git -C ${shellWord(s.root)} push ${
        shellLine([s.remote, s.main])
      }`,
    })
  );
}

export function programsOnPath(s: Snapshot): Finding[] {
  return s.programNotes.map((note) => {
    const warning = note.startsWith("warning: ");
    const text = note.replace(/^(warning|note): /, "");
    const [what, fix] = text.includes(": ")
      ? [text.slice(0, text.indexOf(": ")), text.slice(text.indexOf(": ") + 2)]
      : [text, "fix the operator profile"];
    const f = {
      id: "program-path",
      key: `program:${what}`,
      what: `${what} (PATH of ${s.pathSource})`,
      why: warning
        ? "the tick that starts it fails to, and holds until it can."
        : "under cron another program of that name runs than the one you tried here.",
      fix: fix!,
    };
    return warning ? problem(f) : notice(f);
  });
}

export function agentLogins(s: Snapshot): Finding[] {
  return s.logins.filter((l) => l.state !== "found").map((l) => {
    const name = l.vendor === "claude" ? "Claude Code" : "Codex";
    const key = l.vendor === "claude" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
    const login = l.vendor === "claude" ? "claude /login" : "codex login";
    if (l.state === "shell-only") {
      return notice({
        id: "agent-login",
        key: `login:${l.vendor}:shell`,
        what: `${name} has no login file; ${key} is set only in this shell`,
        why:
          "cron does not read your shell's startup files: its ticks may run the agent without a key.",
        fix:
          `run ${login} as the user cron runs as, or set ${key} in the role's env in the operator profile`,
      });
    }
    return problem({
      id: "agent-login",
      key: `login:${l.vendor}`,
      what: `${name} is not logged in: no ${l.where} and no ${key}`,
      why: "every turn of a role it plays fails at once, and each failure costs an attempt.",
      fix:
        `run ${login} as the user cron runs as, or set ${key} in the role's env in the operator profile`,
    });
  });
}

export function profileMode(s: Snapshot): Finding[] {
  const p = s.profile;
  if (!p || p.mode === null || (p.mode & 0o066) === 0) return [];
  const writable = (p.mode & 0o022) !== 0;
  return [problem({
    id: "profile-permissions",
    key: `profile-mode:${p.path}:${(p.mode & 0o777).toString(8)}`,
    what: `the operator profile ${p.path} is ${
      writable ? "writable" : "readable"
    } by others (mode ${(p.mode & 0o777).toString(8)})`,
    why: writable
      ? "whoever can write it chooses which programs relay runs, as you."
      : "it names your agents and may carry their keys (roles' env).",
    fix: `chmod 600 ${shellWord(p.path)}`,
  })];
}

export function githubProtection(s: Snapshot): Finding[] {
  const g = s.github;
  if (!g) return [];
  const api = `repos/{owner}/{repo}/branches/${s.main}/protection`;
  if (!g.protected) {
    return [problem({
      id: "github-unprotected",
      key: `github:unprotected:${s.main}`,
      what: `${s.main} is not protected on GitHub`,
      why:
        "an agent that finds credentials can force-push or delete it: history relay and the gate relied on can be rewritten.",
      fix:
        `gh api -X PUT ${api} --input - <<'EOF'\n{"required_status_checks":null,"enforce_admins":true,"required_pull_request_reviews":null,"restrictions":null,"allow_force_pushes":false,"allow_deletions":false}\nEOF`,
    })];
  }
  if (g.admin && g.enforceAdmins === false) {
    return [problem({
      id: "github-bypass",
      key: `github:bypass:${g.login}`,
      what:
        `relay's GitHub identity (${g.login}) is an admin and ${s.main}'s protection does not apply to admins`,
      why: "what relay can push past, an agent running with the same credentials can too.",
      fix: `gh api -X POST ${api}/enforce_admins`,
    })];
  }
  return [];
}

/** Every check, in the order findings are listed. */
export const CHECKS: ((s: Snapshot) => Finding[])[] = [
  blockers,
  holdOnRecord,
  paused,
  ticksRunning,
  locks,
  indexLocks,
  briefUnreadable,
  openBriefIdle,
  reportUnreviewed,
  strandedPrs,
  prInFlight,
  paperworkOnBranch,
  worktrees,
  fixRounds,
  initFiles,
  buildOutput,
  programsOnPath,
  agentLogins,
  profileMode,
  githubProtection,
];

export function runChecks(s: Snapshot): Finding[] {
  return CHECKS.flatMap((check) => check(s));
}
