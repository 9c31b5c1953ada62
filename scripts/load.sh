#!/usr/bin/env bash
# Load benchmark of `idkit serve` on loopback with wrk (installed from Debian's packages when
# missing), against a bare axum handler returning a counter (the cost of HTTP alone), in the
# same run. Writes reports/load.md and reports/data/load.csv.
#
#   scripts/load.sh              # 10 s per measurement
#   DURATION=3s scripts/load.sh  # shorter
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION="${DURATION:-10s}"
THREADS="${THREADS:-1}"
# Server runtime worker counts, each measured in turn for both servers. One worker leaves
# a core to wrk on a 2-core machine (the shorter tail); one per core serves larger batches.
WORKER_COUNTS="${WORKER_COUNTS:-$(printf '%s\n' 1 "$(nproc)" | sort -nu | tr '\n' ' ')}"
PORT_BARE=18181
PORT_IDKIT=18182

if ! command -v wrk >/dev/null; then
    echo "==> installing wrk"
    (apt-get install -y wrk || (apt-get update && apt-get install -y wrk)) >/dev/null
fi

echo "==> building idkit and bare_http (release)"
cargo build --release -p idkit-cli -p bench-harness --bin idkit --bin bare_http

pids=()
cleanup() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

wait_up() {
    for _ in $(seq 100); do
        curl -s -o /dev/null "http://127.0.0.1:$1$2" 2>/dev/null && return 0
        # curl may be missing: fall back to bash's /dev/tcp.
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "server on port $1 did not start" >&2
    exit 1
}

port_busy() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

start_servers() { # workers
    for port in "$PORT_BARE" "$PORT_IDKIT"; do
        if port_busy "$port"; then
            echo "port $port is already in use: stop what listens there (it would be measured instead)" >&2
            exit 1
        fi
    done
    target/release/bare_http "127.0.0.1:$PORT_BARE" "$1" 2>/dev/null &
    pids=($!)
    target/release/idkit serve --listen "127.0.0.1:$PORT_IDKIT" --max-batch 1000 --workers "$1" \
        --scheme snowflake-twitter --scheme snowflake-mastodon --scheme uuid-v4 \
        --scheme uuid-v7 --scheme ulid 2>/dev/null &
    pids+=($!)
    wait_up "$PORT_BARE" /
    wait_up "$PORT_IDKIT" /healthz
    for p in "${pids[@]}"; do
        kill -0 "$p" 2>/dev/null || { echo "a server exited at start-up" >&2; exit 1; }
    done
}

stop_servers() {
    cleanup
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    pids=()
}

mkdir -p reports/data
csv=reports/data/load.csv
echo "target,workers,path,connections,ids_per_request,requests_per_sec,ids_per_sec,p50_us,p99_us,p999_us,errors,non2xx" >"$csv"

measure() { # name workers port path connections ids_per_request
    local out line
    # A short warm-up, then the measured run.
    wrk -t"$THREADS" -c"$5" -d1s "http://127.0.0.1:$3$4" >/dev/null
    out=$(wrk -t"$THREADS" -c"$5" -d"$DURATION" -s scripts/load.lua "http://127.0.0.1:$3$4")
    line=$(grep '^LOAD ' <<<"$out")
    awk -v name="$1" -v workers="$2" -v path="$4" -v conns="$5" -v per="$6" '{
        for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
        rps = v["requests"] / (v["duration_us"] / 1e6)
        printf "%s,%d,%s,%d,%d,%.0f,%.0f,%s,%s,%s,%s,%s\n", name, workers, path, conns, per, rps,
            rps * per, v["p50_us"], v["p99_us"], v["p999_us"], v["errors"], v["non2xx"]
    }' <<<"$line" | tee -a "$csv"
}

for w in $WORKER_COUNTS; do
    echo "==> $w server worker(s): measuring ($DURATION per run, wrk -t$THREADS)"
    start_servers "$w"
    for c in 32 128; do
        measure bare-axum-counter "$w" "$PORT_BARE" / "$c" 1
        measure idkit-serve "$w" "$PORT_IDKIT" /v1/snowflake-twitter/next "$c" 1
        measure idkit-serve "$w" "$PORT_IDKIT" /v1/uuid-v7/next "$c" 1
    done
    for scheme in snowflake-twitter snowflake-mastodon uuid-v4 uuid-v7 ulid; do
        measure idkit-serve "$w" "$PORT_IDKIT" "/v1/$scheme/next?count=1000" 32 1000
    done
    stop_servers
done

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')
{
    echo "# idkit serve under load"
    echo
    echo "wrk on the same machine as the servers, loopback, $THREADS wrk thread(s), $DURATION per run after a"
    echo "1 s warm-up; each server configuration measured in turn, both servers with the same number of"
    echo "runtime workers. Machine: $cpu, $(nproc) cores. Revision \`$(git rev-parse --short HEAD)\`, $(date -u +%Y-%m-%d)."
    echo "Command: \`scripts/load.sh\` (DURATION=$DURATION WORKER_COUNTS=\"${WORKER_COUNTS% }\")."
    echo
    echo "| target | workers | path | connections | requests/s | ids/s | p50 | p99 | p99.9 | errors |"
    echo "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"
    tail -n +2 "$csv" | awk -F, '{
        printf "| %s | %d | `%s` | %d | %.0f | %.0f | %.0f us | %.0f us | %.0f us | %d |\n",
            $1, $2, $3, $4, $6, $7, $8, $9, $10, $11 + $12 }'
    echo
    awk -F, '
        NR == 1 { next }
        $1 == "bare-axum-counter" { bare[$2 "/" $4] = $6; barep99[$2 "/" $4] = $9; next }
        $5 == 1 { n++; w[n] = $2; path[n] = $3; conns[n] = $4; rps[n] = $6; p99[n] = $9; next }
        $5 == 1000 { m++; bw[m] = $2; bpath[m] = $3; ids[m] = $7 }
        END {
            print "Single ids against the bare handler with the same workers (goals: at least 0.7x its requests/s;"
            print "p99 at most 1 ms at 32 connections):"
            print ""
            for (i = 1; i <= n; i++) {
                k = w[i] "/" conns[i]
                printf "- %d worker(s), `%s`, %d connections: %.2fx (%.0f vs %.0f requests/s), p99 %.0f us (bare %.0f us)\n", w[i], path[i], conns[i], rps[i] / bare[k], rps[i], bare[k], p99[i], barep99[k]
            }
            print ""
            print "Batches of 1,000 (goals: 95% of the cap for capped layouts, Twitter 4.096 M ids/s; 15 M ids/s uncapped):"
            print ""
            for (i = 1; i <= m; i++) printf "- %d worker(s), `%s`: %.2f M ids/s\n", bw[i], bpath[i], ids[i] / 1e6
        }' "$csv"
} >reports/load.md
echo "==> wrote reports/load.md and $csv"
