/**
 * `relay probe [--role R] [--json]`: probes each role's program (lib/loop/probe.ts)
 * and records the result. Exit 0 when no role failed, 1 otherwise.
 */
import { UsageError } from "../errors.ts";
import { type Context, parseCommand, printJson, requireRepo } from "./args.ts";

export async function probe(args: string[], ctx: Context): Promise<number> {
  const { values } = parseCommand("probe", args, {
    role: { type: "string" },
    json: { type: "boolean" },
  }, { min: 0, max: 0 });
  const { PROBE_ROLES, probeRole, saveProbes } = await import("../loop/probe.ts");
  const role = values.role;
  if (role !== undefined && !(PROBE_ROLES as readonly string[]).includes(role)) {
    throw new UsageError(
      `--role "${role}" is not a role: use ${PROBE_ROLES.join(", ")} (gate is security)`,
      "probe",
    );
  }
  const repo = requireRepo(ctx);
  const { loadProfile, profilePath } = await import("../config/profile_load.ts");
  const { statePaths } = await import("../state/paths.ts");
  const profile = await loadProfile(profilePath(ctx.profile));
  const roles = role === undefined ? PROBE_ROLES : [role as typeof PROBE_ROLES[number]];
  const records: Awaited<ReturnType<typeof probeRole>>[] = [];
  for (const r of roles) {
    const record = await probeRole(r, profile.roles[r], {
      progress: values.json ? "quiet" : "plain",
      cwd: repo.root,
    });
    records.push(record);
    if (!values.json) {
      const p = record.program;
      const program = p
        ? `${p.path}${p.sha256 ? ` sha256 ${p.sha256.slice(0, 12)}` : ""}${
          p.version ? `, ${p.version}` : ""
        }`
        : "not found";
      console.log(
        `${r}: ${record.result} — ${record.vendor}${
          record.model ? ` ${record.model}` : ""
        } (${program})${record.reasons.length ? `: ${record.reasons.join("; ")}` : ""}`,
      );
    }
  }
  // probes.json is a file a running turn's guard watches: saved only while no tick runs.
  const state = statePaths(repo.commonDir);
  const { whileNoTickRuns } = await import("../state/lock.ts");
  if (!await whileNoTickRuns(state, "probe", () => saveProbes(state, records))) {
    console.log("not recorded: a tick is running; run relay probe again when it ends");
    return 1;
  }
  if (values.json) printJson({ probes: records });
  return records.some((r) => r.result === "FAIL") ? 1 : 0;
}
