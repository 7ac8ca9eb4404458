/**
 * `machines: split` (lib/config/repo.ts): the executor tick and the reviewer
 * tick run on different machines that share only the git remote. The idle
 * poll's fast path (lib/cli/idle.ts) must not answer from the working tree
 * then — new work arrives on the remote — and it may load no config module,
 * so it asks this: does the config text say split? Conservative on purpose:
 * a comment that mentions it sends the tick down the full path, which then
 * reads the config properly. No imports: the fast path loads this first.
 */

/** True when `.relay/config.yaml`'s text may set `machines: split` (lib/cli/idle.ts inlines it). */
export function mayBeSplit(configText: string): boolean {
  return /machines["']?\s*:\s*["']?split/.test(configText);
}

/**
 * This clone's machine id for leases (`.git/relay/machine-id`), made once: two clones on
 * one host are two machines, and a tick that keeps its lease finds it its own next minute.
 */
export function machineId(commonDir: string): string {
  const path = `${commonDir}/relay/machine-id`;
  try {
    const id = Deno.readTextFileSync(path).trim();
    if (id !== "") return id;
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  const id = crypto.randomUUID();
  Deno.mkdirSync(`${commonDir}/relay`, { recursive: true });
  // Two ticks making it at once: the first file wins, and both use what it says.
  try {
    Deno.writeTextFileSync(path, id + "\n", { createNew: true });
    return id;
  } catch (err) {
    if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
  }
  return Deno.readTextFileSync(path).trim() || id;
}
