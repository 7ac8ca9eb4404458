/**
 * `relay schedule print --github-actions`: the printed workflow, read back
 * with the yaml package, has the shape Actions needs (a 5-minute schedule, a
 * poll and a review job that never stack, minimal permissions, a full
 * checkout, the pinned release checked against SHA256SUMS, the two ticks).
 * Its download and profile steps are run for real by bash against a stand-in
 * release on disk (a fake curl): a tampered binary stops the job. Printing
 * writes nothing, and install / uninstall / another kind with it are usage
 * errors.
 */
import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { parse } from "yaml";
import { all, exists, makeScene, ROOT, type Scene } from "./helpers/scene.ts";
import { outputPath } from "../scripts/compile.ts";
import { VERSION } from "../lib/cli/help.ts";
import { DEFAULT_ROLE_TIMEOUT_MS, parseProfile } from "../lib/config/profile.ts";
import {
  ACTIONS_CRON,
  type ActionsInput,
  HOSTED_JOB_MINUTES,
  jobTimeout,
  RELEASE_ASSET,
} from "../lib/cli/schedule_actions.ts";

type Step = {
  name?: string;
  uses?: string;
  if?: string;
  run?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
};
type Job = {
  "runs-on": string;
  concurrency: { group: string; "cancel-in-progress": boolean };
  "timeout-minutes": number;
  permissions: Record<string, string>;
  steps: Step[];
};
type Workflow = {
  name: string;
  on: { schedule: { cron: string }[]; workflow_dispatch: unknown };
  permissions: Record<string, string>;
  defaults: { run: { shell: string } };
  env: Record<string, string>;
  jobs: Record<string, Job>;
};

/** Every file under `dir` (.git included) with its bytes' digest: what "nothing changed" means. */
async function tree(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) out.push(...await tree(path));
    else if (e.isFile) {
      const bytes = await Deno.readFile(path);
      const sum = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
      out.push(`${path} ${Array.from(sum, (b) => b.toString(16).padStart(2, "0")).join("")}`);
    } else out.push(`${path} (link)`);
  }
  return out.sort();
}

async function state(scene: Scene): Promise<string> {
  return `${await scene.snapshot()}\n${(await tree(scene.work)).join("\n")}`;
}

async function print(scene: Scene, extra: string[] = []) {
  const res = await scene.relay(["schedule", "print", "--github-actions", ...extra]);
  assert.equal(res.code, 0, all(res));
  return { res, workflow: parse(res.stdout) as Workflow };
}

