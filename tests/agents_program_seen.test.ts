/**
 * programSeen(): what a task records of the program each role starts. Roles that start the
 * same program share one look (ProgramLooks): its file is hashed, and an agent CLI asked its
 * --version, once; a new look sees the program as it is then.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { RoleSpec } from "../lib/config/profile.ts";
import { programLooks, programSeen } from "../lib/agents/program_seen.ts";
import { sha256 } from "../lib/proc/hash.ts";

/** A fake claude (or `name`) in `dir`/bin that notes each --version it answers in `asked`. */
async function fakeClaude(
  dir: string,
  version: string,
  name = "claude",
): Promise<{ bin: string; asked: string }> {
  const bin = join(dir, "bin");
  const asked = join(dir, "asked");
  await Deno.mkdir(bin, { recursive: true });
  const program = join(bin, name);
  await Deno.writeTextFile(program, `#!/bin/sh\necho "$1" >> "${asked}"\necho "${version}"\n`);
  await Deno.chmod(program, 0o755);
  return { bin, asked };
}

async function askedCount(asked: string): Promise<number> {
  const text = await Deno.readTextFile(asked).catch(() => "");
  return text.split("\n").filter((l) => l === "--version").length;
}

/** A temporary folder for `fn`, removed after it. */
async function inTemp(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "relay-program-seen-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function claude(bin: string, env: Record<string, string> = {}): RoleSpec {
  return { vendor: "claude", model: "m", timeoutMs: 1, env: { PATH: bin, ...env } };
}

Deno.test("programSeen(): the executor, reviewer and security roles on one claude share a look: its --version is asked once, its hash read once", async () => {
  await inTemp(async (dir) => {
    const { bin, asked } = await fakeClaude(dir, "2.1.0 (Claude Code)");
    const program = join(bin, "claude");
    const looks = programLooks();
    const first = await programSeen("executor", claude(bin), dir, looks);
    // The file changes after the first role's look: the roles of this look still see it as it was.
    const before = await Deno.readFile(program);
    await Deno.writeTextFile(program, "#!/bin/sh\necho changed\n");
    const second = await programSeen("reviewer", claude(bin), dir, looks);
    const third = await programSeen("reviewer", claude(bin), dir, looks);
    const seen = { path: program, sha256: await sha256(before), version: "2.1.0 (Claude Code)" };
    assert.deepEqual([first, second, third], [seen, seen, seen]);
    assert.equal(await askedCount(asked), 1);
    // Each role's record is its own object: a caller that edits one edits no other.
    assert.notEqual(first, second);
  });
});

Deno.test("programSeen(): two programs in one look (claude and codex on one PATH) are each looked at: their own hash and --version", async () => {
  await inTemp(async (dir) => {
    const { bin } = await fakeClaude(dir, "2.1.0 (Claude Code)");
    await fakeClaude(dir, "codex-cli 0.171.0", "codex");
    const looks = programLooks();
    const env = { PATH: bin };
    const first = await programSeen("executor", claude(bin), dir, looks);
    const second = await programSeen(
      "reviewer",
      { vendor: "codex", model: "m", timeoutMs: 1, env },
      dir,
      looks,
    );
    assert.deepEqual(claude(bin).env, env, "one environment for both");
    assert.equal(first?.version, "2.1.0 (Claude Code)");
    assert.equal(second?.version, "codex-cli 0.171.0");
    assert.equal(first?.sha256, await sha256(await Deno.readFile(join(bin, "claude"))));
    assert.equal(second?.sha256, await sha256(await Deno.readFile(join(bin, "codex"))));
    assert.notEqual(first?.sha256, second?.sha256);
  });
});

Deno.test("programSeen(): a new look reads the program again, and a role whose environment differs is asked its --version itself", async () => {
  await inTemp(async (dir) => {
    const { bin, asked } = await fakeClaude(dir, "2.1.0 (Claude Code)");
    const program = join(bin, "claude");
    const looks = programLooks();
    await programSeen("executor", claude(bin), dir, looks);
    await programSeen(
      "reviewer",
      claude(bin, { CLAUDE_CONFIG_DIR: join(dir, "other") }),
      dir,
      looks,
    );
    assert.equal(await askedCount(asked), 2, "another environment, another answer");

    await Deno.writeTextFile(
      program,
      `#!/bin/sh\necho "$1" >> "${asked}"\necho "2.2.0 (Claude Code)"\n`,
    );
    const later = await programSeen("executor", claude(bin), dir);
    assert.equal(later?.version, "2.2.0 (Claude Code)");
    assert.equal(later?.sha256, await sha256(await Deno.readFile(program)));
    assert.equal(await askedCount(asked), 3);
  });
});
