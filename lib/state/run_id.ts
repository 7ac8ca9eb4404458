/**
 * Run ids name the folders under `.git/relay/runs/`. They sort by time and are
 * unique even for two runs in the same second (a person typing `relay resume`
 * and `relay review` quickly): a run folder is never shared, so no file a
 * previous turn left (a verdict, a log) can pass for this turn's.
 */
export function runId(what: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\.(\d+)Z$/, ".$1Z");
  const random = crypto.getRandomValues(new Uint8Array(3));
  const suffix = Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${stamp}-${suffix}-${what}`;
}
