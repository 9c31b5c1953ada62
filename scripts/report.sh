#!/usr/bin/env bash
# Regenerates reports/ (REPORT.md, charts/, data/) with the standard profile: measures
# every scheme in the registry on this machine, with progress on the terminal.
#
#   scripts/report.sh                      # standard profile, writes reports/
#   scripts/report.sh --profile quick      # about a minute
#   scripts/report.sh --profile full       # larger tables, for people with time
#   scripts/report.sh --out /tmp/r --quiet # elsewhere, no progress bars
#   scripts/report.sh --allow-dirty        # from uncommitted changes (refused without it;
#                                          # the report then says so at its top)
#   scripts/report.sh --postgres           # also PostgreSQL: two throwaway servers on
#                                          # loopback (shared_buffers 8 MB and 1 GB), with
#                                          # the idkit extension built and preloaded, and a
#                                          # PostgreSQL 18 one for its built-in uuidv7()
#                                          # (scripts/pg18.sh fetches it)
#   scripts/report.sh --postgres-url URL   # also PostgreSQL, on your server (15 or later,
#                                          # a superuser, postgresql-contrib installed)
#   scripts/report.sh --mysql              # also InnoDB: two throwaway MariaDB servers on
#                                          # loopback (buffer pool 8 MB and 1 GB)
#   scripts/report.sh --mysql-url URL      # also InnoDB, on your MySQL 8 or MariaDB server
#                                          # (a user that may SET GLOBAL)
#
# The measuring needs only the Rust toolchain: SQLite is compiled in (rusqlite's bundled
# build) and the charts' font is embedded. The section on ids made in SQL inside SQLite
# (scripts/sqlite-functions.sh) installs its peers from PyPI by name, pinned (sqlean.py,
# sqlite-ulid), into a virtual environment under ~/.cache/idkit, and Debian's python3-venv
# when missing; it says so as it does. --postgres installs Debian's postgresql when it is
# missing (and what the extension's build needs: scripts/pg-extension.sh), --mysql Debian's
# mariadb-server. Without a server, the report keeps the PostgreSQL and InnoDB figures of the
# last run that had one (reports/data/postgres.json, mysql.json), dated.
#
# The first build takes 4 to 8 minutes on two cores (release, the whole harness); later runs
# build in seconds. Cargo's settings are the user's: CARGO_TARGET_DIR or a target-dir in a
# cargo config is where the binaries are looked for.
set -euo pipefail
. "$(dirname "$0")/usage.sh"
help_if_asked "$@"
cd "$(dirname "$0")/.."

# Where cargo puts its builds, by the user's settings (not assumed to be target/).
target_dir=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
[ -n "$target_dir" ] || { echo "$0: cargo metadata gave no target directory" >&2; exit 1; }
export IDKIT_TARGET_DIR=$target_dir

echo "==> building the report generator (release; 4 to 8 minutes the first time)"
cargo build --release -p bench-harness --bin report

args=()
postgres=0
mysql=0
for a in "$@"; do
    case "$a" in
    --postgres) postgres=1 ;;
    --mysql) mysql=1 ;;
    *) args+=("$a") ;;
    esac
done
command="scripts/report.sh${*:+ $*}"

pg_dirs=()
my_dirs=()
cleanup() {
    for d in "${pg_dirs[@]}"; do scripts/pg-cluster.sh stop "$d" >/dev/null 2>&1 || true; rm -rf "$d"; done
    for d in "${my_dirs[@]}"; do scripts/mariadb-server.sh stop "$d" >/dev/null 2>&1 || true; rm -rf "$d"; done
}
trap cleanup EXIT

if [ "$postgres" = 1 ]; then
    # The idkit extension, for the ids made inside the server (its build needs the server's
    # headers, libclang and cargo-pgrx, which the script installs when missing).
    echo "==> building and installing the idkit PostgreSQL extension"
    scripts/pg-extension.sh
    # Two throwaway clusters, fsync on, WAL kept for pg_walinspect, checkpoints only when
    # the harness asks (it issues one every tenth of a run); the extension preloaded, with a
    # worker id for its Snowflake generators.
    wal="-c wal_keep_size=16GB -c max_wal_size=32GB -c checkpoint_timeout=1d"
    common="$wal -c shared_preload_libraries=idkit -c idkit.worker_id=1"
    for buffers in 8MB 1GB; do
        dir=$(mktemp -d)
        pg_dirs+=("$dir")
        port=$((20000 + RANDOM % 20000))
        echo "==> starting a PostgreSQL server on 127.0.0.1:$port (shared_buffers $buffers)"
        PG_FSYNC=on PG_OPTS="-c shared_buffers=$buffers $common" scripts/pg-cluster.sh start "$dir" "$port"
        args+=(--postgres-url "postgres://postgres@127.0.0.1:$port/postgres")
    done
    # PostgreSQL 18, for its built-in uuidv7() beside the extension's generators on 15 (the
    # small server's settings; no extension: the package has no headers to build it with).
    dir=$(mktemp -d)
    pg_dirs+=("$dir")
    port=$((20000 + RANDOM % 20000))
    echo "==> starting a PostgreSQL 18 server on 127.0.0.1:$port"
    PG_BIN=$(scripts/pg18.sh) PG_FSYNC=on PG_OPTS="-c shared_buffers=8MB $wal" \
        scripts/pg-cluster.sh start "$dir" "$port"
    args+=(--postgres18-url "postgres://postgres@127.0.0.1:$port/postgres")
fi
if [ "$mysql" = 1 ]; then
    # Two throwaway MariaDB servers, the redo log flushed at every commit, InnoDB's
    # defaults otherwise.
    for pool in 8M 1G; do
        dir=$(mktemp -d)
        my_dirs+=("$dir")
        port=$((20000 + RANDOM % 20000))
        echo "==> starting a MariaDB server on 127.0.0.1:$port (innodb_buffer_pool_size $pool)"
        MARIADB_OPTS="--innodb-flush-log-at-trx-commit=1 --innodb-buffer-pool-size=$pool" \
            scripts/mariadb-server.sh start "$dir" "$port"
        args+=(--mysql-url "mysql://idkit@127.0.0.1:$port/idkit")
    done
fi
# Ids made in SQL inside SQLite, beside the peers (the report's section of that name reads
# the file it writes); a tenth of the ids in the quick profile.
out=reports
quick=0
prev=
for a in "$@"; do
    case "$prev $a" in "--out "*) out=$a ;; "--profile quick") quick=1 ;; esac
    case "$a" in --out=*) out=${a#--out=} ;; --profile=quick) quick=1 ;; esac
    prev=$a
done
if [ "$quick" = 1 ]; then
    OUT="$out/data/sqlite_functions.csv" ROWS=100000 REPEATS=3 scripts/sqlite-functions.sh
else
    OUT="$out/data/sqlite_functions.csv" scripts/sqlite-functions.sh
fi
echo "==> measuring (standard profile unless --profile says otherwise)"
IDKIT_REPORT_COMMAND="$command" "$target_dir/release/report" "${args[@]}"
