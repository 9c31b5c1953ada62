#!/usr/bin/env bash
# Load benchmark of idkit serve's gRPC front door on loopback, against ferroid-tonic-server
# (the Rust peer's streaming id server, installed with `cargo install` when missing), with
# the same client (bench-harness's grpc_load, tonic) and the same layout (Twitter's), in
# one run. Writes reports/grpc_load.md and reports/data/grpc_load.csv.
#
#   scripts/grpc-load.sh               # 5 s per measurement
#   SECONDS_PER_RUN=2 scripts/grpc-load.sh
set -euo pipefail
. "$(dirname "$0")/usage.sh"
takes_no_arguments "$@"
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }
RUN="${SECONDS_PER_RUN:-5}"
CONNECTIONS="${CONNECTIONS:-4}"
PORT_IDKIT=$((20000 + RANDOM % 10000))
PORT_PEER=$((30000 + RANDOM % 10000))
PEER_ROOT="${PEER_ROOT:-target/peers}"

step "building idkit and the load client (release)"
cargo build --release -q -p idkit-cli -p bench-harness --bin idkit --bin grpc_load

if [ ! -x "$PEER_ROOT/bin/ferroid-tonic-server" ]; then
    # Its build script compiles its .proto with protoc.
    if ! command -v protoc >/dev/null; then
        step "installing protobuf-compiler (Debian package; ferroid-tonic-server's build needs protoc)"
        (apt-get install -y protobuf-compiler || (apt-get update && apt-get install -y protobuf-compiler)) >/dev/null
    fi
    step "cargo install ferroid-tonic-server (the peer, from the crate registry)"
    cargo install -q ferroid-tonic-server --root "$PEER_ROOT" --target-dir "$PEER_ROOT/build"
fi

pids=()
cleanup() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

wait_port() {
    for _ in $(seq 200); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "nothing listens on port $1" >&2
    exit 1
}

step "starting idkit serve (snowflake-twitter, snowflake-mastodon) and ferroid-tonic-server"
target/release/idkit serve --listen 127.0.0.1:0 --grpc-listen "127.0.0.1:$PORT_IDKIT" \
    --no-state-file --max-batch 100000 --worker 1 \
    --scheme snowflake-twitter --scheme snowflake-mastodon 2>/dev/null &
pids+=($!)
# One generator each (ferroid's default: one worker), Twitter's layout on both sides
# (ferroid's default id type), the same chunk of 4,096 ids.
"$PEER_ROOT/bin/ferroid-tonic-server" --server-addr "127.0.0.1:$PORT_PEER" --num-workers 1 \
    --ids-per-chunk 4096 2>/dev/null &
pids+=($!)
wait_port "$PORT_IDKIT"
wait_port "$PORT_PEER"

mkdir -p reports/data
csv=reports/data/grpc_load.csv
echo "target,mode,scheme,connections,calls,ids,seconds,ids_per_sec,calls_per_sec,p50_us,p99_us,errors" >"$csv"
measure() { # target port mode scheme [extra client args]
    local target=$1 port=$2 mode=$3 scheme=$4
    shift 4
    local line
    target/release/grpc_load --target "$target" --addr "127.0.0.1:$port" --mode "$mode" \
        --scheme "$scheme" --seconds 1 --connections "$CONNECTIONS" "$@" >/dev/null
    line=$(target/release/grpc_load --target "$target" --addr "127.0.0.1:$port" --mode "$mode" \
        --scheme "$scheme" --seconds "$RUN" --connections "$CONNECTIONS" "$@")
    awk -v scheme="$scheme" -v conns="$CONNECTIONS" '{
        for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
        printf "%s,%s,%s,%d,%d,%d,%s,%.0f,%.0f,%s,%s,%s\n", v["target"], v["mode"], scheme, conns,
            v["calls"], v["ids"], v["seconds"], v["ids"] / v["seconds"], v["calls"] / v["seconds"],
            v["p50_us"], v["p99_us"], v["errors"]
    }' <<<"$line" | tee -a "$csv"
}

step "measuring ($RUN s per run after a 1 s warm-up, $CONNECTIONS connections)"
measure idkit "$PORT_IDKIT" unary snowflake-twitter
measure idkit "$PORT_IDKIT" batch snowflake-twitter --batch 1000
measure idkit "$PORT_IDKIT" stream snowflake-twitter --batch 4096 --stream-ids 1000000
measure ferroid "$PORT_PEER" stream snowflake-twitter --stream-ids 1000000
measure idkit "$PORT_IDKIT" stream snowflake-mastodon --batch 4096 --stream-ids 1000000

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')
{
    echo "# idkit serve's gRPC front door under load"
    echo
    echo "bench-harness's \`grpc_load\` (tonic) on the same machine as the servers, loopback,"
    echo "$CONNECTIONS HTTP/2 connections with one caller each, $RUN s per run after a 1 s warm-up."
    echo "Against ferroid-tonic-server (installed with \`cargo install\`; one worker, its default, and"
    echo "its default id type, Twitter's layout; chunks of 4,096 ids on both sides), the same client."
    echo "Machine: $cpu, $(nproc) cores. Revision \`$(git rev-parse --short HEAD)\`, $(date -u +%Y-%m-%d)."
    echo "Command: \`scripts/grpc-load.sh\` (SECONDS_PER_RUN=$RUN CONNECTIONS=$CONNECTIONS)."
    echo
    echo "Twitter's layout caps one generator at 4.096 M ids/s; Mastodon's (16-bit sequence) at 65.5 M."
    echo
    echo "| target | call | scheme | calls/s | ids/s | p50 per call | p99 per call | errors |"
    echo "|---|---|---|---:|---:|---:|---:|---:|"
    tail -n +2 "$csv" | awk -F, '{
        printf "| %s | %s | %s | %.0f | %.2f M | %.0f us | %.0f us | %d |\n", $1, $2, $3, $9, $8 / 1e6, $10, $11, $12 }'
} >reports/grpc_load.md
echo "==> wrote reports/grpc_load.md and $csv"
