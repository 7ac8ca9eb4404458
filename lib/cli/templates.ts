/**
 * The files `relay init` installs live in relay/ at the top of this project.
 * They are read from beside the code, which works under `deno run` and in the
 * compiled binary (the compile task passes `--include relay/`).
 */
export async function readTemplate(name: string): Promise<string> {
  return await Deno.readTextFile(new URL(`../../relay/${name}`, import.meta.url));
}
