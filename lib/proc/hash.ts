/** sha256 of a string or bytes, as hex. */
export async function sha256(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const digest = await crypto.subtle.digest("SHA-256", bytes as BufferSource);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Hash of a file's bytes, or "" when it does not exist. */
export async function fileHash(path: string): Promise<string> {
  try {
    return await sha256(await Deno.readFile(path));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return "";
    throw err;
  }
}

/**
 * From this size a file that may be large is hashed a chunk at a time (chunkedHash): an agent
 * CLI is a native binary of 250 MB or more (claude, codex), which read whole takes as much
 * memory and more than twice as long. Below it, fileHash, without loading node:crypto (25–40
 * ms, about what hashing 16 MB whole takes).
 */
export const CHUNKED_FROM_BYTES = 16 * 1024 * 1024;

/**
 * fileHash for a file that may be large (CHUNKED_FROM_BYTES): the program a role starts, a
 * file relay's guard reads. `size` when the caller has it from its own look at the file.
 */
export async function largeFileHash(path: string, size?: number): Promise<string> {
  size ??= await Deno.stat(path).then((s) => s.size, (err) => {
    if (err instanceof Deno.errors.NotFound) return 0;
    throw err;
  });
  return size < CHUNKED_FROM_BYTES ? await fileHash(path) : await chunkedHash(path);
}

/** fileHash a megabyte at a time, in as much memory (node:crypto, loaded then). */
export async function chunkedHash(path: string): Promise<string> {
  const { createHash } = await import("node:crypto");
  try {
    using file = await Deno.open(path);
    const hash = createHash("sha256");
    const chunk = new Uint8Array(1024 * 1024);
    for (let n = await file.read(chunk); n !== null; n = await file.read(chunk)) {
      hash.update(chunk.subarray(0, n));
    }
    return hash.digest("hex");
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return "";
    throw err;
  }
}
