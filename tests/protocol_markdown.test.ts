import assert from "node:assert/strict";
import { InputError } from "../lib/errors.ts";
import {
  atxHeading,
  blocksText,
  codeSpan,
  fenceFor,
  normalizeText,
  renderFence,
  scanBlocks,
  splitSections,
  stripCodeSpan,
  toLines,
} from "../lib/protocol/markdown.ts";

function fenced(text: string) {
  const blocks = scanBlocks(toLines(text), "x.md", "report");
  return blocks.filter((b) => b.kind === "fence");
}

Deno.test("normalizeText() drops a BOM and turns CRLF into LF but keeps lone CRs", () => {
  assert.equal(normalizeText("\uFEFFa\r\nb\rc\r\n"), "a\nb\rc\n");
});

Deno.test("scanBlocks() reads backtick and tilde fences of any length", () => {
  const text = "a\n````sh\n```\ninner\n```\n````\n~~~\n```\n~~~\nb\n";
  const blocks = fenced(text);
  assert.equal(blocks.length, 2);
  assert.deepEqual(
    blocks.map((b) => [b.line, b.endLine, b.fence, b.info, b.content]),
    [[2, 6, "````", "sh", "```\ninner\n```"], [7, 9, "~~~", "", "```"]],
  );
});

Deno.test("scanBlocks() keeps headings inside a fence out of the section split", () => {
  const blocks = scanBlocks(
    toLines("## One\n```\n## not a heading\n```\n## Two\n"),
    "x.md",
    "report",
  );
  const { sections } = splitSections(blocks, 2);
  assert.deepEqual(sections.map((s) => [s.heading, s.line]), [["One", 1], ["Two", 5]]);
});

Deno.test("scanBlocks() strips the opening fence's indentation from the content", () => {
  const [block] = fenced("  ```\n    x\n y\n  ```\n");
  assert.equal(block?.content, "  x\ny");
});

Deno.test("scanBlocks() rejects an unterminated fence with its line and a longer-fence hint", () => {
  assert.throws(
    () => scanBlocks(toLines("text\n```\nout\n"), "COWORK-STATUS.md", "report"),
    (err: unknown) => {
      assert.ok(err instanceof InputError);
      assert.equal(err.location.line, 2);
      assert.match(err.message, /^COWORK-STATUS\.md:2: Cannot read the report: .*never closed/);
      assert.match(err.message, /fix: .*"````"/);
      return true;
    },
  );
});

Deno.test("atxHeading() reads levels and strips closing hashes", () => {
  assert.deepEqual(atxHeading("## Goal"), { level: 2, title: "Goal" });
  assert.deepEqual(atxHeading("### `deno test` "), { level: 3, title: "`deno test`" });
  assert.deepEqual(atxHeading("## Done when ##"), { level: 2, title: "Done when" });
  assert.deepEqual(atxHeading("## C#"), { level: 2, title: "C#" });
  assert.equal(atxHeading("##Goal"), null);
  assert.equal(atxHeading("    ## code"), null);
});

Deno.test("blocksText() trims blank lines and trailing spaces but keeps fences verbatim", () => {
  const blocks = scanBlocks(toLines("\n\n  indented  \n```\nkeep  \n```\n\n"), "x.md", "brief");
  assert.equal(blocksText(blocks), "  indented\n```\nkeep  \n```");
});

Deno.test("fenceFor() is longer than any backtick run in the content", () => {
  assert.equal(fenceFor("plain"), "```");
  assert.equal(fenceFor("a ``` b"), "````");
  assert.equal(fenceFor("``````"), "```````");
});

Deno.test("renderFence() round-trips any content through scanBlocks()", () => {
  const samples = [
    "",
    "\n",
    "\n\n",
    "one",
    "one\n",
    "\n\nlead and trail\n\n",
    "```\ncode\n```",
    "~~~\n````x\n~~~",
    "  indented\n\ttab",
    "progress 10%\rprogress 100%",
  ];
  for (const content of samples) {
    const [block] = fenced(`${renderFence(content)}\n`);
    assert.equal(block?.content, content, JSON.stringify(content));
  }
});

Deno.test("codeSpan() and stripCodeSpan() round-trip commands with backticks", () => {
  for (const text of ["deno test", "grep 'a`b' f", "`start", "end`", "a `` b"]) {
    assert.equal(stripCodeSpan(codeSpan(text)), text);
  }
  assert.equal(codeSpan("deno test"), "`deno test`");
  assert.equal(stripCodeSpan("deno test"), "deno test");
  assert.equal(stripCodeSpan("`a` and `b`"), "`a` and `b`");
});
