/**
 * `relay demo` (`deno task demo`): the loop end to end in a throwaway sandbox —
 * a bare "origin", a clone, two queued briefs, the built-in demo agent — with
 * every step and the resulting git history shown. No AI, no network.
 */
import { pathToFileURL } from "node:url";
import { join } from "../path.ts";
import { type Context, parseCommand } from "./args.ts";
import { Git } from "../git/git.ts";
import { discoverRepo } from "../git/discover.ts";
import { readTemplate } from "./templates.ts";

const BRIEFS = [
  `Status: QUEUED
Title: Greet the reader

## Goal
Add a short greeting page for new readers.

## Done when
- demo/task-1.md exists and names the task.

## Verification bar
\`\`\`
git ls-files demo
grep -c greeting demo/task-1.md
\`\`\`
`,
  `Status: QUEUED
Title: Say goodbye

## Goal
Add a goodbye note.

## Done when
- demo/task-2.md exists.

## Verification bar
\`\`\`
git ls-files demo
\`\`\`
`,
];

function heading(text: string): void {
  console.log(`\n=== ${text} ===`);
}

export async function demo(args: string[], _ctx: Context): Promise<number> {
  const { values } = parseCommand("demo", args, { keep: { type: "boolean" } }, { min: 0, max: 0 });
  const sandbox = await Deno.makeTempDir({ prefix: "relay-demo-" });
  try {
    return await runDemo(sandbox);
  } finally {
    if (values.keep) console.log(`\nsandbox kept at ${sandbox}`);
    else await Deno.remove(sandbox, { recursive: true });
  }
}

async function runDemo(sandbox: string): Promise<number> {
  const { addToInbox } = await import("../loop/inbox.ts");
  const { promoteNext } = await import("../loop/promote.ts");
  const { runPollTick } = await import("../loop/poll.ts");
  const { runReviewTick } = await import("../loop/review.ts");
  const { renderDefaultRepoConfig } = await import("../config/repo.ts");

  heading(`sandbox ${sandbox}`);
  const origin = join(sandbox, "origin.git");
  const work = join(sandbox, "work");
  const top = new Git(sandbox);
  await top.run(["init", "--quiet", "--bare", "--initial-branch=main", origin]);
  // A file URL git takes on every platform (`file://C:\…` is none on Windows).
  await top.run(["clone", "--quiet", pathToFileURL(origin).href, work]);
  const git = new Git(work);
  for (
    const [k, v] of [["user.name", "relay demo"], ["user.email", "demo@relay.invalid"], [
      "commit.gpgsign",
      "false",
    ]]
  ) {
    await git.run(["config", k!, v!]);
  }
  await git.run(["switch", "--quiet", "-c", "main"]).catch(() => {});
  await Deno.writeTextFile(join(work, "README.md"), "# A demo product\n");
  await Deno.mkdir(join(work, ".relay", "inbox"), { recursive: true });
  await Deno.writeTextFile(join(work, ".relay", "config.yaml"), renderDefaultRepoConfig());
  await Deno.writeTextFile(join(work, "CLAUDE.md"), await readTemplate("CLAUDE.md"));
  await git.run(["add", "--all"]);
  await git.run(["commit", "--quiet", "-m", "Initial commit: product and relay init"]);
  await git.run(["push", "--quiet", "origin", "main"]);
  const profile = join(sandbox, "profile.yaml");
  await Deno.writeTextFile(
    profile,
    "roles:\n  executor:\n    vendor: demo\n  reviewer:\n    vendor: demo\n" +
      `worktree_root: ${join(sandbox, "worktrees")}\n`,
  );
  console.log(
    `origin: ${origin}\nclone:  ${work}\nprofile: ${profile} (executor: the built-in demo agent)`,
  );

  const repo = discoverRepo(work)!;
  heading("relay inbox add (two briefs)");
  for (const text of BRIEFS) {
    const e = await addToInbox(repo, text, "<demo brief>");
    console.log(`queued task ${e.task}: ${e.title} (${e.file})`);
  }

  const log = { step: (m: string) => console.log(`  relay: ${m}`) };
  heading("relay promote");
  const p = await promoteNext(work);
  console.log(p.result === "promoted" ? `promoted task ${p.task}: ${p.title}` : p.message);
  for (const task of [1, 2]) {
    heading(`relay poll (the executor tick, task ${task})`);
    const result = await runPollTick({ repo, profileFlag: profile, progress: "plain", log });
    console.log(result.message);
    if (result.kind !== "shipped") return 1;

    heading(`task-${task}: what the branch changes against main`);
    console.log(await git.out(["diff", "--name-status", `origin/main...origin/task-${task}`]));
    heading("the paperwork commit on main");
    console.log(await git.out(["show", "--stat", "--format=%h %s", "origin/main"]));

    heading(`relay review (the reviewer tick, task ${task})`);
    const reviewed = await runReviewTick({ repo, profileFlag: profile, progress: "plain", log });
    console.log(reviewed.message);
    if (reviewed.kind !== "merged") return 1;
  }

  heading("git log --graph --all");
  console.log(
    await git.out([
      "log",
      "--graph",
      "--oneline",
      "--all",
      "--decorate",
      "--exclude=refs/relay/*",
      "--branches",
      "--remotes",
    ]),
  );
  heading("COWORK-STATUS.md on main (head)");
  const report = await git.out(["show", "origin/main:COWORK-STATUS.md"]);
  console.log(report.split("\n").slice(0, 24).join("\n") + "\n  [...]");

  heading("checks");
  let ok = true;
  const check = (good: boolean, text: string) => {
    ok &&= good;
    console.log(`${good ? "ok " : "BAD"} ${text}`);
  };
  for (const task of [1, 2]) {
    const files =
      (await git.out(["diff", "--name-only", `origin/task-${task}~1`, `origin/task-${task}`]))
        .split("\n");
    check(
      files.every((f) => f.startsWith("demo/")),
      `task-${task} carries product files only: ${files.join(", ")}`,
    );
  }
  const subjects = (await git.out(["log", "--first-parent", "--format=%s", "origin/main"])).split(
    "\n",
  );
  const paperwork = subjects.filter((s) => /^Task #\d+: status — /.test(s));
  const merges = subjects.filter((s) => /^Merge task-\d+/.test(s));
  check(
    paperwork.length === 2,
    `main has ${paperwork.length} paperwork commits: ${paperwork.join(" | ")}`,
  );
  check(merges.length === 2, `main has ${merges.length} reviewed merges: ${merges.join(" | ")}`);
  check(
    subjects.every((s) =>
      paperwork.includes(s) || merges.includes(s) || s.startsWith("Initial commit")
    ),
    "main's history is only paperwork commits and merges of task branches",
  );
  return ok ? 0 : 1;
}
