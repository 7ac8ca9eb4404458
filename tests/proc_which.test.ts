/** The `#!` line of an agent script, as the kernel reads it, and why one would not run. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { readShebang, startProblem } from "../lib/proc/which.ts";

async function scripts(): Promise<
  AsyncDisposable & { write(name: string, text: string | Uint8Array): Promise<string> }
> {
  const dir = await Deno.makeTempDir({ prefix: "relay-which-" });
  return {
    async write(name, text) {
      const path = join(dir, name);
      if (typeof text === "string") await Deno.writeTextFile(path, text);
      else await Deno.writeFile(path, text);
      await Deno.chmod(path, 0o755);
      return path;
    },
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

Deno.test("readShebang() reads the interpreter, and the program env is to find on PATH", async () => {
  await using s = await scripts();
  assert.deepEqual(readShebang(await s.write("a", "#!/bin/sh -e\necho\n")), {
    line: "/bin/sh -e",
    interpreter: "/bin/sh",
    viaEnv: null,
    crlf: false,
  });
  assert.deepEqual(readShebang(await s.write("b", "#! /usr/bin/env node\n")), {
    line: "/usr/bin/env node",
    interpreter: "/usr/bin/env",
    viaEnv: "node",
    crlf: false,
  });
  assert.equal(readShebang(await s.write("c", "#!/usr/bin/env -S deno run -A\n"))?.viaEnv, "deno");
  // env's options and assignments are env's business: no name to look up.
  assert.equal(readShebang(await s.write("d", "#!/usr/bin/env -i node\n"))?.viaEnv, null);
  assert.equal(readShebang(await s.write("e", "#!/usr/bin/env A=1 node\n"))?.viaEnv, null);
  assert.equal(readShebang(await s.write("f", "#!/bin/sh\r\necho\r\n"))?.crlf, true);
  // Without -S, env gets "bash -e" as one name.
  assert.equal(readShebang(await s.write("j", "#!/usr/bin/env bash -e\n"))?.viaEnv, "bash -e");
  // A path in bytes that are not UTF-8: not judged.
  assert.equal(
    readShebang(await s.write("k", new Uint8Array([0x23, 0x21, 0x2f, 0xe9, 0x0a]))),
    null,
  );
  assert.equal(readShebang(await s.write("g", "echo no line\n")), null);
  assert.equal(
    readShebang(await s.write("h", new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, 1]))),
    null,
  );
  assert.equal(readShebang(await s.write("i", "#!")), null);
  assert.equal(readShebang("/relay/no/such/file"), null);
});

Deno.test("startProblem() names a missing interpreter, an env program not on PATH, and Windows line endings", async () => {
  await using s = await scripts();
  const fine = await s.write("fine", "#!/bin/sh\necho\n");
  assert.equal(startProblem(fine, "/usr/bin:/bin"), null);
  assert.equal(
    startProblem(await s.write("elf", new Uint8Array([0x7f, 0x45, 0x4c, 0x46])), ""),
    null,
  );
  assert.equal(
    startProblem(await s.write("gone", "#!/opt/relay-no-such/python3\n"), "/usr/bin:/bin"),
    "its first line (#!/opt/relay-no-such/python3) names /opt/relay-no-such/python3, which is not an executable file",
  );
  const viaEnv = await s.write("via-env", "#!/usr/bin/env relay-fake-node\n");
  assert.equal(
    startProblem(viaEnv, "/usr/bin:/bin"),
    'its first line (#!/usr/bin/env relay-fake-node) starts "relay-fake-node", which is not on PATH',
  );
  const node = await s.write("relay-fake-node", "#!/bin/sh\n");
  assert.equal(startProblem(viaEnv, `${join(node, "..")}:/usr/bin`), null);
  assert.match(
    startProblem(await s.write("crlf", "#!/bin/sh\r\necho\r\n"), "/usr/bin:/bin") ?? "",
    /^its first line \(#!\/bin\/sh\) ends in a carriage return \(Windows line endings\).*convert the file to Unix line endings$/,
  );
  assert.equal(
    startProblem(await s.write("env-args", "#!/usr/bin/env bash -e\n"), "/usr/bin:/bin"),
    'its first line (#!/usr/bin/env bash -e) has env look for a program named "bash -e", as the kernel passes all after env as one argument: write "#!/usr/bin/env -S bash -e"',
  );
  // No PATH at all: env's default path, where sh is.
  assert.equal(startProblem(await s.write("env-sh", "#!/usr/bin/env sh\n"), ""), null);
  // A relative interpreter is resolved from the child's folder, which this does not know.
  assert.equal(startProblem(await s.write("relative", "#!bin/interp\n"), ""), null);
});
