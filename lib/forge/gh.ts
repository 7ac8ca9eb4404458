/**
 * The one way relay talks to GitHub: the `gh` CLI, run through run() with an
 * argv array, an explicit cwd and a timeout on every call (each one goes over
 * the network). Output is read with `--json <fields>` and checked with z.
 *
 * Flags and JSON fields were checked against gh 2.23.0 (Debian bookworm
 * package 2.23.0+dfsg1-1): `gh pr list|create|view|merge|review --help` and
 * the field list `gh pr list --json` prints. gh's flag parser takes the
 * argument after a string flag as its value even when it starts with "-", so
 * `--title <t>` is safe for any title; positional arguments are PR numbers,
 * PR URLs or checked branch names only.
 */
import { z } from "zod";
import { CommandError, HoldError } from "../errors.ts";
import { run, type RunResult } from "../proc/run.ts";
import { redact } from "../proc/redact.ts";

export const GH_TIMEOUT_MS = 60_000;

/** Environment for every gh call: no prompts, no update check, no colour, stable messages. */
const GH_ENV: Record<string, string> = {
  GH_PROMPT_DISABLED: "1",
  GH_NO_UPDATE_NOTIFIER: "1",
  GH_SPINNER_DISABLED: "1",
  NO_COLOR: "1",
  CLICOLOR: "0",
  GIT_TERMINAL_PROMPT: "0",
  LC_ALL: "C",
};
/** Inherited variables that would colour `--json` output or point gh's git calls elsewhere. */
const GH_UNSET = [
  "GH_FORCE_TTY",
  "CLICOLOR_FORCE",
  "GH_DEBUG",
  "DEBUG",
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_INDEX_FILE",
  "GIT_COMMON_DIR",
  "GIT_PREFIX",
];

/** `gh auth status` runs once per process for each gh binary + environment. */
const readiness = new Map<string, Promise<void>>();

/** A pull request as `gh pr list|view --json` prints it (fields named as gh names them). */
export const ghPr = z.object({
  number: z.number().int().positive(),
  url: z.string(),
  headRefName: z.string(),
  headRefOid: z.string().regex(/^[0-9a-f]{40}$/),
  isCrossRepository: z.boolean(),
  state: z.enum(["OPEN", "MERGED", "CLOSED"]),
});
export type GhPr = z.infer<typeof ghPr>;

/** The `--json` fields of {@link ghPr}, in the order relay asks for them. */
export const PR_FIELDS = "number,url,headRefOid,headRefName,state,isCrossRepository";

/** The branches relay's executor opens PRs from. */
export const RELAY_BRANCH = /^task-\d+$/;

/** How many open PRs {@link listRelayOpen} reads (gh's default is 30). */
const OPEN_LIMIT = "200";

/**
 * Open PRs from relay's own `task-<n>` branches in this repository, oldest first.
 * Other open PRs (people's, bots', forks') do not count toward the one-in-flight
 * rule: that rule keeps relay's own loop to one task at a time, and a repository
 * with a person's PR open must not stall relay forever.
 */
export async function listRelayOpen(gh: Gh): Promise<GhPr[]> {
  const prs = await gh.json(
    ["pr", "list", "--state", "open", "--json", PR_FIELDS, "--limit", OPEN_LIMIT],
    z.array(ghPr),
  );
  return prs
    .filter((p) => p.state === "OPEN" && !p.isCrossRepository && RELAY_BRANCH.test(p.headRefName))
    .sort((a, b) => a.number - b.number);
}

/**
 * The PR for `branch`: the open one, else the newest (merged or closed); null
 * when there is none. Same-repository PRs only.
 */
export async function findPr(gh: Gh, branch: string): Promise<GhPr | null> {
  const prs = await gh.json(
    [
      "pr",
      "list",
      "--head",
      checkBranch(branch),
      "--state",
      "all",
      "--json",
      PR_FIELDS,
      "--limit",
      "5",
    ],
    z.array(ghPr),
  );
  const mine = prs
    .filter((p) => p.headRefName === branch && !p.isCrossRepository)
    .sort((a, b) => b.number - a.number);
  return mine.find((p) => p.state === "OPEN") ?? mine[0] ?? null;
}

/** Branch names relay passes to gh: no leading "-", no spaces, nothing a selector could misread. */
export function checkBranch(branch: string): string {
  if (!/^[A-Za-z0-9_][A-Za-z0-9._/-]*$/.test(branch) || /^\d+$/.test(branch)) {
    throw new Error(
      `Cannot pass branch "${branch}" to gh: expected a plain branch name such as "task-12"`,
    );
  }
  return branch;
}

/** "#12" → "12". */
export function prNumber(id: string): string {
  const m = /^#(\d+)$/.exec(id);
  if (!m) throw new Error(`Cannot use PR id "${id}" on GitHub: expected "#<number>"`);
  return m[1]!;
}

