/**
 * `relay init`: installs relay into the repository without overwriting
 * anything and without committing anything — the files it writes are agent
 * instructions and config, which a person reviews and commits.
 */
import { dirname, join } from "../path.ts";
import { type Context, parseCommand, requireRepo } from "./args.ts";
import { readTemplate } from "./templates.ts";
import { CONFIG_FILE, INBOX_DIR } from "../state/paths.ts";
import type { RepoPaths } from "../git/discover.ts";
import { gitIn, personCwd, shellLine } from "../proc/shell.ts";
import { tickLog, tickPlan } from "./ticks.ts";

/**
 * The files `relay init` writes into the repository, each from its template:
 * the config, the inbox, REVIEWER.md and the procedures of the stages after
 * review (read from main like REVIEWER.md), and the agents' instructions.
 * `relay doctor` checks that each one present is committed and pushed.
 */
export const INIT_FILES: readonly string[] = [
  CONFIG_FILE,
  `${INBOX_DIR}/.gitkeep`,
  "REVIEWER.md",
  ".relay/PLAN.md",
  ".relay/POLISH.md",
  ".relay/DOCS.md",
  ".relay/SECURITY.md",
  "CLAUDE.md",
  "AGENTS.md",
];

function realOrSelf(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}

async function writeIfAbsent(path: string, text: string, mode?: number): Promise<boolean> {
  await Deno.mkdir(dirname(path), { recursive: true });
  try {
    await Deno.writeTextFile(path, text, { createNew: true, ...(mode ? { mode } : {}) });
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.AlreadyExists) return false;
    throw err;
  }
}

async function excludeFromGit(commonDir: string, names: string[]): Promise<string[]> {
  const path = join(commonDir, "info", "exclude");
  let text = "";
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  const have = new Set(text.split("\n").map((l) => l.trim()));
  const add = names.map((n) => `/${n}`).filter((n) => !have.has(n));
  if (add.length) {
    await Deno.mkdir(dirname(path), { recursive: true });
    const sep = text === "" || text.endsWith("\n") ? "" : "\n";
    await Deno.writeTextFile(
      path,
      `${text}${sep}# relay init --web-root: agent instructions stay off the site\n${
        add.join("\n")
      }\n`,
    );
  }
  return add;
}

/** The commit advice; `git` is how to reach the repository from the person's folder. */
function commitStep(files: string[], git: string): string {
  if (files.length === 0) {
    return "Nothing new was written: relay was already set up here; nothing to commit.";
  }
  return `Review and commit the new files yourself, then push:
       ${git} add ${shellLine(files)}
       ${git} commit -m "relay: init" && ${git} push`;
}

/** init's crontab lines: a global PATH line, then one line per tick. */
async function crontab(
  repo: RepoPaths,
  profile: string,
): Promise<{ lines: string[]; notes: string[] }> {
  const { cronCommand } = await import("./crontab.ts");
  const plan = await tickPlan(repo, profile);
  return {
    lines: [
      `PATH=${plan.path.join(":")}`,
      ...plan.ticks.map((t) => `* * * * * ${cronCommand(plan.relay, t.args, plan.log)}`),
    ],
    notes: plan.notes,
  };
}

export async function init(args: string[], ctx: Context): Promise<number> {
  const { values } = parseCommand("init", args, { "web-root": { type: "boolean" } }, {
    min: 0,
    max: 0,
  });
  const repo = requireRepo(ctx);
  const { renderDefaultRepoConfig } = await import("../config/repo.ts");
  const { profilePath, renderDefaultProfile } = await import("../config/profile.ts");

  const files = INIT_FILES.map((file): [string, () => Promise<string>] => [
    file,
    file === CONFIG_FILE
      ? () => Promise.resolve(renderDefaultRepoConfig())
      : file.endsWith(".gitkeep")
      ? () => Promise.resolve("")
      : () => readTemplate(file.replace(/^\.relay\//, "")),
  ]);
  const written: string[] = [];
  for (const [file, text] of files) {
    const wrote = await writeIfAbsent(join(repo.root, file), await text());
    console.log(`${wrote ? "wrote   " : "kept    "} ${file}${wrote ? "" : " (already there)"}`);
    if (wrote) written.push(file);
  }
  if (values["web-root"]) {
    const added = await excludeFromGit(repo.commonDir, ["CLAUDE.md", "AGENTS.md"]);
    console.log(
      added.length
        ? `excluded CLAUDE.md and AGENTS.md from git (.git/info/exclude)`
        : "kept     .git/info/exclude",
    );
  }
  const profile = profilePath(ctx.profile);
  // Readable by you alone: it names your agents and may carry their keys (relay doctor checks).
  const wroteProfile = await writeIfAbsent(profile, renderDefaultProfile(), 0o600);
  console.log(
    `${wroteProfile ? "wrote   " : "kept    "} operator profile ${profile}${
      wroteProfile ? "" : " (already there)"
    }`,
  );

  // The crontab line appends to this log: sh cannot open it in a folder that does not exist yet.
  await Deno.mkdir(dirname(tickLog(repo)), { recursive: true });
  const cron = await crontab(repo, profile);
  // From a subfolder (or with -C, or under deno task) plain `git add` paths would miss.
  const git = gitIn(realOrSelf(repo.root), realOrSelf(personCwd()));
  console.log(`
Next:
  1. Edit CLAUDE.md / AGENTS.md: start with what this project is NOT.
  2. Check the operator profile (${profile}): it alone decides which agent programs run.
  3. ${
    commitStep(
      written.filter((f) => !(values["web-root"] && /^(CLAUDE|AGENTS)\.md$/.test(f))),
      git,
    )
  }
  4. Queue a brief (relay inbox add brief.md), promote it (relay promote), and schedule the
     two ticks: relay schedule install writes them into your crontab as a block it can
     replace and remove (--systemd or --launchd for timers instead), or add these lines
     yourself (crontab -e) — relay needs git and its agents on PATH:

${cron.lines.join("\n")}
${cron.notes.map((n) => `\n  ${n}`).join("")}${cron.notes.length ? "\n" : ""}
  Run the loop in a clone dedicated to it: relay keeps that clone's primary tree on main.`);
  return 0;
}
