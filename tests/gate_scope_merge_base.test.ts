/**
 * The scope check diffs the PR head against its merge base with main in one
 * git call (`git diff --merge-base`), and falls back to `git merge-base` where
 * git cannot pick one base or the branch changes nothing: an unrelated
 * history, a head main already has, and a criss-cross history with two merge
 * bases each get the answer they always got.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { scopeCheck } from "../lib/gate/gate.ts";
import { Git } from "../lib/git/git.ts";
import { GIT_ENV as ENV } from "./helpers/git_env.ts";

const CONFIG = { gate: { product: [], refuse: [] }, acceptedInfra: [] };

Deno.test("scopeCheck(): one base, no shared history, nothing changed, two merge bases", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-scope-mb-" });
  const sh = async (...args: string[]) => {
    const out = await new Deno.Command("git", { args, cwd: dir, env: ENV, stdout: "piped" })
      .output();
    if (out.code !== 0) throw new Error(`git ${args.join(" ")} exited ${out.code}`);
    return new TextDecoder().decode(out.stdout).trim();
  };
  const commit = async (file: string) => {
    await Deno.mkdir(join(dir, "src"), { recursive: true });
    await Deno.writeTextFile(join(dir, "src", file), `${file}\n`);
    await sh("add", ".");
    await sh("commit", "--quiet", "-m", file);
    return await sh("rev-parse", "HEAD");
  };
  try {
    await sh("init", "--quiet", "--initial-branch=main");
    await commit("base.txt");
    await sh("switch", "--quiet", "-c", "x");
    const x = await commit("x.txt");
    await sh("switch", "--quiet", "main");
    const main = await commit("m.txt");
    const git = new Git(dir);

    const one = await scopeCheck(git, CONFIG, main, x);
    assert.deepEqual([one.result, one.reason], ["PASS", "1 product file changed"]);

    const nothing = await scopeCheck(git, CONFIG, main, main);
    assert.equal(nothing.result, "REFUSE");
    assert.match(nothing.reason, new RegExp(`changes nothing.*merge base ${main.slice(0, 12)}`));

    await sh("switch", "--quiet", "--orphan", "lonely");
    const lonely = await commit("lonely.txt");
    const unrelated = await scopeCheck(git, CONFIG, main, lonely);
    assert.equal(unrelated.result, "REFUSE");
    assert.match(unrelated.reason, /shares no history with main/);

    // Criss-cross: a and b each merge the other's parent, so they have two merge bases.
    await sh("switch", "--quiet", "-c", "a", main);
    await sh("merge", "--quiet", "--no-edit", "x");
    const a = await sh("rev-parse", "HEAD");
    await sh("switch", "--quiet", "-c", "b", x);
    await sh("merge", "--quiet", "--no-edit", main);
    await commit("b1.txt");
    const b = await commit("b2.txt");
    assert.equal((await sh("merge-base", "--all", a, b)).split("\n").length, 2);
    const base = await sh("merge-base", a, b);
    const expected = (await sh("diff", "--name-only", base, b)).split("\n").length;
    const crossed = await scopeCheck(git, CONFIG, a, b);
    assert.deepEqual([crossed.result, crossed.reason], [
      "PASS",
      `${expected} product files changed`,
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
