#!/usr/bin/env bash
# A throwaway single-member etcd on loopback, for the worker-id lease tests and drills.
#
#   scripts/etcd-server.sh start DIR PORT   # installs Debian's etcd-server if missing, starts
#   scripts/etcd-server.sh stop DIR         # stops it (the data stays, for restart-server)
#   scripts/etcd-server.sh kill DIR         # kill -9: an outage at once (a graceful stop
#                                           # takes etcd about 2 s)
#   scripts/etcd-server.sh restart-server DIR
#
# The client port is PORT, the peer port PORT+1.
set -euo pipefail
. "$(dirname "$0")/usage.sh"
needs_arguments 2 "$@"

cmd="$1"
dir="$2"

etcd_bin() {
    if ! command -v etcd >/dev/null 2>&1; then
        echo "==> installing etcd-server (Debian package)" >&2
        (apt-get install -y etcd-server || (apt-get update && apt-get install -y etcd-server)) >/dev/null
    fi
    command -v etcd
}

# GET /health through bash's /dev/tcp (no curl on a bare machine).
healthy() {
    (
        exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
        printf 'GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
        grep -q '"health":"true"' <&3
    ) 2>/dev/null
}

launch() {
    local port="$1" peer=$(( $1 + 1 ))
    # Debian's package starts a system etcd on the default ports; ours uses its own.
    ETCD_UNSUPPORTED_ARCH="${ETCD_UNSUPPORTED_ARCH:-}" "$(etcd_bin)" \
        --name idkit-test --data-dir "$dir/data" \
        --listen-client-urls "http://127.0.0.1:$port" --advertise-client-urls "http://127.0.0.1:$port" \
        --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
        --initial-cluster "idkit-test=http://127.0.0.1:$peer" \
        >>"$dir/log" 2>&1 &
    echo $! >"$dir/pid"
    for _ in $(seq 1 100); do
        if healthy "$port"; then
            return 0
        fi
        sleep 0.1
    done
    echo "etcd did not become healthy; its log:" >&2
    tail -20 "$dir/log" >&2
    exit 1
}

case "$cmd" in
start)
    needs_arguments 3 "$@"
    mkdir -p "$dir"
    echo "$3" >"$dir/port"
    launch "$3"
    ;;
restart-server)
    launch "$(cat "$dir/port")"
    ;;
stop | kill)
    if [ -f "$dir/pid" ]; then
        if [ "$cmd" = kill ]; then signal=KILL; else signal=TERM; fi
        kill -s "$signal" "$(cat "$dir/pid")" 2>/dev/null || true
        for _ in $(seq 1 50); do
            kill -0 "$(cat "$dir/pid")" 2>/dev/null || break
            sleep 0.1
        done
        rm -f "$dir/pid"
    fi
    ;;
*)
    echo "usage: $0 start DIR PORT | stop DIR | kill DIR | restart-server DIR" >&2
    exit 2
    ;;
esac
