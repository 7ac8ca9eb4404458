/**
 * `relay guard install|uninstall|print`: a pre-receive hook for the loop's
 * bare remote that keeps main to what relay itself pushes there (paperwork-only
 * fast-forwards and merges of task branches) and keeps relay's notes
 * (refs/notes/relay, the audit record) from being rewritten or deleted, unless
 * a listed person pushes.
 * The hook is plain sh and git (relay/guard-pre-receive.sh): the server needs
 * no relay. Its settings live in the bare repository's own config
 * (relay.main, relay.person), so the hook file is the same bytes everywhere.
 */
import { join, resolve } from "../path.ts";
import { InputError, UsageError } from "../errors.ts";
import { run } from "../proc/run.ts";
import { shellLine, shellWord } from "../proc/shell.ts";
import { INBOX_DIR, PAPERWORK_PATHS, RELAY_DIR, RELAY_PAPERWORK_PATHS } from "../state/paths.ts";
import { discoverRepo } from "../git/discover.ts";
import { type Context, parseCommand } from "./args.ts";
import { readTemplate } from "./templates.ts";

/** The line that marks a hook as relay's: only a hook carrying it is replaced or removed. */
export const GUARD_MARKER = '# relay-guard: written by "relay guard install"';

/** The hook's text, with relay's paperwork paths filled in (lib/state/paths.ts is the one list). */
export async function guardHook(): Promise<string> {
  const template = await readTemplate("guard-pre-receive.sh");
  const spec = (paths: readonly string[], magic: string) =>
    paths.map((p) => shellWord(`:(${magic})${p}`)).join(" ");
  const list = (paths: readonly string[]) =>
    paths.map((p) => p === RELAY_DIR || p === INBOX_DIR ? `${p}/` : p).join(", ");
  // Two lists: a task branch must touch none of PAPERWORK_PATHS (all of .relay/ included), while
  // a commit straight on main may touch only RELAY_PAPERWORK_PATHS, what relay itself commits.
  const text = template
    .replaceAll("@PAPERWORK_LIST@", list(PAPERWORK_PATHS))
    .replaceAll("@RELAY_PAPERWORK_LIST@", list(RELAY_PAPERWORK_PATHS))
    .replaceAll("@PAPERWORK_PATHSPECS@", spec(PAPERWORK_PATHS, "top,literal"))
    .replaceAll("@RELAY_PAPERWORK_EXCLUDES@", spec(RELAY_PAPERWORK_PATHS, "top,literal,exclude"))
    .replaceAll("@RELAY_DIR_PATHSPEC@", spec([RELAY_DIR], "top,literal"))
    .replaceAll("@RELAY_DIR_EXCLUDE@", spec([RELAY_DIR], "top,literal,exclude"));
  if (!text.includes(GUARD_MARKER)) throw new Error("relay/guard-pre-receive.sh lost its marker");
  return text;
}

const OPTIONS = {
  bare: { type: "string" },
  person: { type: "string", multiple: true },
  main: { type: "string" },
} as const;

export async function guard(args: string[], ctx: Context): Promise<number> {
  const { values, positionals } = parseCommand("guard", args, OPTIONS, {
    min: 1,
    max: 1,
    names: "install, uninstall or print",
  });
  const action = positionals[0]!;
  const allowed: Record<string, string[]> = {
    install: ["bare", "person", "main"],
    uninstall: ["bare"],
    print: [],
  };
  const flags = allowed[action];
  if (!flags) {
    throw new UsageError(
      `unknown guard action "${action}": use install, uninstall or print`,
      "guard",
    );
  }
  for (const key of Object.keys(values)) {
    if (!flags.includes(key)) {
      throw new UsageError(`relay guard ${action} takes no --${key}`, "guard");
    }
  }
  if (action === "print") {
    await Deno.stdout.write(new TextEncoder().encode(await guardHook()));
    return 0;
  }
  if (values.bare === undefined || values.bare.trim() === "") {
    throw new UsageError(
      `relay guard ${action} needs --bare <path to the bare repository>`,
      "guard",
    );
  }
  const bare = await bareRepo(resolve(ctx.cwd, values.bare));
  if (action === "uninstall") return await uninstall(bare);
  return await install(bare, ctx, values.person, values.main);
}

