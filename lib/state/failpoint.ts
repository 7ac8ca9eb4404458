/**
 * Crash points for tests: when RELAY_FAILPOINT names this point, the process
 * kills itself with SIGKILL right here, as a reboot or an OOM kill would. The
 * tests use it to prove that the next tick finishes the work with nothing lost
 * and nothing doubled.
 */
export function failpoint(name: string): void {
  if (Deno.env.get("RELAY_FAILPOINT") === name) {
    Deno.kill(Deno.pid, "SIGKILL");
  }
}
