/**
 * Small JSON state files, written atomically (write to a temp name, then
 * rename), with the secrets of relay's environment redacted from every string
 * (records quote agents, reviewers and git).
 */
import { dirname } from "../path.ts";
import { redactor } from "../proc/redact.ts";

export async function readJson<T>(path: string): Promise<T | null> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
  return parsed<T>(text, path);
}

/**
 * readJson without a wait: for a loop over many small files (every PR record), where the
 * await a file costs more than the read.
 */
export function readJsonSync<T>(path: string): T | null {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
  return parsed<T>(text, path);
}

function parsed<T>(text: string, path: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(
      `Cannot read relay state: "${path}" is not valid JSON. Move it aside and rerun.`,
    );
  }
}

export async function writeJson(path: string, value: unknown): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${Deno.pid}.tmp`;
  await Deno.writeTextFile(tmp, JSON.stringify(redactor().redactDeep(value), null, 2) + "\n");
  await Deno.rename(tmp, path);
}

/** Removes a state file; absent is fine. */
export async function removeFile(path: string): Promise<void> {
  try {
    await Deno.remove(path);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
}

/** A text file's content, or null when it does not exist. Other errors are thrown. */
export async function readTextOrNull(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}
