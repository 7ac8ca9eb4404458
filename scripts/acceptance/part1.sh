#!/usr/bin/env bash
# Acceptance session for issue 2 (part 1), replayable: bash scripts/acceptance/part1.sh
# Part 1 "Done when": a repo set up by hand, a bare origin, a `command` agent from the profile.
set -euo pipefail
S=$(mktemp -d "${TMPDIR:-/tmp}/relay-by-hand-XXXX")
trap 'rm -rf "$S"' EXIT
export XDG_CONFIG_HOME=$S/xdg GIT_CONFIG_GLOBAL=$S/gitconfig GIT_CONFIG_NOSYSTEM=1
git config --global user.name "Dev" && git config --global user.email dev@example.invalid
R="$(cd "$(dirname "$0")/../.." && pwd)"
relay() { deno run --quiet --config "$R/deno.json" -P=relay "$R/main.ts" "$@"; }
echo "\$ git init --bare origin.git && git clone origin.git app"
git init -q --bare -b main $S/origin.git && git clone -q file://$S/origin.git $S/app 2>/dev/null && cd $S/app
printf 'def greet(name):\n    return "hello " + name\n' > app.py && printf '__pycache__/\n' > .gitignore
git add app.py .gitignore && git commit -qm "app" && git push -q origin HEAD:main
echo "\$ relay init"; relay init
git add -A && git commit -qm "relay: init" && git push -q origin main
cat > $S/agent.sh <<'AGENT'
#!/usr/bin/env bash
# A hand-written `command` agent: edits product code, commits, runs the bar, writes an honest report.
set -euo pipefail
printf 'def greet(name):\n    return "hello, " + name + "!"\n' > app.py
git commit -qam "Task #$RELAY_TASK: punctuate the greeting"
out1=$(python3 -c 'import app; print(app.greet("relay"))' 2>&1); c1=$?
cat > "$RELAY_REPORT" <<R
Task: $RELAY_TASK
Outcome: SHIPPED
Branch: $RELAY_BRANCH
Head:
PR:

## What shipped

greet() now says "hello, NAME!".

## Verification

### \`python3 -c "import app; print(app.greet('relay'))"\`

\`\`\`
$out1
\`\`\`

Exit: $c1

## Beyond the brief

Nothing.

## Pushback

None.
R
AGENT
cat > $XDG_CONFIG_HOME/relay/profile.yaml <<P
roles:
  executor:
    vendor: command
    argv: ["bash", "$S/agent.sh", "{prompt}"]
    timeout: 5m
  reviewer:
    vendor: demo
worktree_root: $S/worktrees
P
cat > $S/brief.md <<'B'
Status: QUEUED
Title: Punctuate the greeting

## Goal
greet() should say "hello, NAME!".

## Done when
- `greet("relay")` returns `hello, relay!`

## Verification bar
```
python3 -c "import app; print(app.greet('relay'))"
```
B
echo; echo "\$ relay inbox add brief.md"; relay inbox add $S/brief.md
echo "\$ relay promote"; relay promote
echo "\$ relay poll"; relay poll
echo; echo "\$ git branch -a"; git branch -a
echo "\$ git diff --name-status origin/main...origin/task-1"; git diff --name-status origin/main...origin/task-1
echo "\$ git log --oneline --graph --all --exclude=refs/relay/* --branches --remotes"; git log --oneline --graph --exclude='refs/relay/*' --branches --remotes
echo "\$ git show --stat --format='%h %s' origin/main"; git show --stat --format='%h %s' origin/main
echo "\$ git show origin/main:NEXT-STEPS.md | head -1"; git show origin/main:NEXT-STEPS.md | head -1
echo "\$ git show origin/main:COWORK-STATUS.md"; git show origin/main:COWORK-STATUS.md
echo "\$ relay status"; relay status || true
echo "\$ checks"
fail() { echo "FAIL: $*"; exit 1; }
[ "$(git for-each-ref --format='%(refname:short)' refs/remotes/origin/ | sort | tr '\n' ' ')" = "origin/main origin/task-1 " ] ||
  fail "origin should have exactly main and task-1"
[ "$(git diff --name-only origin/main...origin/task-1)" = "app.py" ] || fail "task-1 must change product files only"
[ "$(git show --name-only --format= origin/main | sort | tr '\n' ' ')" = "COWORK-STATUS.md NEXT-STEPS.md " ] ||
  fail "the commit on main must be paperwork only"
[ "$(git rev-list --count origin/main)" = "3" ] || fail "main gets exactly one commit: the paperwork"
git show origin/main:NEXT-STEPS.md | head -1 | grep -qx "Status: DONE" || fail "the brief on main must be DONE"
git show origin/main:COWORK-STATUS.md | grep -q "^## Relay evidence" || fail "the report must carry relay's evidence"
echo "ok: one product-only branch task-1, one paperwork-only commit on main (Status: DONE, report with relay's evidence)"
