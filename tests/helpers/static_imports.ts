/**
 * The modules a module loads before any `await import(...)`: its static
 * imports, followed through relay's own files. The idle path and the lean
 * commands (gate, audit) are held to what this finds.
 */
import { dirname, join, resolve } from "node:path";
import { ROOT } from "./scene.ts";

/**
 * The specifiers of a module's static `import … from "…"`, `export … from "…"`
 * and side-effect `import "…"` statements. Dynamic `import(...)` is not one.
 */
export function staticSpecifiers(source: string): string[] {
  // Drop comments so commented-out imports and doc examples do not count.
  const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const found: string[] = [];
  const statement =
    /^[ \t]*(?:import|export)(?:[ \t]+type)?[ \t\n]+(?:[^;"'`()]*?[ \t\n]from[ \t\n]*)?["']([^"']+)["']/gm;
  for (const match of code.matchAll(statement)) found.push(match[1]!);
  return found;
}

/** Every module reached from `entry` through static imports: file paths and bare specifiers. */
export async function staticClosure(entry: string): Promise<{ files: string[]; bare: string[] }> {
  const files = new Set<string>();
  const bare = new Set<string>();
  const queue = [resolve(entry)];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    for (const spec of staticSpecifiers(await Deno.readTextFile(file))) {
      if (spec.startsWith("./") || spec.startsWith("../")) queue.push(resolve(dirname(file), spec));
      else bare.add(spec);
    }
  }
  const rel = (f: string) => f.slice(ROOT.length + 1);
  return { files: [...files].map(rel).sort(), bare: [...bare].sort() };
}

/** Every TypeScript module under `dir`, sorted. */
export async function modulesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) out.push(...await modulesUnder(path));
    else if (e.name.endsWith(".ts")) out.push(path);
  }
  return out.sort();
}
