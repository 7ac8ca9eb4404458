/**
 * `relay schedule install|uninstall|print [--cron|--systemd|--launchd]`:
 * writes the two ticks (ticks.ts: the same command, PATH and log as the lines
 * `relay init` prints) where the machine runs them every minute, marked
 * (schedule_files.ts) so that installing again replaces exactly that and
 * uninstalling removes exactly that.
 *
 * - cron: one block between BEGIN/END lines naming the repository. Each line
 *   sets PATH for its own command: a `PATH=` line would change every entry of
 *   the person's crontab below it. Every other line stays byte for byte.
 * - systemd: a oneshot service and a timer per tick, as user units.
 * - launchd: a user agent per tick.
 * - github-actions (`relay schedule print --github-actions`): a workflow,
 *   printed only (schedule_actions.ts), never installed: a person commits it,
 *   and relay's gate refuses a PR that touches CI.
 */
import { dirname, join, resolve } from "../path.ts";
import { InputError, UsageError } from "../errors.ts";
import { run } from "../proc/run.ts";
import { readTextOrNull } from "../state/json_file.ts";
import { shellLine, shellWord } from "../proc/shell.ts";
import { findProgram } from "../agents/which.ts";
import { type Context, parseCommand, requireRepo } from "./args.ts";
import { type TickPlan, tickPlan } from "./ticks.ts";
import {
  cronBegin,
  cronEnd,
  defaultUnitDir,
  findCronBlock,
  handTickLines,
  hasMarker,
  markerLine,
  readCrontab,
  type ScheduleKind,
  scheduleSlug,
  splitLines,
  unitFiles,
} from "./schedule_files.ts";

const ACTIONS = ["install", "uninstall", "print"] as const;
type Action = typeof ACTIONS[number];

interface Options {
  action: Action;
  kind: ScheduleKind | "github-actions";
  crontabFile?: string;
  unitDir?: string;
}

function parse(args: string[]): Options {
  const { values, positionals } = parseCommand("schedule", args, {
    cron: { type: "boolean" },
    systemd: { type: "boolean" },
    launchd: { type: "boolean" },
    "github-actions": { type: "boolean" },
    "crontab-file": { type: "string" },
    "unit-dir": { type: "string" },
  }, { min: 1, max: 1, names: "install, uninstall or print" });
  const action = positionals[0]!;
  if (!(ACTIONS as readonly string[]).includes(action)) {
    throw new UsageError(`unknown action "${action}": use install, uninstall or print`, "schedule");
  }
  const kinds = (["cron", "systemd", "launchd", "github-actions"] as const).filter((k) =>
    values[k]
  );
  if (kinds.length > 1) {
    throw new UsageError(`${kinds.map((k) => `--${k}`).join(" and ")}: pick one`, "schedule");
  }
  const kind = kinds[0] ?? "cron";
  if (kind === "github-actions" && action !== "print") {
    throw new UsageError(
      `relay does not ${action} a GitHub Actions workflow: it only prints one (relay schedule print --github-actions > .github/workflows/relay.yml), and you ${
        action === "install" ? "commit it" : "delete it with git rm"
      } yourself; relay's merge gate refuses a PR that touches .github/`,
      "schedule",
    );
  }
  const opts: Options = { action: action as Action, kind };
  const file = values["crontab-file"];
  const dir = values["unit-dir"];
  if (file !== undefined) {
    if (kind !== "cron") {
      throw new UsageError(`--crontab-file goes with --cron, not --${kind}`, "schedule");
    }
    opts.crontabFile = resolve(Deno.cwd(), file);
  }
  if (dir !== undefined) {
    if (kind !== "systemd" && kind !== "launchd") {
      throw new UsageError(
        "--unit-dir goes with --systemd or --launchd (for cron: --crontab-file)",
        "schedule",
      );
    }
    opts.unitDir = resolve(Deno.cwd(), dir);
  }
  return opts;
}

