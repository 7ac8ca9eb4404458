/**
 * `relay schedule print --github-actions`: the two ticks as one GitHub Actions
 * workflow, for a person to review and commit under .github/workflows/. relay
 * only prints it: its own merge gate refuses a PR that touches CI (.github/),
 * so the file never lands through relay, and relay writes nothing in the
 * repository to make it.
 *
 * Generated line by line, as schedule.ts generates its systemd units and
 * launchd agents: what varies (the version, the base branch, the forge, the
 * roles' programs and time limits) comes from the running relay, the
 * repository's .relay/config.yaml and the operator profile where this runs.
 */
import { VERSION } from "./help.ts";
import {
  DEFAULT_ROLE_TIMEOUT_MS,
  type Profile,
  type RoleSpec,
  type Vendor,
} from "../config/profile_load.ts";
import type { RepoConfig } from "../config/repo_load.ts";

/** The Linux x64 asset of every release (.github/workflows/release.yml, scripts/compile.ts). */
export const RELEASE_ASSET = "relay-x86_64-unknown-linux-gnu";
/** Where relay's releases are published; as README's install section, a name the person fills in. */
export const RELEASES_REPO = "OWNER/relay";
/** GitHub's shortest schedule: every 5 minutes. */
export const ACTIONS_CRON = "*/5 * * * *";
/** The longest a job may run on a GitHub-hosted runner. */
export const HOSTED_JOB_MINUTES = 360;
/** What a tick does besides its agent turns (bar commands, fetches, pushes): at most an hour. */
const OVERHEAD_MS = 60 * 60_000;

/** How to install each agent program and the secret it reads its key from. */
const VENDORS: Partial<Record<Vendor, { program: string; install: string; secret: string }>> = {
  claude: {
    program: "claude",
    install: "npm install -g @anthropic-ai/claude-code",
    secret: "ANTHROPIC_API_KEY",
  },
  codex: { program: "codex", install: "npm install -g @openai/codex", secret: "CODEX_API_KEY" },
};

type Tick = "poll" | "review";
type Roles = Profile["roles"];
type RoleName = keyof Roles;

/** The roles a tick's turns play: poll is the executor's, review every reviewer-side turn's. */
const TICK_ROLES: Record<Tick, RoleName[]> = {
  poll: ["executor"],
  review: ["reviewer", "security"],
};

export interface ActionsInput {
  /** The relay release the workflow downloads. */
  version: string;
  main: string;
  forge: RepoConfig["forge"];
  /** `timeouts.agent` of .relay/config.yaml: it only lowers a role's limit. */
  agentMs?: number | undefined;
  /** The operator profile's roles, or null when it does not load where this is printed. */
  roles: Roles | null;
}

/** The input from this repository's config and this operator profile. */
export async function actionsInput(root: string, profilePath: string): Promise<{
  input: ActionsInput;
  notes: string[];
}> {
  const { loadRepoConfig } = await import("../config/repo_load.ts");
  const { loadProfile } = await import("../config/profile_load.ts");
  const config = await loadRepoConfig(root);
  const notes: string[] = [];
  let roles: Roles | null = null;
  try {
    roles = (await loadProfile(profilePath)).roles;
  } catch (err) {
    notes.push(
      `warning: the operator profile does not load, so the workflow names no agent program and its time limits are relay's defaults: ${
        (err as Error)?.message ?? String(err)
      }`,
    );
  }
  // Every Actions run is a fresh machine: only split mode works there.
  if (config.machines !== "split") {
    notes.push(
      `warning: .relay/config.yaml has machines: ${config.machines}; the two jobs run on different machines, so set machines: split (README.md, "Two machines: machines: split") before you commit the workflow`,
    );
  }
  return {
    input: {
      version: VERSION,
      main: config.main,
      forge: config.forge,
      agentMs: config.timeouts.agentMs,
      roles,
    },
    notes,
  };
}

