/**
 * The light profile reader (lib/config/profile_load.ts) answers only what the
 * full parser (yaml + zod, lib/config/profile.ts) would: for every profile it
 * reads, the same Profile; for every profile the full parser refuses, no
 * answer (so the full parser explains). Checked on the common profiles (what
 * `relay init` writes, the test scene's, the bench's, the acceptance
 * sessions') and on thousands of generated ones, good and bad.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { InputError } from "../lib/errors.ts";
import { parseProfile, renderDefaultProfile } from "../lib/config/profile.ts";
import { loadProfile, parseCommonProfile } from "../lib/config/profile_load.ts";
import { random } from "./helpers/random.ts";

const FILE = "/home/me/.config/relay/profile.yaml";

function full(text: string): { profile: unknown } | { error: unknown } {
  try {
    return { profile: parseProfile(text, FILE) };
  } catch (error) {
    return { error };
  }
}

/** The profile tests/helpers/scene.ts writes (setAgent), with `extra` after it. */
function sceneProfile(extra = ""): string {
  const argv = ["bash", "/work/tests/fixtures/dispatch.sh", "/tmp/relay-x_1/executor-script"];
  const reviewer = ["bash", "/work/tests/fixtures/dispatch.sh", "/tmp/relay-x_1/reviewer-script"];
  return `roles:\n  executor:\n    vendor: command\n    argv: ${
    JSON.stringify([...argv, "{prompt}"])
  }\n    timeout: 60s\n` +
    `  reviewer:\n    vendor: command\n    argv: ${
      JSON.stringify([...reviewer, "{prompt}"])
    }\n    timeout: 60s\n` +
    `worktree_root: /tmp/relay-x_1/worktrees\n${extra}`;
}

/** The profile scripts/bench.ts writes. */
function benchProfile(): string {
  const argv = (script: string) =>
    JSON.stringify(["bash", `/tmp/relay-bench-1/fakes/${script}`, "{prompt}"]);
  return `roles:\n  executor:\n    vendor: command\n    argv: ${
    argv("executor.sh")
  }\n    timeout: 10m\n` +
    `  reviewer:\n    vendor: command\n    argv: ${argv("reviewer.sh")}\n    timeout: 10m\n` +
    `worktree_root: /tmp/relay-bench-1/cycle-relay/worktrees\n`;
}

const COMMON = [
  renderDefaultProfile(),
  sceneProfile(),
  sceneProfile("merge_policy: human\n"),
  sceneProfile("merge_policy: human\nhandsfree: true\n"),
  sceneProfile("merge_policy: auto\n"),
  sceneProfile("safety_mode: strict\n"),
  sceneProfile("test_command: deno task test\n"),
  sceneProfile("test_command: /bin/bash /tmp/relay-x_1/test.sh\n"),
  benchProfile(),
  // scripts/acceptance/part1.sh and part2.sh
  'roles:\n  executor:\n    vendor: command\n    argv: ["bash", "/s/agent.sh", "{prompt}"]\n    timeout: 5m\n  reviewer:\n    vendor: demo\nworktree_root: /s/worktrees\n',
  'roles:\n  executor: { vendor: command, argv: ["bash", "/r/tests/fixtures/agents/custom.sh", "{prompt}"], timeout: 2m }\n' +
  '  reviewer: { vendor: command, argv: ["bash", "/r/tests/fixtures/reviewers/honest.sh", "{prompt}"], timeout: 2m }\n' +
  "worktree_root: /s/worktrees\n",
  // tests/config_profile.test.ts's good ones
  "roles:\n  executor: { vendor: claude }\n  reviewer: { vendor: codex }\n",
  `roles:
  executor:
    vendor: command
    argv: [/opt/agent, --prompt, "{prompt}"]
    timeout: 2h
    env: { IS_SANDBOX: 1, DEBUG: true, NAME: x }
  reviewer:
    vendor: claude
    model: claude-sonnet-9
    timeout: 600
worktree_root: /srv/wt
`,
  'roles:\n  executor: { vendor: command, argv: [agent, "--prompt={prompt}"] }\n  reviewer: { vendor: demo }\n',
  "roles:\n  executor: { vendor: demo }\n  reviewer: { vendor: demo }\n  security: { vendor: claude, model: claude-x }\n" +
  "limits: { attempts: 3, fix_rounds: 0, plan_rounds: 10 }\nnotify: []\n",
  "roles:\n  executor:\n    vendor: codex\n    env:\n      IS_SANDBOX: '1'\n      EMPTY:\n  reviewer:\n    vendor: demo\n  gate:\n    vendor: demo\n",
];

