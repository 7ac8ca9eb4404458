/**
 * The demo agent: a scripted executor built into relay, so the loop can be
 * watched end to end with no AI at all. It does what a good agent does: one
 * product change, a commit on the task branch, the verification bar run for
 * real, and an honest report with the pasted output.
 */
import { dirname, join } from "../path.ts";
import { Git } from "../git/git.ts";
import { runCommand } from "../bar/run.ts";
import { parseBrief } from "../protocol/brief.ts";
import { writeReport } from "../protocol/report.ts";
import type { PastedRun } from "../protocol/types.ts";

export interface DemoAgentOptions {
  worktree: string;
  briefPath: string;
  reportPath: string;
  logPath: string;
}

export async function runDemoAgent(opts: DemoAgentOptions): Promise<number> {
  await Deno.mkdir(dirname(opts.logPath), { recursive: true });
  const lines: string[] = [];
  const say = (line: string) => lines.push(`[demo agent] ${line}`);
  try {
    const brief = parseBrief(await Deno.readTextFile(opts.briefPath), opts.briefPath);
    say(`task ${brief.task}: ${brief.title}`);
    const file = `demo/task-${brief.task}.md`;
    await Deno.mkdir(join(opts.worktree, "demo"), { recursive: true });
    await Deno.writeTextFile(
      join(opts.worktree, file),
      `# ${brief.title}\n\nWritten by relay's demo agent for task ${brief.task}.\n\n${brief.goal}\n`,
    );
    const git = new Git(opts.worktree);
    await git.run(["add", "--", file]);
    // A second attempt finds its file already committed: nothing new is not a failure.
    if (!(await git.ok(["diff", "--cached", "--quiet"]))) {
      await git.run([
        "commit",
        "--quiet",
        "--no-verify",
        "-m",
        `Task #${brief.task}: ${brief.title}`,
      ]);
      say(`committed ${file}`);
    } else {
      say(`${file} was already committed`);
    }
    const verification: PastedRun[] = [];
    for (const command of brief.bar) {
      const res = await runCommand(command, opts.worktree, 60_000);
      verification.push({ command, output: res.output, exit: res.exit });
      say(`ran ${command}: exit ${res.exit}`);
    }
    const passed = verification.every((v) => v.exit === 0);
    await Deno.writeTextFile(
      opts.reportPath,
      writeReport({
        task: brief.task,
        // An honest agent does not ship what fails its own bar.
        outcome: passed ? "SHIPPED" : "BLOCKED",
        branch: brief.branch,
        head: "",
        pr: "",
        warnings: [],
        whatShipped: `Added \`${file}\` with the brief's goal.`,
        verification,
        beyond: "Nothing: the demo agent does exactly one thing.",
        pushback: passed
          ? "None."
          : "Some verification commands failed; the output above shows which.",
        evidence: [],
        extra: [],
      }),
    );
    say("wrote the report");
    return 0;
  } catch (err) {
    say(`failed: ${(err as Error).message}`);
    return 1;
  } finally {
    await Deno.writeTextFile(opts.logPath, lines.join("\n") + "\n", { append: true });
  }
}
