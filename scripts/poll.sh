#!/usr/bin/env bash
# Cron wrapper for the executor tick: `* * * * * /path/to/relay/scripts/poll.sh /path/to/repo`.
exec "$(dirname -- "${BASH_SOURCE[0]}")/cron-tick.sh" poll "$@"
