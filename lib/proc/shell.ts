/** Shell words for commands relay prints for a person (or cron) to run. No imports. */

/** One POSIX shell word: as is when it is plain, else in single quotes. */
export function shellWord(text: string): string {
  if (text !== "" && /^[\w@%+=:,./-]+$/.test(text)) return text;
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** A command line from words. */
export function shellLine(words: readonly string[]): string {
  return words.map(shellWord).join(" ");
}

/** `git add …` for a person in `cwd`: plain at the repository root, `git -C <root>` elsewhere. */
export function gitIn(root: string, cwd: string): string {
  return cwd === root ? "git" : `git -C ${shellWord(root)}`;
}

/**
 * The folder the person ran relay from: under `deno task` (which runs in
 * relay's own folder) the shell's folder is INIT_CWD.
 */
export function personCwd(): string {
  return Deno.env.get("INIT_CWD") || Deno.cwd();
}