function minutes(ms: number): string {
  const m = Math.round(ms / 60_000);
  return m % 60 === 0 ? `${m / 60}h` : m >= 60 ? `${Math.floor(m / 60)}h${m % 60}m` : `${m}m`;
}

/** A job's timeout-minutes and the comment that says where it comes from. */
export function jobTimeout(tick: Tick, input: ActionsInput): { minutes: number; why: string } {
  const turn = (role: RoleName): number => {
    const ms = input.roles
      ? input.roles[role].timeoutMs
      : DEFAULT_ROLE_TIMEOUT_MS[role === "executor" ? "executor" : "reviewer"];
    return input.agentMs === undefined ? ms : Math.min(ms, input.agentMs);
  };
  const source = input.roles
    ? "the operator profile's"
    : "relay's default (the operator profile did not load where this was printed)";
  let ms: number;
  let why: string;
  if (tick === "poll") {
    ms = turn("executor") + OVERHEAD_MS;
    why = `The executor's turn limit (${
      minutes(turn("executor"))
    }, ${source}) plus an hour for the bar commands, fetches and pushes.`;
  } else {
    const longest = Math.max(...TICK_ROLES.review.map(turn));
    ms = 4 * longest + OVERHEAD_MS;
    why = `Four of the longest reviewer-side turn (${
      minutes(longest)
    }, ${source}) plus an hour: review, polish, docs and security can run in one tick.`;
  }
  const wanted = Math.ceil(ms / 60_000);
  if (wanted > HOSTED_JOB_MINUTES) {
    return {
      minutes: HOSTED_JOB_MINUTES,
      why: `${why} That is ${wanted} minutes; a GitHub-hosted job stops at ${HOSTED_JOB_MINUTES}.`,
    };
  }
  return { minutes: wanted, why };
}

/** Wraps prose into `# ` comment lines at `indent`, at most 100 characters wide. */
function comment(indent: string, text: string): string[] {
  const out: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && indent.length + 2 + line.length + 1 + word.length > 100) {
      out.push(`${indent}# ${line}`);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) out.push(`${indent}# ${line}`);
  return out;
}

/** A program named in a comment: one line, quoted when it is not a plain word. */
function named(program: string): string {
  return /^[\w@+=:,./-]+$/.test(program) ? program : JSON.stringify(program);
}

interface Program {
  roles: RoleName[];
  vendor: Vendor;
  /** The program, for a `command` role its argv[0]. */
  program: string;
  install?: string;
  secret?: string;
}

/** The programs a tick's roles run, one entry per distinct program. */
function programs(tick: Tick, roles: Roles): Program[] {
  const out: Program[] = [];
  for (const role of TICK_ROLES[tick]) {
    const spec: RoleSpec = roles[role];
    if (spec.vendor === "demo") continue; // built into relay
    const known = VENDORS[spec.vendor];
    const program = known?.program ?? spec.argv?.[0] ?? spec.vendor;
    const same = out.find((p) => p.program === program);
    if (same) {
      same.roles.push(role);
      continue;
    }
    out.push({
      roles: [role],
      vendor: spec.vendor,
      program,
      ...(known ? { install: known.install, secret: known.secret } : {}),
    });
  }
  return out;
}

function roleList(roles: RoleName[]): string {
  return roles.length === 1 ? `the ${roles[0]} role` : `the ${roles.join(" and ")} roles`;
}

