/**
 * fileHash() and largeFileHash(): the sha256 relay records of a file, and of each role's program.
 * A program from CHUNKED_FROM_BYTES on (an agent CLI's native binary) is read a chunk at a time
 * (chunkedHash); the hash is the same either way, and the same again from syncHash(), the guard's
 * hash of a folder's many files.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  CHUNKED_FROM_BYTES,
  chunkedHash,
  fileHash,
  largeFileHash,
  sha256,
  syncHash,
} from "../lib/proc/hash.ts";

Deno.test('fileHash(), chunkedHash(), largeFileHash() and syncHash() agree on sha256 at every size; a missing file is "" (syncHash: NotFound)', async () => {
  const dir = await Deno.makeTempDir({ prefix: "relay-hash-" });
  const sync = await syncHash();
  try {
    // Known answers (sha256sum's).
    const known = {
      agent: [
        "#!/bin/sh\necho agent\n",
        "2a9397e2507b844e22d730c5023a4186028b4c051d344861a4002ab9b749d81b",
      ],
      empty: ["", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
    };
    for (const [name, [text, hash]] of Object.entries(known)) {
      await Deno.writeTextFile(join(dir, name), text!);
      for (const f of [fileHash, chunkedHash, largeFileHash]) {
        assert.equal(await f(join(dir, name)), hash, `${f.name} ${name}`);
      }
      assert.equal(sync.file(join(dir, name), text!.length), hash, `syncHash ${name}`);
      assert.equal(sync.text(text!), hash, `syncHash text ${name}`);
    }
    // Chunks of a megabyte: one short of one, one, and sizes around the threshold, not a whole
    // number of chunks; bytes not all alike.
    const large = new Uint8Array(CHUNKED_FROM_BYTES + 1024 * 1024 + 17);
    for (let i = 0; i < large.length; i++) large[i] = (i * 2654435761) >>> 24;
    const MB = 1024 * 1024;
    for (
      const size of [MB - 1, MB, MB + 1, CHUNKED_FROM_BYTES - 1, CHUNKED_FROM_BYTES, large.length]
    ) {
      const path = join(dir, `${size}`);
      const bytes = large.subarray(0, size);
      await Deno.writeFile(path, bytes);
      const hash = await sha256(bytes);
      assert.equal(await chunkedHash(path), hash, `chunkedHash ${size} bytes`);
      assert.equal(await largeFileHash(path), hash, `largeFileHash ${size} bytes`);
      assert.equal(sync.file(path, size), hash, `syncHash ${size} bytes`);
      if (size < CHUNKED_FROM_BYTES) assert.equal(await fileHash(path), hash, `${size} bytes`);
    }
    for (const f of [fileHash, chunkedHash, largeFileHash]) {
      assert.equal(await f(join(dir, "missing")), "", f.name);
    }
    assert.throws(() => sync.file(join(dir, "missing"), 0), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
