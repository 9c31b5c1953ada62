#!/usr/bin/env bash
# Load benchmark of `idkit serve` on loopback with wrk (installed from Debian's packages when
# missing), against a bare axum handler returning a counter (the cost of HTTP alone), in the
# same run. Writes reports/load.md and reports/data/load.csv.
#
#   scripts/load.sh              # 10 s per measurement
#   DURATION=3s scripts/load.sh  # shorter
#   ROUNDS=5 scripts/load.sh     # more rounds of the single-id runs (default 3)
#
# Two wrk runs in a row on a shared 2-core machine differ by several per cent, so the
# single-id runs go round ROUNDS times, the bare handler and idkit one after the other, and
# the report takes each target's median round. Each run also records the server's CPU time
# per request (from /proc), which depends far less on how wrk and the server share the cores.
set -euo pipefail
. "$(dirname "$0")/usage.sh"
takes_no_arguments "$@"
cd "$(dirname "$0")/.."

DURATION="${DURATION:-10s}"
THREADS="${THREADS:-1}"
ROUNDS="${ROUNDS:-3}"
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
all="$csv.rounds"
echo "target,workers,path,connections,ids_per_request,requests_per_sec,ids_per_sec,p50_us,p99_us,p999_us,errors,non2xx,round,cpu_us_per_request" >"$all"

# CPU time (user + system, in clock ticks) the process has used so far.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

measure() { # name workers port path connections ids_per_request round pid
    local out line before after
    # A short warm-up, then the measured run.
    wrk -t"$THREADS" -c"$5" -d1s "http://127.0.0.1:$3$4" >/dev/null
    before=$(cpu_ticks "$8")
    out=$(wrk -t"$THREADS" -c"$5" -d"$DURATION" -s scripts/load.lua "http://127.0.0.1:$3$4")
    after=$(cpu_ticks "$8")
    line=$(grep '^LOAD ' <<<"$out")
    awk -v name="$1" -v workers="$2" -v path="$4" -v conns="$5" -v per="$6" -v round="$7" \
        -v ticks="$((after - before))" -v hz="$(getconf CLK_TCK)" '{
        for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
        rps = v["requests"] / (v["duration_us"] / 1e6)
        printf "%s,%d,%s,%d,%d,%.0f,%.0f,%s,%s,%s,%s,%s,%d,%.2f\n", name, workers, path, conns, per, rps,
            rps * per, v["p50_us"], v["p99_us"], v["p999_us"], v["errors"], v["non2xx"], round,
            ticks / hz * 1e6 / v["requests"]
    }' <<<"$line" | tee -a "$all"
}

for w in $WORKER_COUNTS; do
    echo "==> $w server worker(s): measuring ($DURATION per run, wrk -t$THREADS, $ROUNDS rounds of single ids)"
    start_servers "$w"
    for round in $(seq "$ROUNDS"); do
        for c in 32 128; do
            measure bare-axum-counter "$w" "$PORT_BARE" / "$c" 1 "$round" "${pids[0]}"
            measure idkit-serve "$w" "$PORT_IDKIT" /v1/snowflake-twitter/next "$c" 1 "$round" "${pids[1]}"
            measure idkit-serve "$w" "$PORT_IDKIT" /v1/uuid-v7/next "$c" 1 "$round" "${pids[1]}"
        done
    done
    for scheme in snowflake-twitter snowflake-mastodon uuid-v4 uuid-v7 ulid; do
        measure idkit-serve "$w" "$PORT_IDKIT" "/v1/$scheme/next?count=1000" 32 1000 1 "${pids[1]}"
    done
    stop_servers
done

# Each target's median round by requests/s (the whole row: its latencies and CPU too), in
# the order the targets were first measured.
head -1 "$all" >"$csv"
tail -n +2 "$all" | awk -F, '{ print NR "," $0 }' | sort -t, -k2,5 -k7,7n | awk -F, '
    { key = $2 "," $3 "," $4 "," $5; n[key]++; row[key, n[key]] = $0; if (!(key in first) || $1 + 0 < first[key] + 0) first[key] = $1 }
    END { for (k in n) { split(row[k, int((n[k] + 1) / 2)], f, ","); print first[k] "," substr(row[k, int((n[k] + 1) / 2)], length(f[1]) + 2) } }' |
    sort -t, -k1,1n | cut -d, -f2- >>"$csv"

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')
{
    echo "# idkit serve under load"
    echo
    echo "wrk on the same machine as the servers, loopback, $THREADS wrk thread(s), $DURATION per run after a"
    echo "1 s warm-up; each server configuration measured in turn, both servers with the same number of"
    echo "runtime workers; single ids in $ROUNDS rounds (bare handler and idkit back to back), each row the"
    echo "median round (every round: \`data/load.csv.rounds\`). CPU: the server's CPU time per request."
    echo "Machine: $cpu, $(nproc) cores. Revision \`$(git rev-parse --short HEAD)\`, $(date -u +%Y-%m-%d)."
    echo "Command: \`scripts/load.sh\` (DURATION=$DURATION WORKER_COUNTS=\"${WORKER_COUNTS% }\")."
    echo
    echo "| target | workers | path | connections | requests/s | ids/s | p50 | p99 | p99.9 | errors | CPU per request |"
    echo "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    tail -n +2 "$csv" | awk -F, '{
        printf "| %s | %d | `%s` | %d | %.0f | %.0f | %.0f us | %.0f us | %.0f us | %d | %.2f us |\n",
            $1, $2, $3, $4, $6, $7, $8, $9, $10, $11 + $12, $14 }'
    echo
    awk -F, '
        NR == 1 { next }
        $1 == "bare-axum-counter" { bare[$2 "/" $4] = $6; barep99[$2 "/" $4] = $9; barecpu[$2 "/" $4] = $14; next }
        $5 == 1 { n++; w[n] = $2; path[n] = $3; conns[n] = $4; rps[n] = $6; p99[n] = $9; cpu[n] = $14; next }
        $5 == 1000 { m++; bw[m] = $2; bpath[m] = $3; ids[m] = $7 }
        END {
            print "Single ids against the bare handler with the same workers (goals: at least 0.8x its requests/s;"
            print "p99 at most 1 ms at 32 connections):"
            print ""
            for (i = 1; i <= n; i++) {
                k = w[i] "/" conns[i]
                printf "- %d worker(s), `%s`, %d connections: %.2fx (%.0f vs %.0f requests/s), p99 %.0f us (bare %.0f us), CPU %.2f vs %.2f us per request\n", w[i], path[i], conns[i], rps[i] / bare[k], rps[i], bare[k], p99[i], barep99[k], cpu[i], barecpu[k]
            }
            print ""
            print "Batches of 1,000 (goals: 95% of the cap for capped layouts, Twitter 4.096 M ids/s; 15 M ids/s uncapped):"
            print ""
            for (i = 1; i <= m; i++) printf "- %d worker(s), `%s`: %.2f M ids/s\n", bw[i], bpath[i], ids[i] / 1e6
        }' "$csv"
} >reports/load.md
echo "==> wrote reports/load.md and $csv"
