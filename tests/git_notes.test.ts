/**
 * relay's git notes: appended once per distinct record, read back in one
 * batch, and pushed without force — two clones that both wrote notes end with
 * the remote holding every line of both.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Git } from "../lib/git/git.ts";
import { appendNote, NOTES_REF, pushNotes, readAllNotes, readNote } from "../lib/git/notes.ts";
import { git as sh, GIT_ENV as ENV } from "./helpers/git_env.ts";

Deno.test("notes: a repeated record is not appended twice; two clones' notes both reach the remote", async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-notes-" });
  const saved = Object.fromEntries(Object.keys(ENV).map((k) => [k, Deno.env.get(k)]));
  for (const [k, v] of Object.entries(ENV)) Deno.env.set(k, v);
  try {
    await sh(dir, "init", "--quiet", "--bare", "--initial-branch=main", "origin.git");
    await sh(dir, "clone", "--quiet", `file://${join(dir, "origin.git")}`, "a");
    const a = join(dir, "a");
    await Deno.writeTextFile(join(a, "f"), "1\n");
    await sh(a, "add", "f");
    await sh(a, "commit", "--quiet", "-m", "one");
    await sh(a, "push", "--quiet", "origin", "HEAD:main");
    await sh(dir, "clone", "--quiet", `file://${join(dir, "origin.git")}`, "b");
    const b = join(dir, "b");
    const head = await sh(a, "rev-parse", "HEAD");
    const ga = new Git(a);
    const gb = new Git(b);
    const rec = { kind: "verdict", task: 1, head, result: "PASS", at: "2026-12-02T00:00:00Z" };
    assert.equal(await appendNote(ga, head, [rec]), true);
    // The same record at another time is not new.
    assert.equal(await appendNote(ga, head, [{ ...rec, at: "2026-12-02T00:01:00Z" }]), false);
    assert.equal((await readNote(ga, head)).trim().split("\n").length, 1);
    assert.equal(await pushNotes(ga, "origin"), null);

    // Clone b never fetched a's notes: its push is not a fast-forward, and is merged, not forced.
    const gate = { kind: "gate", task: 1, head, decision: "MERGE", at: "2026-12-02T00:02:00Z" };
    assert.equal(await appendNote(gb, head, [gate]), true);
    assert.equal(await pushNotes(gb, "origin"), null);
    const origin = new Git(join(dir, "origin.git"));
    const notes = await readAllNotes(origin, [NOTES_REF]);
    assert.deepEqual(notes.get(head)?.map((r) => r.kind).sort(), ["gate", "verdict"]);
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      v === undefined ? Deno.env.delete(k) : Deno.env.set(k, v);
    }
    await Deno.remove(dir, { recursive: true });
  }
});