Deno.test("parseCommonProfile() reads the common profiles as the full parser does", () => {
  for (const text of COMMON) {
    const common = parseCommonProfile(text, FILE);
    assert.notEqual(common, undefined, `not read: ${JSON.stringify(text)}`);
    assert.deepEqual(common, parseProfile(text, FILE), JSON.stringify(text));
  }
});

/** A profile as a tree: a scalar's YAML text, a list of them, or a mapping. */
type Node = string | Node[] | { map: Entries };
type Entries = [string, Node][];
const isMap = (n: Node): n is { map: Entries } => typeof n === "object" && !Array.isArray(n);

const SCALARS = [
  "claude",
  "codex",
  "command",
  "demo",
  "gpt",
  "Claude",
  "10m",
  "90s",
  "1h30m",
  "0s",
  "25h",
  "24h",
  "90",
  "0",
  "1",
  "10",
  "11",
  "20",
  "21",
  "-1",
  "1.5",
  "1e3",
  "0x10",
  "010",
  ".inf",
  "true",
  "false",
  "True",
  "yes",
  "null",
  "~",
  "",
  "efficient",
  "strict",
  "auto",
  "human",
  "/srv/wt",
  "srv/wt",
  "./bin/agent",
  "bin/agent",
  "/opt/agent",
  "agent",
  "--prompt",
  "-x",
  "{prompt}",
  '"{prompt}"',
  "'{prompt}'",
  '"--prompt={prompt}"',
  '""',
  "''",
  '" "',
  '"a\\"b"',
  "'it''s'",
  "npm test",
  "deno task test",
  "npm test; rm -rf /",
  '"npm test && x"',
  '"$(x)"',
  "/bin/bash /srv/t.sh",
  "a#b",
  "a #b",
  "&anchor x",
  "*alias",
  "!!str x",
  "|",
  ">",
  "[]",
  "{}",
  "a: b",
  "claude-opus-5-5",
  "gpt-6.1-sol",
  "  spaced  ",
  "a  b",
  "mcp__x__y",
];
const ENV_KEYS = ["IS_SANDBOX", "DEBUG", "RELAY_X", "1BAD", "a_b", "__proto__", "true", "Null"];
const ROLE_KEYS = ["vendor", "model", "argv", "timeout", "env", "modle", "Vendor"];
const ROLES = ["executor", "reviewer", "security", "gate", "planner"];
const TOP_KEYS = [
  "worktree_root",
  "test_command",
  "safety_mode",
  "merge_policy",
  "handsfree",
  "notify",
  "limits",
  "browser",
  "Roles",
  "unknown",
];

