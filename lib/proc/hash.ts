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

/** sha256 as hex, without a wait (fileHashersSync). */
export interface SyncHash {
  /** A file's bytes, as fileHash; throws what the read throws. */
  file(path: string, size: number): string;
  /** A string's UTF-8 bytes, as sha256. */
  text(text: string): string;
  /** Bytes, or a string's UTF-8 bytes, as sha256. */
  data(data: Uint8Array | string): string;
}

/**
 * Hashes for many files in a row: the guard's read of a whole folder. Synchronous reads and
 * node:crypto's digest (loaded by this call) cost a tenth of fileHash's two awaits a file:
 * 20,000 small files in 0.15 s against 1.4 s, on 2 cores. A file of CHUNKED_FROM_BYTES or more
 * is read a megabyte at a time.
 */
export async function syncHash(): Promise<SyncHash> {
  const { createHash } = await import("node:crypto");
  const chunk = new Uint8Array(1024 * 1024);
  return {
    file(path, size) {
      const hash = createHash("sha256");
      if (size < CHUNKED_FROM_BYTES) return hash.update(Deno.readFileSync(path)).digest("hex");
      using file = Deno.openSync(path);
      for (let n = file.readSync(chunk); n !== null; n = file.readSync(chunk)) {
        hash.update(chunk.subarray(0, n));
      }
      return hash.digest("hex");
    },
    text: (text) => createHash("sha256").update(text).digest("hex"),
    data: (data) => createHash("sha256").update(data).digest("hex"),
  };
}
