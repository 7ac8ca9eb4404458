/**
 * Loading the operator profile, light: the Profile shape, its constants and
 * defaults, where the file lives, and a reader for the common profile (what
 * `relay init` writes, a `command` role with an argv list, a few plain
 * settings) that needs neither yaml nor zod — the two cost a tick ~80 ms to
 * load, more than the tick's own work on a small repository. Anything the
 * reader is not sure of (a key it does not know, a value or a piece of syntax
 * outside its small grammar, one the schema would refuse) goes to the full
 * parser in profile.ts, which alone explains a bad profile (exit 2, naming the
 * line and key); so the quick reader only ever answers what the full one would
 * answer. tests/config_profile_load.test.ts holds the two to that.
 */
import { isAbsolute, join, resolve } from "../path.ts";
import { InputError, UsageError } from "../errors.ts";
import { parseDuration } from "./duration.ts";
import { testCommandProblem } from "./test_command.ts";

export type RoleName = "executor" | "reviewer";
export type Vendor = "claude" | "codex" | "command" | "demo";

export interface RoleSpec {
  vendor: Vendor;
  /** Always set for claude and codex (defaulted); never for command or demo. */
  model?: string;
  /** Only for vendor "command": the program and its arguments, "{prompt}" replaced. */
  argv?: string[];
  timeoutMs: number;
  /** Extra environment for the agent process. */
  env: Record<string, string>;
}

export interface Profile {
  /** The file this profile was read from. */
  path: string;
  /** `security` is the adversarial reviewer-side role (`gate` in profiles of the paired-session workflow). */
  roles: { executor: RoleSpec; reviewer: RoleSpec; security: RoleSpec };
  /**
   * The security role was not in the profile: it is the executor's vendor and model
   * (the reviewer's program when the executor is a `command`).
   */
  securityDefaulted: boolean;
  /** Where task worktrees go; absent means a sibling folder of the repo. */
  worktreeRoot?: string;
  /** The project's test run, one exact command (lib/config/test_command.ts). */
  testCommand?: string;
  safetyMode: "efficient" | "strict";
  /** Decides over the repo config's `merge` when set. */
  mergePolicy?: "auto" | "human";
  /** Nobody answers: every point that would wait for a person is a HOLD with the question. */
  handsfree: boolean;
  /** Browser tools for reviewer-side claude turns: an MCP config and the tools it may use. */
  browser?: BrowserTools;
  /** Notifiers: argv commands run with each state change as JSON on stdin (lib/loop/notify.ts). */
  notify: string[][];
  /** Keys a command-line flag set for this one command (withFlags): their source is "flag". */
  flagged?: (keyof ProfileFlags)[];
  /** The most the repo config may ask for. */
  limits: ProfileLimits;
}

/** What `relay poll` / `relay review` flags may decide for that one command, over the profile. */
export interface ProfileFlags {
  mergePolicy?: "auto" | "human";
  handsfree?: boolean;
  safetyMode?: "efficient" | "strict";
}

/** The profile with this command's flags over it, each flagged so it says where it came from. */
export function withFlags(profile: Profile, flags: ProfileFlags | undefined): Profile {
  const set = (Object.keys(flags ?? {}) as (keyof ProfileFlags)[])
    .filter((k) => flags![k] !== undefined);
  if (!set.length) return profile;
  return { ...profile, ...flags, flagged: set };
}

/** An MCP server config (a JSON file) for a browser, and the tool names a reviewer may call. */
export interface BrowserTools {
  mcpConfig: string;
  tools: string[];
}

/** Upper bounds on what `.relay/config.yaml` may set. */
export interface ProfileLimits {
  attempts: number;
  fixRounds: number;
  planRounds: number;
}

export const DEFAULT_LIMITS: ProfileLimits = { attempts: 10, fixRounds: 20, planRounds: 5 };

export const DEFAULT_MODELS = { claude: "claude-opus-5-5", codex: "gpt-6.1-sol" } as const;
export const DEFAULT_ROLE_TIMEOUT_MS: Record<RoleName, number> = {
  executor: 60 * 60_000,
  reviewer: 30 * 60_000,
};
/** The placeholder a `command` role's argv must contain, as an element or inside one. */
export const PROMPT_PLACEHOLDER = "{prompt}";
/** Where the profile lives by default, for messages. */
export const DEFAULT_PROFILE_HINT =
  "$XDG_CONFIG_HOME/relay/profile.yaml (default ~/.config/relay/profile.yaml)";
/** Names a role's `env` may set (RELAY_* aside). */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

