#!/usr/bin/env bash
# review.sh — the thin cron wrapper around `relay review`.
#
# Crontab (the path is the repo's PRIMARY checkout, not a worktree):
#
#   * * * * * /path/to/relay/scripts/poll.sh /path/to/repo
#   * * * * * /path/to/relay/scripts/review.sh /path/to/repo
#
# poll.sh and review.sh are the same script but for SUBCOMMAND; keep them in step.
#
# What it does, and nothing more:
#   - gives cron a sane PATH (~/.deno/bin, ~/.local/bin, /opt/homebrew/bin, /usr/local/bin, ...);
#   - cd's into <repo>;
#   - appends all output, under a timestamped header line, to <repo>/.git/relay/cron.log
#     (RELAY_CRON_LOG overrides; the log is rotated to cron.log.1 past 5 MiB);
#   - execs `relay review [extra args]` (RELAY_BIN overrides the binary, default `relay` on PATH).
# Locking, deciding what to do and all the safety rules live in relay itself.

set -euo pipefail

SUBCOMMAND="review"

if [[ $# -lt 1 || -z "$1" ]]; then
  echo "usage: $0 <repo> [extra relay $SUBCOMMAND args...]" >&2
  exit 2
fi
repo="$1"
shift

# Sane PATH first, then the inherited one minus relative entries (".", "", ...).
sane="${HOME:+$HOME/.deno/bin:$HOME/.local/bin:}/opt/homebrew/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
IFS=: read -r -a inherited <<<"${PATH:-}"
for dir in ${inherited[@]+"${inherited[@]}"}; do
  [[ "$dir" == /* ]] && sane="$sane:$dir"
done
export PATH="$sane"

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

exec >>"$log" 2>&1
echo "=== $(date -u +%Y-%m-%dT%H:%M:%SZ) relay $SUBCOMMAND (pid $$, repo $PWD) ==="
exec "${RELAY_BIN:-relay}" "$SUBCOMMAND" "$@"
