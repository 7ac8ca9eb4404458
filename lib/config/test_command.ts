/**
 * The profile's `test_command`: the project's test run, which relay and the
 * reviewer-side roles run on the head. It must be one exact command a
 * reviewer's allow-list can name — no shell around it — or a script run by
 * `/bin/bash /absolute/path/script.sh`, which a person wrote and relay never
 * rewrites. Anything else is refused when the profile is loaded, naming what
 * was found.
 */

/** What makes a command more than one exact command, in the order they are looked for. */
const FORBIDDEN: readonly [pattern: RegExp, what: string][] = [
  [/\$\(/, '"$(" (command substitution)'],
  [/`/, "a backtick (command substitution)"],
  [/&&/, '"&&" (a second command)'],
  [/\|\|/, '"||" (a second command)'],
  [/\|/, '"|" (a pipe)'],
  [/;/, '";" (a second command)'],
  [/&/, '"&" (a background command)'],
  [/[<>]/, "a redirection (< or >)"],
  [/\n/, "a line break (a second command)"],
  [/^\s*[A-Za-z_][A-Za-z0-9_]*=/, "a leading VAR= (an environment assignment)"],
  [/(^|\s)(for|while|until|do|done|if|then|fi|case|esac)(\s|$)/, "a shell loop or condition"],
  [/\$\{?[A-Za-z_]/, "a $variable (expanded by a shell, not by relay)"],
];

const SCRIPT_FORM = /^\/bin\/bash \/[^\s'"\\]+\.sh$/;

/** Why `command` is not acceptable as test_command, or null when it is. */
export function testCommandProblem(command: string): string | null {
  const c = command.trim();
  if (c === "") return "it is empty";
  if (SCRIPT_FORM.test(c)) return null;
  for (const [pattern, what] of FORBIDDEN) {
    if (pattern.test(c)) return `it contains ${what}`;
  }
  return null;
}

export const TEST_COMMAND_FIX =
  'write one exact command (e.g. "npm test", "deno task test"), or put the steps in a script and write "/bin/bash /absolute/path/script.sh"';
