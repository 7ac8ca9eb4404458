/**
 * Probes for programs a user's machine may lack (gh, the agent CLIs, python3, a browser). README's
 * test command must pass with only Node/npm and git, so a test that needs such a program computes
 * `ignore:` from a probe and shows as ignored where the program is missing.
 */

/**
 * The stdout of `name args…`, or null when the program is missing or fails. Never throws: for a
 * missing program `Deno.Command#output()` throws NotFound synchronously, before any promise exists,
 * so `.then(ok, fail)` alone would not catch it and a module-level probe would fail the whole file.
 */
export async function probeTool(
  name: string,
  args: string[] = ["--version"],
  env?: Record<string, string>,
): Promise<string | null> {
  try {
    const out = await new Deno.Command(name, {
      args,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
      ...(env === undefined ? {} : { env }),
    }).output();
    return out.code === 0 ? new TextDecoder().decode(out.stdout) : null;
  } catch {
    return null;
  }
}
