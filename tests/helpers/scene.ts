/**
 * Scenes for end-to-end tests: a temporary folder with a bare `file://`
 * origin, a clone set up as relay's primary tree, an operator profile, and a
 * pinned git identity — no network, nothing from the developer's own config.
 * `relay()` runs the real CLI through `deno run` with the permission set the
 * compiled binary gets.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import type { TaskRecord } from "../../lib/state/tasks.ts";
import type { ReviewRecord } from "../../lib/state/reviews.ts";

export const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
export const AGENTS = join(ROOT, "tests", "fixtures", "agents");
export const REVIEWERS = join(ROOT, "tests", "fixtures", "reviewers");
export const STAGES = join(ROOT, "tests", "fixtures", "stages");

function denoDir(): string {
  const set = Deno.env.get("DENO_DIR");
  if (set) return set;
  const home = Deno.env.get("HOME") ?? "/root";
  if (Deno.build.os === "darwin") return join(home, "Library", "Caches", "deno");
  return join(Deno.env.get("XDG_CACHE_HOME") ?? join(home, ".cache"), "deno");
}

function passThrough(names: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of names) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

export interface RelayResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface SceneOptions {
  /** Fake agent script under tests/fixtures/agents/ (or a full argv). */
  agent?: string | string[];
  /** Extra lines for .relay/config.yaml. */
  config?: string;
  /** Skip committing relay's files (a bare product repo). */
  bare?: boolean;
  /** Fake reviewer script under tests/fixtures/reviewers/. */
  reviewer?: string;
}

export class Scene implements AsyncDisposable {
  readonly env: Record<string, string>;
  constructor(readonly dir: string) {
    this.env = {
      HOME: join(dir, "home"),
      XDG_CONFIG_HOME: join(dir, "xdg"),
      GIT_CONFIG_GLOBAL: join(dir, "gitconfig"),
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_NAME: "Test Author",
      GIT_AUTHOR_EMAIL: "author@test.invalid",
      GIT_COMMITTER_NAME: "Test Author",
      GIT_COMMITTER_EMAIL: "author@test.invalid",
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      // The relay subprocess shares this process's module cache (and its TLS trust, for a cold cache).
      DENO_DIR: denoDir(),
      ...passThrough(["SSL_CERT_FILE", "SSL_CERT_DIR", "DENO_TLS_CA_STORE", "NPM_CONFIG_REGISTRY"]),
      LC_ALL: "C",
      NO_COLOR: "1",
    };
  }

  get origin(): string {
    return join(this.dir, "origin.git");
  }
  get work(): string {
    return join(this.dir, "work");
  }
  get worktrees(): string {
    return join(this.dir, "worktrees");
  }
  get profile(): string {
    return join(this.dir, "xdg", "relay", "profile.yaml");
  }

  /** Runs git with the scene's environment; throws on failure unless allowFail. */
  async git(cwd: string, args: string[], allowFail = false): Promise<RelayResult> {
    const out = await new Deno.Command("git", {
      args,
      cwd,
      env: this.env,
      clearEnv: true,
      stdin: "null",
    }).output();
    const res = {
      code: out.code,
      stdout: new TextDecoder().decode(out.stdout),
      stderr: new TextDecoder().decode(out.stderr),
    };
    if (res.code !== 0 && !allowFail) {
      throw new Error(`git ${args.join(" ")} failed in ${cwd}: ${res.stderr}`);
    }
    return res;
  }

  /** `git` in the primary tree, stdout trimmed. */
  async out(args: string[], cwd = this.work): Promise<string> {
    return (await this.git(cwd, args)).stdout.trim();
  }

