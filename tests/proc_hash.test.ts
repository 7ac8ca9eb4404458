/**
 * fileHash(): the sha256 a task records of each role's program. A file from STREAM_FROM_BYTES
 * on (an agent CLI's native binary) is read a chunk at a time; the hash is the same either way.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileHash, sha256, STREAM_FROM_BYTES } from "../lib/proc/hash.ts";

Deno.test('fileHash() hashes a small file whole and a large one in chunks, to the same sha256; a missing file is ""', async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-hash-" });
  try {
    // Known answers (sha256sum's) for the whole-file way.
    await Deno.writeTextFile(join(dir, "agent"), "#!/bin/sh\necho agent\n");
    assert.equal(
      await fileHash(join(dir, "agent")),
      "2a9397e2507b844e22d730c5023a4186028b4c051d344861a4002ab9b749d81b",
    );
    await Deno.writeFile(join(dir, "empty"), new Uint8Array());
    assert.equal(
      await fileHash(join(dir, "empty")),
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    );
    // Around the size the chunks start from: not a whole number of chunks, bytes not all alike.
    const large = new Uint8Array(STREAM_FROM_BYTES + 1024 * 1024 + 17);
    for (let i = 0; i < large.length; i++) large[i] = (i * 2654435761) >>> 24;
    for (const size of [STREAM_FROM_BYTES - 1, STREAM_FROM_BYTES, large.length]) {
      const path = join(dir, `${size}`);
      await Deno.writeFile(path, large.subarray(0, size));
      assert.equal(await fileHash(path), await sha256(large.subarray(0, size)), `${size} bytes`);
    }
    assert.equal(await fileHash(join(dir, "missing")), "");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