/** The FILL IN step that installs a tick's agent programs, and the secrets the relay step passes. */
function agentSteps(tick: Tick, input: ActionsInput): { lines: string[]; secrets: string[] } {
  const I = "      ";
  const roles = TICK_ROLES[tick];
  const where = "(Settings > Secrets and variables > Actions)";
  const fail = [
    `${I}  run: |`,
    `${I}    echo "::error::fill in the step that installs the ${tick} tick's agent programs (.github/workflows/relay.yml)"`,
    `${I}    exit 1`,
  ];
  if (!input.roles) {
    const examples = Object.entries(VENDORS).map(([vendor, v]) =>
      `for ${vendor}: ${v.install}, secret ${v.secret}`
    ).join("; ");
    return {
      lines: [
        ...comment(
          I,
          `FILL IN: install the programs the operator profile's ${
            roles.join(" and ")
          } roles run (${examples}), add each program's key as a repository secret ${where}, and pass it to the relay step below in its env: (NAME: \${{ secrets.NAME }}). Never write a key into this file. Until filled in, this step fails the job.`,
        ),
        `${I}- name: "FILL IN: install the ${tick} tick's agent programs"`,
        ...fail,
      ],
      secrets: [],
    };
  }
  const list = programs(tick, input.roles);
  if (list.length === 0) {
    return {
      lines: comment(
        I,
        `The ${tick} tick's roles play relay's built-in demo agent: nothing to install.`,
      ),
      secrets: [],
    };
  }
  const lines: string[] = [];
  const parts = list.map((p) =>
    p.install
      ? `${p.program}, which ${
        roleList(p.roles)
      } runs (for example: ${p.install}), with its key in the repository secret ${p.secret}`
      : `${named(p.program)}, which ${
        roleList(p.roles)
      } runs (vendor: ${p.vendor}), and add the secret it reads as a repository secret, passed in the relay step's env: below`
  );
  lines.push(
    ...comment(
      I,
      `FILL IN: install ${
        parts.join("; and ")
      }. Create secrets ${where}; the relay step below passes them to the agent. Never write a key into this file. Until filled in, this step fails the job.`,
    ),
    `${I}- name: "FILL IN: install the ${tick} tick's agent programs"`,
    ...fail,
  );
  return { lines, secrets: [...new Set(list.flatMap((p) => p.secret ? [p.secret] : []))] };
}

