/**
 * What a failed `git push --porcelain` means, and so who deals with it.
 *
 * - A race the next try settles: the remote's ref moved first ("[rejected]
 *   (fetch first)" / "(non-fast-forward)": `behind`), or moved while the push
 *   was landing ("[remote rejected] (failed to update ref)" with "cannot lock
 *   ref … is at X but expected Y": `raced`).
 * - A blip: the remote could not be reached (DNS, refused connection, time-out,
 *   a path that is not there for the moment, a 5xx): `unreachable`. The next
 *   tick tries again from a fresh fetch.
 * - Only what a person must address is a HOLD: a refusal by the remote itself
 *   (a protected branch, a pre-receive hook's message: `refused`) and a push
 *   that never got that far for want of access (`failed`: credentials, keys,
 *   permissions, or git saying something relay does not recognise).
 */
import { HoldError, RetryError } from "../errors.ts";

export type PushOutcome =
  | { kind: "ok" }
  /** The remote has commits the pushed ref lacks. */
  | { kind: "behind"; status: string }
  /** The ref moved on the remote while this push was landing (two pushes at once). */
  | { kind: "raced"; status: string; remote: string[] }
  /** The remote could not be reached; nothing says it would refuse. */
  | { kind: "unreachable"; detail: string[] }
  /** The remote turned the ref down for its own reasons. */
  | { kind: "refused"; status: string; remote: string[] }
  /** No ref status at all, for a reason a person must look at (access, credentials). */
  | { kind: "failed"; detail: string[] };

/** Outcomes the next try settles by itself: never a HOLD. */
export function isTransient(
  outcome: PushOutcome,
): outcome is Extract<PushOutcome, { kind: "behind" | "raced" | "unreachable" }> {
  return outcome.kind === "behind" || outcome.kind === "raced" || outcome.kind === "unreachable";
}

/** A porcelain ref line: `<flag>\t<from>:<to>\t<summary>`. */
const REF_LINE = /^([ +\-*=!])\t([^\t]*)\t(.*)$/;
const BEHIND = /^\[rejected\] \((fetch first|non-fast-forward)\)$/;

/**
 * Classifies a push from its exit status and its combined output (stdout's
 * porcelain lines and stderr's messages, in any order).
 */
export function classifyPush(ok: boolean, output: string): PushOutcome {
  if (ok) return { kind: "ok" };
  const lines = output.split("\n").map((l) => l.replace(/\s+$/, ""));
  const remote = lines
    .filter((l) => l.startsWith("remote:"))
    .map((l) => l.slice("remote:".length).trim())
    .filter((l) => l !== "")
    .slice(0, 5);
  const refused = lines.map((l) => REF_LINE.exec(l)).find((m) => m?.[1] === "!");
  if (refused) {
    const status = refused[3]!.trim();
    if (BEHIND.test(status)) return { kind: "behind", status };
    // A race only when the remote says the ref moved ("is at X but expected Y"); a stale
    // lock file it asks a person to remove, or a hook's refusal, is for a person.
    const said = remote.join("\n");
    if (
      RACED.test(status) && /but expected/i.test(said) &&
      !/declined|denied|protected|File exists|remove the file manually/i.test(said)
    ) {
      return { kind: "raced", status, remote };
    }
    return { kind: "refused", status, remote };
  }
  const detail = lines
    .filter((l) => l.trim() !== "" && !REF_LINE.test(l) && !/^(To |Done$|hint:)/.test(l))
    .slice(0, 6);
  if (unreachable(lines.join("\n"))) return { kind: "unreachable", detail };
  return { kind: "failed", detail: detail.length ? detail : ["git push failed without a message"] };
}

/**
 * Whether git's words say the remote could not be reached for the moment (and
 * nothing says access was refused): the next tick tries again.
 */
export function unreachable(text: string): boolean {
  return !NO_ACCESS.test(text) && UNREACHABLE.test(text);
}

