/**
 * lib/cli/options.ts parses options as node:util's parseArgs does (strict, positionals allowed),
 * without loading a `node:` module on relay's start-up path. Proven differentially: every argv
 * below goes through both, on relay's option tables and one that has what relay's do not yet use
 * (a short string option, a multiple boolean); results must match, or both must throw with the
 * same message (node's, less its "To specify a positional…" tail, which relay never printed).
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import { UsageError } from "../lib/errors.ts";
import { parseCommand, PROFILE_FLAG_OPTIONS } from "../lib/cli/args.ts";
import { type OptionTable, type OptionValues, parseOptions } from "../lib/cli/options.ts";
import { ACCEPT_OPTIONS } from "../lib/cli/accept.ts";
import { ROOT } from "./helpers/scene.ts";
import { staticSpecifiers } from "./helpers/static_imports.ts";

/** lib/cli/poll.ts's table. */
const POLL = {
  json: { type: "boolean" },
  quiet: { type: "boolean", short: "q" },
  ...PROFILE_FLAG_OPTIONS,
} as const;

/** lib/cli/guard.ts's table (not exported there). */
const GUARD = {
  bare: { type: "string" },
  person: { type: "string", multiple: true },
  main: { type: "string" },
} as const;

/** lib/cli/accept.ts's table. */
const ACCEPT = ACCEPT_OPTIONS;

/** What no relay table has yet: a short string option, a multiple boolean, a one-letter long name. */
const SHORTS = {
  file: { type: "string", short: "f" },
  verbose: { type: "boolean", short: "v", multiple: true },
  x: { type: "boolean" },
} as const;

/** plan, note, unpause: positionals only. */
const NONE = {} as const;

type Case = {
  table: OptionTable;
  argv: string[];
  /** Set when parseArgs rejects the argv: text our message must hold (the option as written). */
  throws?: string;
};

