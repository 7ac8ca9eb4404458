/**
 * YAML text → plain value, keeping enough of the document to tell which line
 * a key path sits on, so schema errors can name a line.
 */
import { isAlias, isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from "yaml";
import { InputError } from "../errors.ts";

export type KeyPath = readonly (string | number)[];

export interface YamlSource {
  /** The document as plain JS (null for an empty file). */
  value: unknown;
  /** 1-based line of the key (or sequence item) at `path`; undefined when the path is absent. */
  lineOf(path: KeyPath): number | undefined;
}

/** Parses YAML; a syntax error becomes an InputError naming the file and line. */
export function parseYamlWithLines(text: string, file: string): YamlSource {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  const first = doc.errors[0];
  if (first !== undefined) {
    const line = first.linePos?.[0]?.line;
    // An error that starts on one line may lie on the next (an indented line read as part of
    // the value above it): the span of what went wrong there, as far as the parser saw it.
    const ends = doc.errors.filter((e) => e.linePos?.[0]?.line === line)
      .map((e) => e.linePos?.[1]?.line ?? 0);
    const end = Math.max(0, ...ends);
    const span = line !== undefined && end > line ? ` (from line ${line} to line ${end})` : "";
    const problem = `Cannot parse YAML${span}: ${firstLine(first.message)}`;
    const fix = "correct the YAML syntax there (indentation, quoting, brackets, duplicate keys)";
    throw new InputError(line === undefined ? { file } : { file, line }, problem, fix);
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw new InputError(
      { file },
      `Cannot read YAML: ${(err as Error).message}`,
      "remove the aliases",
    );
  }
  const lineAt = (offset: number | undefined): number | undefined =>
    offset === undefined ? undefined : lineCounter.linePos(offset).line;

  function lineOf(path: KeyPath): number | undefined {
    let node: unknown = doc.contents;
    if (path.length === 0) return lineAt((node as Node | null)?.range?.[0]) ?? 1;
    for (let i = 0; i < path.length; i++) {
      if (isAlias(node)) node = node.resolve(doc);
      const seg = path[i];
      const last = i === path.length - 1;
      if (isMap(node)) {
        const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
        if (pair === undefined) return undefined;
        if (last) return lineAt((pair.key as Node).range?.[0]);
        node = pair.value;
      } else if (isSeq(node) && typeof seg === "number") {
        const item = node.items[seg];
        if (item === undefined) return undefined;
        if (last) return lineAt((item as Node | null)?.range?.[0]);
        node = item;
      } else {
        return undefined;
      }
    }
    return undefined;
  }

  return { value, lineOf };
}

/** yaml's pretty messages end the first line with " at line N, column M:" and add a code frame. */
function firstLine(message: string): string {
  const head = message.split("\n")[0] ?? message;
  return head.replace(/ at line \d+, column \d+:?$/, "");
}
