/**
 * A tick's heartbeat: `.git/relay/heartbeat-<tick>`, the ISO time the tick last
 * started, so `relay doctor` can tell ticks that run from ticks that stopped.
 * The idle poll records nothing else, so this is the one file it writes. No
 * imports on purpose: the idle poll's fast path (lib/cli/idle.ts) loads it
 * before anything else.
 */

export function heartbeatPath(commonDir: string, tick: "poll" | "review"): string {
  return `${commonDir}/relay/heartbeat-${tick}`;
}

/**
 * Records that a tick started: one small write, no process.
 * Never throws: a heartbeat that cannot be written must not cost the tick.
 */
export function beat(commonDir: string, tick: "poll" | "review", now = new Date()): void {
  const path = heartbeatPath(commonDir, tick);
  try {
    Deno.writeTextFileSync(path, now.toISOString() + "\n");
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) return;
    try {
      Deno.mkdirSync(`${commonDir}/relay`, { recursive: true });
      Deno.writeTextFileSync(path, now.toISOString() + "\n");
    } catch {
      // Not even the state folder can be made: the tick says what is wrong itself.
    }
  }
}
