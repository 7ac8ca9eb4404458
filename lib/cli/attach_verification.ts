/**
 * `relay attach-verification <task> --file F [--text T]`: a person's evidence
 * (a screenshot, a log) recorded against the tree of the task's branch as it
 * is now. It counts at acceptance only while that tree is the one to accept:
 * a new head with other content and it no longer does. The file is copied
 * under `.git/relay/verifications/<task>/`; the record is in the task's
 * record, which the turn guard watches, so it is added only while no tick
 * runs (both locks, for a moment), like relay note.
 */
import { basename, join, resolve } from "../path.ts";
import { UsageError } from "../errors.ts";
import { type Context, parseCommand, requireRepo } from "./args.ts";

const MAX_BYTES = 20 * 1024 * 1024;

export async function attachVerification(args: string[], ctx: Context): Promise<number> {
  const { values, positionals } = parseCommand("attach-verification", args, {
    file: { type: "string" },
    text: { type: "string" },
  }, { min: 1, max: 1, names: "<task>" });
  const task = Number(positionals[0]);
  if (!Number.isInteger(task) || task <= 0) {
    throw new UsageError(`"${positionals[0]}" is not a task number`, "attach-verification");
  }
  if (!values.file) {
    throw new UsageError(
      "--file F is required: the screenshot or log to record",
      "attach-verification",
    );
  }
  const repo = requireRepo(ctx);
  const path = resolve(ctx.cwd, values.file);
  let bytes: Uint8Array;
  try {
    const info = await Deno.stat(path);
    if (!info.isFile) throw new Error("not a file");
    if (info.size > MAX_BYTES) {
      throw new UsageError(
        `${values.file} is ${info.size} bytes; attach at most ${MAX_BYTES} (a cropped screenshot, the relevant log lines)`,
        "attach-verification",
      );
    }
    bytes = await Deno.readFile(path);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(
      `cannot read --file ${values.file}: it is not a readable file`,
      "attach-verification",
    );
  }
  const { statePaths } = await import("../state/paths.ts");
  const { whileNoTickRuns } = await import("../state/lock.ts");
  const { addVerification, readTask } = await import("../state/tasks.ts");
  const { loadRepoConfig } = await import("../config/repo_load.ts");
  const { Git } = await import("../git/git.ts");
  const { sha256 } = await import("../proc/hash.ts");
  const state = statePaths(repo.commonDir);
  const config = await loadRepoConfig(repo.root);
  const git = new Git(repo.root, config.timeouts.networkMs);
  const branch = (await readTask(state, task)).review?.branch ?? `task-${task}`;
  const head = await git.resolve(`refs/remotes/${config.remote}/${branch}`) ??
    await git.resolve(`refs/heads/${branch}`);
  if (!head) {
    throw new UsageError(
      `task ${task} has no branch ${branch} to verify (locally or on ${config.remote}): attach a verification once its PR is up`,
      "attach-verification",
    );
  }
  const tree = await git.out(["rev-parse", "--verify", "--end-of-options", `${head}^{tree}`]);
  const digest = await sha256(bytes);
  const name = basename(values.file);
  const dir = join(state.dir, "verifications", String(task));
  const file = join(dir, `${digest.slice(0, 16)}-${name}`);
  const text = values.text?.trim();
  const attached = await whileNoTickRuns(state, "attach-verification", async () => {
    await Deno.mkdir(dir, { recursive: true });
    await Deno.writeFile(file, bytes);
    await addVerification(state, task, {
      at: new Date().toISOString(),
      head,
      tree,
      file,
      sha256: digest,
      name,
      ...(text ? { text } : {}),
    });
  });
  if (!attached) {
    console.log("not attached: a tick is running; try again when it ends");
    return 1;
  }
  console.log(
    `attached to task ${task}: ${name} (sha256 ${digest.slice(0, 12)}) for ${branch} at ${
      head.slice(0, 12)
    }, tree ${tree.slice(0, 12)}; it counts while the tree to accept is this one`,
  );
  return 0;
}
