/**
 * File-system paths for all of relay, without `node:path`: the first `node:` module a Deno
 * process loads costs it ~10–25 ms of CPU (deno's node layer starts: util, assert, buffer, errors …),
 * and no command needs that layer otherwise. On POSIX these are node's
 * `path.posix` functions written out (tests/path.test.ts compares the two on many paths);
 * on Windows, with its drive letters and UNC roots, they are node's `path.win32` itself.
 */

interface PathFunctions {
  join(...parts: string[]): string;
  resolve(...parts: string[]): string;
  dirname(path: string): string;
  basename(path: string): string;
  isAbsolute(path: string): boolean;
  /** The path from `from` to `to` (both resolved first): "" for the same place. */
  relative(from: string, to: string): string;
  /** A `file:` URL's path. */
  fromFileUrl(url: URL): string;
}

/** `.` and `..` segments resolved and repeated slashes collapsed; no root, no trailing slash. */
function collapse(path: string, allowAboveRoot: boolean): string {
  const out: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
      else if (allowAboveRoot) out.push("..");
    } else out.push(segment);
  }
  return out.join("/");
}

function normalize(path: string): string {
  if (path === "") return ".";
  const absolute = path.startsWith("/");
  let body = collapse(path, !absolute);
  if (body === "" && !absolute) body = ".";
  if (body !== "" && path.endsWith("/")) body += "/";
  return absolute ? `/${body}` : body;
}

export const posix: PathFunctions = {
  join(...parts) {
    const given = parts.filter((p) => p !== "");
    return given.length === 0 ? "." : normalize(given.join("/"));
  },
  resolve(...parts) {
    let path = "";
    for (let i = parts.length - 1; i >= -1 && !path.startsWith("/"); i--) {
      const part = i >= 0 ? parts[i]! : Deno.cwd();
      if (part !== "") path = path === "" ? part : `${part}/${path}`;
    }
    const absolute = path.startsWith("/");
    const body = collapse(path, !absolute);
    return absolute ? `/${body}` : body === "" ? "." : body;
  },
  dirname(path) {
    if (path === "") return ".";
    const rooted = path.startsWith("/");
    let end = -1;
    let inName = false;
    for (let i = path.length - 1; i >= 1; i--) {
      if (path[i] === "/") {
        if (inName) {
          end = i;
          break;
        }
      } else inName = true;
    }
    if (end === -1) return rooted ? "/" : ".";
    if (rooted && end === 1) return "//";
    return path.slice(0, end);
  },
  basename(path) {
    let end = path.length;
    while (end > 0 && path[end - 1] === "/") end--;
    return path.slice(path.lastIndexOf("/", end - 1) + 1, end);
  },
  isAbsolute: (path) => path.startsWith("/"),
  relative(from, to) {
    const a = posix.resolve(from).split("/").filter((s) => s !== "");
    const b = posix.resolve(to).split("/").filter((s) => s !== "");
    let same = 0;
    while (same < a.length && same < b.length && a[same] === b[same]) same++;
    return [...a.slice(same).map(() => ".."), ...b.slice(same)].join("/");
  },
  fromFileUrl(url) {
    if (url.protocol !== "file:") throw new TypeError(`${url.href} is not a file: URL`);
    return decodeURIComponent(url.pathname);
  },
};

const windows: PathFunctions | undefined = Deno.build.os === "windows"
  ? await (async () => {
    const [{ win32 }, { fileURLToPath }] = await Promise.all([
      import("node:path"),
      import("node:url"),
    ]);
    return {
      join: win32.join,
      resolve: win32.resolve,
      dirname: win32.dirname,
      basename: (path: string) => win32.basename(path),
      isAbsolute: win32.isAbsolute,
      relative: win32.relative,
      fromFileUrl: (url: URL) => fileURLToPath(url),
    };
  })()
  : undefined;

const chosen = windows ?? posix;

export const join = chosen.join;
export const resolve = chosen.resolve;
export const dirname = chosen.dirname;
export const basename = chosen.basename;
export const isAbsolute = chosen.isAbsolute;
export const relative = chosen.relative;
export const fromFileUrl = chosen.fromFileUrl;
