/** What both ticks (poll and review) are started with; their log lines are lib/proc/log.ts. */
import type { RepoPaths } from "../git/discover.ts";
import type { Log, Progress } from "../proc/log.ts";

export interface TickOptions {
  repo: RepoPaths;
  /** `--profile`, when given; otherwise the env/XDG default applies. */
  profileFlag?: string;
  /** This command's flags over the profile, for this command only. */
  flags?: import("../config/profile_load.ts").ProfileFlags;
  progress: Progress;
  log: Log;
  /** Filled with the effects the tick performs (lib/task/effects.ts), for its record. */
  effects?: string[];
  /**
   * A line worth saying as it happens, also under --quiet (a task's start line):
   * stdout, or stderr when stdout carries --json.
   */
  say?: (line: string) => void;
}
