/**
 * What a person can do about a BLOCKED task. One text for the review tick's
 * HOLD and for `relay status`, which shows it as soon as the BLOCKED report is
 * there (before the next review tick raises the HOLD). No imports: status
 * loads it for free.
 */
export function blockedOptions(task: number): string {
  return `Read COWORK-STATUS.md on main. If task ${task} has an open PR, give up on it with relay close ${task} --reason "…" (closes it unmerged, promotes the next brief, clears the HOLD); otherwise queue a fix brief that goes on from the branch's work (Kind: fix, Fixes: ${task}, Branch: task-${task}) or a better brief (relay inbox add), or promote the next one (relay promote), then run "relay resume".`;
}
