#!/usr/bin/env bash
# commit-split.test.sh — replays the scenario behind relay's rule
#
#   "Paperwork (NEXT-STEPS.md, COWORK-STATUS.md) is committed straight to main
#    in its own commit; feature branches carry product code only."
#
# under both protocols, with real git in a throwaway directory:
#
#   1. old protocol: the executor commits product + paperwork on task-1 while
#      main moves by a paperwork edit  -> the branch CONFLICTS, and only on
#      paperwork files (a false conflict: the product code conflicts with nothing).
#   2. new protocol: the branch (built in a `git worktree`) carries product only,
#      the paperwork goes to main from the primary tree, main also moves by
#      paperwork -> the branch merges CLEANLY, product change and main's paperwork
#      both survive.
#   3. new protocol, two branches genuinely editing the same product line: after
#      the first merges, the second MUST STILL conflict, on index.html. Removing a
#      class of false conflicts must never hide a real one.
#
# Mergeability is judged the way a forge would, without touching any worktree:
# `git merge-tree --write-tree <main> <branch>` (exit 0 clean, 1 conflicted).
#
# Output is TAP-ish: one `ok - ...` / `not ok - ...` line per case, details as
# `# ...` lines. Exit status is non-zero when any case fails.
#
# Self-contained: everything lives under a `mktemp -d` directory removed on exit;
# the caller's git config, GIT_* environment and cwd are ignored; no network
# (the origin is a bare repository reached via file://). Needs git >= 2.38.
#
# Usage: bash scripts/commit-split.test.sh

set -euo pipefail

# --- isolation --------------------------------------------------------------

# Drop every GIT_* variable the caller may carry (GIT_DIR from a hook,
# GIT_CONFIG_COUNT/GIT_CONFIG_PARAMETERS injecting config, ...).
while IFS= read -r var; do
  unset "$var"
done < <(compgen -e | grep '^GIT_' || true)

export GIT_CONFIG_GLOBAL=/dev/null
export GIT_CONFIG_NOSYSTEM=1
export GIT_TERMINAL_PROMPT=0
export GIT_AUTHOR_NAME="Relay Test"
export GIT_AUTHOR_EMAIL="relay-test@example.invalid"
export GIT_COMMITTER_NAME="Relay Test"
export GIT_COMMITTER_EMAIL="relay-test@example.invalid"
export GIT_AUTHOR_DATE="2025-01-01T00:00:00Z"
export GIT_COMMITTER_DATE="2025-01-01T00:00:00Z"
export LC_ALL=C

ROOT="$(mktemp -d "${TMPDIR:-/tmp}/commit-split.XXXXXX")"
ROOT="$(cd "$ROOT" && pwd -P)"
trap 'rm -rf -- "$ROOT"' EXIT
# Git discovery never climbs out of the sandbox, even if a step goes wrong.
export GIT_CEILING_DIRECTORIES="$ROOT"
cd "$ROOT"

# (`-h` exits 129, so capture first: under pipefail the pipe would fail anyway.)
MT_USAGE="$(git merge-tree -h 2>&1 || true)"
if [[ "$MT_USAGE" != *"--write-tree"* ]]; then
  echo "not ok - $(git --version) lacks 'merge-tree --write-tree' (need git >= 2.38)"
  exit 1
fi

PAPERWORK=("NEXT-STEPS.md" "COWORK-STATUS.md")

# --- helpers ----------------------------------------------------------------

# g <dir> <git args...>: git in <dir>, quiet.
g() {
  local dir="$1"
  shift
  git -C "$dir" "$@"
}

# fail <message>: report a failed check from inside a case.
fail() {
  echo "$*" >&2
  return 1
}

# write <file> <line...>: replace <file> with the given lines.
write() {
  local file="$1"
  shift
  printf '%s\n' "$@" >"$file"
}

# replace_line <file> <old line> <new line>: exact, whole-line replacement;
# fails if <old line> is not in the file exactly once.
replace_line() {
  local file="$1" old="$2" new="$3" out="" line count=0
  while IFS= read -r line || [[ -n "$line" ]]; do
    if [[ "$line" == "$old" ]]; then
      line="$new"
      count=$((count + 1))
    fi
    out+="$line"$'\n'
  done <"$file"
  [[ "$count" -eq 1 ]] || fail "replace_line: '$old' occurs $count times in $file"
  printf '%s' "$out" >"$file"
}

