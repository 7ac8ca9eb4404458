/**
 * A git repository or worktree at a fixed path. Every method runs `git` with
 * an argv array in that folder; none depends on the process's cwd. Network
 * verbs (fetch, push, ls-remote) always carry a timeout.
 */
import { CommandError, RetryError } from "../errors.ts";
import { unreachable } from "./push_outcome.ts";
import { run, type RunResult } from "../proc/run.ts";
import { sleep } from "../proc/timer.ts";
import { resolveShared, sharedPathType } from "./resolver.ts";
import { FULL_ID, headFromFiles } from "./discover.ts";
import { confirmLease } from "./lease_guard.ts";

/** Environment for every git call: no prompts, no editors, stable messages. */
const GIT_ENV: Record<string, string> = {
  GIT_TERMINAL_PROMPT: "0",
  GIT_EDITOR: "true",
  GIT_SEQUENCE_EDITOR: "true",
  GIT_MERGE_AUTOEDIT: "no",
  GIT_ASKPASS: "",
  SSH_ASKPASS: "",
  LC_ALL: "C",
  // Replace refs (refs/replace/*) would let anyone with write access to the repository make
  // relay's diffs and the gate see other objects than the ones a push sends.
  GIT_NO_REPLACE_OBJECTS: "1",
};
/**
 * Inherited variables that would point git somewhere else, or read relay's pathspecs another
 * way (`:(exclude)…` taken for a file name): a call that wants one sets it itself.
 */
const GIT_UNSET = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_INDEX_FILE",
  "GIT_COMMON_DIR",
  "GIT_PREFIX",
  "GIT_LITERAL_PATHSPECS",
  "GIT_GLOB_PATHSPECS",
  "GIT_NOGLOB_PATHSPECS",
  "GIT_ICASE_PATHSPECS",
];

/**
 * Where hooks are looked up on every call: a path under which no file can exist
 * (`/dev/null/<hook>` is never a file; on Windows `NUL` is the null device).
 */
const NO_HOOKS = Deno.build.os === "windows" ? "NUL" : "/dev/null";

/**
 * Config given on every call, before the subcommand. An agent that can write
 * `.git/config` or `.git/hooks/` (the executor runs unsandboxed beside relay)
 * could otherwise have every later git call of relay run its program: through
 * `core.fsmonitor` (run by status, diff, add, commit …) or a hook (relay's
 * commits pass --no-verify, but post-checkout, post-commit, reference-transaction
 * and pre-push hooks still ran). relay relies on no hook; a repository whose
 * pushes need one (Git LFS's pre-push upload) must push LFS objects itself.
 * The post-turn guard (lib/loop/guard.ts) catches the other ways; this is the
 * layer that holds even when a change slips past it.
 */
export const SAFE_CONFIG: readonly string[] = [
  "-c",
  "core.fsmonitor=false",
  "-c",
  `core.hooksPath=${NO_HOOKS}`,
];

/**
 * No `git maintenance run --auto` after each commit, merge or fetch relay makes: a process's
 * first fetch in a repository lets it run (GitOptions.autoMaintenance), once. Git gives this
 * setting the last word (a fetch's --auto-maintenance does not override it), so that fetch
 * runs without it, and the repository's own maintenance.auto decides.
 */
const NO_AUTO_MAINTENANCE: readonly string[] = ["-c", "maintenance.auto=false"];

/**
 * Given to every `git status` relay runs. To tell whether a submodule's files changed, git runs
 * a status inside it, under that submodule's own config (in its git folder, which whoever can
 * write the tree can write: an agent), and a clean filter there runs as relay. "dirty" still
 * lists a submodule whose commit moved, read from its refs without running anything. Only the
 * command line settles it: a `.gitmodules` `ignore` line overrides `diff.ignoreSubmodules`.
 * (What is inside a submodule is nothing relay commits: the merge gate refuses a submodule.)
 */
export const NO_SUBMODULE_STATUS = "--ignore-submodules=dirty";

/** The index's mode for a submodule (a commit of another repository). */
export const GITLINK_MODE = "160000";

export const NETWORK_TIMEOUT_MS = 120_000;

/** How often a fetch that lost a ref-lock race to another fetch is tried. */
const FETCH_TRIES = 5;
/** What git says when another process holds a ref it is about to write. */
export const REF_LOCK_RACE = /cannot lock ref|Unable to create '[^']*\.lock': File exists/i;

