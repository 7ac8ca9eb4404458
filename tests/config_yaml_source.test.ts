import assert from "node:assert/strict";
import { InputError } from "../lib/errors.ts";
import { parseYamlWithLines } from "../lib/config/yaml_source.ts";

const TEXT = `# comment
top: 1
nested:
  inner:
    leaf: x
list:
  - a
  - key: v
flow: { a: 1, b: [x, y] }
`;

Deno.test("parseYamlWithLines() returns the plain value", () => {
  const { value } = parseYamlWithLines(TEXT, "f.yaml");
  assert.deepEqual(value, {
    top: 1,
    nested: { inner: { leaf: "x" } },
    list: ["a", { key: "v" }],
    flow: { a: 1, b: ["x", "y"] },
  });
});

Deno.test("parseYamlWithLines() finds the line of keys, nested keys and sequence items", () => {
  const { lineOf } = parseYamlWithLines(TEXT, "f.yaml");
  assert.equal(lineOf(["top"]), 2);
  assert.equal(lineOf(["nested"]), 3);
  assert.equal(lineOf(["nested", "inner", "leaf"]), 5);
  assert.equal(lineOf(["list", 0]), 7);
  assert.equal(lineOf(["list", 1, "key"]), 8);
  assert.equal(lineOf(["flow", "b", 1]), 9);
});

Deno.test("parseYamlWithLines() gives undefined for a path that is not in the file", () => {
  const { lineOf } = parseYamlWithLines(TEXT, "f.yaml");
  assert.equal(lineOf(["missing"]), undefined);
  assert.equal(lineOf(["top", "deeper"]), undefined);
  assert.equal(lineOf(["list", 5]), undefined);
});

Deno.test("parseYamlWithLines() follows aliases", () => {
  const { lineOf, value } = parseYamlWithLines("base: &b\n  k: 1\ncopy: *b\n", "f.yaml");
  assert.deepEqual(value, { base: { k: 1 }, copy: { k: 1 } });
  assert.equal(lineOf(["copy", "k"]), 2);
});

Deno.test("parseYamlWithLines() reads an empty file as null", () => {
  assert.equal(parseYamlWithLines("", "f.yaml").value, null);
  assert.equal(parseYamlWithLines("# only a comment\n", "f.yaml").value, null);
});

function inputError(fn: () => unknown): InputError {
  try {
    fn();
  } catch (e) {
    if (e instanceof InputError) return e;
    throw e;
  }
  assert.fail("expected an InputError");
}

Deno.test("parseYamlWithLines() turns a syntax error into an InputError with file and line", () => {
  const e = inputError(() => parseYamlWithLines("a:\n\t- x\n", "conf.yaml"));
  assert.equal(e.location.file, "conf.yaml");
  assert.equal(e.location.line, 2);
  assert.match(e.message, /^conf\.yaml:2: Cannot parse YAML: /);
  assert.match(e.message, /fix: correct the YAML syntax/);
});

Deno.test("parseYamlWithLines() names the span of an error that starts on one line and lies on the next", () => {
  const e = inputError(() => parseYamlWithLines("version: 1\n  bad indent: x\n", "conf.yaml"));
  assert.equal(e.location.line, 1);
  assert.match(e.message, /^conf\.yaml:1: Cannot parse YAML \(from line 1 to line 2\): /);
  const one = inputError(() => parseYamlWithLines("a: 1\na: 2\n", "conf.yaml"));
  assert.match(one.message, /^conf\.yaml:2: Cannot parse YAML: Map keys/);
});

Deno.test("parseYamlWithLines() rejects a duplicate key, naming its line", () => {
  const e = inputError(() => parseYamlWithLines("a: 1\nb: 2\na: 3\n", "conf.yaml"));
  assert.equal(e.location.line, 3);
  assert.match(e.message, /Map keys must be unique/);
});