# replace_prefix <file> <prefix> <new line>: replaces the one line starting
# with <prefix> (whatever follows it); fails unless exactly one line matches.
replace_prefix() {
  local file="$1" prefix="$2" new="$3" out="" line count=0
  while IFS= read -r line || [[ -n "$line" ]]; do
    if [[ "$line" == "$prefix"* ]]; then
      line="$new"
      count=$((count + 1))
    fi
    out+="$line"$'\n'
  done <"$file"
  [[ "$count" -eq 1 ]] || fail "replace_prefix: '$prefix' starts $count lines in $file"
  printf '%s' "$out" >"$file"
}

brief() { # brief <file> <status> <task> <title>
  write "$1" \
    "Status: $2" \
    "# Task $3: $4" \
    "" \
    "## Goal" \
    "$4." \
    "" \
    "## Done when" \
    "index.html shows the change." \
    "" \
    "## Verification bar" \
    '```' \
    "grep -c '<p>' index.html" \
    '```'
}

# seed <case dir>: bare origin + planner clone with the initial main pushed.
# Prints nothing; leaves <case>/origin.git and <case>/planner.
seed() {
  local c="$1"
  mkdir -p "$c"
  git init -q --bare --initial-branch=main "$c/origin.git"
  git init -q --initial-branch=main "$c/planner"
  g "$c/planner" remote add origin "file://$c/origin.git"
  write "$c/planner/index.html" \
    "<!doctype html>" \
    "<html>" \
    "<head><title>Demo</title></head>" \
    "<body>" \
    "<h1>Hello</h1>" \
    "<p>Welcome.</p>" \
    "<footer>v0</footer>" \
    "</body>" \
    "</html>"
  brief "$c/planner/NEXT-STEPS.md" OPEN 1 "Reword the welcome line"
  write "$c/planner/COWORK-STATUS.md" \
    "# Cowork status" \
    "" \
    "Current: task 1 in progress"
  g "$c/planner" add -- index.html NEXT-STEPS.md COWORK-STATUS.md
  g "$c/planner" commit -q -m "Seed: index.html + task 1 brief"
  g "$c/planner" push -q origin main
}

# planner_moves_main <case dir>: main moves by paperwork only while the executor
# works — the brief gets amended and the planner notes the queue in the status file.
planner_moves_main() {
  local p="$1/planner"
  g "$p" pull -q --ff-only origin main
  replace_line "$p/NEXT-STEPS.md" \
    "# Task 1: Reword the welcome line" \
    "# Task 1: Reword the welcome line (amended: keep it under 40 characters)"
  replace_line "$p/COWORK-STATUS.md" \
    "Current: task 1 in progress" \
    "Current: task 1 in progress; task 2 queued in .relay/inbox"
  g "$p" add -- NEXT-STEPS.md COWORK-STATUS.md
  g "$p" commit -q -m "Planner: amend task 1 brief, queue task 2"
  g "$p" push -q origin main
}

# product_change <tree>: the executor's actual work on index.html.
product_change() {
  replace_line "$1/index.html" "<p>Welcome.</p>" "<p>Welcome to the demo.</p>"
}

# paperwork_done <tree> <task>: the executor flips the brief and writes its report.
paperwork_done() {
  local t="$1" n="$2"
  replace_line "$t/NEXT-STEPS.md" "Status: OPEN" "Status: DONE"
  replace_prefix "$t/COWORK-STATUS.md" "Current: " "Current: task $n DONE — Verification: PASS"
  printf '%s\n' "" "## Report" "" '```' "\$ grep -c '<p>' index.html" "1" '```' \
    >>"$t/COWORK-STATUS.md"
}

