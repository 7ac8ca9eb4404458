#!/bin/sh
# relay-guard: written by "relay guard install"
# "relay guard uninstall" removes it and a reinstall replaces it, so edits made here are lost.
# Plain POSIX sh and git: the server needs no relay.
#
# What this pre-receive hook lets onto main, the branch "git config relay.main" names in this
# repository (main when unset), and onto refs/notes/relay, relay's record of its verdicts and gate
# decisions ("relay audit" reads it). Every other ref passes untouched.
#
#   - A listed person may push anything but a deletion: the pusher is $GL_USER (gitolite), else
#     $REMOTE_USER (smart http), else the account the push runs as (id -un, for ssh), and the
#     persons are "git config --get-all relay.person" here.
#   - Deleting main is refused for everyone (a person deletes it on the server itself).
#   - Creating main is allowed only in a repository with no branch at all (the first push);
#     after that only a listed person creates it.
#   - Otherwise the update must be a fast-forward, and each commit on the new first-parent
#     line, oldest first, starting from the current main, must be one of:
#       a. paperwork only: one parent, and every path it changes is paperwork relay itself
#          commits (@RELAY_PAPERWORK_LIST@); the rest of .relay/ is relay's settings
#          (config.yaml, stage procedures), which only a listed person changes;
#       b. relay's merge of a task branch: two parents, subject "Merge task-<n>: ... (task <m>,
#          reviewed by relay)", the second parent is where this repository's task-<n> branch
#          is (or is being pushed to in this same push), the branch changes no paperwork since
#          it forked (merge-base to tip, as relay's merge gate reads it), and the merge itself
#          changes no paperwork.
#     Anything else (a product commit straight on main, a paperwork commit that also changes
#     other files or relay's settings, another kind of merge, an octopus) refuses the whole push,
#     naming the commit.
#   - refs/notes/relay: creating it and fast-forwarding it pass (relay merges the remote's notes
#     into its own before it pushes, never forcing); deleting or rewriting it is refused, so the
#     audit trail cannot be erased, unless a listed person pushes.
#
# The hook does not redo the merge: a merge with relay's subject whose tree differs from what
# git would merge passes. It keeps mistakes and stray pushes off main; it cannot tell relay's
# pushes from anyone else's with the same access.

export GIT_NO_REPLACE_OBJECTS=1
# The pathspecs below are magic (":(top,literal)…"): an environment that tells git to read
# pathspecs another way would make them file names, and let paperwork through.
unset GIT_LITERAL_PATHSPECS GIT_GLOB_PATHSPECS GIT_NOGLOB_PATHSPECS GIT_ICASE_PATHSPECS

say() {
  printf 'relay guard: %s\n' "$*" >&2
}

is_zero() {
  case $1 in
  *[!0]*) return 1 ;;
  *) return 0 ;;
  esac
}

short() {
  printf '%.12s' "$1"
}

main=$(git config --local --get relay.main 2>/dev/null) || main=
[ -n "$main" ] || main=main
pusher=${GL_USER:-${REMOTE_USER:-$(id -un 2>/dev/null)}}
updates=$(cat)

# True when the pusher is listed in relay.person.
listed() {
  [ -n "$pusher" ] || return 1
  git config --local --get-all relay.person 2>/dev/null | {
    while IFS= read -r person; do
      [ "$person" = "$pusher" ] && exit 0
    done
    exit 1
  }
}

# Where a ref will be: its new value in this push, else where it is now.
tip_of() {
  printf '%s\n' "$updates" | {
    while read -r _old _new _ref; do
      if [ "$_ref" = "$1" ]; then
        printf '%s\n' "$_new"
        exit 0
      fi
    done
    git rev-parse --quiet --verify "$1^{commit}" 2>/dev/null
  }
}

# Exit 0: no paperwork path differs between two commits; 1: one does; other: git failed.
no_paperwork() {
  git diff --quiet --no-ext-diff --no-textconv --no-renames "$1" "$2" -- @PAPERWORK_PATHSPECS@
}

# Exit 0: nothing but the paperwork relay commits differs between two commits; 1: something
# else does (relay's settings under .relay/ included).
only_paperwork() {
  git diff --quiet --no-ext-diff --no-textconv --no-renames "$1" "$2" -- ':(top)' @RELAY_PAPERWORK_EXCLUDES@
}

# A few of the paths that differ and are not relay's paperwork, for the message; $3 and on narrow
# them further (pathspecs).
other_paths() {
  _from=$1
  _to=$2
  shift 2
  git diff --name-only --no-ext-diff --no-renames "$_from" "$_to" -- "$@" @RELAY_PAPERWORK_EXCLUDES@ |
    awk 'NR <= 5 { printf "%s%s", (NR > 1 ? ", " : ""), $0 } NR == 6 { printf ", ..." }'
}

how_to_proceed() {
  say "  main takes only relay's paperwork commits (@RELAY_PAPERWORK_LIST@)"
  say "  and relay's merges of reviewed task branches; the rest of .relay/ (relay's settings) only"
  say "  a person pushes. To proceed: put the change on a branch and send it through relay"
  say "  (relay inbox add), or push as a person listed in \"git config --get-all relay.person\""
  say "  on this server (this push came from \"${pusher:-nobody known}\")."
}

