/**
 * One machine (the default), fix_rounds 2: FAIL → fix brief → answer → FAIL → fix brief →
 * answer → FAIL → HOLD, with a fixer that commits and with one that pushes back without a
 * commit. Each fix brief is a round of its own, none is "written again" (the planner's
 * fix-lost is for a fix brief gone from NEXT-STEPS.md, which never happens here), and the
 * record keeps what each brief said. Real CLI, real git, a bare file:// origin.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { brief, makeScene, reviewRecord } from "./helpers/scene.ts";

for (const agent of ["good.sh", "pushback.sh"]) {
  Deno.test(`fix_rounds 2, each fix answered by ${agent}: two fix briefs in two rounds, then the HOLD`, async () => {
    await using scene = await makeScene({ config: "fix_rounds: 2\n" });
    const add = await scene.relay(["inbox", "add", "-"], { stdin: brief({ title: "T" }) });
    assert.equal(add.code, 0, add.stderr);
    assert.equal((await scene.relay(["promote"])).code, 0);
    const poll = await scene.relay(["poll"]);
    assert.match(poll.stdout, /shipped/, poll.stdout + poll.stderr);
    await scene.setAgent(agent);
    const out: string[] = [];
    for (let i = 0; i < 3; i++) {
      // Two review ticks a round: a FAIL (FAKE_FAIL_ONCE), then nothing more to do.
      for (let tick = 0; tick < 2; tick++) {
        const r = await scene.relay(["review"], {
          env: { FAKE_FAIL_ONCE: join(scene.dir, `failed-${i}`) },
        });
        out.push(r.stdout + r.stderr);
      }
      if (i < 2) {
        const p = await scene.relay(["poll"]);
        out.push(p.stdout + p.stderr);
        assert.match(p.stdout, /shipped/, out.join("\n---\n"));
      }
    }
    const text = out.join("\n---\n");
    assert.match(text, /sent back — fix brief 2 is open in NEXT-STEPS\.md \(round 1\/2\)/, text);
    assert.match(text, /sent back — fix brief 3 is open in NEXT-STEPS\.md \(round 2\/2\)/, text);
    assert.doesNotMatch(text, /writing it again/, text);
    assert.match(text, /sent back 2 time\(s\) and still does not pass/, text);
    const record = await reviewRecord(scene);
    assert.deepEqual(record.fixes.map((f) => f.task), [2, 3]);
    assert.ok(record.fixes.every((f) => f.why === "The reviewer failed this PR."));
    assert.ok(record.fixes.every((f) => (f.findings?.length ?? 0) > 0));
  });
}
