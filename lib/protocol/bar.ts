/**
 * Verification bar commands: one line each, split into argv with no shell.
 * Anything a shell would treat specially (pipes, lists, redirection,
 * substitution, expansion, globbing) is refused rather than run differently
 * from what its author meant.
 */

/** Why a bar command cannot be run, and what to do instead. */
export interface BarProblem {
  problem: string;
  fix: string;
}

const SCRIPT =
  "put it in a script file (e.g. scripts/check.sh) and list `sh scripts/check.sh` in the bar";

/**
 * For a command list: separate lines come first, because a script is product code the executor
 * can edit, while the bar's lines are fixed by the brief.
 */
const SPLIT = "write each command on its own line of the bar (relay runs every line, in order, " +
  "and each must pass); that is better than a script, which is product code the agent can edit. " +
  `If they must run as one, ${SCRIPT}`;

/**
 * Splits a bar command into argv: whitespace-separated words, single quotes
 * literal, double quotes with `\"`, `\\`, `\$` and `` \` `` escapes, backslash
 * escapes outside quotes. Throws a plain Error (problem and fix) when the
 * command needs a shell or is malformed.
 */
export function parseBarCommand(line: string): string[] {
  const result = tokenize(line);
  if ("argv" in result) return result.argv;
  throw new Error(`${result.problem}\n  fix: ${result.fix}`);
}

/** The reason parseBarCommand would refuse `line`, or null when it is fine. */
export function barCommandProblem(line: string): BarProblem | null {
  const result = tokenize(line);
  return "argv" in result ? null : result;
}

function tokenize(line: string): { argv: string[] } | BarProblem {
  const refuse = (what: string, fix = SCRIPT): BarProblem => ({
    problem: `Cannot use verification command ${JSON.stringify(line)}: ` +
      `it contains ${what}, and relay runs commands without a shell`,
    fix,
  });
  if (/[\n\r]/.test(line)) return refuse("a newline", `write one command per line, or ${SCRIPT}`);
  if (line.trim() === "") {
    return {
      problem: "Cannot use an empty verification command",
      fix: "write one command per line, or delete the empty entry",
    };
  }
  if (/^\s*[A-Za-z_][A-Za-z0-9_]*=/.test(line)) {
    return refuse(
      "an environment assignment before the command",
      `use \`env NAME=value command\`, or ${SCRIPT}`,
    );
  }
  const argv: string[] = [];
  let word = "";
  let inWord = false;
  let i = 0;
  while (i < line.length) {
    const c = line.charAt(i);
    if (c === " " || c === "\t") {
      if (inWord) argv.push(word);
      word = "";
      inWord = false;
      i++;
      continue;
    }
    const wordStart = !inWord;
    inWord = true;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return refuse("an unterminated single quote", `close the quote, or ${SCRIPT}`);
      word += line.slice(i + 1, end);
      i = end + 1;
      continue;
    }
    if (c === '"') {
      const quoted = doubleQuoted(line, i + 1, refuse);
      if ("problem" in quoted) return quoted;
      word += quoted.text;
      i = quoted.next;
      continue;
    }
    if (c === "\\") {
      if (i + 1 >= line.length) {
        return refuse("a backslash at the end", `remove it, or ${SCRIPT}`);
      }
      word += line.charAt(i + 1);
      i += 2;
      continue;
    }
    const special = outsideQuotes(line, i, wordStart);
    if (special !== undefined) {
      const fix = special.split
        ? SPLIT
        : special.literal === undefined
        ? SCRIPT
        : `quote it ('${special.literal}') if it is meant literally, or ${SCRIPT}`;
      return refuse(special.what, fix);
    }
    word += c;
    i++;
  }
  if (inWord) argv.push(word);
  return { argv };
}

/** What a shell would do with the character at `i` outside quotes, if special. */
function outsideQuotes(
  line: string,
  i: number,
  wordStart: boolean,
): { what: string; literal?: string; split?: true } | undefined {
  const c = line.charAt(i);
  const next = line.charAt(i + 1);
  switch (c) {
    case "|":
      return { what: next === "|" ? '"||" (a command list)' : '"|" (a pipe)' };
    case ";":
      return { what: '";" (a command list)', split: true };
    case "&":
      return next === "&"
        ? { what: '"&&" (a command list)', split: true }
        : { what: '"&" (a background job)' };
    case ">":
    case "<":
      return { what: `"${c}" (a redirection)` };
    case "`":
      return { what: "a backtick (command substitution)" };
    case "(":
    case ")":
      return { what: `"${c}" (a subshell)`, literal: c };
    case "$":
      if (next === "" || next === " " || next === "\t") return undefined;
      return next === "("
        ? { what: '"$(" (command substitution)' }
        : { what: `"$${next}" (variable expansion)`, literal: `$${next}` };
    case "*":
    case "?":
    case "[":
      return { what: `"${c}" (a filename pattern)`, literal: c };
    case "~":
      return wordStart ? { what: '"~" (home directory expansion)', literal: "~" } : undefined;
    case "#":
      return wordStart ? { what: '"#" (a comment)', literal: "#" } : undefined;
    default:
      return undefined;
  }
}

/** Reads a double-quoted string whose content starts at `start`. */
function doubleQuoted(
  line: string,
  start: number,
  refuse: (what: string, fix?: string) => BarProblem,
): { text: string; next: number } | BarProblem {
  let text = "";
  let i = start;
  while (i < line.length) {
    const c = line.charAt(i);
    const next = line.charAt(i + 1);
    if (c === '"') return { text, next: i + 1 };
    if (c === "\\" && next !== "" && '"\\$`'.includes(next)) {
      text += next;
      i += 2;
      continue;
    }
    if (c === "`") return refuse("a backtick (command substitution)");
    if (c === "$" && next !== "" && next !== '"' && next !== " " && next !== "\t") {
      return next === "(" ? refuse('"$(" (command substitution)') : refuse(
        `"$${next}" (variable expansion)`,
        `use single quotes ('$${next}') if it is meant literally, or ${SCRIPT}`,
      );
    }
    text += c;
    i++;
  }
  return refuse("an unterminated double quote", `close the quote, or ${SCRIPT}`);
}

/**
 * Whether two lines name the same bar command: the brief's line, the report's
 * heading and relay's evidence may differ in spacing only. The one rule for
 * the report check, the evidence and the gate.
 */
export function sameCommand(a: string, b: string): boolean {
  return a.trim().replace(/\s+/g, " ") === b.trim().replace(/\s+/g, " ");
}
