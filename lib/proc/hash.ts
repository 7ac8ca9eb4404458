/** sha256 of a string or bytes, as hex. */
export async function sha256(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const digest = await crypto.subtle.digest("SHA-256", bytes as BufferSource);
  return hex(new Uint8Array(digest));
}

/**
 * From this size a file is hashed a chunk at a time: an agent CLI's program is a native
 * binary of 250 MB or more (claude, codex), which read whole would take as much memory and
 * about four times as long. Below it, WebCrypto on the whole file, without loading node:crypto
 * (about 25 ms of a tick's start).
 */
export const STREAM_FROM_BYTES = 16 * 1024 * 1024;

/** Hash of a file's bytes, or "" when it does not exist. */
export async function fileHash(path: string): Promise<string> {
  try {
    using file = await Deno.open(path);
    if ((await file.stat()).size < STREAM_FROM_BYTES) {
      return await sha256(new Uint8Array(await new Response(file.readable).arrayBuffer()));
    }
    const { createHash } = await import("node:crypto");
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

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