# Judges one commit of the new first-parent line; $2 is the commit before it on main.
# Prints the problem and returns 1 when the commit may not land.
judge_commit() {
  c=$1
  before=$2
  subject=$(git log -1 --format=%s "$c" --)
  set -- $(git rev-list --parents -n 1 "$c" --)
  shift
  if [ "$#" -eq 0 ]; then
    problem="is a root commit, not built on $main"
  elif [ "$1" != "$before" ]; then
    problem="is not built on $main as it is here ($(short "$before")): its first parent is $(short "$1")"
  elif [ "$#" -eq 1 ]; then
    only_paperwork "$1" "$c"
    case $? in
    0) return 0 ;;
    1)
      product=$(other_paths "$1" "$c" ':(top)' @RELAY_DIR_EXCLUDE@)
      if [ -n "$product" ]; then
        problem="changes files that are not paperwork ($product) and is not a merge of a task branch"
      else
        problem="changes relay's settings ($(other_paths "$1" "$c" @RELAY_DIR_PATHSPEC@)), which only a listed person changes (relay's own paperwork is @RELAY_PAPERWORK_LIST@)"
      fi
      ;;
    *) problem="could not be read by git diff" ;;
    esac
  elif [ "$#" -gt 2 ]; then
    problem="is a merge of $# parents; only relay's two-parent merges of task branches land here"
  else
    judge_merge "$c" "$1" "$2" "$subject" && return 0
  fi
  say "refusing $ref: commit $(short "$c") \"$subject\" $problem."
  return 1
}

# A two-parent commit: relay's merge of a task branch, or a problem in $problem.
judge_merge() {
  branch=${4#Merge }
  branch=${branch%%:*}
  case $4 in
  "Merge task-"*": "*", reviewed by relay)") ;;
  *)
    problem="is a merge, but not relay's merge of a task branch (its subject is not \"Merge task-<n>: ... reviewed by relay)\")"
    return 1
    ;;
  esac
  case ${branch#task-} in
  '' | *[!0-9]*)
    problem="is a merge whose subject names no task branch"
    return 1
    ;;
  esac
  tip=$(tip_of "refs/heads/$branch")
  if [ "$tip" != "$3" ]; then
    problem="merges $(short "$3"), but $branch here is at $(short "${tip:-nothing}")"
    return 1
  fi
  if ! base=$(git merge-base "$2" "$3"); then
    problem="merges $branch, which shares no history with $main"
    return 1
  fi
  no_paperwork "$base" "$3"
  case $? in
  0) ;;
  1)
    problem="merges $branch, which changes paperwork (@PAPERWORK_LIST@); task branches never do"
    return 1
    ;;
  *)
    problem="could not be read by git diff"
    return 1
    ;;
  esac
  no_paperwork "$2" "$1"
  case $? in
  0) return 0 ;;
  1) problem="changes paperwork in the merge itself (@PAPERWORK_LIST@)" ;;
  *) problem="could not be read by git diff" ;;
  esac
  return 1
}

# Judges one update of refs/notes/relay; returns 1 when it is refused.
judge_notes() {
  old=$1
  new=$2
  if listed; then
    say "$pusher is listed as a person (relay.person): $ref goes to $(short "$new") unchecked."
    return 0
  fi
  if is_zero "$new"; then
    say "refusing to delete $ref: it is relay's record of its verdicts and gate decisions"
    say "  (relay audit reads it), and only a person listed in relay.person deletes it."
    return 1
  fi
  is_zero "$old" && return 0
  if ! git merge-base --is-ancestor "$old" "$new" 2>/dev/null; then
    say "refusing $ref: $(short "$new") is not a fast-forward of $(short "$old"); relay's record"
    say "  of verdicts and gate decisions is never rewritten. Fetch it, merge yours in"
    say "  (git notes --ref=relay merge -s cat_sort_uniq <fetched>), and push again, or push as a"
    say "  person listed in relay.person (this push came from \"${pusher:-nobody known}\")."
    return 1
  fi
  return 0
}

# Judges one update of main; returns 1 when it is refused.
judge_update() {
  old=$1
  new=$2
  if is_zero "$new"; then
    say "refusing to delete $ref: relay's loop works on it. A person who means it deletes it on"
    say "  the server (git update-ref -d $ref) or runs \"relay guard uninstall\" first."
    return 1
  fi
  if listed; then
    say "$pusher is listed as a person (relay.person): $ref goes to $(short "$new") unchecked."
    return 0
  fi
  if is_zero "$old"; then
    if [ -z "$(git for-each-ref --count=1 --format=x refs/heads/)" ]; then
      say "creating $ref in a repository with no branch yet: accepted."
      return 0
    fi
    say "refusing to create $ref: it does not exist here, and only a listed person creates it."
    how_to_proceed
    return 1
  fi
  if ! git merge-base --is-ancestor "$old" "$new" 2>/dev/null; then
    say "refusing $ref: $(short "$new") is not a fast-forward of $(short "$old"); main is never"
    say "  rewritten. Fetch, rebuild your change on top of $main, and push again."
    how_to_proceed
    return 1
  fi
  if ! commits=$(git rev-list --first-parent --reverse "$old..$new" --); then
    say "refusing $ref: git rev-list could not walk $(short "$old")..$(short "$new")."
    return 1
  fi
  previous=$old
  for commit in $commits; do
    if ! judge_commit "$commit" "$previous"; then
      how_to_proceed
      return 1
    fi
    previous=$commit
  done
  return 0
}

status=0
while read -r old new ref; do
  case $ref in
  "refs/heads/$main") judge_update "$old" "$new" || status=1 ;;
  refs/notes/relay) judge_notes "$old" "$new" || status=1 ;;
  esac
done <<EOF
$updates
EOF
exit "$status"