function generateTree(next: () => number): Entries {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const chance = (p: number) => next() < p;
  // Half the trees are made of good values only; in the rest, any choice may go wrong.
  const wild = chance(0.5);
  const bad = (p: number) => wild && chance(p);
  const argv = (): Node => {
    const items: Node[] = [];
    const program = pick(["/opt/agent", "bash", "agent", "/usr/bin/env", '"/opt/my agent"']);
    items.push(bad(0.2) ? pick(SCALARS) : program);
    for (let n = Math.floor(next() * 3); n > 0; n--) {
      items.push(bad(0.2) ? pick(SCALARS) : pick(["--go", "-v", "/tmp/x.sh", '"a b"', "x", "'y'"]));
    }
    if (!bad(0.3)) {
      items.push(pick(['"{prompt}"', "'{prompt}'", '"--p={prompt}"', '"/x/{prompt}"']));
    }
    return items;
  };
  const role = (): Node => {
    const vendor = bad(0.1)
      ? pick(["gpt", "Claude", '"claude"', "1", ""])
      : pick(["claude", "codex", "command", "demo"]);
    const entries: Entries = [["vendor", vendor]];
    const command = vendor === "command";
    if (vendor === "claude" || vendor === "codex" ? chance(0.4) : bad(0.2)) {
      entries.push(["model", bad(0.2) ? pick(SCALARS) : pick(["claude-x", "gpt-6.1-sol", '"m"'])]);
    }
    if (command ? !bad(0.1) : bad(0.1)) entries.push(["argv", bad(0.1) ? pick(SCALARS) : argv()]);
    if (chance(0.6)) {
      entries.push([
        "timeout",
        bad(0.3) ? pick(SCALARS) : pick(["10m", "60s", "1h30m", "600", '"5m"', "'2h'"]),
      ]);
    }
    if (chance(0.4)) {
      const env: Entries = [];
      for (let n = Math.floor(next() * 3); n > 0; n--) {
        const name = bad(0.3) ? pick(ENV_KEYS) : pick(["IS_SANDBOX", "DEBUG", "NAME", "_X"]);
        if (env.some(([k]) => k === name) && !bad(0.5)) continue;
        env.push([name, bad(0.2) ? pick(SCALARS) : pick(['"1"', "1", "true", "x", "'y'", ""])]);
      }
      entries.push(["env", { map: env }]);
    }
    if (bad(0.1)) entries.push([pick(ROLE_KEYS), pick(SCALARS)]);
    if (chance(0.2)) shuffle(entries, next);
    return { map: entries };
  };
  const roles: Entries = [];
  if (!bad(0.1)) roles.push(["executor", role()]);
  if (!bad(0.1)) roles.push(["reviewer", role()]);
  if (chance(0.2)) roles.push([bad(0.5) ? pick(ROLES) : pick(["security", "gate"]), role()]);
  const top: Entries = [];
  if (!bad(0.05)) top.push(["roles", bad(0.05) ? pick(SCALARS) : { map: roles }]);
  for (let n = Math.floor(next() * 4); n > 0; n--) {
    const key = bad(0.2) ? pick(TOP_KEYS) : pick(TOP_KEYS.slice(0, 7));
    if (top.some(([k]) => k === key) && !bad(0.5)) continue;
    let value: Node;
    switch (key) {
      case "worktree_root":
        value = bad(0.3)
          ? pick(SCALARS)
          : pick(["/srv/wt", "/tmp/relay-x/worktrees", '"/srv/w t"']);
        break;
      case "test_command":
        value = bad(0.4) ? pick(SCALARS) : pick(["npm test", "deno task test", '"go test ./..."']);
        break;
      case "safety_mode":
        value = bad(0.3) ? pick(SCALARS) : pick(["efficient", "strict"]);
        break;
      case "merge_policy":
        value = bad(0.3) ? pick(SCALARS) : pick(["auto", "human", '"human"']);
        break;
      case "handsfree":
        value = bad(0.3) ? pick(SCALARS) : pick(["true", "false"]);
        break;
      case "limits": {
        const limits: Entries = [];
        for (let m = Math.floor(next() * 3); m > 0; m--) {
          const name = bad(0.2) ? "rounds" : pick(["attempts", "fix_rounds", "plan_rounds"]);
          if (limits.some(([k]) => k === name) && !bad(0.5)) continue;
          limits.push([
            name,
            bad(0.5) ? pick(["0", "11", "21", "1.5", "x", "-1"]) : pick(["1", "5", "10", ""]),
          ]);
        }
        value = bad(0.1) ? pick(SCALARS) : { map: limits };
        break;
      }
      case "notify":
        value = chance(0.5) ? [] : bad(0.3) ? pick(SCALARS) : [['"notify-send"', "relay"]];
        break;
      case "browser":
        value = { map: [["mcp_config", "/x.json"], ["tools", ["mcp__p__nav"]]] };
        break;
      default:
        value = pick(SCALARS);
    }
    top.push([key, value]);
  }
  if (chance(0.3)) shuffle(top, next);
  return top;
}

