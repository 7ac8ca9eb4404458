import assert from "node:assert/strict";
import { barCommandProblem, parseBarCommand } from "../lib/protocol/bar.ts";

const accepted: [string, string[]][] = [
  ["deno task test", ["deno", "task", "test"]],
  ["  deno   test\t-A  ", ["deno", "test", "-A"]],
  ["grep -q 'a|b; c && d > e' file.txt", ["grep", "-q", "a|b; c && d > e", "file.txt"]],
  ["echo 'it''s'", ["echo", "its"]],
  [`echo "it's"`, ["echo", "it's"]],
  [`echo "say \\"hi\\" \\\\ ok"`, ["echo", 'say "hi" \\ ok']],
  [`echo "a\\nb"`, ["echo", "a\\nb"]],
  [`echo "pipes | and ; and & and > are literal here"`, [
    "echo",
    "pipes | and ; and & and > are literal here",
  ]],
  ["echo ''", ["echo", ""]],
  [`echo "" x`, ["echo", "", "x"]],
  ["echo a\\ b", ["echo", "a b"]],
  ["echo \\|", ["echo", "|"]],
  ["echo pre'mid'\"post\"", ["echo", "premidpost"]],
  ["echo '$HOME `x` $(y)'", ["echo", "$HOME `x` $(y)"]],
  [`grep -E "^done$" log.txt`, ["grep", "-E", "^done$", "log.txt"]],
  ["echo cost: 5$", ["echo", "cost:", "5$"]],
  [`echo "\\$HOME"`, ["echo", "$HOME"]],
  ["deno test --filter=a~b#c", ["deno", "test", "--filter=a~b#c"]],
  ["env NODE_ENV=test deno task test", ["env", "NODE_ENV=test", "deno", "task", "test"]],
  ["sh scripts/check.sh", ["sh", "scripts/check.sh"]],
];

for (const [line, argv] of accepted) {
  Deno.test(`parseBarCommand() splits ${JSON.stringify(line)}`, () => {
    assert.deepEqual(parseBarCommand(line), argv);
    assert.equal(barCommandProblem(line), null);
  });
}

const refused: [string, string][] = [
  ["deno test | tee out.txt", '"|" (a pipe)'],
  ["make || true", '"||"'],
  ["make; make test", '";"'],
  ["make && make test", '"&&"'],
  ["sleep 5 &", '"&" (a background job)'],
  ["echo $(whoami)", '"$("'],
  [`echo "$(whoami)"`, '"$("'],
  ["echo `whoami`", "backtick"],
  ['echo "`whoami`"', "backtick"],
  ["deno test > out.txt", '">" (a redirection)'],
  ["wc -l < file", '"<" (a redirection)'],
  ["echo 'a\nb'", "a newline"],
  ["echo a\nb", "a newline"],
  ["echo $HOME", '"$H" (variable expansion)'],
  [`echo "$HOME"`, '"$H" (variable expansion)'],
  ["echo ${HOME}", '"${" (variable expansion)'],
  ["echo 'open", "unterminated single quote"],
  ['echo "open', "unterminated double quote"],
  ['echo "open\\"', "unterminated double quote"],
  ["echo end\\", "backslash at the end"],
  ["", "empty"],
  ["   ", "empty"],
  ["deno test tests/*.ts", '"*" (a filename pattern)'],
  ["ls ~/src", '"~" (home directory expansion)'],
  ["deno test # all of them", '"#" (a comment)'],
  ["(cd sub)", '"(" (a subshell)'],
  ["NODE_ENV=test deno task test", "environment assignment"],
];

for (const [line, found] of refused) {
  Deno.test(`parseBarCommand() refuses ${JSON.stringify(line)}`, () => {
    assert.throws(
      () => parseBarCommand(line),
      (err: unknown) => {
        assert.ok(err instanceof Error);
        assert.equal(err.constructor, Error, "a plain Error");
        assert.ok(err.message.includes(found), `message names ${found}: ${err.message}`);
        if (found !== "empty") assert.match(err.message, /scripts\/check\.sh/);
        return true;
      },
    );
    const problem = barCommandProblem(line);
    assert.ok(problem);
    assert.ok(problem.problem.includes(found));
  });
}

Deno.test("a command list is refused with one command per line as the first fix, a script second", () => {
  for (const line of ["deno lint && deno test", "make; make test"]) {
    const problem = barCommandProblem(line);
    assert.ok(problem, line);
    assert.match(
      problem.fix,
      /^write each command on its own line of the bar \(relay runs every line, in order, and each must pass\); that is better than a script, which is product code the agent can edit\. If they must run as one, put it in a script file \(e\.g\. scripts\/check\.sh\)/,
    );
  }
  // Not a list of commands that must all pass: a script stays the advice.
  assert.match(barCommandProblem("make || true")?.fix ?? "", /^put it in a script file/);
  assert.match(barCommandProblem("deno test | tee out")?.fix ?? "", /^put it in a script file/);
});

Deno.test("parseBarCommand() suggests a script file for a pipeline", () => {
  assert.throws(
    () => parseBarCommand("deno test 2>&1 | grep ok"),
    /relay runs commands without a shell[\s\S]*script file \(e\.g\. scripts\/check\.sh\)/,
  );
});
