#!/usr/bin/env bash
# The hunt for repeated ids: writers make ids of every generator into one table while an
# adversary on a seeded random schedule kills them, removes or replaces the state file,
# steps the clock back, attaches, forks and fills the disk (the SQLite functions,
# crates/idkit-sqlite/tests/hunt.rs); with --pg, sessions of the PostgreSQL extension
# while it terminates and kills backends, reloads idkit.worker_id, restarts the server and
# steps its clock (crates/idkit-all/tests/pg_hunt.rs).
#
#   scripts/hunt.sh                      # seed 90, 20 s: what scripts/test.sh runs
#   scripts/hunt.sh --seconds 600        # 10 minutes, a random seed (printed; a failure names it)
#   scripts/hunt.sh --seed 1234 --seconds 60
#   scripts/hunt.sh --pg --seconds 300   # the extension's hunt (installs the extension)
#   scripts/hunt.sh --trace --seed 1234  # each row also says which state files its ids went
#                                        # to (idkit-sqlite's feature `trace`), for a finding
#
# Runs as root (it mounts a tmpfs to fill); installs faketime (Debian's) when missing.
set -euo pipefail
. "$(dirname "$0")/usage.sh"
help_if_asked "$@"
cd "$(dirname "$0")/.."

seconds=20
seed=
pg=
trace=
while [ $# -gt 0 ]; do
    case "$1" in
    --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
    --seed) seed=${2:?--seed needs a number}; shift 2 ;;
    --pg) pg=1; shift ;;
    --trace) trace=1; shift ;;
    *) { printf '%s: unexpected argument %s:\n\n' "$0" "$1"; script_usage; } >&2; exit 2 ;;
    esac
done
case "$seconds$seed" in *[!0-9]*) echo "$0: --seconds and --seed take numbers" >&2; exit 2 ;; esac
# The fixed seed for the bounded run; a drawn one for any other length unless given.
if [ -z "$seed" ]; then
    if [ "$seconds" = 20 ]; then seed=90; else seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' '); fi
fi
[ "$(id -u)" = 0 ] || { echo "$0: runs as root (it mounts a tmpfs to fill)" >&2; exit 1; }
if ! ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1; then
    echo "==> installing faketime (Debian package)"
    (apt-get install -y faketime || (apt-get update && apt-get install -y faketime)) >/dev/null
fi

echo "==> the hunt: seed $seed, $seconds s (scripts/hunt.sh --seed $seed --seconds $seconds${pg:+ --pg} runs it again)"
export IDKIT_HUNT_SEED=$seed IDKIT_HUNT_SECONDS=$seconds
if [ -n "$pg" ]; then
    scripts/pg-extension.sh
    cargo test -p idkit-all --features pg-extension --test pg_hunt -- --nocapture
else
    cargo test -p idkit-sqlite ${trace:+--features trace} --test hunt -- --ignored --exact hunt --nocapture
fi
