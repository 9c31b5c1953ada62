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
# Server runtime workers for both servers (default: one per core). WORKERS=1 leaves a core
# to wrk on a 2-core machine: a shorter tail at times, but fewer ids/s in batches.
WORKERS="${WORKERS:-$(nproc)}"
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

target/release/bare_http "127.0.0.1:$PORT_BARE" "$WORKERS" 2>/dev/null &
pids+=($!)
target/release/idkit serve --listen "127.0.0.1:$PORT_IDKIT" --max-batch 1000 --workers "$WORKERS" \
    --scheme snowflake-twitter --scheme snowflake-mastodon --scheme uuid-v4 \
    --scheme uuid-v7 --scheme ulid 2>/dev/null &
pids+=($!)
wait_up "$PORT_BARE" /
wait_up "$PORT_IDKIT" /healthz

mkdir -p reports/data
csv=reports/data/load.csv
echo "target,path,connections,ids_per_request,requests_per_sec,ids_per_sec,p50_us,p99_us,p999_us,errors,non2xx" >"$csv"

measure() { # name port path connections ids_per_request
    local out line
    # A short warm-up, then the measured run.
    wrk -t"$THREADS" -c"$4" -d1s "http://127.0.0.1:$2$3" >/dev/null
    out=$(wrk -t"$THREADS" -c"$4" -d"$DURATION" -s scripts/load.lua "http://127.0.0.1:$2$3")
    line=$(grep '^LOAD ' <<<"$out")
    awk -v name="$1" -v path="$3" -v conns="$4" -v per="$5" '{
        for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
        rps = v["requests"] / (v["duration_us"] / 1e6)
        printf "%s,%s,%d,%d,%.0f,%.0f,%s,%s,%s,%s,%s\n", name, path, conns, per, rps, rps * per,
            v["p50_us"], v["p99_us"], v["p999_us"], v["errors"], v["non2xx"]
    }' <<<"$line" | tee -a "$csv"
}

echo "==> measuring ($DURATION per run, wrk -t$THREADS)"
for c in 32 128; do
    measure bare-axum-counter "$PORT_BARE" / "$c" 1
    measure idkit-serve "$PORT_IDKIT" /v1/snowflake-twitter/next "$c" 1
    measure idkit-serve "$PORT_IDKIT" /v1/uuid-v7/next "$c" 1
done
for scheme in snowflake-twitter snowflake-mastodon uuid-v4 uuid-v7 ulid; do
    measure idkit-serve "$PORT_IDKIT" "/v1/$scheme/next?count=1000" 32 1000
done

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')
{
    echo "# idkit serve under load"
    echo
    echo "wrk on the same machine as the server, loopback, $THREADS wrk thread(s), $WORKERS server"
    echo "runtime worker(s) for both servers, $DURATION per run after a 1 s warm-up. Machine: $cpu, $(nproc) cores. Revision \`$(git rev-parse --short HEAD)\`,"
    echo "$(date -u +%Y-%m-%d). Command: \`scripts/load.sh\` (DURATION=$DURATION WORKERS=$WORKERS)."
    echo
    echo "| target | path | connections | requests/s | ids/s | p50 | p99 | p99.9 | errors |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
    tail -n +2 "$csv" | awk -F, '{
        printf "| %s | `%s` | %d | %.0f | %.0f | %.0f us | %.0f us | %.0f us | %d |\n",
            $1, $2, $3, $5, $6, $7, $8, $9, $10 + $11 }'
    echo
    awk -F, '
        NR == 1 { next }
        $1 == "bare-axum-counter" { bare[$3] = $5; next }
        $4 == 1 { n++; path[n] = $2; conns[n] = $3; rps[n] = $5; p99[n] = $8; next }
        $4 == 1000 { m++; bpath[m] = $2; ids[m] = $6 }
        END {
            print "Single ids against the bare handler (goal: at least 0.7x; p99 at most 1 ms at 32 connections):"
            print ""
            for (i = 1; i <= n; i++)
                printf "- `%s`, %d connections: %.2fx (%.0f vs %.0f requests/s), p99 %.0f us\n", path[i], conns[i], rps[i] / bare[conns[i]], rps[i], bare[conns[i]], p99[i]
            print ""
            print "Batches of 1,000 (goals: 95% of the cap for capped layouts, Twitter 4.096 M ids/s; 15 M ids/s uncapped):"
            print ""
            for (i = 1; i <= m; i++) printf "- `%s`: %.2f M ids/s\n", bpath[i], ids[i] / 1e6
        }' "$csv"
} >reports/load.md
echo "==> wrote reports/load.md and $csv"
