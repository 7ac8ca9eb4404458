/**
 * `machines: split`: a reviewer machine's paperwork that never reached the remote — committed
 * but not pushed, or not even committed — when its tick was killed or cut off. Its lease ran
 * out meanwhile and another machine took the role and went on from what the remote showed.
 *
 * When both sides changed the brief since they parted, this machine's brief is stale: a
 * promotion the other machine made too (and the executor has since shipped), or a fix brief
 * written over a brief the other machine promoted. Replaying it would put an old brief back
 * on main — OPEN for a task already done, or in place of the task now in flight, which a
 * later retirement then loses. So it is not replayed: its commits are kept under an anchor
 * ref and the files under `.git/relay/paperwork-aside/`, main goes to the remote's main, and
 * only what the remote cannot have — briefs this machine queued in the inbox — comes back.
 * The tick then decides promotions and fix briefs afresh from the remote, as the other
 * machine did.
 */
import { dirname, join } from "node:path";
import { HoldError } from "../errors.ts";
import type { Git } from "../git/git.ts";
import type { Log } from "../proc/log.ts";
import { BRIEF_FILE, INBOX_DIR } from "../state/paths.ts";
import { paperworkOnly, setAsidePaperwork } from "./paperwork.ts";

/** Where the commits of a set-aside stale paperwork are kept (one ref per time). */
export const STALE_PAPERWORK_ANCHORS = "refs/relay/anchors/paperwork/";

/**
 * Moves main to the remote's main, setting this machine's paperwork aside, when the remote
 * changed the brief since local main last matched it and this machine changed it too
 * (committed or not). False when that is not so: the caller's fast-forward and rebase carry
 * local paperwork on top as usual. The caller fetched just now.
 */
export async function setAsideStalePaperwork(
  primary: Git,
  remote: string,
  main: string,
  opts: { aside: string; log: Log },
): Promise<boolean> {
  const upstream = await primary.resolve(`refs/remotes/${remote}/${main}`);
  const local = await primary.resolve("HEAD");
  if (!upstream || !local || upstream === local) return false;
  if (await primary.isAncestor(upstream, local)) return false; // the remote did not move
  const base = (await primary.out(["merge-base", "--", local, upstream])).trim();
  if (!base) return false;
  if ((await primary.changedPaths(base, upstream, [BRIEF_FILE])).length === 0) return false;
  const committed = base !== local;
  const mine = (await primary.changedPaths(base, local, [BRIEF_FILE])).length > 0 ||
    (await primary.out(["status", "--porcelain=v1", "-z", "--", BRIEF_FILE])) !== "";
  if (!mine) return false;
  // Commits of someone else's on local main: the caller's usual HOLD says what to do.
  if (committed && !(await paperworkOnly(primary, `${upstream}..${local}`))) return false;

  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const anchor = `${STALE_PAPERWORK_ANCHORS}${stamp}`;
  if (committed) {
    await primary.updateRef(anchor, local, "relay: stale paperwork set aside", "");
  }
  const set = await setAsidePaperwork(primary, local, null, opts.aside);
  const others = (await primary.out(["status", "--porcelain=v1", "-z", "--untracked-files=no"]))
    .split("\0").filter((e) => e !== "").map((e) => e.slice(3));
  if (others.length) {
    throw new HoldError(
      `Cannot bring "${main}" to ${remote}/${main}: the primary tree has changes that are not relay's (${
        others.join(", ")
      })`,
      `Someone works in ${primary.cwd}, which relay keeps for its own paperwork. Keep the changes aside with "git stash push --include-untracked -- ${
        others.join(" ")
      }" there, then run "relay resume".${
        set ? ` relay's own uncommitted paperwork is in ${set.dir}.` : ""
      }`,
      { local: true },
    );
  }
  // `--keep`, not `--hard`: git refuses rather than drop a change in the tree, and the
  // commits it moves main off are under the anchor.
  await primary.run(["reset", "--quiet", "--keep", upstream]);

  // Briefs this machine queued that the remote never saw: committed ones, then uncommitted.
  const queued = new Map<string, string>();
  if (committed) {
    const added = (await primary.out([
      "diff",
      "--name-only",
      "--no-renames",
      "--diff-filter=A",
      "-z",
      base,
      local,
      "--",
      INBOX_DIR,
    ])).split("\0").filter((p) => p !== "");
    const texts = await primary.showFiles(local, added);
    added.forEach((path, i) => texts[i] !== null && queued.set(path, texts[i]!));
  }
  for (const [path, text] of set?.files ?? []) {
    if (path.startsWith(`${INBOX_DIR}/`) && text !== null) queued.set(path, text);
  }
  const back: string[] = [];
  for (const [path, text] of queued) {
    if (await primary.ok(["cat-file", "-e", `${upstream}:${path}`])) continue;
    const full = join(primary.cwd, path);
    await Deno.mkdir(dirname(full), { recursive: true });
    await Deno.writeTextFile(full, text);
    back.push(path);
  }
  opts.log.step(
    `set aside this machine's paperwork that never reached ${remote}: ${remote}/${main} changed ${BRIEF_FILE} meanwhile, so this tick starts from its brief (${
      [
        committed ? `commits under ${anchor}` : "",
        set ? `files in ${set.dir}` : "",
      ].filter((s) => s).join(", ")
    }${back.length ? `; queued again: ${back.join(", ")}` : ""})`,
  );
  return true;
}
