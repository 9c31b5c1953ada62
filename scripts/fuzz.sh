#!/usr/bin/env bash
# Runs the fuzz targets of fuzz/ (cargo-fuzz, libFuzzer) one after another: every scheme's
# text and byte parsing, `idkit inspect`'s guessing, serde, the column decoders, and the
# service's HTTP and gRPC request parsing, the SQLite functions' arguments
# (fuzz/fuzz_targets/*.rs say what each checks).
#
#   scripts/fuzz.sh                          # each target for 10 minutes
#   FUZZ_SECONDS=3600 scripts/fuzz.sh        # each for an hour
#   FUZZ_TARGETS="text http" scripts/fuzz.sh # only these
#   FUZZ_SANITIZER=none scripts/fuzz.sh      # without AddressSanitizer (faster; the default
#                                            # is address)
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

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "scripts/fuzz.sh: needs the nightly toolchain (rustup toolchain install nightly)" >&2
    exit 1
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "==> installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

echo "==> building the fuzz targets (nightly, sanitizer $sanitizer)"
cargo +nightly fuzz build --sanitizer "$sanitizer"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for target in $targets; do
    echo "==> fuzzing $target for ${seconds} s"
    mkdir -p "$work/$target"
    cargo +nightly fuzz run --sanitizer "$sanitizer" "$target" "$work/$target" "fuzz/corpus/$target" \
        -- -max_total_time="$seconds" -print_final_stats=1 2> "$work/$target.log" || {
        tail -n 60 "$work/$target.log"
        echo "scripts/fuzz.sh: $target failed; the input is in fuzz/artifacts/$target/" >&2
        exit 1
    }
    grep -E "^(stat::number_of_executed_units|stat::new_units_added|Done )" "$work/$target.log" || true
    echo "$target: $(ls "$work/$target" | wc -l) inputs in the corpus after the run"
done
