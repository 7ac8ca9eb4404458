#!/usr/bin/env bash
# cron-tick.sh — the thin cron wrapper around `relay poll` and `relay review`
# (scripts/poll.sh and scripts/review.sh call it).
#
# Crontab (the path is the repo's PRIMARY checkout, not a worktree):
#
#   * * * * * /path/to/relay/scripts/poll.sh /path/to/repo
#   * * * * * /path/to/relay/scripts/review.sh /path/to/repo
#
# What it does, and nothing more:
#   - gives cron a sane PATH (~/.deno/bin, ~/.local/bin, /opt/homebrew/bin, /usr/local/bin, ...,
#     then the inherited entries), of safe folders only (see safe_dir), and NO_COLOR=1;
#   - cd's into <repo>;
#   - runs `relay <poll|review> [extra args]` (RELAY_BIN overrides the binary, default `relay`);
#   - appends its output, under a timestamped header line, to <repo>/.git/relay/cron.log
#     (RELAY_CRON_LOG overrides; rotated to cron.log.1 past 5 MiB). An idle tick prints
#     nothing, so it leaves no line at all: 1,440 idle minutes a day do not bury the log.
# Locking, deciding what to do and all the safety rules live in relay itself.

set -euo pipefail

SUBCOMMAND="${1:-}"
if [[ "$SUBCOMMAND" != "poll" && "$SUBCOMMAND" != "review" ]]; then
  echo "usage: $0 <poll|review> <repo> [extra relay args...]" >&2
  exit 2
fi
shift
if [[ $# -lt 1 || -z "$1" ]]; then
  echo "usage: $0 $SUBCOMMAND <repo> [extra relay $SUBCOMMAND args...]" >&2
  exit 2
fi
repo="$1"
shift

# A folder may go on PATH when it exists, is absolute, is not world-writable (a sticky folder
# like /tmp still lets anyone add a `git` that cron would run as you) and is no cache or temp
# folder (npm's npx cache, node_modules/.bin, Deno's module cache, /tmp): the same rules as the
# PATH line `relay init` prints.
deno_cache="${DENO_DIR:-${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/deno}"
safe_dir() {
  local dir="$1" real p
  [[ "$dir" == /* && -d "$dir" ]] || return 1
  [[ -z "$(find -H "$dir" -maxdepth 0 -perm -0002 2>/dev/null)" ]] || return 1
  real="$(cd -P -- "$dir" 2>/dev/null && pwd)" || return 1
  for p in "$dir" "$real"; do
    case "${p%/}/" in
    */_npx/* | */node_modules/.bin/* | /tmp/* | /var/tmp/* | /dev/shm/* | /private/tmp/* | /private/var/tmp/*)
      return 1
      ;;
    "${deno_cache%/}/"* | "${HOME:-/nonexistent}/Library/Caches/deno/"* | "${HOME:-/nonexistent}/.npm/"*)
      return 1
      ;;
    esac
    if [[ -n "${TMPDIR:-}" && "${p%/}/" == "${TMPDIR%/}/"* ]]; then return 1; fi
  done
  return 0
}

# Sane folders first, then the inherited ones, each once and only when safe.
sane=""
IFS=: read -r -a inherited <<<"${PATH:-}"
for dir in ${HOME:+"$HOME/.deno/bin" "$HOME/.local/bin"} /opt/homebrew/bin /usr/local/bin \
  /usr/bin /bin /usr/sbin /sbin ${inherited[@]+"${inherited[@]}"}; do
  dir="${dir%/}"
  case ":$sane:" in *":$dir:"*) continue ;; esac
  if safe_dir "$dir"; then sane="${sane:+$sane:}$dir"; fi
done
export PATH="$sane"
# No colour codes in cron.log, whatever the programs think of their output.
export NO_COLOR=1

if ! cd -- "$repo" 2>/dev/null; then
  echo "$0: cannot cd to repo: '$repo'" >&2
  exit 2
fi
if [[ -z "${RELAY_CRON_LOG:-}" && ! -d .git ]]; then
  echo "$0: not a primary git checkout (no .git directory): '$repo'" >&2
  exit 2
fi

log="${RELAY_CRON_LOG:-$PWD/.git/relay/cron.log}"
mkdir -p -- "$(dirname -- "$log")"
if [[ -f "$log" && "$(wc -c <"$log")" -gt 5242880 ]]; then
  mv -f -- "$log" "$log.1"
fi

header="=== $(date -u +%Y-%m-%dT%H:%M:%SZ) relay $SUBCOMMAND (pid $$, repo $PWD) ==="
# Streamed as it comes (a long agent turn shows progress), the header only before a first line.
# The exit line only after a run that said something: a HOLD that lasts is silent after its
# first report (relay says it again hourly), and so must the wrapper be.
: >>"$log"
set +e
lines=$("${RELAY_BIN:-relay}" "$SUBCOMMAND" "$@" 2>&1 </dev/null |
  awk -v header="$header" -v out="$log" 'NR == 1 { print header >>out } { print >>out; fflush(out) } END { print NR }'
  exit "${PIPESTATUS[0]}")
code=$?
set -e
if [[ $code -ne 0 && ${lines:-0} -gt 0 ]]; then
  echo "=== exit $code ===" >>"$log"
fi
exit "$code"