function job(tick: Tick, input: ActionsInput): string[] {
  const I = "      ";
  const role = tick === "poll" ? "executor" : "reviewer";
  const timeout = jobTimeout(tick, input);
  const github = input.forge === "github";
  const agent = agentSteps(tick, input);
  const env = [
    ...agent.secrets.map((s) => `${I}    ${s}: \${{ secrets.${s} }}`),
    ...(github ? [`${I}    GH_TOKEN: \${{ github.token }} # for gh (forge: github)`] : []),
  ];
  return [
    `  ${tick}:`,
    `    name: relay ${tick} (the ${role} tick)`,
    "    # x86_64 Linux, as the release binary; the release builds it on ubuntu-24.04.",
    "    runs-on: ubuntu-24.04",
    ...comment(
      "    ",
      `One ${tick} at a time: a run that finds one running waits and never cancels it, and GitHub keeps at most one waiting run per group, so runs never stack up.`,
    ),
    "    concurrency:",
    `      group: relay-${tick}`,
    "      cancel-in-progress: false",
    ...comment("    ", timeout.why),
    `    timeout-minutes: ${timeout.minutes}`,
    "    permissions:",
    tick === "poll"
      ? "      contents: write # push the task branch, and the paperwork commits to main"
      : "      contents: write # push the paperwork commits and merges to main",
    ...(github
      ? [
        tick === "poll"
          ? "      pull-requests: write # open the PR (also: Settings > Actions > General > Allow GitHub Actions to create and approve pull requests)"
          : "      pull-requests: write # record verdicts on the PR and merge it",
      ]
      : []),
    "    steps:",
    `${I}- name: Check out ${input.main} with its whole history`,
    `${I}  uses: actions/checkout@v4`,
    `${I}  with:`,
    `${I}    ref: ${JSON.stringify(input.main)}`,
    `${I}    # relay reads ${input.main}'s history and the task branches, and merges them.`,
    `${I}    fetch-depth: 0`,
    ...comment(
      I,
      `Every run is a fresh machine: relay's records of this job (.git/relay/: each task's attempts and fix rounds, a HOLD, the PR records) come back from the job's last run through the Actions cache, so the limits and a HOLD hold from run to run as on a machine of its own. A cache GitHub evicted (7 days unused) starts the job's records afresh, as a new machine would. Caches are readable by any workflow of this repository, pull requests' included.`,
    ),
    `${I}- name: Restore relay's records from the last ${tick} run`,
    `${I}  uses: actions/cache/restore@v4`,
    `${I}  with:`,
    `${I}    path: .git/relay`,
    `${I}    key: ${cacheKey(tick)}`,
    `${I}    restore-keys: relay-records-${tick}-`,
    ...comment(
      I,
      "The checksum catches a broken or truncated download. It comes from the same release, so it does not defend against a replaced release: for that, check the binary's sha256 against a value you keep yourself.",
    ),
    `${I}- name: Download relay and check it against the release's SHA256SUMS`,
    `${I}  run: |`,
    `${I}    case "$RELAY_RELEASES" in`,
    `${I}      OWNER/*) echo "::error::set RELAY_RELEASES (top of this workflow) to the repository relay's releases come from"; exit 1 ;;`,
    `${I}    esac`,
    `${I}    dir="$RUNNER_TEMP/relay-bin"`,
    `${I}    mkdir -p "$dir"`,
    `${I}    cd "$dir"`,
    `${I}    base="https://github.com/$RELAY_RELEASES/releases/download/v$RELAY_VERSION"`,
    `${I}    curl -fsSL --retry 3 -o "$RELAY_ASSET" "$base/$RELAY_ASSET"`,
    `${I}    curl -fsSL --retry 3 -o SHA256SUMS "$base/SHA256SUMS"`,
    `${I}    # The line for this one file: sha256sum --check would also look for the others.`,
    `${I}    awk -v f="$RELAY_ASSET" '$2 == f' SHA256SUMS > expected.sha256`,
    `${I}    if [ "$(wc -l < expected.sha256)" -ne 1 ]; then`,
    `${I}      echo "::error::SHA256SUMS of v$RELAY_VERSION has no single line for $RELAY_ASSET"`,
    `${I}      exit 1`,
    `${I}    fi`,
    `${I}    sha256sum --check --strict expected.sha256`,
    `${I}    chmod +x "$RELAY_ASSET"`,
    `${I}    mv "$RELAY_ASSET" relay`,
    `${I}    out=$(./relay version)`,
    `${I}    case "$out" in`,
    `${I}      "relay $RELAY_VERSION ("*) echo "$out" ;;`,
    `${I}      *) echo "::error::relay version says \\"$out\\", not $RELAY_VERSION"; exit 1 ;;`,
    `${I}    esac`,
    `${I}    echo "$dir" >> "$GITHUB_PATH"`,
    `${I}- name: Set the git identity of relay's commits`,
    `${I}  # The account GITHUB_TOKEN pushes as; change both to the identity the loop commits as.`,
    `${I}  run: |`,
    `${I}    git config --global user.name "github-actions[bot]"`,
    `${I}    git config --global user.email "41898282+github-actions[bot]@users.noreply.github.com"`,
    ...agent.lines,
    ...comment(
      I,
      "The operator profile chooses which programs run, so it must not come from this repository: agents write files here. Keep its text in the repository secret RELAY_PROFILE_YAML (as here), or keep the file in another repository only you can write to, check that out in its place (actions/checkout with repository:, path: and a token that can read it) and pass that file to --profile below. Write it for this runner: no worktree_root outside it.",
    ),
    `${I}- name: Write the operator profile`,
    `${I}  env:`,
    `${I}    RELAY_PROFILE_YAML: \${{ secrets.RELAY_PROFILE_YAML }}`,
    `${I}  run: |`,
    `${I}    if [ -z "$RELAY_PROFILE_YAML" ]; then`,
    `${I}      echo "::error::add the repository secret RELAY_PROFILE_YAML: the text of the operator profile"`,
    `${I}      exit 1`,
    `${I}    fi`,
    `${I}    printf '%s\\n' "$RELAY_PROFILE_YAML" > "$RUNNER_TEMP/relay-profile.yaml"`,
    ...comment(
      I,
      `The ${role} tick, as cron runs it elsewhere. This job and the ${
        tick === "poll" ? "review" : "poll"
      } job run on different machines and share leases as refs on the remote: see README.md, "Two machines: machines: split". Exit 1 (a failed attempt, which the next tick retries) and 3 (a HOLD: a person is needed) show as a failed run.`,
    ),
    `${I}- name: relay ${tick}`,
    `${I}  env:`,
    ...env,
    `${I}    # Run by hand with "resume" ticked: relay resume first, which clears a HOLD of this job`,
    `${I}    # once you have dealt with it (on this job's records, which only these runs hold).`,
    `${I}    RELAY_RESUME: \${{ inputs.resume }}`,
    `${I}  run: |`,
    `${I}    if [ "$RELAY_RESUME" = true ]; then`,
    `${I}      relay --profile "$RUNNER_TEMP/relay-profile.yaml" resume`,
    `${I}    fi`,
    `${I}    relay --profile "$RUNNER_TEMP/relay-profile.yaml" ${tick}`,
    ...comment(
      I,
      "Also after a failed run (a failed attempt counts) and a cancelled one: the next run goes on from here.",
    ),
    `${I}- name: Keep relay's records for the next ${tick} run`,
    `${I}  if: always()`,
    `${I}  uses: actions/cache/save@v4`,
    `${I}  with:`,
    `${I}    path: .git/relay`,
    `${I}    key: ${cacheKey(tick)}`,
  ];
}

