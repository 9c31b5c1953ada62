#!/usr/bin/env bash
# Regenerates reports/ (REPORT.md, charts/, data/) with the standard profile: measures
# every scheme in the registry on this machine, with progress on the terminal.
#
#   scripts/report.sh                      # standard profile, writes reports/
#   scripts/report.sh --profile quick      # about a minute
#   scripts/report.sh --profile full       # larger tables, for people with time
#   scripts/report.sh --out /tmp/r --quiet # elsewhere, no progress bars
#
# Needs only the Rust toolchain: SQLite is compiled in (rusqlite's bundled build) and the
# charts' font is embedded.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "==> building the report generator (release)"
cargo build --release -p bench-harness --bin report

args=("$@")
command="scripts/report.sh${args[*]:+ ${args[*]}}"
echo "==> measuring (standard profile unless --profile says otherwise)"
IDKIT_REPORT_COMMAND="$command" exec target/release/report "${args[@]}"