/** The workflow's comments as one line of prose: a phrase may be wrapped anywhere. */
function comments(text: string): string {
  return text.split("\n").filter((l) => /^\s*#/.test(l)).map((l) => l.replace(/^\s*# ?/, ""))
    .join(" ");
}

function step(job: Job, pattern: RegExp): Step {
  const found = job.steps.filter((s) => pattern.test(s.name ?? ""));
  assert.equal(found.length, 1, `one step named ${pattern} in ${JSON.stringify(job.steps)}`);
  return found[0]!;
}

/** Runs a step's script as Actions would (bash -eo pipefail), with only the environment given. */
async function runStep(script: string, env: Record<string, string>, cwd: string) {
  const out = await new Deno.Command("bash", {
    args: ["--noprofile", "--norc", "-eo", "pipefail", "-c", script],
    cwd,
    env,
    clearEnv: true,
    stdin: "null",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

/**
 * A release as .github/workflows/release.yml publishes it, in a folder: the
 * Linux binary (here a script answering `version` as relay does), another
 * platform's, and SHA256SUMS made the way the release job makes it.
 * A stand-in curl serves it: `curl ... -o FILE URL` copies the URL's last
 * part from the folder, and fails as curl -f does when there is none.
 */
async function fakeRelease(
  dir: string,
  version: string,
): Promise<{ bin: string; release: string }> {
  const release = join(dir, "release");
  const bin = join(dir, "bin");
  await Deno.mkdir(release, { recursive: true });
  await Deno.mkdir(bin, { recursive: true });
  await Deno.writeTextFile(
    join(release, RELEASE_ASSET),
    `#!/bin/sh\necho "relay ${version} (deno 2.9.6, linux-x86_64)"\n`,
  );
  await Deno.writeTextFile(join(release, "relay-aarch64-apple-darwin"), "another platform\n");
  const sums = await runStep("sha256sum relay-* > SHA256SUMS", { PATH: "/usr/bin:/bin" }, release);
  assert.equal(sums.code, 0, sums.stderr);
  await Deno.writeTextFile(
    join(bin, "curl"),
    `#!/bin/bash
out=""; url=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift 2 ;;
    -*) shift ;;
    *) url="$1"; shift ;;
  esac
done
echo "$url" >> "${join(dir, "urls")}"
src="${release}/\${url##*/}"
[ -f "$src" ] || { echo "curl: (22) The requested URL returned error: 404" >&2; exit 22; }
cp "$src" "$out"
`,
  );
  await Deno.chmod(join(bin, "curl"), 0o755);
  return { bin, release };
}

Deno.test("schedule print --github-actions prints one workflow: a 5-minute schedule, a poll and a review job that never stack, minimal permissions, a full checkout of main, the pinned release checked against SHA256SUMS, the two ticks; nothing in the repository changes", async () => {
  await using scene = await makeScene();
  const before = await state(scene);
  const { res, workflow } = await print(scene);
  assert.equal(await state(scene), before, "printing changed the repository");
  assert.equal(await exists(join(scene.work, ".github")), false);
  assert.match(res.stderr, /Printed only: .*commit it yourself as \.github\/workflows\/relay\.yml/);
  assert.match(res.stderr, /merge gate refuses a PR that touches \.github\//);
  // The scene's config keeps both ticks on one machine: print says what the workflow needs.
  assert.match(
    res.stderr,
    /warning: \.relay\/config\.yaml has machines: one; .*set machines: split/,
  );

  // The schedule: GitHub's shortest interval, said so in a comment; and by hand.
  assert.equal(ACTIONS_CRON, "*/5 * * * *");
  assert.deepEqual(workflow.on.schedule, [{ cron: "*/5 * * * *" }]);
  assert.deepEqual(workflow.on.workflow_dispatch, {
    inputs: {
      resume: {
        description: "relay resume before each tick: clears a HOLD you have dealt with",
        type: "boolean",
        default: false,
      },
    },
  });
  assert.match(res.stdout, /# Every 5 minutes: GitHub's shortest interval/);
  // Said at the top: printed only, never lands through relay, and the two machines need split mode.
  assert.match(res.stdout, /^# relay only prints this file\./m);
  assert.match(res.stdout, /relay's merge gate refuses any PR that touches \.github\/ \(CI\)/);
  assert.match(res.stdout, /^# The two jobs run on different machines/m);

  // The pinned release: this relay's version, the Linux x64 asset the release builds.
  assert.equal(workflow.env.RELAY_VERSION, VERSION);
  assert.equal(workflow.env.RELAY_ASSET, basename(outputPath("x86_64-unknown-linux-gnu")));
  assert.deepEqual(workflow.permissions, {});
  assert.equal(workflow.defaults.run.shell, "bash");

  assert.deepEqual(Object.keys(workflow.jobs), ["poll", "review"]);
  for (const tick of ["poll", "review"] as const) {
    const job = workflow.jobs[tick]!;
    assert.deepEqual(job.concurrency, { group: `relay-${tick}`, "cancel-in-progress": false });
    // forge: plain: pushes only, no pull-requests permission.
    assert.deepEqual(job.permissions, { contents: "write" });
    assert.equal(job["runs-on"], "ubuntu-24.04");
    const names = job.steps.map((s) => s.name ?? s.uses);
    const checkout = job.steps[0]!;
    assert.match(checkout.uses!, /^actions\/checkout@v\d+$/);
    assert.deepEqual(checkout.with, { ref: "main", "fetch-depth": 0 });
    const download = step(job, /^Download relay/);
    assert.match(download.run!, /"\$base\/\$RELAY_ASSET"/);
    assert.match(download.run!, /"\$base\/SHA256SUMS"/);
    assert.match(download.run!, /sha256sum --check --strict/);
    const identity = step(job, /git identity/);
    assert.match(identity.run!, /git config --global user\.name /);
    assert.match(identity.run!, /git config --global user\.email /);
    const profile = step(job, /^Write the operator profile$/);
    assert.equal(profile.env?.RELAY_PROFILE_YAML, "${{ secrets.RELAY_PROFILE_YAML }}");
    const relay = step(job, new RegExp(`^relay ${tick}$`));
    assert.match(
      relay.run!,
      new RegExp(`\\nrelay --profile "\\$RUNNER_TEMP/relay-profile\\.yaml" ${tick}\\n$`),
    );
    // The scene's roles are `command` programs: no secret relay knows of, no gh token (plain).
    assert.deepEqual(relay.env, { RELAY_RESUME: "${{ inputs.resume }}" });
    // Each job's records (.git/relay/) come back from its last run and are kept for its next,
    // also after a failed or cancelled run: attempts, fix rounds and a HOLD outlive a runner.
    const restore = step(job, /^Restore relay's records from the last /);
    const save = step(job, /^Keep relay's records for the next /);
    assert.equal(restore.uses, "actions/cache/restore@v4");
    assert.equal(save.uses, "actions/cache/save@v4");
    assert.equal(save.if, "always()");
    const key = `relay-records-${tick}-\${{ github.run_id }}-\${{ github.run_attempt }}`;
    assert.deepEqual(restore.with, {
      path: ".git/relay",
      key,
      "restore-keys": `relay-records-${tick}-`,
    });
    assert.deepEqual(save.with, { path: ".git/relay", key });
    assert.equal(names.indexOf(restore.name), 1, "restored right after the checkout");
    // A placeholder for the agent programs, which fails until a person fills it in.
    const fill = step(job, /^FILL IN: install the /);
    assert.match(fill.run!, /exit 1/);
    assert.deepEqual(names.indexOf(download.name), 2);
    assert.ok(names.indexOf(profile.name) < names.indexOf(relay.name));
    assert.equal(names.at(-2), `relay ${tick}`);
    assert.equal(names.at(-1), save.name);
  }
  // The scene's roles take 60s a turn: an hour more for the poll, four turns and an hour for review.
  assert.equal(workflow.jobs.poll!["timeout-minutes"], 61);
  assert.equal(workflow.jobs.review!["timeout-minutes"], 64);
  // The relay step points at README's section on split mode, and README has that heading.
  assert.match(comments(res.stdout), /README\.md, "Two machines: machines: split"/);
  assert.match(comments(res.stdout), /machines: split/);
  const readme = await Deno.readTextFile(join(ROOT, "README.md"));
  assert.match(readme, /^## Two machines: `machines: split`$/m);
  // Both run steps are the same text in both jobs.
  const scripts = (tick: string, name: RegExp) => step(workflow.jobs[tick]!, name).run;
  assert.equal(scripts("poll", /^Download/), scripts("review", /^Download/));
});

Deno.test("the printed download step, run by bash against a stand-in release, installs a binary that matches SHA256SUMS and refuses a tampered one, a release without its line, or the unfilled OWNER", async () => {
  await using scene = await makeScene();
  const { workflow } = await print(scene);
  const script = step(workflow.jobs.poll!, /^Download relay/).run!;
  const { bin, release } = await fakeRelease(scene.dir, VERSION);
  const runner = join(scene.dir, "runner");
  const attempt = async (releases = "someone/relay") => {
    await Deno.remove(runner, { recursive: true }).catch(() => {});
    await Deno.mkdir(runner, { recursive: true });
    const githubPath = join(runner, "github_path");
    await Deno.writeTextFile(githubPath, "");
    const out = await runStep(script, {
      PATH: `${bin}:/usr/bin:/bin`,
      RUNNER_TEMP: runner,
      GITHUB_PATH: githubPath,
      RELAY_VERSION: workflow.env.RELAY_VERSION!,
      RELAY_RELEASES: releases,
      RELAY_ASSET: workflow.env.RELAY_ASSET!,
    }, scene.dir);
    return { ...out, path: await Deno.readTextFile(githubPath) };
  };

  const good = await attempt();
  assert.equal(good.code, 0, good.stderr);
  assert.equal(good.path, `${join(runner, "relay-bin")}\n`);
  assert.match(good.stdout, new RegExp(`^relay ${VERSION.replaceAll(".", "\\.")} \\(`, "m"));
  const urls = await Deno.readTextFile(join(scene.dir, "urls"));
  const base = `https://github.com/someone/relay/releases/download/v${VERSION}`;
  assert.equal(urls, `${base}/${RELEASE_ASSET}\n${base}/SHA256SUMS\n`);
  // What lands on PATH is the file that was checked, under the name the relay step runs.
  const installed = join(runner, "relay-bin", "relay");
  assert.equal(
    await Deno.readTextFile(installed),
    await Deno.readTextFile(join(release, RELEASE_ASSET)),
  );

  // The binary changes after SHA256SUMS was made: the check stops the job, nothing goes on PATH.
  const asset = join(release, RELEASE_ASSET);
  const original = await Deno.readTextFile(asset);
  await Deno.writeTextFile(asset, original.replace("echo", "echo tampered;  echo"));
  const tampered = await attempt();
  assert.notEqual(tampered.code, 0);
  assert.match(tampered.stdout + tampered.stderr, /FAILED/);
  assert.equal(tampered.path, "");
  assert.equal(await exists(installed), false);
  await Deno.writeTextFile(asset, original);

  // SHA256SUMS without this asset's line is refused too.
  const sums = join(release, "SHA256SUMS");
  const text = await Deno.readTextFile(sums);
  await Deno.writeTextFile(
    sums,
    text.split("\n").filter((l) => !l.includes(RELEASE_ASSET)).join("\n"),
  );
  const missing = await attempt();
  assert.notEqual(missing.code, 0);
  assert.match(missing.stdout, /::error::SHA256SUMS of v\S+ has no single line for relay-x86_64/);
  assert.equal(missing.path, "");
  await Deno.writeTextFile(sums, text);

  // As printed, RELAY_RELEASES still says OWNER: it stops before downloading anything.
  assert.equal(workflow.env.RELAY_RELEASES, "OWNER/relay");
  await Deno.remove(join(scene.dir, "urls"));
  const unfilled = await attempt(workflow.env.RELAY_RELEASES);
  assert.notEqual(unfilled.code, 0);
  assert.match(unfilled.stdout, /::error::set RELAY_RELEASES/);
  assert.equal(await exists(join(scene.dir, "urls")), false);

  // A binary of another version is refused after the check.
  await Deno.writeTextFile(asset, original.replace(VERSION, "0.0.1"));
  await runStep("sha256sum relay-* > SHA256SUMS", { PATH: "/usr/bin:/bin" }, release);
  const other = await attempt();
  assert.notEqual(other.code, 0);
  assert.match(other.stdout, /::error::relay version says "relay 0\.0\.1/);
  assert.equal(other.path, "");
});

Deno.test("the printed profile step writes the secret's text where the relay step reads it, and fails without the secret", async () => {
  await using scene = await makeScene();
  const { workflow } = await print(scene);
  const script = step(workflow.jobs.review!, /^Write the operator profile$/).run!;
  const runner = join(scene.dir, "runner");
  await Deno.mkdir(runner);
  const profile = "roles:\n  executor:\n    vendor: claude\n  reviewer:\n    vendor: codex";
  const ok = await runStep(script, { RUNNER_TEMP: runner, RELAY_PROFILE_YAML: profile }, scene.dir);
  assert.equal(ok.code, 0, ok.stderr);
  const written = await Deno.readTextFile(join(runner, "relay-profile.yaml"));
  assert.equal(written, `${profile}\n`);
  assert.equal(parseProfile(written, "secret").roles.reviewer.vendor, "codex");
  const none = await runStep(script, { RUNNER_TEMP: runner, RELAY_PROFILE_YAML: "" }, scene.dir);
  assert.equal(none.code, 1);
  assert.match(none.stdout, /::error::add the repository secret RELAY_PROFILE_YAML/);
});

Deno.test("the printed relay step runs relay resume first only when the run was started by hand with resume ticked, and a resume that fails stops the step", async () => {
  await using scene = await makeScene();
  const { workflow } = await print(scene);
  const bin = join(scene.dir, "stand-in");
  await Deno.mkdir(bin);
  const calls = join(scene.dir, "calls");
  // A stand-in relay: records its arguments; `resume` exits $RESUME_EXIT.
  await Deno.writeTextFile(
    join(bin, "relay"),
    `#!/bin/bash\necho "$*" >> "${calls}"\n[ "$3" = resume ] && exit "\${RESUME_EXIT:-0}"\nexit 0\n`,
  );
  await Deno.chmod(join(bin, "relay"), 0o755);
  const runner = join(scene.dir, "runner");
  for (const tick of ["poll", "review"]) {
    const script = step(workflow.jobs[tick]!, new RegExp(`^relay ${tick}$`)).run!;
    const env = (resume: string, extra: Record<string, string> = {}) => ({
      PATH: `${bin}:/usr/bin:/bin`,
      RUNNER_TEMP: runner,
      RELAY_RESUME: resume,
      ...extra,
    });
    const ran = async (resume: string, extra?: Record<string, string>) => {
      await Deno.remove(calls).catch(() => {});
      const res = await runStep(script, env(resume, extra), scene.dir);
      const said = await Deno.readTextFile(calls).catch(() => "");
      return { code: res.code, calls: said.trim().split("\n") };
    };
    const profile = `--profile ${runner}/relay-profile.yaml`;
    // A scheduled run: inputs.resume is empty; a run by hand without the box ticked: false.
    for (const resume of ["", "false"]) {
      assert.deepEqual(await ran(resume), { code: 0, calls: [`${profile} ${tick}`] });
    }
    assert.deepEqual(await ran("true"), {
      code: 0,
      calls: [`${profile} resume`, `${profile} ${tick}`],
    });
    // relay resume refusing (exit 2) or leaving a HOLD (exit 3): the tick does not run.
    assert.deepEqual(await ran("true", { RESUME_EXIT: "3" }), {
      code: 3,
      calls: [`${profile} resume`],
    });
  }
});

Deno.test("with forge: github and claude / codex roles, both jobs may write pull requests and get the gh token, and each job's FILL IN step and relay step name the secrets its programs read", async () => {
  await using scene = await makeScene({ config: "forge: github\nmain: trunk\n" });
  await Deno.writeTextFile(
    scene.profile,
    "roles:\n  executor:\n    vendor: claude\n    timeout: 2h\n  reviewer:\n    vendor: codex\n    timeout: 45m\n",
  );
  const { res, workflow } = await print(scene);
  for (const tick of ["poll", "review"] as const) {
    const job = workflow.jobs[tick]!;
    // The base branch .relay/config.yaml names is the one checked out.
    assert.deepEqual(job.steps[0]!.with, { ref: "trunk", "fetch-depth": 0 });
    assert.deepEqual(job.permissions, { contents: "write", "pull-requests": "write" });
    assert.equal(step(job, new RegExp(`^relay ${tick}$`)).env?.GH_TOKEN, "${{ github.token }}");
  }
  assert.deepEqual(step(workflow.jobs.poll!, /^relay poll$/).env, {
    ANTHROPIC_API_KEY: "${{ secrets.ANTHROPIC_API_KEY }}",
    GH_TOKEN: "${{ github.token }}",
    RELAY_RESUME: "${{ inputs.resume }}",
  });
  // The security role is the executor's vendor (claude) when the profile does not set it.
  assert.deepEqual(step(workflow.jobs.review!, /^relay review$/).env, {
    CODEX_API_KEY: "${{ secrets.CODEX_API_KEY }}",
    ANTHROPIC_API_KEY: "${{ secrets.ANTHROPIC_API_KEY }}",
    GH_TOKEN: "${{ github.token }}",
    RELAY_RESUME: "${{ inputs.resume }}",
  });
  assert.match(
    comments(res.stdout),
    /FILL IN: install claude, which the executor role runs \(for example: npm install -g @anthropic-ai\/claude-code\), with its key in the repository secret ANTHROPIC_API_KEY/,
  );
  assert.match(
    comments(res.stdout),
    /install codex, which the reviewer role runs \(for example: npm install -g @openai\/codex\), with its key in the repository secret CODEX_API_KEY; and claude, which the security role runs/,
  );
  // No secret's value anywhere: only references to secrets.
  assert.doesNotMatch(res.stdout, /sk-|KEY: [^$]/);
  // 2h turn + 1h; four 45m turns + 1h.
  assert.equal(workflow.jobs.poll!["timeout-minutes"], 180);
  assert.equal(workflow.jobs.review!["timeout-minutes"], 240);
  assert.match(res.stdout, /The executor's turn limit \(2h, the operator profile's\)/);

  // timeouts.agent in .relay/config.yaml only lowers the turns.
  await scene.write(
    ".relay/config.yaml",
    "version: 1\nforge: github\nmain: trunk\ntimeouts:\n  agent: 20m\n",
  );
  const lowered = (await print(scene)).workflow;
  assert.equal(lowered.jobs.poll!["timeout-minutes"], 80);
  assert.equal(lowered.jobs.review!["timeout-minutes"], 140);
});

Deno.test("without a profile that loads, the workflow still prints, says so, uses relay's default limits and a FILL IN step naming no program", async () => {
  await using scene = await makeScene();
  const { res, workflow } = await print(scene, []);
  assert.ok(workflow.jobs.poll);
  const missing = await scene.relay([
    "--profile",
    join(scene.dir, "nowhere.yaml"),
    "schedule",
    "print",
    "--github-actions",
  ]);
  assert.equal(missing.code, 0, all(missing));
  assert.match(missing.stderr, /warning: the operator profile does not load/);
  const wf = parse(missing.stdout) as Workflow;
  assert.equal(wf.jobs.poll!["timeout-minutes"], 120);
  assert.equal(wf.jobs.review!["timeout-minutes"], 180);
  assert.match(missing.stdout, /relay's default \(the operator profile did not load/);
  for (const tick of ["poll", "review"]) {
    const job = wf.jobs[tick]!;
    assert.match(step(job, /^FILL IN: install /).run!, /exit 1/);
    assert.deepEqual(step(job, new RegExp(`^relay ${tick}$`)).env, {
      RELAY_RESUME: "${{ inputs.resume }}",
    });
  }
  assert.notEqual(res.stdout, missing.stdout);
});

Deno.test("jobTimeout: relay's default roles without a profile, and never past a hosted runner's 360 minutes", () => {
  const input = (executorMs: number, reviewerMs: number): ActionsInput => {
    const profile = parseProfile(
      `roles:\n  executor:\n    vendor: claude\n    timeout: ${
        executorMs / 60_000
      }m\n  reviewer:\n    vendor: codex\n    timeout: ${reviewerMs / 60_000}m\n`,
      "p.yaml",
    );
    return { version: VERSION, main: "main", forge: "plain", roles: profile.roles };
  };
  const none: ActionsInput = { version: VERSION, main: "main", forge: "plain", roles: null };
  assert.equal(jobTimeout("poll", none).minutes, DEFAULT_ROLE_TIMEOUT_MS.executor / 60_000 + 60);
  assert.equal(
    jobTimeout("review", none).minutes,
    (4 * DEFAULT_ROLE_TIMEOUT_MS.reviewer) / 60_000 + 60,
  );
  const long = jobTimeout("poll", input(6 * 60 * 60_000, 30 * 60_000));
  assert.equal(long.minutes, HOSTED_JOB_MINUTES);
  assert.match(long.why, /That is 420 minutes; a GitHub-hosted job stops at 360\./);
  // The security role defaults to the executor's vendor with the reviewer's default limit (30m).
  assert.equal(jobTimeout("review", input(60 * 60_000, 10 * 60_000)).minutes, 4 * 30 + 60);
  assert.equal(jobTimeout("review", input(60 * 60_000, 80 * 60_000)).minutes, HOSTED_JOB_MINUTES);
});

Deno.test("schedule --github-actions with install, uninstall, another kind or a flag of another kind: exit 2 naming the fix, nothing written", async () => {
  await using scene = await makeScene();
  const file = join(scene.dir, "crontab");
  await Deno.writeTextFile(file, "# mine\n");
  const dir = join(scene.dir, "units");
  const before = await state(scene);
  for (
    const [args, why] of [
      [["print", "--github-actions", "--cron"], /--cron and --github-actions: pick one/],
      [["print", "--systemd", "--github-actions"], /--systemd and --github-actions: pick one/],
      [
        ["install", "--github-actions"],
        /relay does not install a GitHub Actions workflow: it only prints one \(relay schedule print --github-actions > \.github\/workflows\/relay\.yml\), and you commit it yourself/,
      ],
      [["uninstall", "--github-actions"], /delete it with git rm yourself/],
      [
        ["print", "--github-actions", "--crontab-file", file],
        /--crontab-file goes with --cron, not --github-actions/,
      ],
      [
        ["print", "--github-actions", "--unit-dir", dir],
        /--unit-dir goes with --systemd or --launchd/,
      ],
      [["print", "--github-actions", "--every", "5"], /--every/],
    ] as const
  ) {
    const res = await scene.relay(["schedule", ...args]);
    assert.equal(res.code, 2, `${args.join(" ")}\n${all(res)}`);
    assert.match(res.stderr, why, all(res));
    assert.equal(res.stdout, "", all(res));
  }
  assert.equal(await state(scene), before);
  assert.equal(await Deno.readTextFile(file), "# mine\n");
  assert.equal(await exists(dir), false);
  assert.equal(await exists(join(scene.work, ".github")), false);
});
