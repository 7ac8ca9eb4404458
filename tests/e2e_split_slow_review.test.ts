/**
 * `machines: split`: a reviewer's turn longer than the lease's renewal interval (24 s with the
 * scene's 2-minute lease, 2 minutes by default; a real reviewer takes minutes) is judged like any
 * other. The tick's own renewal moves the
 * lease's mirror (refs/relay-remote/leases/) during the turn; the turn's look at the
 * repository's refs leaves it out, as it leaves out relay's own refs and the remote-tracking
 * ones. (It did not: every such turn was void, "refs changed", and two in a row a HOLD.)
 *
 * Real time: about 40 s.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { all, makeScene, originMerges, REVIEWERS, reviewRecord } from "./helpers/scene.ts";
import { briefs, SHORT_RENEW_MS, SPLIT_SHORT_LEASE, tick } from "./helpers/split_machines.ts";

Deno.test("split machines: a reviewer turn longer than the lease's renewal interval is not void", async () => {
  await using scene = await makeScene({ config: SPLIT_SHORT_LEASE });
  // On B, every reviewer turn outlasts a renewal and a half (a real reviewer takes minutes),
  // then the honest one.
  const reviewer = join(scene.dir, "slow.sh");
  await Deno.writeTextFile(
    reviewer,
    `#!/usr/bin/env bash\n[ "\${FAKE_SLOW:-}" = 1 ] && sleep ${
      (SHORT_RENEW_MS * 1.5) / 1000 + 4
    }\n` +
      `exec bash "${join(REVIEWERS, "honest.sh")}" "$@"\n`,
  );
  await Deno.writeTextFile(join(scene.dir, "reviewer-script"), reviewer);
  const { a, b } = await briefs(scene, ["Slow review"]);
  const profileB = await Deno.readTextFile(b.profile);
  await Deno.writeTextFile(b.profile, profileB.replaceAll("timeout: 60s", "timeout: 10m"));
  const shipped = await tick(scene, a, "poll");
  assert.match(shipped.stdout, /task 1 shipped/, all(shipped));

  const count = join(scene.dir, "count");
  const res = await tick(scene, b, "review", { FAKE_SLOW: "1", FAKE_REVIEW_COUNT: count });
  const record = await reviewRecord(scene);
  const launches = (await Deno.readTextFile(count).catch(() => "")).trim().split("\n");
  assert.equal(launches.length, 1, `one reviewer turn: ${launches.join(", ")}; ${all(res)}`);
  assert.deepEqual(record.voids.map((v) => v.why), [], "a slow turn was voided");
  assert.equal(res.code, 0, all(res));
  assert.match(res.stdout, /task 1 merged/, all(res));
  assert.equal((await originMerges(scene)).length, 1);
});