export async function schedule(args: string[], ctx: Context): Promise<number> {
  const opts = parse(args);
  const repo = requireRepo(ctx);
  const { profilePath } = await import("../config/profile_load.ts");
  const profile = profilePath(ctx.profile);
  if (opts.kind === "github-actions") {
    const actions = await import("./schedule_actions.ts");
    const { input, notes } = await actions.actionsInput(repo.root, profile);
    console.log(actions.actionsWorkflow(input).trimEnd());
    console.error(
      [
        ...notes,
        "Printed only: review it, fill in the steps marked FILL IN, then commit it yourself as .github/workflows/relay.yml (relay's merge gate refuses a PR that touches .github/).",
      ].map((n) => `  ${n}`).join("\n"),
    );
    return 0;
  }
  if (/[\r\n]/.test(repo.root)) {
    throw new UsageError(
      `the repository's path has a line break in it (${
        JSON.stringify(repo.root)
      }): no crontab line or unit file can name it; move the clone`,
      "schedule",
    );
  }
  // uninstall needs no command: it must not depend on relay's dependencies being cached.
  const plan = opts.action === "uninstall" ? null : await tickPlan(repo, profile);
  if (plan && opts.action === "install") {
    // Every kind appends to this log: nothing can open it in a folder that does not exist yet.
    await Deno.mkdir(dirname(plan.log), { recursive: true });
  }
  const removeBy = shellLine([
    "relay",
    "-C",
    repo.root,
    "schedule",
    "uninstall",
    `--${opts.kind}`,
    ...(opts.crontabFile ? ["--crontab-file", opts.crontabFile] : []),
    ...(opts.unitDir ? ["--unit-dir", opts.unitDir] : []),
  ]);
  const code = opts.kind === "cron"
    ? await cron(repo.root, opts, plan, removeBy)
    : await units(repo.root, opts as Options & { kind: "systemd" | "launchd" }, plan, removeBy);
  if (plan?.notes.length) {
    const say = opts.action === "print" ? console.error : console.log;
    say(`\n${plan.notes.map((n) => `  ${n}`).join("\n")}`);
  }
  return code;
}

// ---------------------------------------------------------------------------- cron

/** The block's lines, each ending in "\n". */
function cronBlock(root: string, plan: TickPlan): { lines: string[]; long: string[] } {
  const { relay } = plan;
  const long: string[] = [];
  const ticks = plan.ticks.map((t) => {
    const env = { PATH: plan.path.join(":"), ...relay.env };
    // cronCommand's quoting, with PATH as one more variable of the command's own environment.
    const words = Object.entries(env).map(([k, v]) => `${k}=${shellWord(v)}`);
    const line = `* * * * * ${
      `${[...words, shellLine([...relay.argv, ...t.args])].join(" ")} >> ${
        shellWord(plan.log)
      } 2>&1`.replaceAll("%", "\\%")
    }`;
    // Vixie cron (Debian's) cuts a command at 1000 characters.
    if (line.length > 999) long.push(`${t.name} (${line.length} characters)`);
    return `${line}\n`;
  });
  return {
    lines: [
      `${cronBegin(root)}\n`,
      "# Each line sets its own PATH: a PATH= line would change every entry below it.\n",
      ...ticks,
      `${cronEnd(root)}\n`,
    ],
    long,
  };
}

