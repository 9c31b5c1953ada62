#!/usr/bin/env bash
# Time to acquire and release a worker-id lease, and renewals of a held lease, per identity
# source: static, SQLite, and PostgreSQL and etcd on loopback (throwaway servers, installed
# from Debian when missing). Prints a Markdown table and writes reports/data/leases.csv,
# which the report's "Worker identities" section and decision guide read, and beside it
# reports/data/leases_provenance.txt: when, at what revision and on what machine.
set -euo pipefail
. "$(dirname "$0")/usage.sh"
takes_no_arguments "$@"
cd "$(dirname "$0")/.."
cargo build --release -p bench-harness --bin lease_acquire
PG_DIR=$(mktemp -d); PG_PORT=$((20000 + RANDOM % 20000))
ETCD_DIR=$(mktemp -d); ETCD_PORT=$((20000 + RANDOM % 20000))
SQLITE_DIR=$(mktemp -d)
trap 'scripts/pg-cluster.sh stop "$PG_DIR" >/dev/null 2>&1 || true; rm -rf "$PG_DIR";
      scripts/etcd-server.sh stop "$ETCD_DIR" >/dev/null 2>&1 || true; rm -rf "$ETCD_DIR" "$SQLITE_DIR"' EXIT
# fsync on, as in production (the test cluster runs with it off).
PG_FSYNC=on scripts/pg-cluster.sh start "$PG_DIR" "$PG_PORT"
scripts/etcd-server.sh start "$ETCD_DIR" "$ETCD_PORT"
target/release/lease_acquire --csv reports/data/leases.csv static:0 "sqlite://$SQLITE_DIR/ids.db" \
    "postgres://postgres@127.0.0.1:$PG_PORT/postgres" "etcd://127.0.0.1:$ETCD_PORT"
# When, at what revision and on what machine: the report names it beside the figures.
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
printf 'date %s, git revision %s, machine %s, %s cores\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!reports' || echo -dirty)" \
    "${cpu:-unknown}" "$(nproc)" > reports/data/leases_provenance.txt