# merge_check <repo> <main ref> <branch ref>: runs merge-tree; sets globals
# MT_RC (0 clean, 1 conflicted), MT_TREE (result tree) and MT_CONFLICTS (array).
merge_check() {
  local out
  MT_RC=0
  out="$(git -C "$1" merge-tree --write-tree --name-only --no-messages -- "$2" "$3")" || MT_RC=$?
  if [[ "$MT_RC" -ne 0 && "$MT_RC" -ne 1 ]]; then
    fail "git merge-tree failed with exit $MT_RC: $out"
  fi
  # Cut by parameter expansion, not `printf | head`: under pipefail, head exiting before the
  # builtin printf has written everything kills printf with SIGPIPE, and the case with it.
  MT_TREE="${out%%$'\n'*}"
  MT_CONFLICTS=()
  local line rest=""
  [[ "$out" == *$'\n'* ]] && rest="${out#*$'\n'}"
  while IFS= read -r line; do
    [[ -n "$line" ]] && MT_CONFLICTS+=("$line")
  done <<<"$rest"
  echo "# merge-tree $2 $3 -> exit $MT_RC, conflicts: ${MT_CONFLICTS[*]:-(none)}"
}

is_paperwork() {
  local f="$1" p
  for p in "${PAPERWORK[@]}"; do
    [[ "$f" == "$p" ]] && return 0
  done
  return 1
}

# --- case 1: old protocol ---------------------------------------------------

case_old_protocol() {
  local c="$ROOT/case1" e
  seed "$c"
  e="$c/executor"
  git clone -q "file://$c/origin.git" "$e"
  g "$e" switch -q -c task-1 origin/main

  # Executor works; meanwhile main moves by paperwork.
  product_change "$e"
  planner_moves_main "$c"

  # Old protocol: product AND paperwork committed on the branch.
  paperwork_done "$e" 1
  g "$e" add -- index.html NEXT-STEPS.md COWORK-STATUS.md
  g "$e" commit -q -m "Task #1: reword welcome line + status"
  g "$e" push -q -u origin task-1
  g "$e" fetch -q origin

  merge_check "$e" origin/main task-1
  [[ "$MT_RC" -eq 1 ]] || fail "expected a conflict (exit 1), got exit $MT_RC"
  [[ "${#MT_CONFLICTS[@]}" -gt 0 ]] || fail "expected conflicted paths, got none"
  local f
  for f in "${MT_CONFLICTS[@]}"; do
    is_paperwork "$f" || fail "conflict on non-paperwork path '$f'"
  done
  # The product change alone would have merged: it conflicts with nothing.
  g "$e" switch -q -c probe-product-only "$(g "$e" merge-base origin/main task-1)"
  g "$e" checkout task-1 -- index.html
  g "$e" commit -q -m "probe: task-1's product change alone"
  merge_check "$e" origin/main probe-product-only
  [[ "$MT_RC" -eq 0 ]] || fail "the product change alone should merge cleanly, got exit $MT_RC"
  return 0
}

# --- case 2: new protocol ---------------------------------------------------

case_new_protocol() {
  local c="$ROOT/case2" pri wt
  seed "$c"
  pri="$c/primary"
  wt="$c/wt-task-1"
  git clone -q "file://$c/origin.git" "$pri"
  # Executor builds task-1 in a worktree; the primary tree stays on main.
  g "$pri" worktree add -q -b task-1 "$wt" origin/main

  product_change "$wt"
  planner_moves_main "$c"

  # The work — on the branch, product only.
  g "$wt" add -- index.html
  g "$wt" commit -q -m "Task #1: reword welcome line"
  g "$wt" push -q -u origin task-1

  # The paperwork — on main, from the primary tree, in its own commit.
  g "$pri" pull -q --ff-only origin main
  paperwork_done "$pri" 1
  g "$pri" add -- NEXT-STEPS.md COWORK-STATUS.md
  g "$pri" commit -q -m "Task #1: status — Verification: PASS"
  g "$pri" push -q origin main
  g "$pri" fetch -q origin

  local touched
  touched="$(g "$pri" diff --name-only origin/main...origin/task-1)"
  [[ "$touched" == "index.html" ]] || fail "branch should touch only index.html, touches: $touched"

  merge_check "$pri" origin/main origin/task-1
  [[ "$MT_RC" -eq 0 ]] || fail "expected a clean merge (exit 0), got exit $MT_RC"
  grep -qxF "<p>Welcome to the demo.</p>" <<<"$(g "$pri" show "$MT_TREE:index.html")" ||
    fail "merged index.html lacks the product change"
  local p
  for p in "${PAPERWORK[@]}"; do
    [[ "$(g "$pri" rev-parse "$MT_TREE:$p")" == "$(g "$pri" rev-parse "origin/main:$p")" ]] ||
      fail "merged $p differs from origin/main's"
  done
  grep -qxF "Status: DONE" <<<"$(g "$pri" show "$MT_TREE:NEXT-STEPS.md")" ||
    fail "merged NEXT-STEPS.md lost the executor's Status: DONE"
  # Main really did move under the branch: the planner's paperwork commit is on
  # main but not on task-1.
  local planner_head
  planner_head="$(g "$c/planner" rev-parse HEAD)"
  g "$pri" merge-base --is-ancestor "$planner_head" origin/main ||
    fail "planner's paperwork commit is not on origin/main"
  g "$pri" merge-base --is-ancestor "$planner_head" origin/task-1 &&
    fail "planner's paperwork commit should not be on task-1"
  return 0
}

