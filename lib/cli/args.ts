/** Command-line parsing on node:util's parseArgs, with unknown flags turned into usage errors (exit 2). */
import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import { UsageError } from "../errors.ts";
import { discoverRepo, type RepoPaths } from "../git/discover.ts";

export interface Context {
  /** The folder relay acts on (`-C` applied). */
  cwd: string;
  /** `--profile`, when given. */
  profile?: string;
}

export function parseCommand<T extends ParseArgsOptionsConfig>(
  command: string,
  args: string[],
  options: T,
  positionals: { min: number; max: number; names?: string },
) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (err) {
    throw new UsageError(
      (err as Error).message.replace(/\. To specify a positional.*$/s, ""),
      command,
    );
  }
  const n = parsed.positionals.length;
  if (n < positionals.min) {
    throw new UsageError(
      `missing argument${positionals.names ? `: ${positionals.names}` : ""}`,
      command,
    );
  }
  if (n > positionals.max) {
    throw new UsageError(`unexpected argument "${parsed.positionals[positionals.max]}"`, command);
  }
  return parsed;
}

/** The repository around the context's folder; a usage error outside one. */
export function requireRepo(ctx: Context): RepoPaths {
  const repo = discoverRepo(ctx.cwd);
  if (!repo) {
    throw new UsageError(
      `Cannot find a git repository at or above "${ctx.cwd}". Run relay inside one, or pass -C <path>.`,
    );
  }
  return repo;
}

/** Prints data as JSON on stdout. */
export function printJson(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}
