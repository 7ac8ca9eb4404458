/** The acceptance sessions of issues 2 and 3 (scripts/acceptance/), run as they are: real CLI, real git. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT } from "./helpers/scene.ts";
import { probeTool } from "./helpers/tools.ts";

async function session(name: string) {
  // A folder to start in that is no repository; the session makes its own sandbox.
  const cwd = await Deno.makeTempDir({ prefix: "relay-acceptance-cwd-" });
  try {
    const out = await new Deno.Command("bash", {
      args: [join(ROOT, "scripts", "acceptance", name)],
      cwd,
      env: {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: Deno.env.get("HOME") ?? "/tmp",
        NO_COLOR: "1",
      },
      clearEnv: true,
      stdin: "null",
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    return { code: out.code, text };
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
}

// Part 1's product is a small Python app and its bar runs python3, which README's machine (Node/npm
// and git) need not have: there the session shows as ignored.
const python3 = await probeTool("python3");

Deno.test({
  name:
    "acceptance part 1: inbox add, promote and poll by hand give one product-only branch and one paperwork commit",
  ignore: python3 === null,
  async fn() {
    const res = await session("part1.sh");
    assert.equal(res.code, 0, res.text);
    assert.match(
      res.text,
      /^ok: one product-only branch task-1, one paperwork-only commit on main/m,
    );
  },
});

Deno.test("acceptance part 2: three briefs merge until the inbox is empty; a package.json PR is refused", async () => {
  const res = await session("part2.sh");
  assert.equal(res.code, 0, res.text);
  assert.match(res.text, /^ok: only paperwork commits and task merges$/m);
  assert.match(res.text, /REFUSE +scope +not product code: package\.json/);
  assert.match(
    res.text,
    /^ok: three briefs merged until the inbox was empty; the package.json PR was refused/m,
  );
});
