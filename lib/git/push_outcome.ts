/**
 * What a failed `git push --porcelain` means. Only a ref the remote turned
 * down as not a fast-forward ("[rejected] (fetch first)" or
 * "(non-fast-forward)") is a race that a fetch can settle; a refusal by the
 * remote itself ("[remote rejected]": a protected branch, a pre-receive hook)
 * or a push that never got that far (authentication, network, exit 128)
 * needs a person.
 */
import { HoldError } from "../errors.ts";

export type PushOutcome =
  | { kind: "ok" }
  /** The remote has commits the pushed ref lacks. */
  | { kind: "behind"; status: string }
  /** The remote turned the ref down for its own reasons. */
  | { kind: "refused"; status: string; remote: string[] }
  /** No ref status at all: git could not push (auth, network, no such remote). */
  | { kind: "failed"; detail: string[] };

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
    return { kind: "refused", status, remote };
  }
  const detail = lines
    .filter((l) => l.trim() !== "" && !REF_LINE.test(l) && !/^(To |Done$|hint:)/.test(l))
    .slice(0, 6);
  return { kind: "failed", detail: detail.length ? detail : ["git push failed without a message"] };
}

/** One line for a HOLD reason: the ref status and what the remote said, quoted. */
export function describePush(outcome: PushOutcome): string {
  switch (outcome.kind) {
    case "ok":
      return "pushed";
    case "behind":
      return `the remote refused an update that is not a fast-forward: ${outcome.status}`;
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
  outcome: Exclude<PushOutcome, { kind: "ok" }>,
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
