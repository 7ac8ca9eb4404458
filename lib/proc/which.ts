/** Where a program is: a file that can be run, looked up on a PATH as a start would. */
import { isAbsolute, join } from "../path.ts";

const WINDOWS = Deno.build.os === "windows";

/** A file (not a folder) with an executable bit (any file on Windows). */
export function isExecutable(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.isFile && (WINDOWS || info.mode === null || (info.mode & 0o111) !== 0);
  } catch {
    return false;
  }
}

/**
 * The full path of `program` on `pathEnv` (a bare name; on Windows with .exe, .cmd, .bat
 * tried too), or null. An absolute path is itself when it is executable.
 */
export function onPath(program: string, pathEnv: string): string | null {
  if (isAbsolute(program)) return isExecutable(program) ? program : null;
  const exts = WINDOWS ? ["", ".exe", ".cmd", ".bat"] : [""];
  for (const dir of pathEnv.split(WINDOWS ? ";" : ":")) {
    if (dir === "") continue;
    for (const ext of exts) {
      const candidate = join(dir, program + ext);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return null;
}

/** A script's first line, `#!<interpreter> [args]`, as the kernel reads it. */
export interface Shebang {
  /** The line after `#!`, trimmed. */
  line: string;
  /** The interpreter's path: what the kernel starts (it never looks on PATH). */
  interpreter: string;
  /** For `#!/usr/bin/env [-S] node`: the program env looks up on PATH ("node"). */
  viaEnv: string | null;
  /** The line ends in a carriage return (Windows line endings), which the kernel keeps. */
  crlf: boolean;
}

/** The `#!` line of the file at `path`, or null (no such line, not a file, unreadable). */
export function readShebang(path: string): Shebang | null {
  let head: string;
  try {
    using file = Deno.openSync(path);
    const buf = new Uint8Array(256);
    const n = file.readSync(buf) ?? 0;
    if (n < 3 || buf[0] !== 0x23 || buf[1] !== 0x21) return null;
    head = new TextDecoder().decode(buf.subarray(2, n));
  } catch {
    return null;
  }
  const raw = head.split("\n", 1)[0]!;
  // Bytes that are not UTF-8 name a path this cannot stat as the kernel would: no judgement.
  if (raw.includes("\uFFFD")) return null;
  const line = raw.trim();
  const [interpreter, ...args] = line.split(/[ \t]+/);
  if (interpreter === undefined || interpreter === "") return null;
  let viaEnv: string | null = null;
  if (/(^|\/)env$/.test(interpreter)) {
    // The kernel hands env all that follows it as one argument: without -S, "bash -e" is the
    // name env looks for, and finds nothing.
    const name = args[0] === "-S" ? args[1] : args.join(" ");
    // Options, assignments or a path: env's own business, not a name to look up.
    if (name !== undefined && name !== "" && !/^-|=|\//.test(name)) viaEnv = name;
  }
  return { line, interpreter, viaEnv, crlf: raw.endsWith("\r") };
}

/**
 * Why the executable file at `path` would not run although it is there: its `#!` line
 * names an interpreter that is not an executable file, or has env start a program that is
 * not on `pathEnv`. null when nothing is wrong that this can see (or on Windows).
 */
export function startProblem(path: string, pathEnv: string): string | null {
  if (WINDOWS) return null;
  const shebang = readShebang(path);
  if (shebang === null) return null;
  if (shebang.crlf) {
    return `its first line (#!${shebang.line}) ends in a carriage return (Windows line endings), which the kernel takes as part of the interpreter's name: convert the file to Unix line endings`;
  }
  // A relative `#!` path is the kernel's to resolve from the child's folder: not judged here.
  if (isAbsolute(shebang.interpreter) && !isExecutable(shebang.interpreter)) {
    return `its first line (#!${shebang.line}) names ${shebang.interpreter}, which is not an executable file`;
  }
  if (shebang.viaEnv?.includes(" ")) {
    return `its first line (#!${shebang.line}) has env look for a program named "${shebang.viaEnv}", as the kernel passes all after env as one argument: write "#!${shebang.interpreter} -S ${shebang.viaEnv}"`;
  }
  // With no PATH at all, env looks in the system's default path.
  if (shebang.viaEnv !== null && onPath(shebang.viaEnv, pathEnv || "/bin:/usr/bin") === null) {
    return `its first line (#!${shebang.line}) starts "${shebang.viaEnv}", which is not on PATH`;
  }
  return null;
}
