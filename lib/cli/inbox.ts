import { resolve } from "../path.ts";
import { UsageError } from "../errors.ts";
import { type Context, parseCommand, printJson, requireRepo } from "./args.ts";

async function readStdin(): Promise<string> {
  return await new Response(Deno.stdin.readable).text();
}

export async function inbox(args: string[], ctx: Context): Promise<number> {
  const [sub, ...rest] = args;
  const { addToInbox, dropFromInbox, listInbox } = await import("../loop/inbox.ts");
  const repo = requireRepo(ctx);
  switch (sub) {
    case "add": {
      const { values, positionals } = parseCommand("inbox", rest, { json: { type: "boolean" } }, {
        min: 1,
        max: 1,
        names: "<file> or - for stdin",
      });
      const source = positionals[0]!;
      const text = source === "-"
        ? await readStdin()
        : await readBriefFile(resolve(ctx.cwd, source), source);
      const entry = await addToInbox(repo, text, source === "-" ? "<stdin>" : source);
      if (values.json) printJson({ task: entry.task, title: entry.title, file: entry.file });
      else console.log(`queued task ${entry.task}: ${entry.title} (${entry.file})`);
      return 0;
    }
    case "list": {
      const { values } = parseCommand("inbox", rest, { json: { type: "boolean" } }, {
        min: 0,
        max: 0,
      });
      const entries = await listInbox(repo.root);
      if (values.json) {
        printJson(
          entries.map((e) => ({ task: e.task, title: e.title, kind: e.kind, file: e.file })),
        );
      } else if (entries.length === 0) console.log("the inbox is empty");
      else {for (const e of entries) {
          console.log(`${String(e.task).padStart(4)}  ${e.kind.padEnd(7)}  ${e.title}`);
        }}
      return 0;
    }
    case "drop": {
      const { positionals } = parseCommand("inbox", rest, {}, { min: 1, max: 1, names: "<task>" });
      const task = Number(positionals[0]);
      if (!Number.isInteger(task) || task <= 0) {
        throw new UsageError(`"${positionals[0]}" is not a task number`, "inbox");
      }
      const entry = await dropFromInbox(repo.root, task);
      console.log(`dropped task ${entry.task}: ${entry.title} (${entry.file})`);
      return 0;
    }
    default:
      throw new UsageError(
        sub === undefined ? "inbox needs add, list or drop" : `unknown inbox command "${sub}"`,
        "inbox",
      );
  }
}

async function readBriefFile(path: string, shown: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      throw new UsageError(`Cannot read "${shown}": no such file`, "inbox");
    }
    throw err;
  }
}