/** The bare repository at `path` (its real path), or a usage error saying what it is instead. */
async function bareRepo(path: string): Promise<string> {
  let real: string;
  try {
    real = await Deno.realPath(path);
  } catch {
    throw new UsageError(`"${path}" does not exist: pass the path of the bare repository`, "guard");
  }
  const res = await git(real, ["rev-parse", "--is-bare-repository", "--absolute-git-dir"]);
  const [isBare, gitDir] = res.stdout.split("\n");
  if (res.code !== 0 || isBare !== "true") {
    throw new UsageError(
      `"${path}" is not a bare git repository${
        res.code === 0 ? " (it has a working tree)" : ""
      }: the guard goes on the server's bare repository, the one relay pushes to`,
      "guard",
    );
  }
  if (gitDir === undefined || (await Deno.realPath(gitDir)) !== real) {
    throw new UsageError(
      `"${path}" is inside the bare repository ${gitDir}, not the repository itself: pass ${gitDir}`,
      "guard",
    );
  }
  return real;
}

/** git in the bare repository as the server runs it: its own config, nothing of relay's. */
async function git(cwd: string, args: string[]) {
  return await run(["git", ...args], {
    cwd,
    allowFail: true,
    unsetEnv: ["GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE"],
    env: { LC_ALL: "C" },
  });
}

type Existing = { kind: "none" } | { kind: "relay" } | { kind: "foreign"; why: string };

async function existingHook(path: string): Promise<Existing> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { kind: "none" };
    throw err;
  }
  if (!info.isFile) return { kind: "foreign", why: "is not a regular file" };
  const head = (await Deno.readTextFile(path)).split("\n").slice(0, 5);
  return head.includes(GUARD_MARKER)
    ? { kind: "relay" }
    : { kind: "foreign", why: "was not written by relay" };
}

/** Where git looks for the repository's hooks; core.hooksPath may point elsewhere. */
async function hookPath(bare: string): Promise<string> {
  const res = await git(bare, ["rev-parse", "--git-path", "hooks/pre-receive"]);
  const path = resolve(bare, res.stdout.trim());
  const expected = join(bare, "hooks", "pre-receive");
  if (res.code !== 0 || path !== expected) {
    throw new UsageError(
      `git runs the hooks of ${bare} from elsewhere (core.hooksPath gives ${path}), so ${expected} would never run: unset core.hooksPath there, or install "relay guard print" as that pre-receive yourself`,
      "guard",
    );
  }
  return expected;
}

async function install(
  bare: string,
  ctx: Context,
  persons: string[] | undefined,
  mainFlag: string | undefined,
): Promise<number> {
  const { isSafeBranchName } = await import("../config/repo_load.ts");
  const main = mainFlag ?? await configuredMain(ctx.cwd);
  if (!isSafeBranchName(main)) {
    throw new UsageError(`--main "${main}" is not a usable branch name`, "guard");
  }
  for (const person of persons ?? []) {
    // deno-lint-ignore no-control-regex
    if (person.trim() === "" || person !== person.trim() || /[\x00-\x1f\x7f]/.test(person)) {
      throw new UsageError(
        `--person "${person}" is not a user name: give the name the server knows the pusher by ($GL_USER, $REMOTE_USER or the ssh account)`,
        "guard",
      );
    }
  }
  const path = await hookPath(bare);
  const existing = await existingHook(path);
  if (existing.kind === "foreign") throw foreignHook(path, existing.why, bare);

  // Everything checked: now write, the config first so the hook never runs without it.
  await setConfig(bare, ["relay.main", main]);
  if (persons !== undefined) {
    await git(bare, ["config", "--unset-all", "relay.person"]); // exit 5 when none: fine
    for (const person of persons) await setConfig(bare, ["--add", "relay.person", person]);
  }
  await Deno.mkdir(join(bare, "hooks"), { recursive: true });
  const temp = `${path}.relay-${Deno.pid}`;
  await Deno.writeTextFile(temp, await guardHook(), { mode: 0o755 });
  await Deno.chmod(temp, 0o755); // the umask does not get a say
  await Deno.rename(temp, path);

  const listed = (await git(bare, ["config", "--get-all", "relay.person"])).stdout
    .split("\n").filter((p) => p !== "");
  console.log(
    `${
      existing.kind === "relay" ? "replaced" : "installed"
    } relay's pre-receive hook in ${path}: updates of ${main} must be paperwork-only fast-forwards or relay's merges of task branches, and refs/notes/relay (relay's audit record) only moves forward`,
  );
  const me = await currentAccount(bare);
  if (me !== null && listed.includes(me)) {
    // The single-account setup (a bare repository on this machine, or ssh as this user): the
    // hook sees every push from here as this person's, the loop's and the agents' included.
    console.error(
      `warning: relay.person lists "${me}", the account this runs as. Every push made as ${me} — relay's loop and its agents included, when they run as ${me} — then passes the guard unchecked, so the guard protects nothing from them. List a different account as the person (the one you push from yourself, by $GL_USER, $REMOTE_USER or the ssh login), and run the loop as another: relay guard install --bare ${
        shellWord(bare)
      } --person <another account>`,
    );
  }
  console.log(
    listed.length
      ? `persons who may push anything to ${main} (relay.person): ${listed.join(", ")}`
      : `no person is listed: nobody may push to ${main} but relay; add one with: relay guard install --bare ${
        shellWord(bare)
      } --person <name>`,
  );
  return 0;
}

