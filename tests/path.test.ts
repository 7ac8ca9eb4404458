/**
 * lib/path.ts against node:path.posix: the same answer for every path of a generated set
 * (roots, repeated and trailing slashes, `.` and `..` everywhere, dots in names).
 */
import assert from "node:assert/strict";
import { posix as node } from "node:path";
import { pathToFileURL } from "node:url";
import * as path from "../lib/path.ts";

const SEGMENTS = ["", ".", "..", "a", "b.c", "...", ".relay", "x y"];

/** Every path of up to three segments from SEGMENTS, with and without a root and a trailing slash. */
function paths(): string[] {
  const out = new Set<string>(["", "/", "//", "///", "a//b", "/a//b//", "./", "../", "//a"]);
  for (const a of SEGMENTS) {
    for (const b of SEGMENTS) {
      for (const c of ["", ...SEGMENTS.slice(1)]) {
        const body = [a, b, c].filter((s, i) => i < 2 || s !== "").join("/");
        for (const p of [body, `/${body}`, `${body}/`, `/${body}//`]) out.add(p);
      }
    }
  }
  return [...out];
}

Deno.test("lib/path.ts posix functions give node:path.posix's answers", () => {
  const all = paths();
  assert.ok(all.length > 1_000, `${all.length} paths`);
  for (const p of all) {
    assert.equal(path.posix.dirname(p), node.dirname(p), `dirname(${JSON.stringify(p)})`);
    assert.equal(path.posix.basename(p), node.basename(p), `basename(${JSON.stringify(p)})`);
    assert.equal(path.posix.isAbsolute(p), node.isAbsolute(p), `isAbsolute(${JSON.stringify(p)})`);
    assert.equal(path.posix.join(p), node.join(p), `join(${JSON.stringify(p)})`);
    assert.equal(path.posix.resolve(p), node.resolve(p), `resolve(${JSON.stringify(p)})`);
  }
  // Pairs and triples: join's and resolve's handling of empty parts and of a later root.
  const some = all.filter((_, i) => i % 7 === 0);
  for (const a of some) {
    for (const b of some) {
      assert.equal(path.posix.join(a, b), node.join(a, b), `join(${JSON.stringify([a, b])})`);
      assert.equal(
        path.posix.resolve(a, b),
        node.resolve(a, b),
        `resolve(${JSON.stringify([a, b])})`,
      );
      assert.equal(
        path.posix.relative(a, b),
        node.relative(a, b),
        `relative(${JSON.stringify([a, b])})`,
      );
    }
  }
  // relative() on names that share a prefix but not a segment, and on the root.
  for (
    const [a, b] of [["/a/b", "/a/bc"], ["/a/bc", "/a/b"], ["/", "/a"], ["/a", "/"], ["/a", "/a"]]
  ) {
    assert.equal(path.posix.relative(a!, b!), node.relative(a!, b!), `relative(${a}, ${b})`);
  }
  assert.equal(path.posix.join(), node.join());
  assert.equal(path.posix.resolve(), node.resolve());
  assert.equal(path.posix.join("a", "", "b", ""), node.join("a", "", "b", ""));
  assert.equal(path.posix.resolve("/a", "b", "../c", ""), node.resolve("/a", "b", "../c", ""));
});

Deno.test("lib/path.ts: the chosen functions are the platform's, and a file: URL gives its path", () => {
  if (Deno.build.os !== "windows") {
    assert.equal(path.join, path.posix.join);
    assert.equal(path.resolve, path.posix.resolve);
  }
  for (const p of ["/tmp/a b/c", "/tmp/ü%/d", "/"]) {
    if (Deno.build.os === "windows") continue;
    assert.equal(path.fromFileUrl(pathToFileURL(p)), p);
  }
  if (Deno.build.os !== "windows") {
    assert.equal(path.fromFileUrl(new URL("../..", "file:///x/y/z/m.ts")), "/x/");
  }
  assert.throws(() => path.posix.fromFileUrl(new URL("https://example.com/a")), /not a file: URL/);
});
