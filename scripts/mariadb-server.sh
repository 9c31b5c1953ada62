#!/usr/bin/env bash
# A throwaway MariaDB server on loopback, for the tests: its own data directory, TCP on
# 127.0.0.1 only, a user `idkit` without a password and a database `idkit`.
#
#   scripts/mariadb-server.sh start DIR PORT   # installs Debian's mariadb-server if missing
#   scripts/mariadb-server.sh stop DIR
#   scripts/mariadb-server.sh kill DIR             # kill -9, an outage
#   scripts/mariadb-server.sh restart-server DIR   # start a stopped server again
#
# Clients connect with mysql://idkit@127.0.0.1:PORT/idkit. MARIADB_OPTS adds server options
# after the test defaults (no fsync at commit, a 64 MB buffer pool), which it may override:
#
#   MARIADB_OPTS="--innodb-flush-log-at-trx-commit=1 --innodb-buffer-pool-size=8M" \
#       scripts/mariadb-server.sh start DIR PORT
set -euo pipefail
. "$(dirname "$0")/usage.sh"
needs_arguments 2 "$@"

cmd="$1"
dir="$2"

install_db=$(command -v mariadb-install-db || command -v mysql_install_db || true)
if [ -z "$install_db" ]; then
    echo "==> installing mariadb-server (Debian package)" >&2
    (DEBIAN_FRONTEND=noninteractive apt-get install -y mariadb-server ||
        (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y mariadb-server)) >/dev/null
    install_db=$(command -v mariadb-install-db || command -v mysql_install_db)
fi
server=$(command -v mariadbd || ls /usr/sbin/mariadbd /usr/sbin/mysqld 2>/dev/null | head -1)
client=$(command -v mariadb || command -v mysql)

# Runs as the invoking user; as root, the server must be told it may.
user_opt=()
[ "$(id -u)" = 0 ] && user_opt=(--user=root)

# Starts the server on the data directory under $dir and waits until it answers.
run_server() {
    local port="$1"
    # No durability needed for tests: no fsync at commit, a small buffer pool.
    # shellcheck disable=SC2086 # MARIADB_OPTS is a list of options
    "$server" --no-defaults --datadir="$dir/data" "${user_opt[@]}" \
        --bind-address=127.0.0.1 --port="$port" --socket="$dir/sock" --pid-file="$dir/pid" \
        --innodb-flush-log-at-trx-commit=0 --innodb-buffer-pool-size=64M ${MARIADB_OPTS:-} \
        --log-error="$dir/server.log" >/dev/null 2>&1 &
    for _ in $(seq 1 120); do
        "$client" --no-defaults -S "$dir/sock" -u root -e 'SELECT 1' >/dev/null 2>&1 && return 0
        sleep 0.25
    done
    echo "mariadb did not start; its log:" >&2
    cat "$dir/server.log" >&2
    return 1
}

case "$cmd" in
start)
    needs_arguments 3 "$@"
    port="$3"
    mkdir -p "$dir"
    "$install_db" --no-defaults --datadir="$dir/data" "${user_opt[@]}" \
        --auth-root-authentication-method=socket --skip-test-db >"$dir/install.log" 2>&1
    run_server "$port"
    "$client" --no-defaults -S "$dir/sock" -u root -e "
        CREATE DATABASE IF NOT EXISTS idkit;
        CREATE USER IF NOT EXISTS 'idkit'@'127.0.0.1';
        CREATE USER IF NOT EXISTS 'idkit'@'localhost';
        GRANT ALL ON *.* TO 'idkit'@'127.0.0.1';
        GRANT ALL ON *.* TO 'idkit'@'localhost';" || {
        echo "mariadb did not start; its log:" >&2
        cat "$dir/server.log" >&2
        exit 1
    }
    echo "$port" >"$dir/port"
    ;;
restart-server)
    run_server "$(cat "$dir/port")"
    ;;
kill)
    if [ -f "$dir/pid" ]; then
        pid=$(cat "$dir/pid")
        kill -9 "$pid" 2>/dev/null || true
        while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
        rm -f "$dir/pid"
    fi
    ;;
stop)
    if [ -f "$dir/pid" ]; then
        kill "$(cat "$dir/pid")" 2>/dev/null || true
        for _ in $(seq 1 120); do
            [ -f "$dir/pid" ] || break
            sleep 0.25
        done
    fi
    ;;
*)
    echo "usage: $0 start DIR PORT | stop DIR | kill DIR | restart-server DIR" >&2
    exit 2
    ;;
esac
