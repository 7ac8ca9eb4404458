/**
 * What every way of scheduling the two ticks shares: the command that starts
 * this same relay (crontab.ts), the safe PATH it runs under and what was left
 * out of it (cron_path.ts), the notes about programs that PATH would not find,
 * and the log both ticks append to. `relay init` prints it as crontab lines;
 * `relay schedule` writes it as a crontab block, systemd units or launchd
 * agents. Computed in one place so they cannot drift apart.
 */
import { join } from "../path.ts";
import type { RepoPaths } from "../git/discover.ts";
import type { RelayCommand } from "./crontab.ts";

export type TickName = "poll" | "review";

export interface TickPlan {
  relay: RelayCommand;
  /** The safe PATH, folder by folder. */
  path: string[];
  /** Where both ticks append their output: `.git/relay/cron.log`. */
  log: string;
  /** relay's arguments for each tick, after `relay.argv`. */
  ticks: { name: TickName; args: string[] }[];
  /** What was left out of PATH, what is not cached, what the PATH will not find: for the person. */
  notes: string[];
  /** The longest turn any role of the profile may take, or null when the profile does not load. */
  longestTurnMs: number | null;
}

/** The cron log of a repository. */
export function tickLog(repo: RepoPaths): string {
  return join(repo.commonDir, "relay", "cron.log");
}

/**
 * The PATH and the two tick commands, checked: what was left out of PATH and
 * why, and any program the ticks would not find, as notes for the person.
 */
export async function tickPlan(repo: RepoPaths, profile: string): Promise<TickPlan> {
  const cron = await import("./crontab.ts");
  const safePath = await import("./cron_path.ts");
  const { loadProfile } = await import("../config/profile_load.ts");
  const pathEnv = Deno.env.get("PATH") ?? "";
  const safety = safePath.safetyContext();
  const relay = await cron.relayCommand(safety, pathEnv);
  const path = safePath.cronPath(pathEnv, [relay.dir], safety);
  let roles = null;
  const notes = [...relay.notes];
  try {
    roles = await loadProfile(profile);
  } catch (err) {
    notes.push(
      `warning: the operator profile does not load, so its programs were not checked: ${
        (err as Error)?.message ?? String(err)
      }`,
    );
  }
  if (path.dropped.length) {
    notes.unshift(
      `Left out of PATH: ${path.dropped.map((d) => `${d.dir} (${d.why})`).join("; ")}.`,
    );
  }
  notes.push(
    ...await safePath.programNotes(safePath.profilePrograms(roles), pathEnv, path.dirs),
  );
  const global = ["-C", repo.root, "--profile", profile];
  return {
    relay,
    path: path.dirs,
    log: tickLog(repo),
    ticks: [
      { name: "poll", args: [...global, "poll", "--quiet"] },
      { name: "review", args: [...global, "review", "--quiet"] },
    ],
    notes,
    longestTurnMs: roles ? Math.max(...Object.values(roles.roles).map((r) => r.timeoutMs)) : null,
  };
}
