/**
 * relay's own files that a person wrote in the primary tree but never pushed:
 * `.relay/config.yaml` and `REVIEWER.md`. The reviewer reads REVIEWER.md from
 * origin/main (so it is told there is none), and a config that is not on main
 * exists in this clone only. `relay poll` (after its fetch, when it starts an
 * attempt) and `relay status` say so in one line, with the fix.
 */
import { join } from "../path.ts";
import type { Git } from "../git/git.ts";
import { CONFIG_FILE } from "../state/paths.ts";
import { gitIn, shellLine } from "../proc/shell.ts";

export const PUBLISHED_FILES = [CONFIG_FILE, "REVIEWER.md"] as const;

function exists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/**
 * The warning line, or null when every such file in the primary tree is on
 * `remote/main` (or there is no `remote/main` to compare with).
 */
export async function unpublishedWarning(
  primary: Git,
  opts: { remote: string; main: string; cwd?: string },
): Promise<string | null> {
  const here = PUBLISHED_FILES.filter((f) => exists(join(primary.cwd, f)));
  if (here.length === 0) return null;
  // null when `rev` does not name a tree (no remote main yet, an unborn HEAD).
  const onMain = async (rev: string) => {
    const res = await primary.run(
      ["ls-tree", "--name-only", "--end-of-options", rev, "--", ...here],
      { allowFail: true },
    );
    return res.code === 0 ? res.stdout.split("\n") : null;
  };
  const upstream = `refs/remotes/${opts.remote}/${opts.main}`;
  // A tick asks its resolver (no process); a person's command, git.
  const shared = await Promise.all(here.map((f) => primary.sharedPathType(`${upstream}:${f}`)));
  let missing: string[];
  if (shared.every((t) => t !== undefined)) {
    if (shared.every((t) => t === null) && await primary.resolve(upstream) === null) return null;
    missing = here.filter((_, i) => shared[i] === null);
  } else {
    const published = await onMain(upstream);
    if (published === null) return null;
    missing = here.filter((f) => !published.includes(f));
  }
  if (missing.length === 0) return null;
  const committed = await onMain("HEAD") ?? [];
  const git = gitIn(primary.cwd, opts.cwd ?? "");
  const fix = missing.every((f) => committed.includes(f))
    ? `${git} push ${shellLine([opts.remote, opts.main])}`
    : `${git} add -- ${shellLine(missing)} && ${git} commit -m "relay: config" && ${git} push`;
  const onBranch = `${opts.remote}/${opts.main}`;
  const why = missing.map((f) =>
    f === CONFIG_FILE
      ? `${f} applies to this clone only`
      : `the reviewer reads ${f} from ${onBranch}, so it is told there is none`
  );
  return `warning: ${missing.join(" and ")} ${
    missing.length > 1 ? "are" : "is"
  } in ${primary.cwd} but not on ${onBranch} (${why.join("; ")}); publish ${
    missing.length > 1 ? "them" : "it"
  }: ${fix}`;
}