async function cron(
  root: string,
  opts: Options,
  plan: TickPlan | null,
  removeBy: string,
): Promise<number> {
  const block = plan ? cronBlock(root, plan) : null;
  if (block?.long.length) {
    plan!.notes.push(
      `warning: some crons cut a command at 1000 characters, and these lines are longer: ${
        block.long.join(", ")
      }; install relay as a binary (a short path) or use --systemd`,
    );
  }
  if (opts.action === "print") {
    console.log(block!.lines.join("").trimEnd());
    return 0;
  }
  const where = opts.crontabFile ?? "the crontab";
  const current = await readCrontab(opts);
  if (current === null) {
    throw new UsageError(
      "there is no crontab program on PATH: schedule the ticks as systemd user timers (--systemd) or launchd agents (--launchd), write the block into a file with --crontab-file <path>, or see it with relay schedule print",
      "schedule",
    );
  }
  const lines = splitLines(current);
  const found = findCronBlock(lines, root, opts.crontabFile ?? "crontab");
  const hand = opts.action === "install" ? handTickLines(lines, root, found) : [];
  if (hand.length) {
    // Left as they are: relay edits only its own block. Said whatever the install does.
    const numbers = hand.map((h) => h.line);
    plan!.notes.push(
      `warning: ${where} already runs relay for ${root} outside relay's block, on line${
        numbers.length > 1 ? "s" : ""
      } ${
        numbers.join(", ")
      } (pasted from relay init?): with the block too, each tick starts twice a minute. Remove ${
        numbers.length > 1 ? "those lines" : "that line"
      } (${
        opts.crontabFile === undefined ? "crontab -e" : `edit ${opts.crontabFile}`
      }); relay does not edit lines it did not write:\n${
        hand.map((h) => `    ${h.line}: ${h.text}`).join("\n")
      }`,
    );
  }
  let next: string;
  if (opts.action === "uninstall") {
    if (!found) {
      console.log(`nothing to remove: ${where} has no relay block for ${root}`);
      return 0;
    }
    next = [...lines.slice(0, found.start), ...lines.slice(found.end + 1)].join("");
  } else if (found) {
    next = [...lines.slice(0, found.start), ...block!.lines, ...lines.slice(found.end + 1)]
      .join("");
  } else {
    const sep = current === "" || current.endsWith("\n") ? "" : "\n";
    next = current + sep + block!.lines.join("");
  }
  if (next === current) {
    console.log(`unchanged: ${where} already has this relay block for ${root}`);
    console.log(`Remove it with: ${removeBy}`);
    return 0;
  }
  if (opts.crontabFile !== undefined) {
    await Deno.mkdir(dirname(opts.crontabFile), { recursive: true });
    const tmp = `${opts.crontabFile}.relay-tmp`;
    await Deno.writeTextFile(tmp, next);
    await Deno.rename(tmp, opts.crontabFile);
  } else {
    const out = await run(["crontab", "-"], {
      cwd: Deno.env.get("HOME") || "/",
      stdin: next,
      allowFail: true,
      timeoutMs: 30_000,
    });
    if (out.code !== 0) {
      console.error(
        `relay schedule: crontab - refused the new crontab (exit ${out.code}): ${out.stderr.trim()}; nothing changed`,
      );
      return 1;
    }
  }
  if (opts.action === "uninstall") {
    console.log(`removed the relay block for ${root} from ${where}`);
    return 0;
  }
  console.log(
    `${found ? "replaced" : "added"} the relay block for ${root} in ${where}:\n\n${
      block!.lines.join("").trimEnd()
    }\n\nRemove it with: ${removeBy}`,
  );
  return 0;
}

// ---------------------------------------------------------------------------- units

/**
 * systemd's start timeout for a tick. A tick runs its turns one after another
 * (the review, then the stages after it), each cut off by relay at its role's
 * timeout, and bar commands cut off at timeouts.bar: four of the longest turn
 * plus an hour is more than any tick that is still making progress takes. The
 * timeout is there for a tick wedged outside those limits: systemd does not
 * start a unit that is still running, so without one a wedged tick would stop
 * the loop for good, silently. Killing a tick is safe (its journal is finished
 * by the next one). Without a profile: the default roles' (60m) figure.
 */
export function startTimeoutMinutes(longestTurnMs: number | null): number {
  return Math.ceil((4 * (longestTurnMs ?? 60 * 60_000) + 60 * 60_000) / 60_000);
}