interface EnvLike {
  get(name: string): string | undefined;
}

/** The profile's path: the flag, else $RELAY_PROFILE, else the XDG location, else ~/.config. */
export function profilePath(flag?: string, env: EnvLike = Deno.env): string {
  const set = (name: string) => {
    const v = env.get(name);
    return v === undefined || v === "" ? undefined : v;
  };
  if (flag !== undefined && flag !== "") return resolve(flag);
  const fromEnv = set("RELAY_PROFILE");
  if (fromEnv !== undefined) return resolve(fromEnv);
  const xdg = set("XDG_CONFIG_HOME");
  // The XDG spec says relative values are invalid and must be ignored.
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, "relay", "profile.yaml");
  const home = set("HOME");
  if (home === undefined) {
    throw new UsageError(
      "Cannot locate the operator profile: neither XDG_CONFIG_HOME nor HOME is set; pass --profile <path> or set RELAY_PROFILE",
    );
  }
  return join(home, ".config", "relay", "profile.yaml");
}

/** A role as the schema reads it (its own keys; `timeout` already in milliseconds). */
export interface RoleSettings {
  vendor: Vendor;
  model?: string | undefined;
  argv?: string[] | undefined;
  timeout?: number | undefined;
  env?: Record<string, string> | undefined;
}

/** The file as the schema reads it: its own (snake_case) keys, every default filled in. */
export interface ProfileSettings {
  roles: {
    executor: RoleSettings;
    reviewer: RoleSettings;
    security?: RoleSettings | undefined;
    gate?: RoleSettings | undefined;
  };
  worktree_root?: string | undefined;
  test_command?: string | undefined;
  safety_mode: "efficient" | "strict";
  merge_policy?: "auto" | "human" | undefined;
  handsfree: boolean;
  notify: string[][];
  browser?: { mcp_config: string; tools: string[] } | undefined;
  limits?: {
    attempts?: number | undefined;
    fix_rounds?: number | undefined;
    plan_rounds?: number | undefined;
  } | undefined;
}

/** The profile as relay uses it, from the settings the schema (or the light reader) read. */
export function settingsToProfile(p: ProfileSettings, file: string): Profile {
  const executor = toRoleSpec("executor", p.roles.executor);
  const reviewer = toRoleSpec("reviewer", p.roles.reviewer);
  const security = p.roles.security ?? p.roles.gate;
  const profile: Profile = {
    path: file,
    roles: {
      executor,
      reviewer,
      // Unset, it is the executor's vendor and model, with a reviewer's time limit: run with
      // the reviewer's read-only preset. A `command` has no read-only mode relay can impose
      // (the executor's script would write, and every security turn would be void): there
      // it is the reviewer's program.
      security: security === undefined
        ? executor.vendor === "command"
          ? structuredClone(reviewer)
          : { ...structuredClone(executor), timeoutMs: DEFAULT_ROLE_TIMEOUT_MS.reviewer }
        : toRoleSpec("reviewer", security),
    },
    securityDefaulted: security === undefined,
    safetyMode: p.safety_mode,
    handsfree: p.handsfree,
    notify: p.notify,
    ...(p.browser ? { browser: { mcpConfig: p.browser.mcp_config, tools: p.browser.tools } } : {}),
    limits: {
      attempts: p.limits?.attempts ?? DEFAULT_LIMITS.attempts,
      fixRounds: p.limits?.fix_rounds ?? DEFAULT_LIMITS.fixRounds,
      planRounds: p.limits?.plan_rounds ?? DEFAULT_LIMITS.planRounds,
    },
  };
  if (p.worktree_root !== undefined) profile.worktreeRoot = p.worktree_root;
  if (p.test_command !== undefined) profile.testCommand = p.test_command.trim();
  if (p.merge_policy !== undefined) profile.mergePolicy = p.merge_policy;
  return profile;
}

function toRoleSpec(role: RoleName, r: RoleSettings): RoleSpec {
  const spec: RoleSpec = {
    vendor: r.vendor,
    timeoutMs: r.timeout ?? DEFAULT_ROLE_TIMEOUT_MS[role],
    env: { ...(r.env ?? {}) },
  };
  if (r.vendor === "claude" || r.vendor === "codex") {
    spec.model = r.model ?? DEFAULT_MODELS[r.vendor];
  }
  if (r.argv !== undefined) spec.argv = [...r.argv];
  return spec;
}

const MINIMAL_EXAMPLE = `roles:
    executor: { vendor: claude }
    reviewer: { vendor: codex }`;

