#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on loopback, for the tests and `scripts/report.sh --postgres`.
#
#   scripts/pg-cluster.sh start DIR PORT   # installs Debian's postgresql if missing, initdb, start
#   scripts/pg-cluster.sh stop DIR         # fast shutdown
#   scripts/pg-cluster.sh restart-server DIR   # start an existing, stopped cluster again
#   scripts/pg-cluster.sh crash DIR        # immediate shutdown: crash recovery at the next start
#   scripts/pg-cluster.sh standby DIR PORT PRIMARY_DIR   # a streaming standby of the cluster
#                                          # in PRIMARY_DIR (pg_basebackup -R), not started
#
# PG_BIN names the directory of initdb, pg_ctl and postgres (default: Debian's newest, installed
# when missing; scripts/pg18.sh prints PostgreSQL 18's). PG_FSYNC=on starts it with fsync on (default off: tests need no durability); PG_OPTS adds
# server settings ("-c shared_buffers=16MB -c wal_keep_size=8GB"), kept for restart-server,
# which takes them anew when PG_OPTS is given to it. PG_PRELOAD names libraries preloaded into
# the server's programs alone (libfaketime, for a server with its clock set back), not into
# this script: run as root, a libfaketime loaded here would share its semaphore, which only
# root may open, with the server's processes.
#
# Runs the server as the `postgres` user when invoked as root (initdb refuses root).
set -euo pipefail
. "$(dirname "$0")/usage.sh"
needs_arguments 2 "$@"

cmd="$1"
dir="$2"

bin_dir() {
    if [ -n "${PG_BIN:-}" ]; then
        echo "$PG_BIN"
        return
    fi
    # The binaries the cluster was made with, for the commands after `start`.
    if [ -f "$dir/bin" ]; then
        cat "$dir/bin"
        return
    fi
    local initdb
    initdb=$(ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -1 || true)
    if [ -z "$initdb" ]; then
        # postgresql-contrib: pgstattuple and pg_walinspect, which the report's runs use.
        echo "==> installing postgresql and postgresql-contrib (Debian packages)" >&2
        (apt-get install -y postgresql postgresql-contrib ||
            (apt-get update && apt-get install -y postgresql postgresql-contrib)) >/dev/null
        initdb=$(ls /usr/lib/postgresql/*/bin/initdb | sort -V | tail -1)
    fi
    dirname "$initdb"
}

as_owner() {
    local preload=()
    [ -z "${PG_PRELOAD:-}" ] || preload=(env "LD_PRELOAD=$PG_PRELOAD")
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "${preload[@]}" "$@"
    else
        "${preload[@]}" "$@"
    fi
}

BIN=$(bin_dir)
case "$cmd" in
start)
    needs_arguments 3 "$@"
    port="$3"
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    as_owner "$BIN/initdb" -D "$dir/data" --auth=trust -U postgres >/dev/null
    as_owner "$BIN/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=${PG_FSYNC:-off} ${PG_OPTS:-}" start >/dev/null
    echo "$port" >"$dir/port"
    echo "$BIN" >"$dir/bin"
    echo "-c fsync=${PG_FSYNC:-off} ${PG_OPTS:-}" >"$dir/opts"
    ;;
restart-server)
    port=$(cat "$dir/port")
    # PG_OPTS, when given, replaces the settings kept (a library preloaded from now on).
    [ -z "${PG_OPTS+set}" ] || echo "-c fsync=${PG_FSYNC:-off} $PG_OPTS" >"$dir/opts"
    as_owner "$BIN/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir $(cat "$dir/opts")" start >/dev/null
    ;;
stop)
    as_owner "$BIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    ;;
crash)
    as_owner "$BIN/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null
    ;;
standby)
    needs_arguments 4 "$@"
    port="$3"
    primary="$4"
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    as_owner "$BIN/pg_basebackup" -h 127.0.0.1 -p "$(cat "$primary/port")" -U postgres \
        -D "$dir/data" -R -X stream >/dev/null
    echo "$port" >"$dir/port"
    cp "$primary/opts" "$dir/opts"
    ;;
*)
    echo "usage: $0 start DIR PORT | stop DIR | restart-server DIR | crash DIR | standby DIR PORT PRIMARY_DIR" >&2
    exit 2
    ;;
esac
