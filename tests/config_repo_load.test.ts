/**
 * The light config reader (lib/config/repo_load.ts) answers only what the full
 * parser (yaml + zod, lib/config/repo.ts) would: for every file it reads, the
 * same RepoConfig; for every file the full parser refuses, no answer (so the
 * full parser explains). Checked on the common files and on thousands of
 * generated ones, good and bad.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { InputError } from "../lib/errors.ts";
import { parseRepoConfig, renderDefaultRepoConfig } from "../lib/config/repo.ts";
import { loadRepoConfig, parseCommonRepoConfig } from "../lib/config/repo_load.ts";
import { random } from "./helpers/random.ts";

const FILE = ".relay/config.yaml";

function full(text: string): { config: unknown } | { error: unknown } {
  try {
    return { config: parseRepoConfig(text, FILE) };
  } catch (error) {
    return { error };
  }
}

Deno.test("parseCommonRepoConfig() reads the common files as the full parser does", () => {
  const texts = [
    "",
    "version: 1\n",
    "# nothing set\n",
    renderDefaultRepoConfig(),
    "version: 1\nmain: trunk\nremote: upstream\nattempts: 4\nfix_rounds: 0\nmerge: human\n" +
    "forge: github\ntimeouts:\n  agent: 30m\n  bar: 90\n  network: 1h30m\n  lease: 1m\n" +
    "evidence_max_bytes: 2048\nskip_quality_polish: true\nplan_review: on\nplan_rounds: 5\n",
    "timeouts:\ngate:\n  product:\naccepted_infra: []\n",
  ];
  for (const text of texts) {
    const common = parseCommonRepoConfig(text);
    assert.notEqual(common, undefined, `not read: ${JSON.stringify(text)}`);
    assert.deepEqual(common, parseRepoConfig(text, FILE), JSON.stringify(text));
  }
});

const VALUES = [
  "1",
  "2",
  "0",
  "10",
  "11",
  "20",
  "21",
  "010",
  "1024",
  "1023",
  "16777216",
  "16777217",
  "-1",
  "1.5",
  "1e3",
  "0x10",
  "0o7",
  ".inf",
  "true",
  "false",
  "True",
  "FALSE",
  "yes",
  "on",
  "off",
  "null",
  "~",
  "Null",
  "main",
  "trunk",
  "feature/x",
  "a..b",
  "x.lock",
  "-x",
  "origin",
  "up_stream",
  "auto",
  "human",
  "plain",
  "github",
  "GitHub",
  "10m",
  "90s",
  "1h30m",
  "1m",
  "59s",
  "60",
  "0s",
  "25h",
  "2h",
  "90",
  "[]",
  "[a]",
  '"main"',
  "'main'",
  "{}",
  "a#b",
  "&x",
  "*x",
  "!!str x",
  "https://x.example/{pr}",
  "docs/CHANGES.md",
  "[skip ci]",
  "",
];
const KEYS = [
  "version",
  "main",
  "remote",
  "attempts",
  "fix_rounds",
  "merge",
  "forge",
  "timeouts",
  "evidence_max_bytes",
  "gate",
  "accepted_infra",
  "never_commit",
  "bar_env",
  "docs_file",
  "skip_quality_polish",
  "plan_review",
  "plan_rounds",
  "preview_url",
  "preview",
  "preview_path",
  "preview_timeout",
  "paperwork",
  "command",
  "Version",
  "unknown_key",
];
const SUBKEYS = [
  "agent",
  "bar",
  "network",
  "lease",
  "lease",
  "product",
  "refuse",
  "commit_suffix",
  "argv",
  "x",
];

function generate(next: () => number): string {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const lines: string[] = [];
  const count = Math.floor(next() * 6);
  for (let i = 0; i < count; i++) {
    const roll = next();
    if (roll < 0.1) lines.push(pick(["# a comment", "", "   ", "---", "\t", "  # indented"]));
    else if (roll < 0.35) {
      lines.push(`${pick(["timeouts", "gate", "paperwork", "main"])}:${pick(["", " # c"])}`);
      const indent = pick(["  ", "  ", " ", "    "]);
      for (let j = Math.floor(next() * 3); j > 0; j--) {
        lines.push(`${pick([indent, indent, "   "])}${pick(SUBKEYS)}: ${pick(VALUES)}`);
      }
    } else {
      const comment = pick(["", "", "  # why", "#x"]);
      lines.push(`${pick(KEYS)}:${pick([" ", " ", "  ", ""])}${pick(VALUES)}${comment}`);
    }
  }
  return lines.join(pick(["\n", "\n", "\r\n"])) + pick(["\n", ""]);
}

Deno.test("parseCommonRepoConfig() never answers differently from the full parser", () => {
  const next = random(10);
  let read = 0;
  let passed = 0;
  for (let i = 0; i < 4000; i++) {
    const text = generate(next);
    const common = parseCommonRepoConfig(text);
    const slow = full(text);
    if ("config" in slow) passed++;
    if (common === undefined) continue;
    read++;
    assert.ok("config" in slow, `read a file the full parser refuses: ${JSON.stringify(text)}`);
    assert.deepEqual(common, slow.config, JSON.stringify(text));
  }
  // Both ways are exercised: many files are read here, many go on to the full parser.
  assert.ok(read > 200, `only ${read} of 4000 files read`);
  assert.ok(passed - read > 50, `only ${passed - read} good files left to the full parser`);
});

Deno.test("loadRepoConfig() still explains a bad file by key (the full parser answers)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-config-load-" });
  try {
    await Deno.mkdir(join(dir, ".relay"));
    const cases: [string, RegExp][] = [
      ["attempts: 0\n", /attempts/],
      ["version: 1\ntimeouts:\n  bar: 0s\n", /timeouts\.bar/],
      ["version: 1\nversion: 1\n", /config\.yaml:2: .*unique/],
      ["main: a..b\n", /main/],
      ["command: x\n", /command/],
    ];
    for (const [text, named] of cases) {
      await Deno.writeTextFile(join(dir, ".relay", "config.yaml"), text);
      await assert.rejects(loadRepoConfig(dir), (err: unknown) => {
        assert.ok(err instanceof InputError, String(err));
        assert.match(err.message, named);
        return true;
      });
    }
    await Deno.writeTextFile(join(dir, ".relay", "config.yaml"), "version: 1\nmain: trunk\n");
    assert.equal((await loadRepoConfig(dir)).main, "trunk");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
