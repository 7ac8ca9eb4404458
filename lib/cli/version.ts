import { type Context, parseCommand, printJson } from "./args.ts";
import { VERSION } from "./help.ts";

export function version(args: string[], _ctx: Context): Promise<number> {
  const { values } = parseCommand("version", args, { json: { type: "boolean" } }, {
    min: 0,
    max: 0,
  });
  const info = {
    version: VERSION,
    deno: Deno.version.deno,
    os: Deno.build.os,
    arch: Deno.build.arch,
  };
  if (values.json) printJson(info);
  else console.log(`relay ${info.version} (deno ${info.deno}, ${info.os}-${info.arch})`);
  return Promise.resolve(0);
}