  /** Runs the relay CLI in the primary tree. */
  async relay(
    args: string[],
    opts: { env?: Record<string, string>; cwd?: string; stdin?: string } = {},
  ): Promise<RelayResult> {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        `--config=${join(ROOT, "deno.json")}`,
        "-P=relay",
        join(ROOT, "main.ts"),
        ...args,
      ],
      cwd: opts.cwd ?? this.work,
      env: { ...this.env, ...opts.env },
      clearEnv: true,
      stdin: opts.stdin === undefined ? "null" : "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    if (opts.stdin !== undefined) {
      const w = child.stdin.getWriter();
      await w.write(new TextEncoder().encode(opts.stdin));
      await w.close();
    }
    const out = await child.output();
    return {
      code: out.code,
      stdout: new TextDecoder().decode(out.stdout),
      stderr: new TextDecoder().decode(out.stderr),
    };
  }

  async write(path: string, text: string): Promise<void> {
    const full = join(this.work, path);
    await Deno.mkdir(dirname(full), { recursive: true });
    await Deno.writeTextFile(full, text);
  }

  async read(path: string): Promise<string> {
    return await Deno.readTextFile(join(this.work, path));
  }

  /**
   * Writes the operator profile with a `command` executor running a fake agent
   * and a `command` reviewer running a fake reviewer (tests/fixtures/reviewers/).
   * A fake named by file goes through tests/fixtures/dispatch.sh, which reads
   * the script from `<scene>/executor-script` / `<scene>/reviewer-script`: the
   * profile stays the same bytes, so switching fakes mid-task reaches a task
   * whose configuration is frozen. An argv array is written into the profile.
   */
  async setAgent(agent: string | string[], extra = "", reviewer = "honest.sh"): Promise<void> {
    const dispatch = (role: string, script: string) => {
      const file = join(this.dir, `${role}-script`);
      Deno.writeTextFileSync(file, script);
      return ["bash", join(ROOT, "tests", "fixtures", "dispatch.sh"), file, "{prompt}"];
    };
    const argv = typeof agent === "string" ? dispatch("executor", join(AGENTS, agent)) : agent;
    const reviewerArgv = dispatch("reviewer", join(REVIEWERS, reviewer));
    // The stages after review find nothing unless a test says otherwise (setStage).
    for (const stage of ["polish", "docs", "security"]) {
      if (!(await exists(join(this.dir, `${stage}-script`)))) {
        await this.setStage(stage as "polish", "passes.sh");
      }
    }
    await Deno.mkdir(dirname(this.profile), { recursive: true });
    await Deno.writeTextFile(
      this.profile,
      `roles:\n  executor:\n    vendor: command\n    argv: ${
        JSON.stringify(argv)
      }\n    timeout: 60s\n` +
        `  reviewer:\n    vendor: command\n    argv: ${
          JSON.stringify(reviewerArgv)
        }\n    timeout: 60s\n` +
        `worktree_root: ${this.worktrees}\n${extra}`,
    );
  }

  /** Which fake (tests/fixtures/stages/) plays a stage after review, from now on. */
  async setStage(stage: "plan" | "polish" | "docs" | "security", script: string): Promise<void> {
    await Deno.writeTextFile(join(this.dir, `${stage}-script`), join(STAGES, script));
  }

  /** Every ref and the status of the primary tree: to prove a command changed nothing. */
  async snapshot(): Promise<string> {
    const refs = await this.out(["for-each-ref", "--format=%(refname) %(objectname)"]);
    const status = await this.out(["status", "--porcelain=v1", "--untracked-files=all"]);
    const files: string[] = [];
    for (const f of ["NEXT-STEPS.md", "COWORK-STATUS.md"]) {
      files.push(await this.read(f).catch(() => "(absent)"));
    }
    return [refs, status, ...files].join("\n---\n");
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await Deno.remove(this.dir, { recursive: true }).catch(() => {});
  }
}

/** A brief in the protocol format. */
export function brief(opts: {
  task?: number;
  title?: string;
  status?: string;
  bar?: string[];
  kind?: string;
  extraHeader?: string;
}): string {
  const bar = opts.bar ?? ["git ls-files src"];
  return [
    `Status: ${opts.status ?? "QUEUED"}`,
    ...(opts.task !== undefined ? [`Task: ${opts.task}`] : []),
    `Title: ${opts.title ?? "Add a feature"}`,
    ...(opts.kind ? [`Kind: ${opts.kind}`] : []),
    ...(opts.extraHeader ? [opts.extraHeader] : []),
    "",
    "## Goal",
    "Add the feature file.",
    "",
    "## Done when",
    "- src/feature-N.txt exists.",
    "",
    "## Verification bar",
    "```",
    ...bar,
    "```",
    "",
  ].join("\n");
}

