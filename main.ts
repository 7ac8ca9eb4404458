/**
 * relay's entry point. The idle poll (cron's every minute, nothing OPEN) is
 * answered here from four small modules; everything else is
 * lib/cli/dispatch.ts: the options, the commands, the exit codes.
 */
import { idlePoll } from "./lib/cli/idle.ts";

if (import.meta.main) {
  const idle = idlePoll(Deno.args, Deno.cwd());
  if (idle !== null) Deno.exit(idle);
  // A computed specifier: with a literal one deno would load the whole command graph before
  // the line above runs. `deno compile` gets it through --include (scripts/compile.ts).
  const dispatch = new URL("./lib/cli/dispatch.ts", import.meta.url).href;
  const { run } = await import(dispatch);
  Deno.exit(await run(Deno.args));
}
