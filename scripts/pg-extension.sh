#!/usr/bin/env bash
# Builds the PostgreSQL extension (extensions/idkit-pg) and installs it into Debian's
# PostgreSQL 15, installing what it needs when it is missing: the server's headers
# (postgresql-server-dev-15), the server itself (postgresql), libclang (libclang-dev, for
# pgrx's bindings) and cargo-pgrx at the version the extension pins. Then, in a server of one's own:
#
#   shared_preload_libraries = 'idkit'   # postgresql.conf; the generators need it
#   idkit.worker_id = 1                  # for Snowflake layouts with a worker field
#   CREATE EXTENSION idkit;
#
# PG_CONFIG names another pg_config (default /usr/bin/pg_config, Debian's).
set -euo pipefail
. "$(dirname "$0")/usage.sh"
takes_no_arguments "$@"
cd "$(dirname "$0")/.."

PG_CONFIG="${PG_CONFIG:-/usr/bin/pg_config}"
ext=extensions/idkit-pg
. scripts/lib/cargo-tools.sh

apt_install() {
    echo "==> installing $* (Debian packages)"
    (DEBIAN_FRONTEND=noninteractive apt-get install -y "$@" ||
        (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "$@")) >/dev/null
}
if [ ! -x "$PG_CONFIG" ] || [ ! -e "$("$PG_CONFIG" --includedir-server 2>/dev/null)/postgres.h" ]; then
    apt_install postgresql-server-dev-15
fi
# The server the extension goes into (its library and extension directories), when missing.
if [ ! -x "$("$PG_CONFIG" --bindir)/postgres" ]; then
    apt_install postgresql postgresql-contrib
fi
# libclang and clang's own headers, which pgrx's bindings generator reads.
if ! dpkg -s libclang-dev >/dev/null 2>&1; then
    apt_install libclang-dev
fi
install_cargo_pgrx
# pgrx's own configuration: Debian's server, nothing downloaded (as root it skips initdb).
major=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
if ! grep -qs "^pg$major = \"$PG_CONFIG\"" "${PGRX_HOME:-$HOME/.pgrx}/config.toml"; then
    cargo pgrx init "--pg$major" "$PG_CONFIG" >/dev/null
fi
start=$SECONDS
(cd "$ext" && cargo pgrx install --release --pg-config "$PG_CONFIG" \
    --no-default-features --features "pg$major")
echo "==> idkit installed into $("$PG_CONFIG" --pkglibdir) in $((SECONDS - start)) s"