/** The remote's ref moved between its check and its update: another push landed first. */
const RACED = /^\[remote rejected\] \((failed to update ref|failed to lock|cannot lock ref.*)\)$/;

/** A person must grant or fix access: never read as a blip, whatever else git says. */
const NO_ACCESS = new RegExp(
  [
    "Authentication failed",
    "Permission denied",
    "could not read (Username|Password)",
    "terminal prompts disabled",
    "Host key verification failed",
    "returned error: 40[13]",
    "Repository not found",
    "access denied",
    "invalid credentials",
  ].join("|"),
  "i",
);

/** The remote was not there for the moment: the network, its host, or its path. */
const UNREACHABLE = new RegExp(
  [
    "Could not resolve host",
    "Could not resolve hostname",
    "Connection refused",
    "Connection timed out",
    "Connection reset",
    "Operation timed out",
    "timed out after",
    "Network is unreachable",
    "No route to host",
    "Failed to connect",
    "Couldn't connect",
    "remote end hung up unexpectedly",
    "early EOF",
    "returned error: 5\\d\\d",
    "RPC failed",
    "does not appear to be a git repository",
    "Temporary failure in name resolution",
  ].join("|"),
  "i",
);

/** One line for a HOLD reason: the ref status and what the remote said, quoted. */
export function describePush(outcome: PushOutcome): string {
  switch (outcome.kind) {
    case "ok":
      return "pushed";
    case "behind":
      return `the remote refused an update that is not a fast-forward: ${outcome.status}`;
    case "raced":
      return `another push moved the ref while this one landed: ${outcome.status}${
        outcome.remote.length ? `; the remote said: "${outcome.remote.join(" ")}"` : ""
      }`;
    case "unreachable":
      return `the remote could not be reached: "${outcome.detail.join(" ")}"`;
    case "refused":
      return `the remote refused it: ${outcome.status}${
        outcome.remote.length ? `; the remote said: "${outcome.remote.join(" ")}"` : ""
      }`;
    case "failed":
      return `git push failed: "${outcome.detail.join(" ")}"`;
  }
}

/** What to check when the remote refused a ref (not a race: a person must look). */
export function refusalAdvice(remote: string, ref: string): string {
  return `Check what "${remote}" enforces on ${ref} (branch protection, required reviews or checks, a pre-receive hook) and that the account this clone pushes as may push there; relay never force-pushes.`;
}

/** What to check when git could not push at all. */
export function failureAdvice(remote: string, ref: string, cwd: string): string {
  return `Check that "${remote}" is reachable and that this clone's credentials may push (try "git push --dry-run ${remote} ${ref}" in ${cwd}).`;
}

/** The HOLD for a task branch the remote did not take, worded by why. */
export function branchPushHold(
  outcome: Extract<PushOutcome, { kind: "behind" | "refused" | "failed" }>,
  remote: string,
  branch: string,
  cwd: string,
): HoldError {
  const reason = `Cannot push "${branch}" to "${remote}": ${describePush(outcome)}`;
  switch (outcome.kind) {
    case "behind":
      return new HoldError(
        `${reason} (someone else pushed to it?)`,
        `Compare "${remote}/${branch}" with the local branch (git log ${branch}...${remote}/${branch} in ${cwd}). Keep what belongs by merging ${remote}/${branch} into ${branch} in the task worktree, or move the other commits elsewhere; relay never force-pushes.`,
      );
    case "refused":
      return new HoldError(reason, refusalAdvice(remote, branch));
    case "failed":
      return new HoldError(reason, failureAdvice(remote, branch, cwd));
  }
}

/** A push that did not land for a reason the next tick settles by itself. */
export function pushRetry(
  outcome: Extract<PushOutcome, { kind: "raced" | "unreachable" | "behind" }>,
  what: string,
): RetryError {
  return new RetryError(`Cannot push ${what} yet: ${describePush(outcome)}`);
}