/** A word of ExecStart=: systemd splits on spaces, expands % specifiers and $ variables. */
function systemdWord(word: string): string {
  const esc = word.replaceAll("%", "%%").replaceAll("$", () => "$$");
  if (/^[\w@%+=:,./-]+$/.test(esc)) return esc;
  return `"${esc.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

/** `Environment="NAME=value"`: C escapes inside the quotes, % specifiers expanded. */
function systemdEnv(name: string, value: string): string {
  const esc = `${name}=${value}`.replaceAll("%", "%%").replaceAll("\\", "\\\\")
    .replaceAll('"', '\\"');
  return `Environment="${esc}"`;
}

function systemdUnits(root: string, slug: string, plan: TickPlan): Map<string, string> {
  const files = new Map<string, string>();
  const marker = markerLine("systemd", root);
  const where = root.replaceAll("%", "%%");
  const log = plan.log.replaceAll("%", "%%");
  const env = { PATH: plan.path.join(":"), ...plan.relay.env };
  for (const t of plan.ticks) {
    const argv = [...plan.relay.argv, ...t.args];
    files.set(
      `relay-${slug}-${t.name}.service`,
      [
        marker,
        "[Unit]",
        `Description=relay ${t.name} tick for ${where}`,
        "",
        "[Service]",
        "Type=oneshot",
        ...Object.entries(env).map(([k, v]) => systemdEnv(k, v)),
        `ExecStart=${argv.map(systemdWord).join(" ")}`,
        `StandardOutput=append:${log}`,
        `StandardError=append:${log}`,
        `TimeoutStartSec=${startTimeoutMinutes(plan.longestTurnMs)}min`,
        "",
      ].join("\n"),
    );
    files.set(
      `relay-${slug}-${t.name}.timer`,
      [
        marker,
        "[Unit]",
        `Description=relay ${t.name} tick for ${where}, every minute`,
        "",
        "[Timer]",
        // As cron does: at the start of every minute, not up to a minute later (the default).
        "OnCalendar=minutely",
        "AccuracySec=1s",
        "",
        "[Install]",
        "WantedBy=timers.target",
        "",
      ].join("\n"),
    );
  }
  return files;
}

function xml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;").replaceAll("'", "&apos;");
}

function launchdAgents(root: string, slug: string, plan: TickPlan): Map<string, string> {
  const files = new Map<string, string>();
  const env = { PATH: plan.path.join(":"), ...plan.relay.env };
  const s = (v: string) => `<string>${xml(v)}</string>`;
  for (const t of plan.ticks) {
    files.set(
      `dev.relay.${slug}.${t.name}.plist`,
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
        markerLine("launchd", root),
        '<plist version="1.0">',
        "<dict>",
        "  <key>Label</key>",
        `  ${s(`dev.relay.${slug}.${t.name}`)}`,
        "  <key>ProgramArguments</key>",
        "  <array>",
        ...[...plan.relay.argv, ...t.args].map((a) => `    ${s(a)}`),
        "  </array>",
        "  <key>EnvironmentVariables</key>",
        "  <dict>",
        ...Object.entries(env).flatMap(([k, v]) => [`    <key>${xml(k)}</key>`, `    ${s(v)}`]),
        "  </dict>",
        "  <key>StartInterval</key>",
        "  <integer>60</integer>",
        "  <key>StandardOutPath</key>",
        `  ${s(plan.log)}`,
        "  <key>StandardErrorPath</key>",
        `  ${s(plan.log)}`,
        "</dict>",
        "</plist>",
        "",
      ].join("\n"),
    );
  }
  return files;
}

/** The commands that start the written units, or stop them before (and after) they go. */
function activation(kind: "systemd" | "launchd", dir: string, slug: string) {
  const names = unitFiles(kind, slug);
  if (kind === "systemd") {
    const timers = names.filter((n) => n.endsWith(".timer"));
    const reload = ["systemctl", "--user", "daemon-reload"];
    return {
      start: [reload, ["systemctl", "--user", "enable", "--now", ...timers]],
      stop: [["systemctl", "--user", "disable", "--now", ...timers]],
      afterRemove: [reload],
    };
  }
  const plists = names.map((n) => join(dir, n));
  return {
    // A plist that changed is read again only by unloading and loading it.
    start: plists.flatMap((p) => [["launchctl", "unload", p], ["launchctl", "load", "-w", p]]),
    stop: plists.map((p) => ["launchctl", "unload", "-w", p]),
    afterRemove: [],
  };
}

/** Whether relay runs the activation commands itself: the real folder, and the program is here. */
async function canActivate(kind: "systemd" | "launchd", opts: Options): Promise<boolean> {
  const program = kind === "systemd" ? "systemctl" : "launchctl";
  return opts.unitDir === undefined &&
    (kind === "systemd" || Deno.build.os === "darwin") &&
    (await findProgram(program, Deno.env.get("PATH") ?? "")) !== null;
}

/** Runs the commands, or (when relay does not) says which to run. False when one failed. */
async function activate(
  kind: "systemd" | "launchd",
  opts: Options,
  dir: string,
  commands: string[][],
  purpose: string,
): Promise<boolean> {
  if (commands.length === 0) return true;
  if (!(await canActivate(kind, opts))) {
    const program = kind === "systemd" ? "systemctl" : "launchctl";
    const why = opts.unitDir !== undefined
      ? `--unit-dir ${shellWord(dir)} is not where ${program} looks`
      : `no ${program} here`;
    console.log(
      `Not run (${why}); ${purpose}, run:\n${commands.map((c) => `  ${shellLine(c)}`).join("\n")}`,
    );
    return true;
  }
  let ok = true;
  for (const c of commands) {
    const out = await run(c, { cwd: dir, allowFail: true, timeoutMs: 60_000 });
    // `launchctl unload` of an agent that is not loaded fails: not loaded is what it is for.
    if (out.code === 0 || (c[0] === "launchctl" && c[1] === "unload")) {
      console.log(`ran ${shellLine(c)}`);
    } else {
      ok = false;
      console.error(
        `relay schedule: ${shellLine(c)} failed (exit ${out.code}): ${
          (out.stderr || out.stdout).trim()
        }`,
      );
    }
  }
  return ok;
}

async function units(
  root: string,
  opts: Options & { kind: "systemd" | "launchd" },
  plan: TickPlan | null,
  removeBy: string,
): Promise<number> {
  const { kind } = opts;
  const slug = await scheduleSlug(root);
  const dir = opts.unitDir ?? defaultUnitDir(kind);
  if (opts.action === "uninstall") return await uninstallUnits(root, opts, dir, slug);
  const files = kind === "systemd"
    ? systemdUnits(root, slug, plan!)
    : launchdAgents(root, slug, plan!);
  if (opts.action === "print") {
    console.log(
      [...files].map(([name, text]) => `==> ${join(dir, name)} <==\n${text}`).join("\n")
        .trimEnd(),
    );
    return 0;
  }
  // Every file is checked before any is written: one relay did not write stops the install.
  const changed: string[] = [];
  for (const [name, text] of files) {
    const path = join(dir, name);
    const have = await readTextOrNull(path);
    if (have !== null && !hasMarker(kind, root, have)) {
      throw new InputError(
        { file: path },
        "is there already and relay did not write it (it has no relay schedule marker for this repository)",
        "move it away (relay never overwrites or deletes a file it did not write), or install into another folder with --unit-dir",
      );
    }
    if (have !== text) changed.push(name);
  }
  await Deno.mkdir(dir, { recursive: true });
  for (const [name, text] of files) {
    const path = join(dir, name);
    if (changed.includes(name)) await Deno.writeTextFile(path, text);
    console.log(`${changed.includes(name) ? "wrote    " : "unchanged"} ${path}`);
  }
  if (changed.length === 0) {
    console.log(`unchanged: the ${kind} units for ${root} are already installed`);
  }
  // Unchanged agents stay loaded as they are; systemd's enable --now is a no-op when enabled.
  const ok = changed.length === 0 && kind === "launchd"
    ? true
    : await activate(kind, opts, dir, activation(kind, dir, slug).start, "to start the ticks");
  if (kind === "systemd") {
    // systemd stops a user's manager, timers and all, at their last logout unless they linger.
    console.log(
      "User timers stop when you log out unless lingering is on for your user: loginctl enable-linger $USER (loginctl show-user $USER -p Linger says whether it is)",
    );
  }
  console.log(`Remove them with: ${removeBy}`);
  return ok ? 0 : 1;
}

async function uninstallUnits(
  root: string,
  opts: Options & { kind: "systemd" | "launchd" },
  dir: string,
  slug: string,
): Promise<number> {
  const { kind } = opts;
  const ours: string[] = [];
  const foreign: string[] = [];
  for (const name of unitFiles(kind, slug)) {
    const path = join(dir, name);
    const have = await readTextOrNull(path);
    if (have === null) continue;
    (hasMarker(kind, root, have) ? ours : foreign).push(path);
  }
  for (const path of foreign) {
    console.log(
      `left alone ${path}: relay did not write it (no relay schedule marker for ${root})`,
    );
  }
  if (ours.length === 0) {
    console.log(`nothing to remove: no ${kind} units relay wrote for ${root} in ${dir}`);
    return foreign.length ? 1 : 0;
  }
  // Stopped before the files go, so the manager is not left running units it cannot read.
  const steps = activation(kind, dir, slug);
  let ok = await activate(kind, opts, dir, steps.stop, "if you started the ticks");
  for (const path of ours) {
    await Deno.remove(path);
    console.log(`removed  ${path}`);
  }
  ok = await activate(kind, opts, dir, steps.afterRemove, "then") && ok;
  return ok && foreign.length === 0 ? 0 : 1;
}
