/**
 * A HOLD: the loop has stopped for a person. Recorded under `.git/relay/hold.json`
 * so every later tick (and `relay status`) shows the same reason on one screen
 * until a person clears it with `relay resume`.
 */
import { readJson, removeFile, writeJson } from "./json_file.ts";

export interface Hold {
  task: number;
  reason: string;
  next: string;
  at: string;
  runId?: string;
}

export function readHold(path: string): Promise<Hold | null> {
  return readJson<Hold>(path);
}

export async function writeHold(path: string, hold: Hold): Promise<void> {
  await writeJson(path, hold);
}

export async function clearHold(path: string): Promise<void> {
  await removeFile(path);
}

export function formatHold(hold: Hold): string {
  return `HOLD on task ${hold.task} (since ${hold.at}): ${hold.reason}\n  next: ${hold.next}`;
}
