#!/usr/bin/env bash
# Acceptance session for issue 3 (part 2), replayable: bash scripts/acceptance/part2.sh
# Part 2 "Done when": three briefs through promote → poll → review → merge until the inbox is empty,
# then a fourth whose agent edits package.json.
set -euo pipefail
R="$(cd "$(dirname "$0")/../.." && pwd)"
S=$(mktemp -d "${TMPDIR:-/tmp}/relay-part2-XXXX")
trap 'rm -rf "$S"' EXIT
export XDG_CONFIG_HOME=$S/xdg GIT_CONFIG_GLOBAL=$S/gitconfig GIT_CONFIG_NOSYSTEM=1
git config --global user.name "Dev" && git config --global user.email dev@example.invalid
relay() { deno run --quiet --config $R/deno.json -P=relay $R/main.ts "$@"; }
git init -q --bare -b main $S/origin.git && git clone -q file://$S/origin.git $S/app 2>/dev/null && cd $S/app
mkdir src && echo "app v1" > src/app.txt && git add -A && git commit -qm "product" && git push -q origin HEAD:main
relay init >/dev/null && git add -A && git commit -qm "relay: init" && git push -q origin main
mkdir -p $XDG_CONFIG_HOME/relay && cat > $XDG_CONFIG_HOME/relay/profile.yaml <<P
roles:
  executor: { vendor: command, argv: ["bash", "$R/tests/fixtures/agents/custom.sh", "{prompt}"], timeout: 2m }
  reviewer: { vendor: command, argv: ["bash", "$R/tests/fixtures/reviewers/honest.sh", "{prompt}"], timeout: 2m }
worktree_root: $S/worktrees
P
for t in "Add feature one" "Add feature two" "Add feature three"; do
  printf 'Status: QUEUED\nTitle: %s\n\n## Goal\nAdd the next feature file.\n\n## Done when\n- src/feature-N.txt exists\n\n## Verification bar\n```\ngit ls-files src\n```\n' "$t" | relay inbox add -
done
echo "\$ relay inbox list"; relay inbox list
echo "\$ relay promote"; relay promote
round=0
while [ -n "$(relay inbox list --json | tr -d '[] \n')" ] || grep -q '^Status: OPEN' NEXT-STEPS.md; do
  round=$((round+1)); [ $round -le 5 ] || { echo "too many rounds"; exit 1; }
  echo "\$ relay poll";   relay poll 2>/dev/null
  echo "\$ relay review"; relay review 2>/dev/null
done
echo "\$ relay inbox list"; relay inbox list
git fetch -q origin
echo "\$ git log --first-parent --format='%h %s' origin/main"; git log --first-parent --format='%h %s' origin/main
echo "\$ check: every first-parent commit on main after init is paperwork or a merge of a task branch"
if git log --first-parent --format='%s' origin/main | grep -vE '^(Task #[0-9]+: status — |Merge task-[0-9]+: |relay: init$|product$)'; then
  echo "FAIL: other commits on main"; exit 1
fi
echo "ok: only paperwork commits and task merges"
echo "\$ check: paperwork commits touch only paperwork"
for c in $(git log --first-parent --format=%h --grep='^Task #' origin/main); do echo "$c: $(git show --name-only --format= $c | tr '\n' ' ')"; done

echo; echo "--- a fourth brief whose agent edits package.json ---"
printf 'Status: QUEUED\nTitle: Add feature four\n\n## Goal\nAdd the next feature file.\n\n## Done when\n- src/feature-4.txt exists\n\n## Verification bar\n```\ngit ls-files src\n```\n' | relay inbox add -
echo "\$ relay promote"; relay promote
echo "\$ FAKE_EXTRA='echo {} > package.json' relay poll"; FAKE_EXTRA='echo "{\"dependencies\":{\"left-pad\":\"1.3.0\"}}" > package.json' relay poll 2>/dev/null
echo "\$ relay review"; relay review 2>&1 | grep -vE '^relay: (reviewer task|task 4: starting)' || true
echo "\$ relay gate"; set +e; relay gate; code=$?; set -e; echo "exit=$code"
[ "$code" = 10 ] || { echo "FAIL: the gate must REFUSE"; exit 1; }
echo "\$ head -12 NEXT-STEPS.md (the fix brief, uncommitted)"; head -12 NEXT-STEPS.md
echo "\$ git log --first-parent --format='%h %s' -3 origin/main"; git fetch -q; git log --first-parent --format='%h %s' -3 origin/main
if git log --first-parent --format='%s' origin/main | grep -q '^Merge task-4'; then echo "FAIL: task-4 merged"; exit 1; fi
echo "ok: three briefs merged until the inbox was empty; the package.json PR was refused, not merged"