/** One cache entry per run (entries never change); a run restores the job's newest. */
function cacheKey(tick: Tick): string {
  return `relay-records-${tick}-\${{ github.run_id }}-\${{ github.run_attempt }}`;
}

/** The whole workflow, ending in a newline. */
export function actionsWorkflow(input: ActionsInput): string {
  return [
    `# relay's two ticks on GitHub Actions, printed by relay schedule print --github-actions (relay ${input.version}).`,
    "#",
    ...comment(
      "",
      "relay only prints this file. Review it, fill in the steps marked FILL IN, and commit it yourself as .github/workflows/relay.yml: relay's merge gate refuses any PR that touches .github/ (CI), so it never lands through relay.",
    ),
    "#",
    ...comment(
      "",
      'The two jobs run on different machines, and every Actions run is a fresh one: each job carries its own records (.git/relay/) from run to run in the Actions cache, and the two share only the remote. So the repository must set machines: split in .relay/config.yaml, which keeps the leases (and with forge: plain the PR records) as refs on the remote: README.md, "Two machines: machines: split".',
    ),
    "name: relay",
    "",
    "on:",
    "  schedule:",
    "    # Every 5 minutes: GitHub's shortest interval (cron runs the ticks every minute). A scheduled",
    "    # run may also start late, or not at all, when Actions is busy.",
    `    - cron: "${ACTIONS_CRON}"`,
    "  workflow_dispatch: # run both ticks now, from the Actions tab (on main)",
    "    inputs:",
    "      resume:",
    '        description: "relay resume before each tick: clears a HOLD you have dealt with"',
    "        type: boolean",
    "        default: false",
    "",
    "# Nothing by default: each job asks for what it needs.",
    "permissions: {}",
    "",
    "defaults:",
    "  run:",
    "    # bash -eo pipefail: a command that fails stops the step.",
    "    shell: bash",
    "",
    "env:",
    "  # The relay release this workflow runs: the version that printed it.",
    `  RELAY_VERSION: ${JSON.stringify(input.version)}`,
    "  # FILL IN: the GitHub repository relay's releases are published from (owner/name).",
    `  RELAY_RELEASES: ${RELEASES_REPO}`,
    "  # Each release's Linux x64 binary, published with SHA256SUMS.",
    `  RELAY_ASSET: ${RELEASE_ASSET}`,
    '  NO_COLOR: "1"',
    "",
    "jobs:",
    ...job("poll", input),
    "",
    ...job("review", input),
    "",
  ].join("\n");
}