async function uninstall(bare: string): Promise<number> {
  const path = await hookPath(bare);
  const existing = await existingHook(path);
  if (existing.kind === "none") {
    console.log(`no pre-receive hook in ${join(bare, "hooks")}: nothing to remove`);
    return 0;
  }
  if (existing.kind === "foreign") {
    throw new InputError(
      { file: path },
      `this pre-receive hook ${existing.why}, so relay leaves it as it is`,
      "remove it yourself if it is yours to remove",
    );
  }
  await Deno.remove(path);
  console.log(
    `removed relay's pre-receive hook from ${path}; relay.main and relay.person stay in ${
      join(bare, "config")
    } (${shellLine(["git", "-C", bare, "config", "--remove-section", "relay"])} removes them)`,
  );
  return 0;
}

async function setConfig(bare: string, args: string[]): Promise<void> {
  const res = await git(bare, ["config", ...args]);
  if (res.code !== 0) {
    throw new Error(`git config ${args.join(" ")} failed in ${bare}: ${res.stderr.trim()}`);
  }
}

/**
 * main as the relay repository around `cwd` configures it. Outside one (no
 * .relay/config.yaml found) nothing says which branch the loop merges into,
 * and guarding "main" by guess could leave the real one open: --main is needed.
 */
async function configuredMain(cwd: string): Promise<string> {
  const repo = discoverRepo(cwd);
  const { CONFIG_PATH, loadRepoConfig } = await import("../config/repo_load.ts");
  if (!repo || !(await exists(join(repo.root, CONFIG_PATH)))) {
    throw new UsageError(
      `relay guard install cannot tell which branch to guard: ${
        repo ? `${repo.root} has no ${CONFIG_PATH}` : `${cwd} is not in a git repository`
      }. Run it in the relay repository whose remote this is, or name the branch: --main <branch>`,
      "guard",
    );
  }
  return (await loadRepoConfig(repo.root)).main;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

/** The account relay runs as, by the name the hook's `id -un` gives; null when id fails. */
async function currentAccount(cwd: string): Promise<string | null> {
  const res = await run(["id", "-un"], { cwd, allowFail: true }).catch(() => null);
  const name = res?.code === 0 ? res.stdout.trim() : "";
  return name === "" ? null : name;
}

function foreignHook(path: string, why: string, bare: string): InputError {
  const hooks = join(bare, "hooks");
  return new InputError(
    { file: path },
    `a pre-receive hook is already there and ${why}; relay does not replace it`,
    `to run both, move it aside (${
      shellLine(["mv", path, join(hooks, "pre-receive.own")])
    }), save relay's with "relay guard print > ${
      shellWord(join(hooks, "pre-receive.relay"))
    }" (chmod 755, and set relay.main / relay.person with git config), and make pre-receive a script that reads its input once and feeds it to both, failing when either fails`,
  );
}
