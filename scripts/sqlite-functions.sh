#!/usr/bin/env bash
# Ids made by SQL inside SQLite: idkit's loadable extension against the peers SQLite users
# have (sqlean's uuid7(), sqlite-ulid, randomblob(16)), in one SQLite build; writes
# reports/data/sqlite_functions.csv.
#
#   scripts/sqlite-functions.sh            # 1,000,000 ids per run, median of 5 (11 for the cost above the statement)
#   ROWS=100000 REPEATS=3 scripts/sqlite-functions.sh
#   OUT=/tmp/r/data/sqlite_functions.csv scripts/sqlite-functions.sh
#
# Builds extensions/idkit-sqlite (release) and installs the peers from PyPI by name, pinned
# (sqlean.py, whose SQLite carries sqlean's uuid7(); sqlite-ulid, whose package carries its
# built extension) into a virtual environment under ~/.cache/idkit; Debian's python3-venv
# when missing. bench-harness/sqlite_functions.py measures; scripts/report.sh runs this
# script, and the report's "Ids made in SQL inside SQLite" section reads the file.
set -euo pipefail
. "$(dirname "$0")/usage.sh"
takes_no_arguments "$@"
cd "$(dirname "$0")/.."

rows=${ROWS:-1000000}
repeats=${REPEATS:-5}
out=${OUT:-reports/data/sqlite_functions.csv}
venv="${XDG_CACHE_HOME:-$HOME/.cache}/idkit/sqlite-peers"
peers="sqlean.py==3.50.4.5 sqlite-ulid==0.2.1"

# The workspace's target directory, by the user's cargo settings (scripts/report.sh passes
# the one it found): the extension, a workspace of its own, builds into it too.
target_dir=${IDKIT_TARGET_DIR:-$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')}
echo "==> building the SQLite extension (extensions/idkit-sqlite, release)"
(cd extensions/idkit-sqlite && CARGO_TARGET_DIR=$target_dir cargo build --release --quiet)

if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/peers" 2>/dev/null)" != "$peers" ]; then
    echo "==> installing the peers from PyPI: $peers"
    if ! /usr/bin/python3 -m venv --help >/dev/null 2>&1 || ! /usr/bin/python3 -c 'import ensurepip' 2>/dev/null; then
        (DEBIAN_FRONTEND=noninteractive apt-get install -y python3-venv ||
            (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y python3-venv)) >/dev/null
    fi
    rm -rf "$venv"
    /usr/bin/python3 -m venv "$venv"
    # shellcheck disable=SC2086 # one argument per package
    "$venv/bin/pip" install --quiet $peers
    echo "$peers" > "$venv/peers"
fi

echo "==> measuring ids made in SQL ($rows a run, median of $repeats, $((2 * repeats + 1)) for the cost above the statement)"
mkdir -p "$(dirname "$out")"
"$venv/bin/python" bench-harness/sqlite_functions.py "$target_dir/release/libidkit" \
    "$rows" "$repeats" "$out"
