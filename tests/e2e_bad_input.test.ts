/**
 * End to end: every malformed file gives exit 2, a message naming the file and
 * the line (or the key, for YAML), the fix — and no change to any file, ref,
 * relay state file or worktree.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { brief, makeScene, type Scene } from "./helpers/scene.ts";

/** A brief in NEXT-STEPS.md form; `header` replaces lines 1-5, `bar` the commands (line 15 on). */
function nextSteps(opts: { header?: string[]; bar?: string[] } = {}): string {
  const header = opts.header ?? [
    "Status: OPEN",
    "Task: 1",
    "Title: Add the feature",
    "Branch: task-1",
    "Kind: feature",
  ];
  return [
    ...header,
    "",
    "## Goal",
    "Add the feature file.",
    "",
    "## Done when",
    "- src/feature-1.txt exists.",
    "",
    "## Verification bar",
    "```",
    ...(opts.bar ?? ["git ls-files src"]),
    "```",
    "",
  ].join("\n");
}
/** The line of the first bar command in `nextSteps()` with the default five header lines. */
const BAR_LINE = 15;

const CONFIG = ".relay/config.yaml";

/** A well-formed inbox entry, as `relay inbox add` writes them (Branch and Kind included). */
function queued(task: number, title: string): string {
  return brief({ task, title, kind: "feature", extraHeader: `Branch: task-${task}` });
}

interface Case {
  /** Completes the test name: "… gives exit 2 …". */
  name: string;
  /** Files to write in the primary tree (relative path → text). */
  files?: Record<string, string>;
  /** Anything else to set up before the snapshot. */
  setup?: (scene: Scene) => Promise<void>;
  args: string[];
  /** Text the message must contain to name the file; "(profile)" stands for the profile path. */
  file?: string;
  line?: number;
  key?: string;
  /** More patterns stderr must match. */
  says?: RegExp[];
  /** Bad input in a file (InputError) carries a fix line; usage errors point at --help. */
  usage?: boolean;
}

const OPEN = { "NEXT-STEPS.md": nextSteps() };

function barCase(what: string, command: string): Case {
  return {
    name: `a verification command with ${what}`,
    files: { "NEXT-STEPS.md": nextSteps({ bar: ["git ls-files src", command] }) },
    args: ["poll"],
    file: "NEXT-STEPS.md",
    line: BAR_LINE + 1,
    says: [/without a shell/],
  };
}