export interface GitOptions {
  allowFail?: boolean;
  timeoutMs?: number;
  env?: Record<string, string>;
  stdin?: string;
  /** Also return stdout's bytes (RunResult.bytes). */
  stdoutBytes?: boolean;
  /** Let git run its automatic maintenance after this command (see NO_AUTO_MAINTENANCE). */
  autoMaintenance?: true;
}

/**
 * When this process last fetched each remote into each repository. A fetch a moment after
 * another one, with nothing in between that could have moved the remote but relay's own
 * pushes (which update the remote-tracking refs themselves), learns nothing new: callers
 * that allow it (`reuseMs`) skip it. An agent's turn (lib/agents/turn.ts) forgets them all:
 * the fetch after it is always real. A race that a skipped fetch misses (a bar command or a
 * person pushing meanwhile) is caught where it matters, by pushes that never force.
 */
const fetched = new Map<string, number>();

/** The repositories whose automatic maintenance this process has run (its first fetch there). */
const maintained = new Set<string>();

/** Something outside relay ran and may have pushed: every next fetch goes to the remote. */
export function forgetFetches(): void {
  fetched.clear();
}

/** How recent a fetch is recent enough for the callers that reuse one. */
export const REUSE_FETCH_MS = 15_000;

export interface FetchOptions {
  /** Skip the fetch when this process made the same one less than this long ago (see `fetched`). */
  reuseMs?: number;
  /** Fetch these instead of the remote's configured refspecs (one fetch for all a command needs). */
  refspecs?: readonly string[];
  /**
   * false: no `git maintenance run --auto` after the fetch (one process fewer). For the
   * commands that only read (gate, audit); a tick's first fetch runs it, its later ones not.
   */
  maintenance?: false;
}

/** How the shared resolver (lib/git/resolver.ts) runs git: as every other call. */
const RESOLVER_GIT = {
  args: [...SAFE_CONFIG, ...NO_AUTO_MAINTENANCE],
  env: GIT_ENV,
  unset: GIT_UNSET,
} as const;

/** One object `git cat-file --batch` read. */
export interface GitObject {
  oid: string;
  type: string;
  /** The content, decoded as UTF-8. */
  content: string;
}

const BATCH_HEADER = /^([0-9a-f]{40}(?:[0-9a-f]{24})?) ([a-z]+) (\d+)$/;
const BATCH_NONE = / (?:missing|ambiguous)$/;

/** `git show` could not show a file: null to the caller, and not kept. */
class NotShown extends Error {}

export class Git {
  constructor(readonly cwd: string, readonly networkTimeoutMs = NETWORK_TIMEOUT_MS) {}

  /**
   * Answers about objects named by full ids (a commit's tree, a file at a commit, a merge of
   * two commits), kept for this Git's life: a review tick asks for the same ones turn after turn.
   */
  readonly #fixed = new Map<string, Promise<unknown>>();

  /**
   * `<commit>:<path>` names that `git cat-file --batch` said are not in a commit it found: a
   * full commit id never gains a file, so `showFile` answers null for them without asking again.
   */
  readonly #absent = new Set<string>();

