#!/usr/bin/env bash
# Runs the fuzz targets of fuzz/ (cargo-fuzz, libFuzzer), one at a time or FUZZ_JOBS: every scheme's
# text and byte parsing, `idkit inspect`'s guessing, serde, the column decoders, and the
# service's HTTP and gRPC request parsing, the SQLite functions' arguments
# (fuzz/fuzz_targets/*.rs say what each checks).
#
#   scripts/fuzz.sh                          # each target for 10 minutes
#   FUZZ_SECONDS=3600 scripts/fuzz.sh        # each for an hour
#   FUZZ_TARGETS="text http" scripts/fuzz.sh # only these
#   FUZZ_SANITIZER=none scripts/fuzz.sh      # without AddressSanitizer (faster; the default
#                                            # is address)
#   FUZZ_JOBS=2 scripts/fuzz.sh              # two targets at a time (one core each)
#
# Needs rustup's nightly toolchain beside the project's stable one (only this crate is built
# with it) and cargo-fuzz, which it installs when missing. The committed seed corpus
# (fuzz/corpus/TARGET) is read, never written: what a run finds new goes to a temporary
# directory. A crash stops the run and is kept in fuzz/artifacts/TARGET/; replay it with
# `cargo +nightly fuzz run TARGET fuzz/artifacts/TARGET/crash-...`, fix it, and add the input
# as a regression test of the crate it broke.
set -euo pipefail
. "$(dirname "$0")/usage.sh"
takes_no_arguments "$@"
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-600}
targets=${FUZZ_TARGETS:-text bytes serde columns http grpc inspect sqlite}
sanitizer=${FUZZ_SANITIZER:-address}
jobs=${FUZZ_JOBS:-1}

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "scripts/fuzz.sh: needs the nightly toolchain (rustup toolchain install nightly)" >&2
    exit 1
fi
. scripts/lib/cargo-tools.sh
install_cargo_fuzz

echo "==> building the fuzz targets (nightly, sanitizer $sanitizer)"
cargo +nightly fuzz build --sanitizer "$sanitizer"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# One target's run; its log in $work/TARGET.log, its status its exit status.
fuzz_one() {
    mkdir -p "$work/$1"
    cargo +nightly fuzz run --sanitizer "$sanitizer" "$1" "$work/$1" "fuzz/corpus/$1" \
        -- -max_total_time="$seconds" -print_final_stats=1 2> "$work/$1.log"
}
# Its summary, or its log's end and the failure.
report() {
    if [ "$2" = 0 ]; then
        grep -E "^(stat::number_of_executed_units|stat::new_units_added|Done )" "$work/$1.log" || true
        echo "$1: $(ls "$work/$1" | wc -l) inputs in the corpus after the run"
    else
        tail -n 60 "$work/$1.log"
        echo "scripts/fuzz.sh: $1 failed; the input is in fuzz/artifacts/$1/" >&2
        return 1
    fi
}
# FUZZ_JOBS targets at a time (each run is one process on one core).
set -- $targets
while [ $# -gt 0 ]; do
    batch=()
    while [ $# -gt 0 ] && [ ${#batch[@]} -lt "$jobs" ]; do batch+=("$1"); shift; done
    echo "==> fuzzing ${batch[*]} for ${seconds} s"
    pids=()
    for target in "${batch[@]}"; do fuzz_one "$target" & pids+=($!); done
    failed=0
    for i in "${!batch[@]}"; do
        status=0
        wait "${pids[$i]}" || status=$?
        report "${batch[$i]}" "$status" || failed=1
    done
    [ "$failed" = 0 ] || exit 1
done
