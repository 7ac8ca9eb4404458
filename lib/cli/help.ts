/** Usage text for every command. Kept free of imports so `--help` costs nothing. */

export const VERSION = "0.1.0";

const GLOBAL = `Global options:
  -C <path>          act on the repository at <path> (as git -C does)
  --profile <file>   operator profile (default: $RELAY_PROFILE, else $XDG_CONFIG_HOME/relay/profile.yaml,
                     else ~/.config/relay/profile.yaml)
  -h, --help         show help`;

export const HELP: Record<string, string> = {
  relay: `relay ${VERSION} — an autonomous coding loop with two agents and a split of authority

Usage: relay [-C <path>] [--profile <file>] <command> [options]

Commands:
  init       set up relay in this repository (config, inbox, agent instructions)
  inbox      queue briefs: inbox add <file>|-, inbox list, inbox drop <task>
  plan       the plan stage alone: the reviewer judges a queued brief before it is promoted
  promote    move the next queued brief into NEXT-STEPS.md (only when none is open)
  poll       the executor tick (cron runs it every minute)
  review     the reviewer tick (cron runs it every minute): review, gate, merge or send back
  gate       check whether the PR in flight may merge (exit 0 MERGE, 10 REFUSE, 11 HUMAN, 12 WAIT,
             13 nothing to gate)
  merge      gate, then merge the PR in flight through the forge, then promote the next brief
  accept     a person accepts a task DONE awaiting acceptance, by digest (--intent-only, --expect)
  reject     a person sends a task back at acceptance with a note, by digest
  close      give up on a task's PR without merging it (the branch stays), promote the next brief
  abort      another name for close
  status     what the loop is doing, and why it waits
  doctor     check the setup and the loop's state; each problem with why and the exact fix
  show       a task's timeline: rounds, attempts, turns, bar, PR, verdicts, gate, merge, HOLDs
  report     every task's timeline as one self-contained HTML page: --html <file> [--task N]
  resume     clear a HOLD after a person has dealt with it
  lease      machines: split: who holds each role's lease on the remote; release one whose
             machine is gone (lease release <role> <run>)
  attach-verification  a person's evidence (screenshot, log) for the task's tree as it is now
  note       a person's note, shown to the next agent turn of a task
  probe      check that each role's program works as relay relies on, and record it
  pause      stop every tick from starting anything (a running turn finishes); --reason R
  unpause    let the ticks run again
  audit      check main's history on any clone: every change is paperwork or a reviewed, gated merge
  schedule   install, uninstall or print the two ticks in the crontab (or systemd / launchd);
             print a GitHub Actions workflow for them (--github-actions)
  guard      a pre-receive hook for the bare remote: main takes only relay's pushes, or a person's
  demo       run the whole loop in a temporary sandbox with the demo agent
  version    print the version

Exit codes: 0 done, idle or busy; 1 failure; 2 bad input or usage; 3 HOLD (a person is needed);
4 re-probe (safety_mode strict: a role's program has no passing probe as it is now).

${GLOBAL}`,
  init: `Usage: relay init [--web-root]

Writes .relay/config.yaml, .relay/inbox/, REVIEWER.md, the procedures of the
stages (.relay/PLAN.md, POLISH.md, DOCS.md, SECURITY.md), and CLAUDE.md / AGENTS.md
(each only when absent; nothing is overwritten), creates the operator profile
when it does not exist, and prints the three crontab lines (PATH, the poll tick
and the review tick). Nothing is committed: review the files, then commit and
push them yourself.

Options:
  --web-root   the repository root is served as a website: git-exclude CLAUDE.md and AGENTS.md`,
  schedule: `Usage: relay schedule install|uninstall|print [--cron|--systemd|--launchd]
                      [--crontab-file <file>] [--unit-dir <folder>]
       relay schedule print --github-actions

Schedules the poll and review ticks every minute, with the same command, safe
PATH and log as the lines relay init prints. Installing again replaces what an
earlier install wrote (unchanged: nothing is written); uninstall removes
exactly that and nothing else.

install     write the schedule (and start it, for systemd and launchd)
uninstall   remove what install wrote for this repository
print       show what install would write; changes nothing

Options:
  --cron                a block in your crontab (the default), between "# BEGIN relay <repo>"
                        and "# END relay <repo>" lines; every other line is kept as it is, and
                        each tick line sets its own PATH (no PATH= line for the whole crontab)
  --systemd             user units relay-<name>-poll/review.service and .timer in
                        ~/.config/systemd/user, then systemctl --user daemon-reload and
                        enable --now of the timers (they stop at logout unless lingering is
                        on: loginctl enable-linger $USER)
  --launchd             agents dev.relay.<name>.poll/review.plist in ~/Library/LaunchAgents,
                        then launchctl load (on macOS)
  --github-actions      with print only: a GitHub Actions workflow running both ticks every
                        5 minutes (GitHub's shortest), each job on its own machine, with this
                        relay's release checked against SHA256SUMS. relay never installs it:
                        commit it yourself as .github/workflows/relay.yml (relay's merge gate
                        refuses a PR that touches .github/). Fill in its FILL IN steps; the
                        repository must set machines: split (README: "Two machines:
                        machines: split")
  --crontab-file <file> read and write this file instead of running crontab
  --unit-dir <folder>   write the units there; relay then runs no systemctl or launchctl
                        and prints the commands instead`,
  inbox: `Usage: relay inbox add <file>|-  [--json]
       relay inbox list [--json]
       relay inbox drop <task>

add   validates a brief and queues it as .relay/inbox/<NNNN>-<slug>.md (Status: QUEUED).
      A brief without "Task:" gets the next free number; a number already used is refused.
list  shows the queue in the order promote takes it.
drop  removes a queued brief.`,
  promote: `Usage: relay promote [--json]

Moves the lowest-numbered queued brief into NEXT-STEPS.md with Status: OPEN,
only when no brief is open. The change is left uncommitted: the executor's
next paperwork commit carries it. With plan_review on in .relay/config.yaml, a
brief is promoted only after a plan review PASS of it as it is (relay plan);
otherwise nothing changes and the exit code is 1.`,
  plan: `Usage: relay plan <task>

The plan stage alone, on a queued brief: the reviewer role, in a read-only
checkout of main, judges whether every "Done when" term is checkable and the
verification bar is real, before any work. The verdict is recorded in the
task's record with the digest of the brief; a FAIL's findings are written into
the brief's inbox file under "## Plan review". An edited brief needs a new
PASS. Runs only while no tick does, at most plan_rounds FAILs per task.
Exit 0 PASS, 1 FAIL (or not run now), 3 a turn that must stop for a person.`,
  poll: `Usage: relay poll [--json] [--quiet] [--merge-policy auto|human] [--handsfree]
                 [--safety-mode efficient|strict]

The executor tick. Does nothing (and starts no process) unless NEXT-STEPS.md
says Status: OPEN. Otherwise takes the brief through one attempt: worktree,
agent, product-only commit, relay's own run of the verification bar, push, PR,
and a paperwork-only commit on main. A second tick while one runs exits 0, busy.
A push that lost a race or found the remote unreachable exits 1 ("not yet"):
the next tick pushes it, without running the agent again.
--quiet (for cron): no progress lines; a result or error that repeats the last
one is said again only after an hour; a HOLD on record, only as a one-line
hourly reminder.
--merge-policy, --handsfree, --safety-mode decide over the operator profile for
this one command: a task that starts now freezes them (marked "flag"); a task
already running uses them for this tick only.`,
  review: `Usage: relay review [--json] [--quiet] [--merge-policy auto|human] [--handsfree]
                   [--safety-mode efficient|strict]

The reviewer tick. Reads the executor's report from origin/main, has the
reviewer agent verify the PR head in a disposable worktree, records the verdict
against that head, then runs the gate: MERGE merges (merge: auto) and promotes
the next queued brief; a FAIL or a refusal writes a fix brief to NEXT-STEPS.md
(uncommitted); the human path waits for a person. Exit 3 when a person is needed.
With forge: plain, a merge push that lost a race is rebuilt on the new main
at once; one that found the remote unreachable waits (exit 0) for the next tick.
--quiet (for cron), and the flags over the profile: as for relay poll. A brief's
"Acceptance: human" is never waived by --merge-policy auto.`,
  gate: `Usage: relay gate [<task>] [--json]

Prints each check (scope, verdict, evidence, in-flight, mergeable) with PASS,
REFUSE, HUMAN or WAIT and the reason, then one decision. Never merges.
With no PR to judge (nothing reported on main, the PR merged or closed, the
task BLOCKED) it prints why and the decision NONE. --json always prints an
object with a "decision" (NONE comes with a "reason").
Exit codes: 0 MERGE, 10 REFUSE (send back), 11 HUMAN (route to a person), 12 WAIT (not ready),
13 NONE (nothing to gate).`,
  merge: `Usage: relay merge [<task>] [--json]

Runs the gate and, when it says MERGE, merges the PR through the forge with a
compare-and-swap on the reviewed head, then promotes the next queued brief.
A task whose merge policy is human is not merged this way (exit 1): a person
accepts it by digest with relay accept.
Exit 0 when it merged or there is nothing to merge (--json: "decision": "NONE");
otherwise the gate's exit code (10 REFUSE, 11 HUMAN, 12 WAIT), or 1 when the
forge would not merge.`,
  accept: `Usage: relay accept <task> (--intent-only | --expect <digest>) [--reason R]
                   [--override-rejection] [--json]

A person's acceptance of a task that is DONE awaiting acceptance (merge policy
human). --intent-only prints exactly what would be accepted — the task, the PR's
head and tree, the main it merges onto, the head's receipts, the open findings,
the reason — and its digest; nothing is merged. --expect <digest> merges through
the gate (as relay merge) only while the state still yields that digest, then
promotes the next brief; a new head, a moved main, a new receipt or finding, or
another reason is refused with both digests and what changed. A human-path PR
(owner-accepted infra) is merged this way too: its files are in the intent.
A head that a stage after review (finish, polish, docs, security) sent back is
merged only with --override-rejection and a --reason: the rejections are in the
intent, the fix brief written for that head is retired, and the acceptance
receipt says so. Ticks never accept. Exit 0 (intent printed, or merged); 1
refused (digest mismatch, or the forge would not merge); 10 REFUSE, 12 WAIT
from the gate.`,
  reject: `Usage: relay reject <task> (--intent-only | --expect <digest>) --text NOTE [--json]

A person's rejection at acceptance: sends the task back to the executor with a
fix brief whose findings carry NOTE (a fix round, counted against fix_rounds).
--intent-only prints what would be rejected and its digest; --expect <digest>
does it only while the state still yields that digest. Exit 0 (intent printed,
or sent back); 1 refused (digest mismatch).`,
  close: `Usage: relay close <task> --reason <text>

A person's decision: closes the PR of <task> without merging it (its branch and
commits stay), sets an open fix brief for it to DONE, clears a HOLD about it,
and promotes the next queued brief. Use it when a task can neither pass review
nor be fixed, so the one-PR-in-flight rule does not hold the loop forever.`,
  abort: `Usage: relay abort <task> --reason <text>

Another name for relay close (the paired-session workflow's word for it): closes
the PR of <task> without merging it, keeps its branch, and promotes the next brief.`,
  status: `Usage: relay status [<task>] [--brief] [--json]

Shows the brief, the queue, the tick in progress (lock holder, journal step),
attempts, and any HOLD with what to do about it. A task DONE awaiting acceptance
shows its receipts, open findings and what accepting does.
--brief reads only relay's own files (brief, report, journal, the reviewer-side
turn in flight — the review or which stage —, HOLD, each tick's last result): no
lock is taken or tested and no git runs, so it is safe while a tick runs. Exit 3
on a HOLD on record.
With <task>: where that task stands from its record — DONE awaiting acceptance
with its receipts, open findings, a person's verifications still valid for its
tree and what accepting does; or merged, closed, its latest verdict, its last
round's attempts and receipts. Exit 2 for a task relay has no record of.`,
  doctor: `Usage: relay doctor [--json] [--crontab-file F] [--unit-dir D]

Reads relay's state and event logs, the locks, git and the environment a cron
tick will have, and lists each problem with why it matters and the exact fix:
ticks not running, a lock held too long or by a process that is gone, a brief
OPEN with no executor run, a report nobody reviewed, a stranded PR, a PR in
flight that blocks the open brief, paperwork on a task branch, a worktree with
no folder or a folder with no worktree, a stale index.lock, fix rounds near the
cap, relay's files not committed or not pushed, build output not in
.gitignore, the profile's programs not on the schedule's PATH, an agent CLI
not logged in, the profile readable by others, a HOLD or a pause, and on
GitHub an unprotected main or protection relay's identity can bypass. Checks
that cannot run say so (skipped), never pass. Nothing is changed, except that
each new problem goes to the profile's notify: commands once.

Options:
  --json              print {healthy, problems, notices, findings: [{id, severity, what, why, fix}], skipped}
  --crontab-file F    look for the schedule relay schedule install wrote in F, not the crontab
  --unit-dir D        look for its systemd units or launchd agents in D

Exit codes: 0 healthy (notices allowed), 1 a problem needs a person, 2 bad usage.`,
  show: `Usage: relay show <task> [--json]

Prints task <task>'s timeline from its event log (.git/relay/tasks/<task>.events.jsonl):
each round (round 1 is the brief, each later one a fix brief, with why it was sent back),
the attempts and agent turns with their durations and exits, the bar, commits, pushes and
the PR, the scope check, verdicts with their findings, gate decisions with the failing
checks, merges and closes, and every HOLD with its reason, next step and resume. Times
are UTC. A fix brief's number shows the task it is a round of.

--json prints {"task", "title", "branch", "rounds": [{"round", "brief", "why"?, "events"}],
"events"}, where each event is a log line as written: {"v": 1, "at", "run", "role",
"event", "brief", "round", "details"}. "title" and "branch" come from the first
brief-opened (null without one); "why" is the reason a fix round was sent back.

Exit 0; 2 for a task with no timeline (the message lists those that have one) or a
malformed log line (the message names the file and line).`,
  report: `Usage: relay report --html <file> [--task <task>]

Writes every task's timeline (or task <task>'s, with --task) from the event logs
under .git/relay/tasks/ as one HTML page that loads nothing and runs no script:
a summary table (each task's outcome, rounds, attempts, agent turns and their
time, reviews, time on HOLD, gate decisions), a timeline chart, then each task's
rounds with every event as relay show words it — attempts and turns with their
durations, bar results, verdicts and findings, gate decisions, merges, HOLDs and
resumes — plus the HOLD and pause on record. Times are UTC. The file is written
whole (a temporary file, then a rename); relay prints its path and a one-line
summary.

Exit 0; 2 without --html, for a folder that does not exist, a task with no
timeline, or a malformed log line (nothing is written).`,
  resume: `Usage: relay resume [--retry-uncertain]

Clears a HOLD once a person has dealt with it. A held executor run whose branch
was not pushed yet is abandoned (its work stays on the branch and under
refs/relay/anchors/) and the next tick starts a new attempt; a run already
pushed is finished by the next tick. The held task takes up the operator profile
and repo config as they are now (its configuration is frozen again at its next
attempt).
A turn whose process ended while no tick watched it (the tick was killed) is
uncertain: the tick that finds it holds, and relay resume leaves that HOLD as it
is (exit 3). --retry-uncertain is the only way to run the turn again; with no
uncertain turn on record it changes nothing (exit 2).`,
  lease: `Usage: relay lease [--json]
       relay lease release <executor|reviewer> <run>

For machines: split. Fetches the leases from the remote and prints, for each
role, who holds it (host, pid, run), since when and until when, judged by this
machine's clock; a lease more than a whole lease (timeouts.lease) ahead says the
holder's clock is ahead of this one's.

release ends the lease of a machine that is gone (crashed, powered off, a
cancelled CI run), which would otherwise keep its role until the lease runs
out. It names the run that holds it, as relay lease and the busy line show it:
the remote is changed only if that run still holds it, with the same
compare-and-swap push relay's own release makes (never a force). A machine still
at work stops at its next renewal, within a fifth of its lease, and may act
until then: release only a lease whose machine is gone.

Exit 0 listed, released, or nothing to release; 1 the lease is another run's
or moved meanwhile (nothing changed); 2 bad input, or machines: one (its ticks
take a lock in .git/relay, not a lease).`,
  "attach-verification": `Usage: relay attach-verification <task> --file F [--text T]

Records a person's verification of task <task> — a screenshot, a log — against
the tree of its branch as it is now (the remote's, else the local branch). The
file is copied under .git/relay/verifications/<task>/. At DONE awaiting
acceptance, relay status and relay accept --intent-only list the verifications
still valid for the tree to accept (the digest covers them); once the branch has
other content they no longer count. Added only while no tick runs: when one
does, exit 1 and nothing is attached.`,
  note: `Usage: relay note <task> TEXT

A person's note for task <task>: shown to its next agent turn (the executor's or
the reviewer's, whichever runs first) under "Notes from the operator", then
marked in the task's record as shown to that run. Added only while no tick runs
(the task record is one the turn guard watches): when one does, exit 1 and
nothing is noted. relay show lists it.`,
  probe: `Usage: relay probe [--role executor|reviewer|security] [--json]

For each role (or the one named) in the operator profile: resolves the program
(absolute path, sha256, --version for claude and codex), then runs one short turn
in a scratch repository in a temporary folder — the executor must be able to
write a file; a reviewer-side role must not change its checkout. Prints PASS,
PASS_RESIDUAL_RISK (it works, but runs unsandboxed or as root, or relay cannot
tell) or FAIL with the reason, and records it in .git/relay/probes.json with the
program it saw. With safety_mode: strict in the profile, the ticks run a role
only with a passing probe of the program as it is now: otherwise they exit 4
and say to re-probe. Exit 0 when no role failed, 1 otherwise.`,
  pause: `Usage: relay pause [--reason R]

Stops the loop without touching the crontab: a flag under .git/relay/ (with who
paused it, when, and why) that makes relay poll and relay review start nothing —
not an agent, not the rest of a killed tick's run. A turn already running
finishes. relay status shows it. A person's commands (merge, accept, close,
resume) still work. relay unpause lets the ticks run again.`,
  unpause: `Usage: relay unpause

Removes the flag relay pause left: the next ticks run as usual.`,
  audit: `Usage: relay audit [--since REV] [--all] [--json]

Fetches the remote's main and relay's git notes (refs/notes/relay: the verdicts,
stage receipts and gate decisions the reviewer side pushes), then walks main's
first-parent history once, from the commit that set relay up (or after REV), and
classifies each commit: paperwork (NEXT-STEPS.md, COWORK-STATUS.md, .relay/inbox/),
settings (a person's change to the rest of .relay/), a merge of a task branch
with a PASS and a MERGE gate decision for exactly its head, a merge of a task relay
handed to a person, or a violation: a paperwork commit that touches product files,
a direct product commit, a merge with no verdict, a verdict for another head, a
merge of a head the gate refused, paperwork on a task branch. Needs nothing but a
clone: .git/relay/ is not read. Lists every commit but relay's own paperwork
(counted in the summary), so a violation is not lost among thousands of them.

Exit 0 when there is no violation, 1 when there is one.

Options:
  --since REV   audit only the commits after REV (default: after relay init's commit)
  --all         list the paperwork commits too
  --json        the classification as JSON (every commit)`,
  guard: `Usage: relay guard install --bare <path> [--person <name>]... [--main <branch>]
       relay guard uninstall --bare <path>
       relay guard print

install    writes <path>/hooks/pre-receive (mode 755), a plain sh + git hook: the server
           needs no relay. Updates of main are refused unless each new first-parent commit
           is a paperwork-only commit (NEXT-STEPS.md, COWORK-STATUS.md, .relay/inbox/) or
           relay's merge of a task branch, on a fast-forward; deleting main is always
           refused. refs/notes/relay (relay's audit record) may be created and
           fast-forwarded, never rewritten or deleted. A person listed with --person (the
           pusher is $GL_USER, else $REMOTE_USER, else the ssh account) may push anything
           else, relay's settings (.relay/config.yaml, stage procedures) included; the
           person must be another account than the loop's (install warns when it is the
           account it runs as). Settings go to the bare repository's config: relay.main
           (--main, else main in this repository's .relay/config.yaml; outside a relay
           repository --main is required) and relay.person (--person replaces the list;
           without it the list stays). A pre-receive hook relay did not write is left
           alone (exit 2).
uninstall  removes relay's hook, and nothing else.
print      prints the hook, to install or chain by hand.`,
  demo: `Usage: relay demo [--keep]

Builds a sandbox in a temporary folder (a bare "origin", a clone, two queued
briefs, the demo executor and reviewer), runs promote, then poll and review for
each brief (the reviewer's verdict, the gate, the merge and the next promotion),
shows each step and the resulting git history, and checks that history.

Options:
  --keep   leave the sandbox on disk and print its path`,
  version: `Usage: relay version [--json]`,
};