/**
 * Reads and validates the profile at `path`; a missing file says how to create one. The
 * common profile is read here; any other goes to the full parser (profile.ts), which
 * explains a bad one.
 */
export async function loadProfile(path: string): Promise<Profile> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      throw new InputError(
        { file: path },
        "Cannot read the operator profile: the file does not exist",
        `run \`relay init\`, or create it (or pass --profile <path>) with at least:\n  ${MINIMAL_EXAMPLE}`,
      );
    }
    throw err;
  }
  const common = parseCommonProfile(text, path);
  if (common !== undefined) return common;
  const { parseProfile } = await import("./profile.ts");
  return parseProfile(text, path);
}

// ------------------------------------------------------- the common profile

/**
 * A value of the small grammar, as YAML 1.2 (yaml's default, core schema) reads it. Mappings
 * are Maps (in the file's order) so a duplicate key is seen; null is `key:` with nothing after.
 */
type Value = string | number | boolean | null | Value[] | Mapping;
type Mapping = Map<string, Value>;

/** `key:` then the rest of the line; keys are plain words, indented by spaces only. */
const LINE = /^( *)([A-Za-z_][A-Za-z0-9_]*):(?:( +)(.*))?$/;
const BLANK = /^ *(?:#.*)?$/;
/** Words YAML reads as null or a boolean: as a key or a value, left to the full parser. */
const RESERVED = /^(?:[Nn]ull|NULL|[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
/**
 * A plain (unquoted) scalar: words of path-like characters, one space between words. It never
 * holds a YAML indicator (`: `, ` #`, `,`, brackets, quotes, `&`, `*`, `!`, `|`, `>` …), and it
 * starts with a letter, a digit, `_`, `/` or `.`, or with `-`/`--` before a letter.
 */
const PLAIN = /^(?:[A-Za-z0-9_/.]|--?[A-Za-z])[A-Za-z0-9_./=+@%-]*(?: [A-Za-z0-9_./=+@%-]+)*/;
const DURATION_WORD = /^[0-9]+[hms](?:[0-9]+[hms])*$/;
const WHOLE = /^(?:0|[1-9][0-9]{0,8})$/;
const KEY = /^[A-Za-z_][A-Za-z0-9_]*/;

/** A plain scalar's value as YAML 1.2 reads it; undefined for a word YAML might read otherwise. */
function plainValue(token: string): Value | undefined {
  if (token === "true" || token === "false") return token === "true";
  if (RESERVED.test(token)) return undefined;
  if (WHOLE.test(token)) return Number(token);
  if (DURATION_WORD.test(token)) return token;
  // Anything else that starts like a number (a float, 0x1f, 1e3, .5, .inf …): the full parser.
  if (/^[0-9.]/.test(token)) return undefined;
  return token;
}

/** A small cursor over one line's value: flow collections and scalars, nothing that spans lines. */
class Flow {
  i = 0;
  constructor(readonly s: string) {}

  spaces(): void {
    while (this.s[this.i] === " ") this.i++;
  }

  /** A value at the cursor. Undefined when outside the grammar. */
  value(): Value | undefined {
    const c = this.s[this.i];
    if (c === "[") return this.list();
    if (c === "{") return this.map();
    if (c === '"' || c === "'") return this.quoted(c);
    const m = PLAIN.exec(this.s.slice(this.i));
    if (!m) return undefined;
    this.i += m[0].length;
    return plainValue(m[0]);
  }

  /** `"…"` without escapes, or `'…'` without a doubled quote: the text as it stands. */
  quoted(q: string): string | undefined {
    const end = this.s.indexOf(q, this.i + 1);
    if (end < 0) return undefined;
    const text = this.s.slice(this.i + 1, end);
    if (q === '"' && text.includes("\\")) return undefined;
    this.i = end + 1;
    // `'a''b'` is one scalar with a quote in it: not read here.
    if (q === "'" && this.s[this.i] === "'") return undefined;
    return text;
  }

  list(): Value[] | undefined {
    this.i++; // [
    const items: Value[] = [];
    this.spaces();
    if (this.s[this.i] === "]") {
      this.i++;
      return items;
    }
    for (;;) {
      this.spaces();
      const v = this.value();
      if (v === undefined) return undefined;
      items.push(v);
      this.spaces();
      const c = this.s[this.i++];
      if (c === "]") return items;
      if (c !== ",") return undefined;
      this.spaces();
      if (this.s[this.i] === "]") return undefined; // a trailing comma: the full parser
    }
  }

  map(): Mapping | undefined {
    this.i++; // {
    const map: Mapping = new Map();
    this.spaces();
    if (this.s[this.i] === "}") {
      this.i++;
      return map;
    }
    for (;;) {
      this.spaces();
      const k = KEY.exec(this.s.slice(this.i));
      if (!k || RESERVED.test(k[0])) return undefined;
      this.i += k[0].length;
      // `key: value` only: `key:value`, `key :`, `key` alone are left to the full parser.
      if (this.s[this.i] !== ":" || this.s[this.i + 1] !== " ") return undefined;
      this.i += 2;
      this.spaces();
      const v = this.value();
      if (v === undefined || map.has(k[0])) return undefined;
      map.set(k[0], v);
      this.spaces();
      const c = this.s[this.i++];
      if (c === "}") return map;
      if (c !== ",") return undefined;
      this.spaces();
      if (this.s[this.i] === "}") return undefined;
    }
  }
}

/** The value after `key: ` on a line, up to an optional ` # comment`; undefined when unsure. */
function lineValue(rest: string): Value | undefined {
  const f = new Flow(rest);
  const v = f.value();
  if (v === undefined) return undefined;
  const tail = rest.slice(f.i);
  // Only spaces, or a comment after at least one space.
  if (!/^(?: *| +#.*)$/.test(tail)) return undefined;
  return v;
}

interface Line {
  indent: number;
  key: string;
  /** The value on the line; null when there is none (a mapping may follow). */
  value: Value | null;
  /** The line has no value after its key. */
  open: boolean;
}

/** The text's content lines; undefined when one is outside the grammar. */
function contentLines(text: string): Line[] | undefined {
  // Tabs, CR, a BOM, anything beyond printable ASCII: the full parser.
  if (/[^\n\x20-\x7e]/.test(text)) return undefined;
  const lines: Line[] = [];
  for (const raw of text.split("\n")) {
    if (BLANK.test(raw)) continue;
    const m = LINE.exec(raw);
    if (!m) return undefined;
    const [, spaces, key, gap, rest] = m as unknown as [string, string, string, string?, string?];
    if (RESERVED.test(key)) return undefined;
    if (gap === undefined || rest === undefined || /^(?:#.*)?$/.test(rest)) {
      // `key:` or `key:   # comment`: a mapping follows, or the key is null.
      lines.push({ indent: spaces.length, key, value: null, open: true });
      continue;
    }
    const value = lineValue(rest);
    if (value === undefined) return undefined;
    lines.push({ indent: spaces.length, key, value, open: false });
  }
  return lines;
}

/** The lines as nested block mappings; undefined when the indentation is not plain nesting. */
function blockMappings(lines: Line[]): Mapping | undefined {
  let at = 0;
  function mapping(indent: number): Mapping | undefined {
    const map: Mapping = new Map();
    while (at < lines.length) {
      const line = lines[at]!;
      if (line.indent < indent) break;
      if (line.indent > indent) return undefined;
      at++;
      if (map.has(line.key)) return undefined; // yaml refuses duplicate keys
      if (!line.open) {
        map.set(line.key, line.value);
        continue;
      }
      const next = lines[at];
      if (next === undefined || next.indent <= indent) {
        map.set(line.key, null);
        continue;
      }
      const child = mapping(next.indent);
      if (child === undefined) return undefined;
      map.set(line.key, child);
    }
    return map;
  }
  if (lines.length > 0 && lines[0]!.indent !== 0) return undefined;
  const top = mapping(0);
  return top !== undefined && at === lines.length ? top : undefined;
}

// ------------------------------------------------ the schema, for what it reads

const isMapping = (v: Value | undefined): v is Mapping => v instanceof Map;

/** The mapping without null values (dropNullKeys: `key:` with nothing means "the default"). */
function present(m: Mapping): Map<string, Exclude<Value, null>> {
  const out = new Map<string, Exclude<Value, null>>();
  for (const [k, v] of m) if (v !== null) out.set(k, v);
  return out;
}

const VENDORS: readonly string[] = ["claude", "codex", "command", "demo"];

/** A role as the schema would read it; undefined when the schema would refuse it (or unsure). */
function role(v: Value): RoleSettings | undefined {
  if (!isMapping(v)) return undefined;
  const m = present(v);
  const vendor = m.get("vendor");
  if (typeof vendor !== "string" || !VENDORS.includes(vendor)) return undefined;
  const r: RoleSettings = { vendor: vendor as Vendor };
  for (const [key, value] of m) {
    switch (key) {
      case "vendor":
        break;
      case "model": {
        if (typeof value !== "string" || value.trim() === "") return undefined;
        r.model = value.trim();
        break;
      }
      case "argv": {
        if (!Array.isArray(value) || value.length === 0) return undefined;
        if (!value.every((a) => typeof a === "string")) return undefined;
        r.argv = value as string[];
        break;
      }
      case "timeout": {
        if (typeof value !== "number" && typeof value !== "string") return undefined;
        try {
          r.timeout = parseDuration(value);
        } catch {
          return undefined;
        }
        break;
      }
      case "env": {
        if (!isMapping(value)) return undefined;
        const env: Record<string, string> = {};
        for (const [name, x] of present(value)) {
          if (!ENV_NAME.test(name) || name.startsWith("RELAY_") || name === "__proto__") {
            return undefined;
          }
          if (typeof x !== "string" && typeof x !== "number" && typeof x !== "boolean") {
            return undefined;
          }
          env[name] = String(x);
        }
        r.env = env;
        break;
      }
      default:
        return undefined; // an unknown key: the full parser names it
    }
  }
  if (vendor === "command") {
    const argv = r.argv;
    if (argv === undefined || r.model !== undefined) return undefined;
    const program = argv[0]!;
    if (program.trim() === "") return undefined;
    if (program.includes("/") && !isAbsolute(program)) return undefined;
    if (!argv.some((a) => a.includes(PROMPT_PLACEHOLDER))) return undefined;
  } else {
    if (r.argv !== undefined) return undefined;
    if (vendor === "demo" && r.model !== undefined) return undefined;
  }
  return r;
}

function bounded(v: Value, min: number, max: number): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= min && v <= max;
}

/**
 * The common profile read without yaml or zod: the same Profile `parseProfile(text, file)`
 * gives, or undefined whenever the text is outside the small grammar, or holds a value the
 * full parser would refuse or that this reader does not handle (then the full parser
 * answers, and explains).
 */
export function parseCommonProfile(text: string, file: string): Profile | undefined {
  const lines = contentLines(text);
  if (lines === undefined) return undefined;
  const doc = blockMappings(lines);
  if (doc === undefined) return undefined;
  const top = present(doc);
  const rolesValue = top.get("roles");
  if (!isMapping(rolesValue)) return undefined;
  const roles: Partial<ProfileSettings["roles"]> = {};
  for (const [name, value] of present(rolesValue)) {
    if (name !== "executor" && name !== "reviewer" && name !== "security" && name !== "gate") {
      return undefined;
    }
    const r = role(value);
    if (r === undefined) return undefined;
    roles[name] = r;
  }
  if (roles.executor === undefined || roles.reviewer === undefined) return undefined;
  if (roles.security !== undefined && roles.gate !== undefined) return undefined;
  const s: ProfileSettings = {
    roles: roles as ProfileSettings["roles"],
    safety_mode: "efficient",
    handsfree: false,
    notify: [],
  };
  for (const [key, v] of top) {
    switch (key) {
      case "roles":
        break;
      case "worktree_root":
        if (typeof v !== "string" || !isAbsolute(v)) return undefined;
        s.worktree_root = v;
        break;
      case "test_command":
        if (typeof v !== "string" || testCommandProblem(v) !== null) return undefined;
        s.test_command = v;
        break;
      case "safety_mode":
        if (v !== "efficient" && v !== "strict") return undefined;
        s.safety_mode = v;
        break;
      case "merge_policy":
        if (v !== "auto" && v !== "human") return undefined;
        s.merge_policy = v;
        break;
      case "handsfree":
        if (typeof v !== "boolean") return undefined;
        s.handsfree = v;
        break;
      case "notify":
        // Only the empty list; notifiers are the full parser's.
        if (!Array.isArray(v) || v.length !== 0) return undefined;
        break;
      case "limits": {
        if (!isMapping(v)) return undefined;
        const limits: NonNullable<ProfileSettings["limits"]> = {};
        for (const [k, n] of present(v)) {
          if (k === "attempts" && bounded(n, 1, 10)) limits.attempts = n;
          else if (k === "fix_rounds" && bounded(n, 0, 20)) limits.fix_rounds = n;
          else if (k === "plan_rounds" && bounded(n, 0, 10)) limits.plan_rounds = n;
          else return undefined;
        }
        s.limits = limits;
        break;
      }
      default:
        return undefined; // browser, an unknown key …: the full parser
    }
  }
  return settingsToProfile(s, file);
}