export interface GhRunOptions {
  /** Text on stdin (for `--body-file -`). */
  stdin?: string;
  /** Return a non-zero exit instead of throwing; classify it with {@link Gh.failure}. */
  allowFail?: boolean;
}

export class Gh {
  constructor(
    readonly cwd: string,
    readonly timeoutMs: number = GH_TIMEOUT_MS,
    readonly bin: string = "gh",
    /** Extra environment for gh (tests put a stand-in first on PATH here). */
    readonly env: Record<string, string> = {},
  ) {}

  /**
   * Checks once per process that gh exists and is logged in (`gh auth status`).
   * Throws HoldError with what to do when it is not; a failed check is retried next time.
   */
  ensureReady(): Promise<void> {
    const key = JSON.stringify([this.bin, Object.entries(this.env).sort()]);
    let pending = readiness.get(key);
    if (!pending) {
      pending = this.exec(["auth", "status"], { allowFail: true }).then((res) => {
        if (res.code !== 0) throw notLoggedIn(res.stderr + res.stdout);
      });
      pending.catch(() => readiness.delete(key));
      readiness.set(key, pending);
    }
    return pending;
  }

  /** Runs `gh <args>` after {@link ensureReady}; throws on a non-zero exit unless `allowFail`. */
  async run(args: readonly string[], opts: GhRunOptions = {}): Promise<RunResult> {
    await this.ensureReady();
    const res = await this.exec(args, opts);
    if (res.code !== 0 && !opts.allowFail) throw this.failure(args, res);
    return res;
  }

  /** Runs `gh <args>` (which must carry `--json <fields>`) and checks its output against `schema`. */
  async json<T>(
    args: readonly string[],
    schema: z.ZodType<T>,
    opts: GhRunOptions = {},
  ): Promise<T> {
    const res = await this.run(args, { ...opts, allowFail: false });
    const argv = [this.bin, ...args];
    let data: unknown;
    try {
      data = JSON.parse(res.stdout);
    } catch (err) {
      throw new CommandError(
        argv,
        this.cwd,
        res.code,
        res.stdout.slice(0, 2000),
        `gh printed output that is not JSON (${(err as Error).message})`,
      );
    }
    const parsed = schema.safeParse(data);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(top)"}: ${i.message}`);
      throw new CommandError(
        argv,
        this.cwd,
        res.code,
        res.stdout.slice(0, 2000),
        `gh printed JSON relay does not understand (${issues.slice(0, 5).join("; ")})`,
      );
    }
    return parsed.data;
  }

  /** The error for a failed gh call: HoldError when gh wants a login, else CommandError with stderr. */
  failure(args: readonly string[], res: RunResult): Error {
    const text = res.stderr + res.stdout;
    // gh exits 4 when a command needs authentication (cmdutil.AuthError).
    if (res.code === 4 || /gh auth login/.test(text)) return notLoggedIn(text);
    return new CommandError(
      [this.bin, ...args],
      this.cwd,
      res.code,
      res.stderr || res.stdout,
      `exited ${res.code}`,
    );
  }

  private async exec(args: readonly string[], opts: GhRunOptions): Promise<RunResult> {
    // Everything relay sends to GitHub passes here (PR bodies, verdicts, comments): no secrets.
    args = args.map(redact);
    if (opts.stdin !== undefined) opts = { ...opts, stdin: redact(opts.stdin) };
    try {
      return await run([this.bin, ...args], {
        cwd: this.cwd,
        env: { ...GH_ENV, ...this.env },
        unsetEnv: GH_UNSET,
        timeoutMs: this.timeoutMs,
        allowFail: true,
        ...(opts.stdin !== undefined ? { stdin: opts.stdin } : {}),
      });
    } catch (err) {
      // run() reports a program it could not find this way (Deno.errors.NotFound at spawn).
      if (
        err instanceof CommandError && err.code === null &&
        err.message.startsWith(`cannot start "${this.bin}": not found on PATH`)
      ) {
        throw missingGh(this.bin);
      }
      throw err;
    }
  }
}

function missingGh(bin: string): HoldError {
  return new HoldError(
    `Cannot use the GitHub forge: "${bin}" (GitHub CLI) was not found on PATH`,
    `Install GitHub CLI (https://cli.github.com/; on Debian or Ubuntu: apt-get install gh) and run "gh auth login", or set "forge: plain" in .relay/config.yaml.`,
    { recheck: true },
  );
}

function notLoggedIn(said: string): HoldError {
  const words = said.trim().split("\n").map((l) => l.trim()).filter((l) => l !== "").slice(0, 3);
  return new HoldError(
    `Cannot use the GitHub forge: gh is not logged in to GitHub${
      words.length ? ` (gh said: "${words.join(" ")}")` : ""
    }`,
    `Run "gh auth login" (or set GH_TOKEN) as the user that runs relay, check it with "gh auth status", then run relay again.`,
    { recheck: true },
  );
}