const CASES: Case[] = [
  {
    name: "NEXT-STEPS.md with two Status lines",
    files: {
      "NEXT-STEPS.md": nextSteps({
        header: [
          "Status: OPEN",
          "Status: DONE",
          "Task: 1",
          "Title: Add the feature",
          "Branch: task-1",
          "Kind: feature",
        ],
      }),
    },
    args: ["poll"],
    file: "NEXT-STEPS.md",
    line: 2,
    says: [/second "Status:" line/],
  },
  {
    // The idle path reads only line 1; a Status line with a value relay does not know is still
    // a brief that would otherwise wait forever without a word.
    name: "NEXT-STEPS.md with an unknown status",
    files: {
      "NEXT-STEPS.md": nextSteps({
        header: [
          "Status: MAYBE",
          "Task: 1",
          "Title: Add the feature",
          "Branch: task-1",
          "Kind: feature",
        ],
      }),
    },
    args: ["poll"],
    file: "NEXT-STEPS.md",
    line: 1,
    says: [/unknown status "MAYBE"/],
  },
  {
    // A Status line deleted by hand: not an idle loop, on either path of the poll.
    name: "NEXT-STEPS.md with no Status line, under cron's --quiet",
    files: {
      "NEXT-STEPS.md": nextSteps({
        header: ["Task: 1", "Title: Add the feature", "Branch: task-1", "Kind: feature"],
      }),
    },
    args: ["poll", "--quiet"],
    file: "NEXT-STEPS.md",
    line: 1,
    says: [/the first line is not a "Status:" line/, /fix: make line 1 "Status: OPEN"/],
  },
  {
    name: "NEXT-STEPS.md with no Status line, relay poll --json",
    files: {
      "NEXT-STEPS.md": nextSteps({
        header: ["Task: 1", "Title: Add the feature", "Branch: task-1", "Kind: feature"],
      }),
    },
    args: ["poll", "--json"],
    file: "NEXT-STEPS.md",
    line: 1,
  },
  {
    name: "relay promote over a NEXT-STEPS.md with no Status line",
    files: {
      "NEXT-STEPS.md": "# My own notes\n\nNot a brief, but not relay's to overwrite.\n",
      ".relay/inbox/0002-next.md": queued(2, "Next"),
    },
    args: ["promote"],
    file: "NEXT-STEPS.md",
    line: 1,
    says: [/Cannot read the brief/],
  },
  {
    name: "relay promote over a NEXT-STEPS.md with an unknown status",
    files: {
      "NEXT-STEPS.md": nextSteps({
        header: [
          "Status: MAYBE",
          "Task: 1",
          "Title: Add the feature",
          "Branch: task-1",
          "Kind: feature",
        ],
      }),
      ".relay/inbox/0002-next.md": queued(2, "Next"),
    },
    args: ["promote"],
    file: "NEXT-STEPS.md",
    line: 1,
    says: [/unknown status "MAYBE"/],
  },
  {
    name: "NEXT-STEPS.md without a Task line",
    files: {
      "NEXT-STEPS.md": nextSteps({
        header: ["Status: OPEN", "Title: Add the feature", "Branch: task-1", "Kind: feature"],
      }),
    },
    args: ["poll"],
    file: "NEXT-STEPS.md",
    line: 1,
    says: [/no "Task:" line/],
  },
  {
    name: "a fix brief without a Fixes line",
    files: {
      "NEXT-STEPS.md": nextSteps({
        header: ["Status: OPEN", "Task: 2", "Title: Fix it", "Branch: task-1", "Kind: fix"],
      }),
    },
    args: ["poll"],
    file: "NEXT-STEPS.md",
    line: 5,
    says: [/no "Fixes:" line/],
  },
  barCase('a pipe "|"', "git ls-files src | wc -l"),
  barCase('";"', "git status; true"),
  barCase('"&&"', "git status && true"),
  barCase('"$("', "echo $(id)"),
  barCase("backticks", "echo `id`"),
  barCase('a redirection ">"', "git log > out.txt"),
  {
    name: ".relay/config.yaml with mis-indented YAML",
    files: { ...OPEN, [CONFIG]: "version: 1\ntimeouts:\n  bar: 5m\n network: 1m\n" },
    args: ["poll"],
    file: CONFIG,
    line: 4,
    says: [/Cannot parse YAML/],
  },
  {
    name: ".relay/config.yaml with a duplicate key",
    files: { ...OPEN, [CONFIG]: "version: 1\nattempts: 2\nattempts: 3\n" },
    args: ["poll"],
    file: CONFIG,
    line: 3,
    says: [/Cannot parse YAML/],
  },
  {
    name: ".relay/config.yaml with an unknown key",
    files: { ...OPEN, [CONFIG]: "version: 1\ncolour: blue\n" },
    args: ["poll"],
    file: CONFIG,
    line: 2,
    key: "colour",
    says: [/unknown key "colour"/],
  },
  {
    name: ".relay/config.yaml naming a vendor",
    files: { ...OPEN, [CONFIG]: "version: 1\nvendor: claude\n" },
    args: ["poll"],
    file: CONFIG,
    line: 2,
    key: "vendor",
    says: [/programs.*live only in the operator profile/],
  },
  {
    name: ".relay/config.yaml with roles",
    files: { ...OPEN, [CONFIG]: "version: 1\nroles:\n  executor:\n    vendor: claude\n" },
    args: ["poll"],
    file: CONFIG,
    line: 2,
    key: "roles",
    says: [/programs.*live only in the operator profile/],
  },
  {
    name: ".relay/config.yaml with a bad duration",
    files: { ...OPEN, [CONFIG]: "version: 1\ntimeouts:\n  bar: 10 parsecs\n" },
    args: ["poll"],
    file: CONFIG,
    line: 3,
    key: "timeouts.bar",
    says: [/"10 parsecs"/],
  },
  {
    name: "a missing operator profile",
    files: OPEN,
    setup: async (scene) => await Deno.remove(scene.profile),
    args: ["poll"],
    file: "(profile)",
    says: [/does not exist/, /relay init/],
  },
  {
    name: "a malformed operator profile",
    files: OPEN,
    setup: async (scene) =>
      await Deno.writeTextFile(
        scene.profile,
        "roles:\n  executor:\n    vendor: claude\n   reviewer:\n    vendor: codex\n",
      ),
    args: ["poll"],
    file: "(profile)",
    line: 4,
    says: [/Cannot parse YAML/],
  },
  {
    name: "an operator profile with vendor: command and no argv",
    files: OPEN,
    setup: async (scene) =>
      await Deno.writeTextFile(
        scene.profile,
        "roles:\n  executor:\n    vendor: command\n    timeout: 60s\n" +
          "  reviewer:\n    vendor: claude\n" + `worktree_root: ${scene.worktrees}\n`,
      ),
    args: ["poll"],
    file: "(profile)",
    line: 2,
    key: "roles.executor.argv",
    says: [/vendor command needs argv/],
  },
  {
    name: "relay inbox add of a brief with two Title lines",
    files: { "brief.md": brief({ extraHeader: "Title: Another title" }) },
    args: ["inbox", "add", "brief.md"],
    file: "brief.md",
    line: 3,
    says: [/second "Title:" line/],
  },
  {
    name: "relay inbox add of a brief with an unsafe verification command",
    files: { "brief.md": brief({ bar: ["git ls-files src", "make test | tee log"] }) },
    args: ["inbox", "add", "brief.md"],
    file: "brief.md",
    line: 13,
    says: [/without a shell/],
  },
  {
    name: "relay inbox add of a brief whose task number is already queued",
    files: {
      ".relay/inbox/0001-first.md": queued(1, "First"),
      "brief.md": brief({ task: 1, title: "Second" }),
    },
    args: ["inbox", "add", "brief.md"],
    // The problem is the Task value against the repo's state, named by key (no line, as
    // tests/cli_inbox.test.ts pins the message form "dup.md (key "Task")").
    file: "brief.md",
    key: "Task",
    says: [/task number 1 is already used/],
  },
  {
    name: "relay promote with a malformed queued brief",
    files: { ".relay/inbox/0003-bad.md": brief({ task: 3, extraHeader: "Colour: blue" }) },
    args: ["promote"],
    file: ".relay/inbox/0003-bad.md",
    line: 4,
    says: [/unknown header key "Colour"/],
  },
  {
    name: "an unknown flag",
    files: OPEN,
    args: ["poll", "--frobnicate"],
    says: [/--frobnicate/, /relay poll --help/],
    usage: true,
  },
  {
    name: "an unknown command",
    args: ["frobnicate"],
    says: [/unknown command "frobnicate"/, /relay --help/],
    usage: true,
  },
  {
    name: "relay inbox drop of something that is not a task number",
    setup: async (scene) => {
      await scene.write(".relay/inbox/0001-first.md", queued(1, "First"));
    },
    args: ["inbox", "drop", "abc"],
    says: [/"abc" is not a task number/, /relay inbox --help/],
    usage: true,
  },
];

