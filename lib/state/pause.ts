/**
 * `relay pause`: a flag under `.git/relay/` that stops every tick from
 * starting anything (a turn already running finishes), with who paused and
 * why. Nothing in the crontab is edited; `relay unpause` removes the flag.
 */
import { readJson, removeFile, writeJson } from "./json_file.ts";

export interface Pause {
  version: 1;
  at: string;
  /** user@host of whoever ran relay pause. */
  by: string;
  reason: string | null;
}

export async function readPause(path: string): Promise<Pause | null> {
  const p = await readJson<Pause>(path).catch(() => null);
  return p?.version === 1 ? p : null;
}

export async function writePause(path: string, pause: Pause): Promise<void> {
  await writeJson(path, pause);
}

export async function clearPause(path: string): Promise<boolean> {
  const had = (await readPause(path)) !== null;
  await removeFile(path);
  return had;
}

/** The line a tick (and relay status) says while paused. */
export function pausedLine(p: Pause): string {
  return `paused by ${p.by} at ${p.at}${
    p.reason ? `: ${p.reason}` : ""
  }; no tick starts anything until relay unpause`;
}
