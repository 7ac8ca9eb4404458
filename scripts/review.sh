#!/usr/bin/env bash
# Cron wrapper for the reviewer tick: `* * * * * /path/to/relay/scripts/review.sh /path/to/repo`.
exec "$(dirname -- "${BASH_SOURCE[0]}")/cron-tick.sh" review "$@"
