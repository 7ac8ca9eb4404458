/**
 * Which paths are build output and caches: what a test run or an install
 * leaves in a tree and nobody means to commit. The executor's leftover commit
 * never sweeps them (lib/loop/build_output.ts), and the gate refuses a branch
 * that adds or changes one (lib/gate/scope.ts). The repo config's
 * `never_commit` adds globs.
 *
 * Only unambiguous names are built in. Left out on purpose, because some
 * products commit them or use the name for source: `dist/`, `build/`, `out/`,
 * `target/`, `bin/`, `lib/`, `vendor/`, `venv/`, `*.obj` (also a 3D model
 * format), `*.so`/`*.a`/`*.dll` (prebuilt libraries), `.idea/`, `.vscode/`.
 * `coverage/` is built in at the root only (where jest, nyc and c8 write it).
 */
import { GlobSet, globToRegExp, normalizePath } from "./glob.ts";

/** Globs in the gate's syntax (lib/git/glob.ts). Shown in README's config section. */
export const BUILD_OUTPUT: readonly string[] = [
  // Python
  "__pycache__/",
  "*.pyc",
  "*.pyo",
  ".pytest_cache/",
  ".mypy_cache/",
  ".ruff_cache/",
  ".hypothesis/",
  ".tox/",
  ".nox/",
  ".venv/",
  "*.egg-info/",
  ".coverage",
  ".coverage.*",
  "htmlcov/",
  // JavaScript / TypeScript
  "node_modules/",
  ".nyc_output/",
  "/coverage/",
  ".next/",
  ".nuxt/",
  ".svelte-kit/",
  ".parcel-cache/",
  ".eslintcache",
  "*.tsbuildinfo",
  // JVM, C
  ".gradle/",
  "*.class",
  "*.o",
  // Generic caches and OS litter
  ".cache/",
  ".DS_Store",
  "Thumbs.db",
];

export interface BuildOutputMatcher {
  /** The glob a repo-relative path matches, or undefined when it is not build output. */
  match(path: string): string | undefined;
  /**
   * How to name a path in a message: the folder a folder glob matched
   * (`src/__pycache__/`), else the path itself. Many files of one folder
   * then read as one entry.
   */
  entry(path: string): string;
}

/** A matcher for the built-in list plus the repo's `never_commit` globs. */
export function buildOutputMatcher(extra: readonly string[] = []): BuildOutputMatcher {
  const globs = [...BUILD_OUTPUT, ...extra];
  const set = new GlobSet(globs);
  const match = (path: string) => {
    const first = set.matches(normalizePath(path))[0];
    return first === undefined ? undefined : globs[first];
  };
  return {
    match,
    entry(path) {
      const p = normalizePath(path);
      const glob = match(p);
      if (glob === undefined || !glob.endsWith("/")) return p;
      // The shortest leading folder the folder glob matches on its own.
      const re = globToRegExp(glob.replace(/\/+$/, ""));
      const parts = p.split("/");
      for (let i = 1; i < parts.length; i++) {
        const folder = parts.slice(0, i).join("/");
        if (re.test(folder)) return `${folder}/`;
      }
      return p;
    },
  };
}