const CASES: Case[] = [
  { table: POLL, argv: [] },
  { table: POLL, argv: ["--json"] },
  { table: POLL, argv: ["-q"] },
  { table: POLL, argv: ["-qq"] },
  { table: POLL, argv: ["-q", "--quiet", "--json", "--handsfree"] },
  { table: POLL, argv: ["--merge-policy", "auto", "--safety-mode", "strict"] },
  { table: POLL, argv: ["--merge-policy=human"] },
  { table: POLL, argv: ["--merge-policy="] },
  { table: POLL, argv: ["--merge-policy=a=b="] },
  { table: POLL, argv: ["--merge-policy", "auto", "--merge-policy=human"] },
  { table: POLL, argv: ["--merge-policy", "-"] },
  { table: POLL, argv: ["--merge-policy", ""] },
  { table: POLL, argv: ["--merge-policy=-1"] },
  { table: POLL, argv: ["--merge-policy=--json"] },
  { table: POLL, argv: ["--merge-policy"], throws: "--merge-policy" },
  { table: POLL, argv: ["--json", "--merge-policy"], throws: "--merge-policy" },
  { table: POLL, argv: ["--merge-policy", "--json"], throws: "--merge-policy" },
  { table: POLL, argv: ["--merge-policy", "-q"], throws: "--merge-policy" },
  { table: POLL, argv: ["--merge-policy", "-1"], throws: "--merge-policy" },
  { table: POLL, argv: ["--merge-policy", "--"], throws: "--merge-policy" },
  { table: POLL, argv: ["--json=yes"], throws: "--json" },
  { table: POLL, argv: ["--json="], throws: "--json" },
  { table: POLL, argv: ["--quiet=1"], throws: "-q, --quiet" },
  { table: POLL, argv: ["-q=1"], throws: "-=" },
  { table: POLL, argv: ["--frobnicate"], throws: "--frobnicate" },
  { table: POLL, argv: ["--Json"], throws: "--Json" },
  { table: POLL, argv: ["-x"], throws: "-x" },
  { table: POLL, argv: ["-qx"], throws: "-x" },
  { table: POLL, argv: ["-5"], throws: "-5" },
  { table: POLL, argv: ["-12"], throws: "-1" },
  { table: POLL, argv: ["--no-json"], throws: "--no-json" },
  { table: POLL, argv: ["---json"], throws: "---json" },
  { table: POLL, argv: ["--=x"], throws: "--=x" },
  { table: POLL, argv: ["--=a=b"], throws: "--" }, // split at the first "=": option ""
  { table: POLL, argv: ["--__proto__"], throws: "--__proto__" },
  { table: POLL, argv: ["--constructor"], throws: "--constructor" },
  { table: POLL, argv: ["--toString=x"], throws: "--toString" },
  { table: POLL, argv: ["--", "--json", "-q"] },
  { table: POLL, argv: ["--json", "--", "--", "x"] },
  { table: POLL, argv: ["-"] },
  { table: POLL, argv: [""] },
  { table: POLL, argv: ["a", "--json", "b", "-q", "c"] },
  { table: GUARD, argv: ["install", "--bare", "/srv/x.git", "--person", "ann", "--person=bob"] },
  { table: GUARD, argv: ["--person", "ann"] },
  { table: GUARD, argv: ["--person=", "--person", "x"] },
  { table: GUARD, argv: ["--main", "trunk", "--main=dev"] },
  { table: GUARD, argv: ["print", "--", "--person", "x"] },
  { table: GUARD, argv: ["--person"], throws: "--person" },
  { table: GUARD, argv: ["--person", "--main", "x"], throws: "--person" },
  { table: GUARD, argv: ["-p", "ann"], throws: "-p" },
  { table: ACCEPT, argv: ["1", "--intent-only", "--bogus"], throws: "--bogus" },
  { table: ACCEPT, argv: ["1", "--expect", "abc123", "--json"] },
  { table: ACCEPT, argv: ["--reason", "why -- not", "2"] },
  { table: ACCEPT, argv: ["--text=--weird", "3"] },
  { table: ACCEPT, argv: ["3", "--override-rejection=true"], throws: "--override-rejection" },
  { table: SHORTS, argv: ["-f", "a.txt"] },
  { table: SHORTS, argv: ["-fa.txt"] },
  { table: SHORTS, argv: ["-f=a"] },
  { table: SHORTS, argv: ["-fv"] },
  { table: SHORTS, argv: ["-vvf", "a"] },
  { table: SHORTS, argv: ["-vfa", "b"] },
  { table: SHORTS, argv: ["-v", "--verbose", "-v"] },
  { table: SHORTS, argv: ["-x", "-vx"] },
  { table: SHORTS, argv: ["--file", "-"] },
  { table: SHORTS, argv: ["-f", "-", "--file=-v"] },
  { table: SHORTS, argv: ["-f"], throws: "-f, --file" },
  { table: SHORTS, argv: ["-vf"], throws: "-f, --file" },
  { table: SHORTS, argv: ["-f", "-v"], throws: "-f" },
  { table: SHORTS, argv: ["-f", "--"], throws: "-f" },
  { table: SHORTS, argv: ["--verbose=1"], throws: "-v, --verbose" },
  { table: SHORTS, argv: ["-vz"], throws: "-z" },
  { table: NONE, argv: ["1"] },
  { table: NONE, argv: ["1", "two words", "3"] },
  { table: NONE, argv: ["--", "-h", "--json"] },
  { table: NONE, argv: ["--json"], throws: "--json" },
  { table: NONE, argv: ["-h"], throws: "-h" },
  { table: NONE, argv: ["-1"], throws: "-1" },
];

type Outcome = { values: Record<string, unknown>; positionals: string[] } | { error: string };

