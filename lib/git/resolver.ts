/**
 * Resolving refs without a process each: one `git cat-file --batch-check` kept
 * running per repository for the rest of the command, asked one line at a time.
 * A tick resolves a ref ~10 times (main, origin/main, the task branch, before
 * and after each push and turn); each `git rev-parse` would be a process start
 * (~5 ms here), each line is a fraction of a millisecond.
 *
 * git reads refs from disk for every line (loose refs and packed-refs, as
 * another process leaves them) and looks for objects again when one is not
 * found, so what it answers is what a new `git rev-parse` would. Only names
 * that mean the same in every worktree go this way (refs under refs/heads,
 * refs/remotes, refs/tags, refs/notes, refs/relay*, and full object ids);
 * HEAD and everything relative to a worktree are left to a process in that
 * worktree.
 *
 * Off unless a command turns it on (batchResolves): a process that keeps a git
 * running must not be a test's in-process call, which would leave it behind.
 * The process is unref'd and read only while a line is asked, so it never keeps
 * relay alive; it ends when relay does (end of its stdin).
 */
import { childEnv } from "../proc/run.ts";
import { discoverRepo } from "./discover.ts";

/** Names that name the same object from every worktree of a repository. */
const SHARED_NAME =
  /^(?:refs\/(?:heads|remotes|tags|notes|relay[a-z-]*)\/[^\n\r]+|[0-9a-f]{40}(?:[0-9a-f]{24})?)$/;

let enabled = false;

/** Turns the shared resolvers on for this process (a tick: not for in-process tests). */
export function batchResolves(on: boolean): void {
  enabled = on;
}

/** `git cat-file --batch-check` for one repository, one question at a time. */
class Resolver {
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  readonly #encoder = new TextEncoder();
  #buffer = "";
  #queue: Promise<unknown> = Promise.resolve();
  /** The process is gone or said something relay cannot read: ask git another way. */
  broken = false;

  constructor(gitDir: string, args: readonly string[], env: Record<string, string>) {
    this.#child = new Deno.Command("git", {
      // The git dir by its path, not only as the folder git starts in: a repository removed
      // and made again at the same path is read, not the removed one's folder (no refs left).
      args: [
        ...args,
        `--git-dir=${gitDir}`,
        "cat-file",
        "--batch-check=%(objectname) %(objecttype)",
      ],
      cwd: gitDir,
      env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    this.#child.unref();
    this.#child.status.then(() => this.broken = true, () => this.broken = true);
    this.#writer = this.#child.stdin.getWriter();
    this.#reader = this.#child.stdout.getReader();
  }

  /** Closes git's stdin (it exits) and waits for it. */
  async end(): Promise<void> {
    this.broken = true;
    await this.#queue;
    await this.#writer.close().catch(() => {});
    await this.#reader.cancel().catch(() => {});
    this.#child.ref(); // its end is waited for
    await this.#child.status.catch(() => {});
  }

  /** `{ oid, type }` of `name`, null when it names nothing, undefined when git could not say. */
  ask(name: string): Promise<{ oid: string; type: string } | null | undefined> {
    const answer = this.#queue.then(() => this.#ask(name));
    this.#queue = answer.catch(() => {});
    return answer;
  }

  async #ask(name: string): Promise<{ oid: string; type: string } | null | undefined> {
    if (this.broken) return undefined;
    // Held while a line is asked (an unref'd child's pipes would not keep relay's event loop
    // waiting for the answer), let go in between.
    this.#child.ref();
    try {
      await this.#writer.write(this.#encoder.encode(`${name}\n`));
      let eol = this.#buffer.indexOf("\n");
      while (eol < 0) {
        const { value, done } = await this.#reader.read();
        if (done) throw new Error("git cat-file ended");
        this.#buffer += this.#decoder.decode(value, { stream: true });
        eol = this.#buffer.indexOf("\n");
      }
      const line = this.#buffer.slice(0, eol);
      this.#buffer = this.#buffer.slice(eol + 1);
      if (line === `${name} missing` || line === `${name} ambiguous`) return null;
      const m = /^([0-9a-f]{40}(?:[0-9a-f]{24})?) ([a-z]+)$/.exec(line);
      if (!m) throw new Error(`git cat-file said ${JSON.stringify(line)}`);
      return { oid: m[1]!, type: m[2]! };
    } catch {
      this.broken = true;
      return undefined;
    } finally {
      this.#child.unref();
    }
  }
}

/** Ends every resolver's git and waits for it (a test's cleanup; a tick's end does as much). */
export async function endResolvers(): Promise<void> {
  const all = [...resolvers.values()];
  resolvers.clear();
  repositories.clear();
  await Promise.all(all.map((r) => r.end()));
}

/** Each repository's resolver (by its common git dir), and each folder's repository. */
const resolvers = new Map<string, Resolver>();
const repositories = new Map<string, string>();

/**
 * The commit (or, with `peel: "tree"`, the tree) `name` — a shared name, see SHARED_NAME —
 * resolves to in the repository around `cwd`: its id, null when there is none, undefined
 * when this way cannot say (off, another kind of name, no repository found by its files,
 * git gone): then ask git as before.
 */
export async function resolveShared(
  cwd: string,
  name: string,
  git: ResolverGit,
  peel: "commit" | "tree" = "commit",
): Promise<string | null | undefined> {
  if (!SHARED_NAME.test(name)) return undefined;
  const found = await askShared(cwd, `${name}^{${peel}}`, git);
  if (found === undefined) return undefined;
  return found?.type === peel ? found.oid : null;
}

/** `<shared name>:<path>`: a file or folder at a commit a shared name names. */
const SHARED_PATH =
  /^(?:refs\/(?:heads|remotes|tags|notes|relay[a-z-]*)\/[^\n\r:]+|[0-9a-f]{40}(?:[0-9a-f]{24})?):[^\n\r]+$/;

/**
 * What is at `<shared name>:<path>` (`refs/remotes/origin/main:REVIEWER.md`) in the
 * repository around `cwd`: the object's type ("blob", "tree" …), null when there is nothing
 * there (or no such commit), undefined when this way cannot say: then ask git as before. A
 * submodule's entry is null too: git 2.39's `cat-file --batch-check` says "missing" of it.
 */
export async function sharedPathType(
  cwd: string,
  name: string,
  git: ResolverGit,
): Promise<string | null | undefined> {
  if (!SHARED_PATH.test(name)) return undefined;
  const found = await askShared(cwd, name, git);
  return found === undefined ? undefined : found?.type ?? null;
}

type ResolverGit = {
  args: readonly string[];
  env: Record<string, string>;
  unset: readonly string[];
};

async function askShared(
  cwd: string,
  query: string,
  git: ResolverGit,
): Promise<{ oid: string; type: string } | null | undefined> {
  if (!enabled) return undefined;
  // A folder's repository is kept once found; "none" is not (the folder may become one).
  let commonDir = repositories.get(cwd);
  if (commonDir === undefined) {
    commonDir = discoverRepo(cwd)?.commonDir;
    if (commonDir === undefined) return undefined;
    repositories.set(cwd, commonDir);
  }
  let resolver = resolvers.get(commonDir);
  if (resolver?.broken) return undefined;
  if (!resolver) {
    try {
      resolver = new Resolver(commonDir, git.args, childEnv(git.env, git.unset));
    } catch {
      return undefined;
    }
    resolvers.set(commonDir, resolver);
  }
  return await resolver.ask(query);
}