/** Creates a scene: origin, clone with a product file and relay's files pushed, and a profile. */
export async function makeScene(opts: SceneOptions = {}): Promise<Scene> {
  const scene = new Scene(await Deno.makeTempDir({ prefix: "relay-test-" }));
  await Deno.mkdir(scene.env.HOME!, { recursive: true });
  await Deno.writeTextFile(
    scene.env.GIT_CONFIG_GLOBAL!,
    "[user]\n\tname = Test Author\n\temail = author@test.invalid\n[commit]\n\tgpgsign = false\n[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n",
  );
  await scene.git(scene.dir, ["init", "--quiet", "--bare", "--initial-branch=main", scene.origin]);
  await scene.git(scene.dir, ["clone", "--quiet", `file://${scene.origin}`, scene.work]);
  await scene.write("README.md", "# product\n");
  await scene.write("src/app.txt", "app v1\n");
  if (!opts.bare) {
    await scene.write(".relay/config.yaml", `version: 1\n${opts.config ?? ""}`);
    await scene.write(".relay/inbox/.gitkeep", "");
  }
  await scene.git(scene.work, ["add", "--all"]);
  await scene.git(scene.work, ["commit", "--quiet", "-m", "initial"]);
  await scene.git(scene.work, ["push", "--quiet", "origin", "HEAD:main"]);
  await scene.setAgent(opts.agent ?? "good.sh", "", opts.reviewer ?? "honest.sh");
  return scene;
}

/** True when a path exists (a missing one is false; other errors are thrown). */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

/** A command's exit code and both streams, for an assertion message. */
export function all(res: RelayResult): string {
  return `exit ${res.code}\n--- stdout\n${res.stdout}\n--- stderr\n${res.stderr}`;
}

/** relay's state folder in the scene's primary clone. */
export function stateDir(scene: Scene): string {
  return join(scene.work, ".git", "relay");
}

/** Task `task`'s record as relay wrote it (`.git/relay/tasks/<n>.json`, lib/state/tasks.ts). */
export async function taskRecord(scene: Scene, task = 1): Promise<TaskRecord> {
  return JSON.parse(await Deno.readTextFile(join(stateDir(scene), "tasks", `${task}.json`)));
}

/** The review part of task `task`'s record; it must be there. */
export async function reviewRecord(scene: Scene, task = 1): Promise<ReviewRecord> {
  const review = (await taskRecord(scene, task)).review;
  assert.ok(review, `task ${task}'s record has no review part`);
  return review;
}

/** How many lines of a fake agent's count file start with `prefix` (0 when the file is missing). */
export async function countLines(file: string, prefix: string): Promise<number> {
  const text = await Deno.readTextFile(file).catch(() => "");
  return text.split("\n").filter((l) => l.startsWith(prefix)).length;
}

/** Every ref of the origin, read in the bare repository itself (no fetch needed). */
export async function originRefs(scene: Scene): Promise<Record<string, string>> {
  const out = await scene.out(["for-each-ref", "--format=%(refname) %(objectname)"], scene.origin);
  const refs: Record<string, string> = {};
  for (const line of out.split("\n").filter((l) => l !== "")) {
    const [name, sha] = line.split(" ");
    refs[name!] = sha!;
  }
  return refs;
}

/** Whether a process with this pid exists (a zombie counts as gone). */
export async function running(pid: number): Promise<boolean> {
  const out = await new Deno.Command("ps", {
    args: ["-o", "stat=", "-p", String(pid)],
    stdout: "piped",
    stderr: "null",
  }).output();
  const stat = new TextDecoder().decode(out.stdout).trim();
  return out.code === 0 && stat !== "" && !stat.startsWith("Z");
}

/** The subjects of the merge commits on the origin's main, newest first (read in the bare repo). */
export async function originMerges(scene: Scene): Promise<string[]> {
  const out = await scene.out(["log", "--merges", "--format=%s", "refs/heads/main"], scene.origin);
  return out.split("\n").filter((s) => s !== "");
}

/** Queues a brief through the CLI (`relay inbox add -`); the test fails if it is refused. */
export async function queue(scene: Scene, text: string): Promise<void> {
  const res = await scene.relay(["inbox", "add", "-"], { stdin: text });
  if (res.code !== 0) throw new Error(`relay inbox add failed: ${all(res)}`);
}

/** origin/main's subjects, newest first, after a fetch. */
export async function originLog(scene: Scene): Promise<string> {
  await scene.git(scene.work, ["fetch", "--quiet", "origin"]);
  return await scene.out(["log", "--format=%s", "origin/main"]);
}