function outcome(parse: () => { values: object; positionals: string[] }): Outcome {
  try {
    const { values, positionals } = parse();
    return { values: values as Record<string, unknown>, positionals };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

Deno.test(`parseOptions() agrees with node:util's parseArgs on ${CASES.length} argvs`, () => {
  assert.ok(CASES.length >= 40);
  for (const { table, argv, throws } of CASES) {
    const what = `${JSON.stringify(argv)} over {${Object.keys(table).join(", ")}}`;
    const node = outcome(() =>
      parseArgs({
        args: argv,
        options: table as ParseArgsOptionsConfig,
        strict: true,
        allowPositionals: true,
      })
    );
    const ours = outcome(() => parseOptions(argv, table));
    if ("error" in node) {
      assert.ok(throws !== undefined, `${what}: parseArgs threw ${node.error}; mark the case`);
      assert.ok(
        "error" in ours,
        `${what}: parseArgs threw, parseOptions gave ${Deno.inspect(ours)}`,
      );
      assert.equal(ours.error, node.error.replace(/\. To specify a positional.*$/s, ""), what);
      assert.ok(ours.error.includes(`'${throws}`), `${what}: ${ours.error} names no ${throws}`);
    } else {
      assert.equal(throws, undefined, `${what}: parseArgs accepted it`);
      // deepStrictEqual compares prototypes too: both values objects have none.
      assert.deepStrictEqual(ours, node, what);
    }
  }
});

Deno.test("parseOptions() messages name the option and say what is wrong", () => {
  const message = (argv: string[], table: OptionTable) => {
    try {
      parseOptions(argv, table);
    } catch (err) {
      return (err as Error).message;
    }
    assert.fail(`${JSON.stringify(argv)} was accepted`);
  };
  assert.equal(message(["--bogus"], POLL), "Unknown option '--bogus'");
  assert.equal(message(["-z"], POLL), "Unknown option '-z'");
  assert.equal(
    message(["--merge-policy"], POLL),
    "Option '--merge-policy <value>' argument missing",
  );
  assert.equal(message(["--json=1"], POLL), "Option '--json' does not take an argument");
  assert.equal(message(["-f"], SHORTS), "Option '-f, --file <value>' argument missing");
  assert.match(message(["--reason", "--json"], ACCEPT), /^Option '--reason' argument is ambiguous/);
  assert.match(message(["--reason", "-x"], ACCEPT), /use '--reason=-XYZ'\.$/);
  assert.match(message(["-f", "-x"], SHORTS), /use '--file=-XYZ' or '-f-XYZ'\.$/);
});

Deno.test("parseCommand() turns a parse error into a usage error for its command", () => {
  for (
    const [argv, says] of [[["--bogus"], "Unknown option '--bogus'"], [["--json=no"], "--json"]]
  ) {
    assert.throws(
      () =>
        parseCommand("status", argv as string[], { json: { type: "boolean" } }, { min: 0, max: 0 }),
      (err: unknown) =>
        err instanceof UsageError && err.command === "status" &&
        err.message.includes(says as string) && !err.message.includes("To specify"),
    );
  }
  const { values, positionals } = parseCommand("guard", ["print", "--person", "a"], GUARD, {
    min: 1,
    max: 1,
  });
  assert.deepEqual({ ...values }, { person: ["a"] });
  assert.deepEqual(positionals, ["print"]);
});

/** True when A and B are the same type (not merely assignable either way). */
type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends (<X>() => X extends B ? 1 : 2) ? true
  : false;
function nodeParse<T extends ParseArgsOptionsConfig>(args: string[], options: T) {
  return parseArgs({ args, options, strict: true, allowPositionals: true });
}
type NodeValues<T extends ParseArgsOptionsConfig> = ReturnType<typeof nodeParse<T>>["values"];

Deno.test("parseOptions()'s values have parseArgs's types (checked by deno check)", () => {
  const same: [
    Equal<OptionValues<typeof POLL>, NodeValues<typeof POLL>>,
    Equal<OptionValues<typeof GUARD>, NodeValues<typeof GUARD>>,
    Equal<OptionValues<typeof ACCEPT>, NodeValues<typeof ACCEPT>>,
    Equal<OptionValues<typeof SHORTS>, NodeValues<typeof SHORTS>>,
    Equal<OptionValues<typeof NONE>, NodeValues<typeof NONE>>,
  ] = [true, true, true, true, true];
  assert.deepEqual(same, [true, true, true, true, true]);
});

Deno.test("no module in lib/ imports node:util (it costs every command ~15 ms at start-up)", async () => {
  const lib = join(ROOT, "lib");
  const offenders: string[] = [];
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) await walk(path);
      else if (entry.name.endsWith(".ts")) {
        const specs = staticSpecifiers(await Deno.readTextFile(path));
        if (specs.includes("node:util")) offenders.push(relative(ROOT, path));
      }
    }
  };
  await walk(lib);
  assert.deepEqual(offenders, []);
});