function shuffle<T>(list: T[], next: () => number): void {
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [list[i], list[j]] = [list[j]!, list[i]!];
  }
}

/** YAML text for a tree, in a random mix of block and flow styles, spacing and comments. */
function render(top: Entries, next: () => number, tidy = next() < 0.7): string {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const flow = (n: Node): string => {
    if (typeof n === "string") return n;
    const comma = pick([", ", ",", " , "]);
    if (isMap(n)) {
      const inner = n.map.map(([k, v]) => `${k}: ${flow(v)}`).join(comma);
      return n.map.length ? pick([`{ ${inner} }`, `{${inner}}`]) : "{}";
    }
    const items = (n as Node[]).map(flow).join(comma);
    return pick([`[${items}]`, `[ ${items} ]`]);
  };
  const lines: string[] = [];
  const comment = () => pick(["", "", "", "  # a comment", " #x", ...(tidy ? [] : ["#x"])]);
  const block = (entries: Entries, indent: string, step: string) => {
    for (const [key, value] of entries) {
      if (next() < 0.05) lines.push(pick(["", "# note", `${indent}# note`, "   "]));
      if (isMap(value) && value.map.length && next() < 0.7) {
        lines.push(`${indent}${key}:${comment()}`);
        block(value.map, indent + step, pick([step, step, step, " ", "   "]));
      } else {
        const text = flow(value);
        lines.push(
          `${indent}${key}:${text === "" ? "" : pick([" ", " ", "  "]) + text}${comment()}`,
        );
      }
    }
  };
  block(top, "", pick(["  ", "  ", "    ", " "]));
  return lines.join("\n") + pick(["\n", "\n", ""]);
}

/** Text mutations a person (or an agent) might make to a good profile. */
function mutate(text: string, next: () => number): string {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const lines = text.split("\n");
  const at = Math.floor(next() * lines.length);
  switch (Math.floor(next() * 14)) {
    case 0:
      lines.splice(at, 0, lines[at] ?? ""); // a duplicate key (or line)
      break;
    case 1:
      lines[at] = (lines[at] ?? "").replace(/^( *)/, pick(["\t", " ", "$1 ", "$1\t"]));
      break;
    case 2:
      lines.splice(at, 1);
      break;
    case 3:
      lines.splice(
        at,
        0,
        pick(["---", "...", "%YAML 1.2", "- x", "? x", "x", "key: &a v", "k: *a"]),
      );
      break;
    case 4:
      return lines.join("\r\n");
    case 5:
      return "\uFEFF" + text;
    case 6:
      return text + pick(["---\nroles: {}\n", "...\n", "\n---\n"]);
    case 7:
      lines[at] = (lines[at] ?? "").replace(
        /: (\S+)/,
        (_, v) => `: ${pick(["&a ", "!!str ", "*a"])}${v}`,
      );
      break;
    case 8:
      lines[at] = (lines[at] ?? "").replace(/\]/, pick([",]", ", ]", "", "]]"]));
      break;
    case 9:
      lines[at] = (lines[at] ?? "").replace(/"/, pick(["'", "", '\\"', '"\\t']));
      break;
    case 10:
      lines[at] = (lines[at] ?? "").replace(/: /, pick([":", " : ", ":  ", ": # "]));
      break;
    case 11:
      lines[at] = (lines[at] ?? "") + pick(["  ", " # c", "#c", " x", ",", "\t"]);
      break;
    case 12:
      lines[at] = (lines[at] ?? "").replace(/[a-z_]+:/, pick(["roles:", "env:", "vendor:", "x:"]));
      break;
    default:
      lines[at] = (lines[at] ?? "").replace(/(\S+)$/, pick(SCALARS));
  }
  return lines.join("\n");
}

