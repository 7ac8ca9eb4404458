/**
 * `relay doctor [--json]`: reads the event logs, state, locks, git and the
 * environment a cron tick will have, and lists each problem with why it
 * matters and the exact fix. Exit 0 when healthy (notices allowed), 1 when
 * something needs a person. It changes nothing but `.git/relay/notified.json`:
 * each problem goes to the profile's notifiers once, while it lasts.
 */
import { type Context, parseCommand, printJson, requireRepo } from "./args.ts";
import { statePaths } from "../state/paths.ts";
import type { Finding, Skipped } from "./doctor_checks.ts";
import type { Profile } from "../config/profile_load.ts";
import { stamped } from "../proc/log.ts";
import { redact } from "../proc/redact.ts";

/** The notified.json slots of doctor's problems. */
const SLOT_PREFIX = "doctor:";

export async function doctor(args: string[], ctx: Context): Promise<number> {
  const { values } = parseCommand("doctor", args, {
    json: { type: "boolean" },
    "crontab-file": { type: "string" },
    "unit-dir": { type: "string" },
  }, { min: 0, max: 0 });
  const repo = requireRepo(ctx);
  const { gather } = await import("./doctor_snapshot.ts");
  const { runChecks } = await import("./doctor_checks.ts");
  const { installedSchedulePath } = await import("./schedule_files.ts");
  const where = {
    ...(values["crontab-file"] !== undefined ? { crontabFile: values["crontab-file"] } : {}),
    ...(values["unit-dir"] !== undefined ? { unitDir: values["unit-dir"] } : {}),
  };
  const found: { skipped?: Skipped; schedule: Awaited<ReturnType<typeof installedSchedulePath>> } =
    await installedSchedulePath(repo.root, where).then(
      (schedule) => ({ schedule }),
      (err) => ({
        schedule: null,
        skipped: {
          id: "schedule",
          why: `the installed schedule could not be read: ${
            ((err as Error)?.message ?? String(err)).split("\n")[0]
          }`,
        },
      }),
    );
  const { snapshot, skipped, profile } = await gather(repo, {
    profileFlag: ctx.profile,
    schedule: found.schedule,
  });
  if (found.skipped) skipped.push(found.skipped);
  const findings = runChecks(snapshot);
  const problems = findings.filter((f) => f.severity === "problem");
  await tell(repo.root, statePaths(repo.commonDir).dir, profile, problems);

  if (values.json) {
    printJson({
      healthy: problems.length === 0,
      problems: problems.length,
      notices: findings.length - problems.length,
      findings: findings.map(({ id, severity, what, why, fix }) => ({
        id,
        severity,
        what,
        why,
        fix,
      })),
      skipped,
    });
  } else {
    console.log(render(findings, skipped));
  }
  return problems.length ? 1 : 0;
}

/** One block per finding (what / why / fix), the checks that did not run, a summary line. */
export function render(findings: Finding[], skipped: Skipped[]): string {
  const blocks = findings.map((f) =>
    `${f.severity}: ${f.what}\n  why: ${f.why}\n  fix: ${f.fix.replaceAll("\n", "\n       ")}`
  );
  const problems = findings.filter((f) => f.severity === "problem").length;
  const notices = findings.length - problems;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const summary = problems
    ? `doctor: ${plural(problems, "problem")}${
      notices ? `, ${plural(notices, "notice")}` : ""
    }: a person is needed`
    : `doctor: healthy${notices ? ` (${plural(notices, "notice")})` : ""}`;
  const skips = skipped.map((s) => `skipped: ${s.id}: ${s.why}`);
  return [...blocks, ...(blocks.length ? [""] : []), ...skips, summary].join("\n");
}

/**
 * Each problem to the profile's notifiers, once while it lasts (notified.json
 * keeps one slot per problem); a problem that went away is forgotten, so it is
 * told again if it comes back. A notifier's failure is a warning.
 */
async function tell(
  root: string,
  stateDir: string,
  profile: Profile | null,
  problems: Finding[],
): Promise<void> {
  if (!profile?.notify.length) return;
  const { forgetSlots, notifyOnce } = await import("../loop/notify.ts");
  const warn = (line: string) =>
    console.error(stamped(`relay: warning: ${redact(line)}`, Deno.stderr.isTerminal()));
  const keep = new Set<string>();
  for (const p of problems) {
    const slot = `${SLOT_PREFIX}${p.key}`;
    keep.add(slot);
    await notifyOnce({
      root,
      stateDir,
      notifiers: profile.notify,
      change: {
        kind: "doctor",
        key: p.key,
        slot,
        task: null,
        reason: `${p.what} (${p.why})`,
        next: p.fix,
      },
      warn,
    });
  }
  await forgetSlots(stateDir, SLOT_PREFIX, keep, warn);
}