  /**
   * `read`'s answer for `key`, read once for this Git's life. A failure (no such file, git could
   * not run), or a value `kept` refuses, is not an answer to keep: asked again next time.
   */
  #once<T>(
    key: string,
    read: () => Promise<T>,
    kept: (value: T) => boolean = () => true,
  ): Promise<T> {
    let answer = this.#fixed.get(key) as Promise<T> | undefined;
    if (answer === undefined) {
      answer = read();
      this.#fixed.set(key, answer);
      answer.then((value) => kept(value) || this.#fixed.delete(key), () => this.#fixed.delete(key));
    }
    return answer;
  }

  /**
   * `run` for a question whose answer depends only on the commits `revs` names (a merge of
   * two commits, whether one is an ancestor of the other): objects never change, so when every
   * rev is a full id it is asked once (#once), and kept when `answer` says it is one (not when
   * git could not run or lacks an object not fetched yet). A review tick asks the finish
   * stage's, the gate's and the merge's question of the same two commits.
   */
  #settled(
    args: readonly string[],
    revs: readonly string[],
    answer: (res: RunResult) => boolean,
  ): Promise<RunResult> {
    const ask = () => this.run(args, { allowFail: true });
    return revs.every((r) => FULL_ID.test(r))
      ? this.#once(`run\0${args.join("\0")}`, ask, answer)
      : ask();
  }

  /**
   * Runs `git <SAFE_CONFIG> <args>`; throws CommandError on a non-zero exit
   * unless `allowFail`.
   */
  run(args: readonly string[], opts: GitOptions = {}): Promise<RunResult> {
    const config = opts.autoMaintenance ? SAFE_CONFIG : [...SAFE_CONFIG, ...NO_AUTO_MAINTENANCE];
    return run(["git", ...config, ...args], {
      cwd: this.cwd,
      env: { ...GIT_ENV, ...opts.env },
      unsetEnv: GIT_UNSET,
      ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
      ...(opts.stdin !== undefined ? { stdin: opts.stdin } : {}),
      ...(opts.allowFail !== undefined ? { allowFail: opts.allowFail } : {}),
      ...(opts.stdoutBytes ? { stdoutBytes: true } : {}),
    });
  }

  /** Runs git and returns stdout without the trailing newline. */
  async out(args: readonly string[], opts: GitOptions = {}): Promise<string> {
    return (await this.run(args, opts)).stdout.replace(/\n$/, "");
  }

  /**
   * Runs git and hands its stdout to `onChunk` as it arrives: a `git log` over 10,000 commits
   * is parsed while git is still writing it. GIT_FLUSH=0: into a pipe git would flush after
   * every commit, thousands of small reads.
   */
  async stream(args: readonly string[], onChunk: (chunk: Uint8Array) => void): Promise<void> {
    await run(["git", ...SAFE_CONFIG, ...NO_AUTO_MAINTENANCE, ...args], {
      cwd: this.cwd,
      env: { ...GIT_ENV, GIT_FLUSH: "0" },
      unsetEnv: GIT_UNSET,
      onStdout: onChunk,
    });
  }

  /**
   * Like `out`, for a `log` or `diff` whose output runs to megabytes: git writes it to a temp
   * file (`--output`) and relay reads that in one go. Read from a pipe as `out` reads it, it
   * arrives in thousands of small chunks (git flushes after each commit into a pipe), which
   * cost relay more CPU than git spends producing them; `stream` reads a pipe in blocks.
   */
  async outViaFile(
    command: "log" | "diff",
    args: readonly string[],
    /** The commits the output depends on alone: when all are full ids, asked once (see #once). */
    settled?: readonly string[],
  ): Promise<string> {
    const read = async () => {
      // Made at once, not awaited: git starts before whatever the caller starts next.
      const file = Deno.makeTempFileSync({ prefix: "relay-git-" });
      try {
        await this.run([command, `--output=${file}`, ...args]);
        return (await Deno.readTextFile(file)).replace(/\n$/, "");
      } finally {
        await Deno.remove(file).catch(() => {});
      }
    };
    return settled?.length && settled.every((r) => FULL_ID.test(r))
      ? await this.#once(`${command}\0${args.join("\0")}`, read)
      : await read();
  }

  /** True when git exits 0. */
  async ok(args: readonly string[]): Promise<boolean> {
    return (await this.run(args, { allowFail: true })).code === 0;
  }

  /**
   * `rev`, or for HEAD the commit id git's files give it (see headFromFiles): a full id the
   * shared resolver answers, where HEAD, the worktree's own, would take a process.
   */
  #plain(rev: string): string {
    return rev === "HEAD" ? headFromFiles(this.cwd)?.id ?? rev : rev;
  }

  /** The sha a revision names, or null when it does not resolve. */
  async resolve(given: string): Promise<string | null> {
    const rev = this.#plain(given);
    const shared = await resolveShared(this.cwd, rev, RESOLVER_GIT);
    if (shared !== undefined) return shared;
    const res = await this.run([
      "rev-parse",
      "--verify",
      "--quiet",
      "--end-of-options",
      `${rev}^{commit}`,
    ], {
      allowFail: true,
    });
    return res.code === 0 ? res.stdout.trim() : null;
  }

  /**
   * What is at `<shared name>:<path>` (a ref under refs/heads, refs/remotes … or a full id,
   * then a path), read through the tick's shared resolver: "blob", "tree" …, null when nothing
   * is there, undefined when no resolver runs (a person's command): then ask git another way.
   */
  sharedPathType(name: string): Promise<string | null | undefined> {
    return sharedPathType(this.cwd, name, RESOLVER_GIT);
  }

  /**
   * The commit a shared name (a full id among them) names, through the tick's shared resolver
   * only: null when none, undefined when no resolver runs (then ask git another way).
   */
  sharedCommit(name: string): Promise<string | null | undefined> {
    return resolveShared(this.cwd, name, RESOLVER_GIT);
  }

  /**
   * Several objects in one `git cat-file --batch`, where one git call each would start a
   * process each: for every name (`<rev>^{commit}`, `<rev>:<path>` …) its id, type and
   * content, or null when there is no such object. Names are relay's own, one a line.
   */
  async readObjects(names: readonly string[]): Promise<(GitObject | null)[]> {
    for (const name of names) {
      if (name === "" || /[\n\r]/.test(name)) {
        throw new Error(`Cannot read object ${JSON.stringify(name)}: not a one-line name`);
      }
    }
    const res = await this.run(["cat-file", "--batch"], {
      stdin: names.map((n) => `${n}\n`).join(""),
      stdoutBytes: true,
    });
    const bytes = res.bytes!;
    const decoder = new TextDecoder();
    const objects: (GitObject | null)[] = [];
    let at = 0;
    for (const name of names) {
      const eol = bytes.indexOf(10, at);
      const header = decoder.decode(bytes.subarray(at, eol < 0 ? bytes.length : eol));
      const m = BATCH_HEADER.exec(header);
      if (eol < 0 || (!m && !BATCH_NONE.test(header))) {
        throw new Error(
          `Cannot read git cat-file --batch output for ${JSON.stringify(name)}: ${
            JSON.stringify(header)
          }`,
        );
      }
      at = eol + 1;
      if (!m) {
        objects.push(null);
        continue;
      }
      const size = Number(m[3]);
      objects.push({
        oid: m[1]!,
        type: m[2]!,
        content: decoder.decode(bytes.subarray(at, at + size)),
      });
      at += size + 1; // the content, then a newline
    }
    return objects;
  }

  async treeOf(given: string): Promise<string> {
    const rev = this.#plain(given);
    const read = async () =>
      await resolveShared(this.cwd, rev, RESOLVER_GIT, "tree") ??
        await this.out(["rev-parse", "--verify", "--end-of-options", `${rev}^{tree}`]);
    return FULL_ID.test(rev) ? await this.#once(`tree ${rev}`, read) : await read();
  }

  /**
   * `git show <rev>:<path>`: the file at a revision, or null when git cannot show it (no such
   * revision or path). Asked again of a full commit id, a file it showed is given again; a null
   * is not kept (git says the same for a commit not fetched yet as for a path not in it).
   */
  async showFile(rev: string, path: string): Promise<string | null> {
    if (this.#absent.has(`${rev}:${path}`)) return null;
    const read = async () => {
      const res = await this.run(["show", `${rev}:${path}`], { allowFail: true });
      if (res.code === 0) return res.stdout;
      throw new NotShown();
    };
    const answer = FULL_ID.test(rev) ? this.#once(`show ${rev}:${path}`, read) : read();
    return await answer.catch((err) => {
      if (err instanceof NotShown) return null;
      throw err;
    });
  }

  /**
   * `showFile` for several paths at one full commit id, in one `git cat-file --batch` for the
   * ones not read yet (a review tick reads its report, brief and every stage's procedure from
   * the same main). A blob's content is what `git show` prints for it (no textconv); anything
   * else at a path (a tree, a submodule's commit) is left to `git show`, as before. Another
   * revision: one `showFile` each.
   */
  async showFiles(rev: string, paths: readonly string[]): Promise<(string | null)[]> {
    if (!FULL_ID.test(rev)) return await Promise.all(paths.map((p) => this.showFile(rev, p)));
    const unread = [...new Set(paths)].filter((p) =>
      !this.#fixed.has(`show ${rev}:${p}`) && !this.#absent.has(`${rev}:${p}`) &&
      !/[\n\r]/.test(p)
    );
    if (unread.length) {
      const [commit, ...files] = await this.readObjects([
        `${rev}^{commit}`,
        ...unread.map((p) => `${rev}:${p}`),
      ]);
      unread.forEach((path, i) => {
        const file = files[i];
        if (file?.type === "blob") {
          this.#fixed.set(`show ${rev}:${path}`, Promise.resolve(file.content));
        } else if (file === null && commit?.oid === rev) this.#absent.add(`${rev}:${path}`);
      });
    }
    return await Promise.all(paths.map((p) => this.showFile(rev, p)));
  }

  /** HEAD's commit id: from git's files when they say it plainly (no process), else from git. */
  async head(): Promise<string> {
    return headFromFiles(this.cwd)?.id ?? await this.out(["rev-parse", "--verify", "HEAD"]);
  }

  /** The branch HEAD is on, or null when detached: from git's files when they say it plainly. */
  async branch(): Promise<string | null> {
    const files = headFromFiles(this.cwd);
    if (files !== null) return files.branch;
    const res = await this.run(["symbolic-ref", "--quiet", "--short", "HEAD"], { allowFail: true });
    return res.code === 0 ? res.stdout.trim() : null;
  }

  /**
   * Fetches `remote`. Both ticks fetch in the same clone, often in the same second: git
   * answers the loser with "cannot lock ref" (another fetch is writing that ref). That
   * is a race, not a failure — wait a moment and fetch again.
   */
  async fetch(remote: string, opts: FetchOptions = {}): Promise<void> {
    const refspecs = opts.refspecs ?? [];
    const key = [this.cwd, remote, ...refspecs].join("\0");
    const last = fetched.get(key);
    if (opts.reuseMs !== undefined && last !== undefined && Date.now() - last < opts.reuseMs) {
      return;
    }
    const started = Date.now();
    const args = [
      "fetch",
      "--quiet",
      "--prune",
      "--no-tags",
      // relay reads refs, never a submodule's commits; and with recursion on, git reads the
      // whole index first to find the submodules (~5 ms for 10,000 files, every fetch).
      "--no-recurse-submodules",
      ...(opts.maintenance === false ? ["--no-auto-maintenance"] : []),
      "--",
      remote,
      ...(opts.refspecs ?? []),
    ];
    for (let attempt = 1;; attempt++) {
      const maintain = opts.maintenance !== false && !maintained.has(this.cwd);
      const res = await this.run(args, {
        timeoutMs: this.networkTimeoutMs,
        allowFail: true,
        ...(maintain ? { autoMaintenance: true as const } : {}),
      })
        .catch((err) => {
          // Cut off at the network timeout: the remote did not answer in time.
          if (err instanceof CommandError && err.code === null && /timed out/.test(err.message)) {
            throw new RetryError(
              `Cannot fetch from "${remote}" yet: ${err.message.split("\n")[0]}`,
            );
          }
          throw err;
        });
      if (res.code === 0) {
        fetched.set(key, started);
        if (opts.maintenance !== false) maintained.add(this.cwd);
        return;
      }
      if (unreachable(res.stderr)) {
        throw new RetryError(
          `Cannot fetch from "${remote}" yet: the remote could not be reached: "${
            res.stderr.trim().split("\n").filter((l) => l.trim() !== "").slice(0, 2).join(" ")
          }"`,
        );
      }
      if (attempt >= FETCH_TRIES || !REF_LOCK_RACE.test(res.stderr)) {
        throw new CommandError(
          ["git", ...SAFE_CONFIG, ...args],
          this.cwd,
          res.code,
          res.stderr || res.stdout,
          `exited ${res.code}`,
        );
      }
      await sleep(150 * attempt);
    }
  }

  /** Pushes `src:dst` without force. Returns false when the remote rejected it (not a fast-forward). */
  async push(remote: string, src: string, dst: string): Promise<{ ok: boolean; stderr: string }> {
    await confirmLease();
    try {
      const res = await this.run(["push", "--porcelain", "--", remote, `${src}:${dst}`], {
        allowFail: true,
        timeoutMs: this.networkTimeoutMs,
      });
      return { ok: res.code === 0, stderr: res.stderr + res.stdout };
    } catch (err) {
      // A push that hangs is cut off at the network timeout: the remote did not answer.
      if (err instanceof CommandError && err.code === null && /timed out/.test(err.message)) {
        return { ok: false, stderr: `${err.message}\n${err.stderr}` };
      }
      throw err;
    }
  }

  /**
   * Pushes several `src:dst` refspecs in one push, never with a plain force: `atomic` makes
   * the remote take all or none; `leases` are `<ref>:<expected>` pairs ("" = must not exist)
   * passed as --force-with-lease, a compare-and-swap on exactly those refs.
   */
  async pushRefs(
    remote: string,
    refspecs: readonly string[],
    opts: { atomic?: boolean; leases?: readonly string[]; unguarded?: boolean } = {},
  ): Promise<{ ok: boolean; stderr: string }> {
    // The lease's own pushes (lib/git/lease.ts) are what the guard stands on: not asked.
    if (!opts.unguarded) await confirmLease();
    const args = [
      "push",
      "--porcelain",
      ...(opts.atomic ? ["--atomic"] : []),
      ...(opts.leases ?? []).map((l) => `--force-with-lease=${l}`),
      "--",
      remote,
      ...refspecs,
    ];
    try {
      const res = await this.run(args, { allowFail: true, timeoutMs: this.networkTimeoutMs });
      return { ok: res.code === 0, stderr: res.stderr + res.stdout };
    } catch (err) {
      if (err instanceof CommandError && err.code === null && /timed out/.test(err.message)) {
        return { ok: false, stderr: `${err.message}\n${err.stderr}` };
      }
      throw err;
    }
  }

  /**
   * Points `ref` at `sha`. With `expected`, only if the ref is still there ("" = must not
   * exist yet): a compare-and-swap that fails instead of overwriting a ref someone moved.
   */
  async updateRef(ref: string, sha: string, message: string, expected?: string): Promise<void> {
    await this.run([
      "update-ref",
      "-m",
      message,
      "--",
      ref,
      sha,
      ...(expected === undefined ? [] : [expected]),
    ]);
  }

  /** Deletes `ref`, only if it still points at `expected`. */
  async deleteRef(ref: string, expected: string): Promise<void> {
    await this.run(["update-ref", "-d", "--", ref, expected]);
  }

  /** True when `ancestor` is reachable from `descendant` (asked once of two full ids). */
  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    const res = await this.#settled(
      ["merge-base", "--is-ancestor", "--", ancestor, descendant],
      [ancestor, descendant],
      (res) => res.code === 0 || res.code === 1,
    );
    return res.code === 0;
  }

  /**
   * `git merge-tree --write-tree` of `head` onto `base`, as the gate reads it (conflicted paths
   * by name, NUL-separated): exit 0 with the merged tree, 1 with conflicts (the paths after
   * the tree), another code when git could not merge. Asked once of two full ids: the finish
   * stage, the gate and the merge all ask it of the same two commits.
   */
  async mergeTree(
    base: string,
    head: string,
  ): Promise<{ code: number; tree: string; conflicts: string[]; stderr: string }> {
    const res = await this.#settled(
      ["merge-tree", "--write-tree", "--no-messages", "--name-only", "-z", base, head],
      [base, head],
      // Exit 1 is also git's "not something we can merge" (a commit not fetched): no tree then.
      (res) => (res.code === 0 || res.code === 1) && FULL_ID.test(res.stdout.split("\0")[0]!),
    );
    const [tree = "", ...rest] = res.stdout.split("\0");
    const conflicts = res.code === 1 ? [...new Set(rest.filter((p) => p !== ""))] : [];
    return { code: res.code, tree: tree.trim(), conflicts, stderr: res.stderr };
  }

  /** Paths changed between two revisions (NUL-separated, no renames). */
  async changedPaths(from: string, to: string, paths: readonly string[] = []): Promise<string[]> {
    const out = await this.out([
      "diff",
      "--name-only",
      "--no-renames",
      "-z",
      from,
      to,
      "--",
      ...paths,
    ]);
    return out.split("\0").filter((p) => p !== "");
  }

  /** `git status --porcelain=v1 -z` entries, untracked files included. */
  async status(untracked = true): Promise<string[]> {
    const out = await this.out([
      "status",
      "--porcelain=v1",
      "-z",
      `--untracked-files=${untracked ? "all" : "no"}`,
      NO_SUBMODULE_STATUS,
    ]);
    return out.split("\0").filter((e) => e !== "");
  }
}