Deno.test("parseCommonProfile() never answers differently from the full parser", () => {
  const next = random(7);
  let read = 0;
  let passed = 0;
  const total = 6000;
  for (let i = 0; i < total; i++) {
    let text = render(generateTree(next), next);
    if (next() < 0.4) text = mutate(text, next);
    if (next() < 0.1) text = mutate(text, next);
    const common = parseCommonProfile(text, FILE);
    const slow = full(text);
    if ("profile" in slow) passed++;
    if (common === undefined) continue;
    read++;
    assert.ok("profile" in slow, `read a profile the full parser refuses: ${JSON.stringify(text)}`);
    assert.deepEqual(common, slow.profile, JSON.stringify(text));
  }
  // Both ways are exercised: many profiles are read here, many bad ones refused by the full
  // parser, and some good ones left to it.
  assert.ok(read > 800, `only ${read} of ${total} profiles read`);
  assert.ok(total - passed > 1500, `only ${total - passed} bad profiles`);
  assert.ok(passed - read > 100, `only ${passed - read} good profiles left to the full parser`);
});

Deno.test("parseCommonProfile() answers the common profile's mutations only as the full parser does", () => {
  const next = random(11);
  let read = 0;
  for (const base of COMMON) {
    for (let i = 0; i < 300; i++) {
      let text = mutate(base, next);
      if (next() < 0.3) text = mutate(text, next);
      const common = parseCommonProfile(text, FILE);
      if (common === undefined) continue;
      read++;
      const slow = full(text);
      assert.ok(
        "profile" in slow,
        `read a profile the full parser refuses: ${JSON.stringify(text)}`,
      );
      assert.deepEqual(common, slow.profile, JSON.stringify(text));
    }
  }
  assert.ok(read > 500, `only ${read} mutated profiles read`);
});

Deno.test("loadProfile() still explains a bad profile by line and key (the full parser answers)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-profile-load-" });
  try {
    const file = join(dir, "profile.yaml");
    const roles = "roles:\n  executor: { vendor: claude }\n  reviewer: { vendor: codex }\n";
    const cases: [string, RegExp][] = [
      ["roles:\n  executor: { vendor: claude }\n", /roles\.reviewer/],
      [
        "roles:\n  executor:\n    vendor: gpt\n  reviewer: { vendor: demo }\n",
        /:3 \(key "roles\.executor\.vendor"\): Cannot use "gpt"/,
      ],
      [roles + "worktree_root: srv/wt\n", /worktree_root.*absolute/s],
      [roles + "handsfree: yes\n", /handsfree/],
      [roles + "roles: {}\n", /:4: .*unique/],
      [
        "roles:\n  executor:\n    vendor: command\n    argv: [/bin/agent, --go]\n  reviewer: { vendor: demo }\n",
        /:4 \(key "roles\.executor\.argv"\): .*prompt would never reach the program/,
      ],
    ];
    for (const [text, named] of cases) {
      await Deno.writeTextFile(file, text);
      assert.equal(parseCommonProfile(text, file), undefined, text);
      await assert.rejects(loadProfile(file), (err: unknown) => {
        assert.ok(err instanceof InputError, String(err));
        assert.match(err.message, named);
        return true;
      });
    }
    await Deno.writeTextFile(file, sceneProfile());
    assert.deepEqual(await loadProfile(file), parseProfile(sceneProfile(), file));
    // A good profile the light reader leaves to the full parser loads all the same.
    const notify = roles + 'notify:\n  - ["notify-send", "relay"]\n';
    await Deno.writeTextFile(file, notify);
    assert.equal(parseCommonProfile(notify, file), undefined);
    assert.deepEqual((await loadProfile(file)).notify, [["notify-send", "relay"]]);
    await Deno.remove(file);
    await assert.rejects(loadProfile(file), /the file does not exist/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