# --- case 3: a real conflict must survive -----------------------------------

case_real_conflict() {
  local c="$ROOT/case3" pri rev
  seed "$c"
  pri="$c/primary"
  rev="$c/reviewer"
  git clone -q "file://$c/origin.git" "$pri"

  # Two branches from the same main, both editing the same product line.
  local n title
  for n in 2 3; do
    g "$pri" worktree add -q -b "task-$n" "$c/wt-task-$n" origin/main
  done
  replace_line "$c/wt-task-2/index.html" "<h1>Hello</h1>" "<h1>Hello, world</h1>"
  replace_line "$c/wt-task-3/index.html" "<h1>Hello</h1>" "<h1>Hi there</h1>"
  for n in 2 3; do
    g "$c/wt-task-$n" add -- index.html
    g "$c/wt-task-$n" commit -q -m "Task #$n: retitle"
    g "$c/wt-task-$n" push -q -u origin "task-$n"
  done

  # Paperwork for task 2 on main, separately.
  g "$pri" pull -q --ff-only origin main
  title="Retitle the page"
  brief "$pri/NEXT-STEPS.md" DONE 2 "$title"
  printf '%s\n' "" "Task 2: DONE — Verification: PASS" >>"$pri/COWORK-STATUS.md"
  g "$pri" add -- NEXT-STEPS.md COWORK-STATUS.md
  g "$pri" commit -q -m "Task #2: status — Verification: PASS"
  g "$pri" push -q origin main

  # Reviewer merges task-2 into main.
  git clone -q "file://$c/origin.git" "$rev"
  g "$rev" fetch -q origin
  merge_check "$rev" origin/main origin/task-2
  [[ "$MT_RC" -eq 0 ]] || fail "task-2 should merge cleanly first, got exit $MT_RC"
  g "$rev" merge -q --no-ff -m "Merge task-2" origin/task-2
  g "$rev" push -q origin main

  # task-3 genuinely edits the same line: it must still conflict, on index.html.
  g "$pri" fetch -q origin
  merge_check "$pri" origin/main origin/task-3
  [[ "$MT_RC" -eq 1 ]] || fail "expected a conflict (exit 1), got exit $MT_RC"
  [[ "${MT_CONFLICTS[*]:-}" == "index.html" ]] ||
    fail "expected conflicts exactly on index.html, got: ${MT_CONFLICTS[*]:-(none)}"
  return 0
}

# --- runner -----------------------------------------------------------------

failures=0

run_case() {
  local fn="$1" desc="$2" log="$ROOT/$1.log" rc
  # A plain subshell statement (not in an if/||), so errexit stays live inside it.
  set +e
  (
    set -e
    "$fn"
  ) >"$log" 2>&1
  rc=$?
  set -e
  if [[ "$rc" -eq 0 ]]; then
    echo "ok - $desc"
    grep '^# ' "$log" || true
  else
    echo "not ok - $desc"
    sed -e 's/^# //' -e 's/^/# /' "$log"
    failures=$((failures + 1))
  fi
}

run_case case_old_protocol \
  "old protocol: paperwork on the branch conflicts with main, only on paperwork files"
run_case case_new_protocol \
  "new protocol: product-only branch merges cleanly while main moves by paperwork"
run_case case_real_conflict \
  "new protocol: two branches editing the same product line still conflict on index.html"

if [[ "$failures" -ne 0 ]]; then
  echo "# $failures case(s) failed"
  exit 1
fi
