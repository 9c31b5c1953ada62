#!/usr/bin/env bash
# Cross-checks ids that idkit makes against the reference implementations of their schemes
# in another language: TypeID's official TypeScript implementation (typeid-js), MongoDB's
# JavaScript BSON library (bson) for ObjectId, and tsid-ts (a port of tsid-creator) for TSID.
# Each library must accept every id and read the same time (and prefix) as `idkit decode`.
# UUID versions 1, 3, 5, 6 and 7 are checked both ways against Python's `uuid` module
# (scripts/crosscheck/uuids.py; versions 6 to 8 of Python's own where it makes them) and the
# `uuid` npm package (scripts/crosscheck/uuids.cjs): ids either makes, the other reads with
# the same time, clock sequence and node, and both make the same name-based ids.
# Then gRPC's JavaScript library (@grpc/grpc-js, with @grpc/proto-loader reading the
# repository's .proto) calls `idkit serve --grpc-listen` and checks the ids it gets.
# Installs Node.js and Python 3 from Debian when missing; the npm packages go to a temporary directory.
set -euo pipefail
. "$(dirname "$0")/usage.sh"
takes_no_arguments "$@"
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

if ! command -v node >/dev/null || ! command -v npm >/dev/null || ! command -v python3 >/dev/null; then
    step "installing Node.js, npm and Python 3 (Debian packages)"
    apt-get update -qq && apt-get install -y -qq nodejs npm python3 >/dev/null
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

step "npm install typeid-js, bson, tsid-ts, uuid, @grpc/grpc-js, @grpc/proto-loader into $WORK"
(cd "$WORK" && npm init -y >/dev/null \
    && npm install --silent --no-audit --no-fund typeid-js@1 bson@6 tsid-ts@0.0.9 uuid@11 \
        @grpc/grpc-js@1 @grpc/proto-loader@0.8 >/dev/null)

step "idkit: 50 ids of each scheme, and their decodings"
cargo build -q -p idkit-cli
IDKIT=target/debug/idkit
: > "$WORK/cases.jsonl"
for args in "typeid --prefix user" "typeid" "objectid" "tsid --node 7"; do
    # shellcheck disable=SC2086
    for id in $($IDKIT gen $args -n 50); do
        scheme=${args%% *}
        $IDKIT decode "$scheme" "$id" --json >> "$WORK/cases.jsonl"
    done
done

step "reading them back with the reference implementations"
cp scripts/crosscheck/check.cjs "$WORK/"
(cd "$WORK" && node check.cjs cases.jsonl)

step "UUID versions: Python's uuid module"
python3 scripts/crosscheck/uuids.py "$PWD/$IDKIT"

step "UUID versions: the uuid npm package"
cp scripts/crosscheck/uuids.cjs "$WORK/"
(cd "$WORK" && node uuids.cjs "$OLDPWD/$IDKIT")

step "the gRPC front door called by @grpc/grpc-js"
GRPC_PORT=$((20000 + RANDOM % 20000))
$IDKIT serve --listen 127.0.0.1:0 --grpc-listen "127.0.0.1:$GRPC_PORT" --no-state-file \
    --scheme snowflake-twitter --scheme uuid-v7 --scheme ksuid --worker 3 --datacenter 1 \
    2> "$WORK/serve.log" &
SERVE_PID=$!
trap 'kill "$SERVE_PID" 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do
    grep -q "gRPC (idkit.v1) on" "$WORK/serve.log" && break
    kill -0 "$SERVE_PID" 2>/dev/null || { cat "$WORK/serve.log"; exit 1; }
    sleep 0.1
done
cp scripts/crosscheck/grpc.cjs "$WORK/"
(cd "$WORK" && node grpc.cjs "$OLDPWD/crates/idkit-server/proto" "127.0.0.1:$GRPC_PORT")
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