/** Every file under `dir` (recursively) with its content, except names `skip` says to leave out. */
async function tree(dir: string, skip: (rel: string) => boolean, rel = ""): Promise<string[]> {
  const out: string[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(join(dir, rel)));
  } catch (err) {
    // An absent folder lists like an empty one: the tick lock's folder may appear (see below).
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const path = rel === "" ? e.name : `${rel}/${e.name}`;
    if (skip(path)) continue;
    if (e.isDirectory) out.push(`${path}/`, ...await tree(dir, skip, path));
    else out.push(`${path}: ${JSON.stringify(await Deno.readTextFile(join(dir, path)))}`);
  }
  return out;
}

/**
 * The scene's snapshot (refs, status, protocol files) plus every file of the
 * primary tree, relay's state under .git/relay, the worktree list, both
 * possible worktree roots and the profile. Left out: the tick lock and its
 * holder record, which every tick takes (and describes) before it reads input.
 */
async function fullSnapshot(scene: Scene): Promise<string> {
  // The tick lock, the record of how the tick ended and the heartbeat that it started (written
  // by design, also on bad input: relay doctor tells failing ticks from ticks that do not run).
  const isTickState = (rel: string) =>
    rel === "poll.lock" || rel === "poll.lock.json" ||
    /^(last-(poll|review)\.json|heartbeat-(poll|review))$/.test(rel);
  return [
    await scene.snapshot(),
    ...await tree(scene.work, (rel) => rel === ".git"),
    ...await tree(join(scene.work, ".git", "relay"), isTickState),
    await scene.out(["worktree", "list", "--porcelain"]),
    ...await tree(scene.worktrees, () => false),
    ...await tree(`${scene.work}.relay-worktrees`, () => false),
    await Deno.readTextFile(scene.profile).catch(() => "(no profile)"),
  ].join("\n---\n");
}

for (const c of CASES) {
  Deno.test(`${c.name} gives exit 2, names where, and changes nothing`, async () => {
    await using scene = await makeScene();
    for (const [path, text] of Object.entries(c.files ?? {})) await scene.write(path, text);
    await c.setup?.(scene);
    const before = await fullSnapshot(scene);

    const res = await scene.relay(c.args);
    const said = `exit ${res.code}\nstdout: ${res.stdout}\nstderr: ${res.stderr}`;
    assert.equal(res.code, 2, said);
    assert.doesNotMatch(res.stderr, /internal error/, said);
    if (c.file !== undefined) {
      const file = c.file === "(profile)" ? scene.profile : c.file;
      const where = c.line === undefined ? file : `${file}:${c.line}`;
      assert.ok(res.stderr.includes(where), `stderr should name ${where}\n${said}`);
    }
    if (c.key !== undefined) {
      assert.ok(
        res.stderr.includes(`(key "${c.key}")`),
        `stderr should name key ${c.key}\n${said}`,
      );
    }
    for (const pattern of c.says ?? []) assert.match(res.stderr, pattern, said);
    if (c.usage) assert.match(res.stderr, /--help" for usage/, said);
    else assert.match(res.stderr, /\n {2}fix: \S/, `the message gives a fix\n${said}`);

    assert.equal(await fullSnapshot(scene), before, "nothing changed");
    for (const root of [scene.worktrees, `${scene.work}.relay-worktrees`]) {
      await assert.rejects(Deno.stat(root), Deno.errors.NotFound, `${root} was created`);
    }
  });
}
