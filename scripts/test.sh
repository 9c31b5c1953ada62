#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls this and nothing else):
# formatting, lints, every test, docs with warnings denied, the loom model check of the
# lock-free generator, and a smoke run of the criterion benches.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "cargo fmt --check"
cargo fmt --all --check

step "cargo clippy --workspace --all-targets -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

step "cargo clippy with every feature on (serde and friends must compile)"
cargo clippy --workspace --all-targets --all-features -- -D warnings

step "cargo test --workspace"
cargo test --workspace

step "rustdoc, warnings denied"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps

step "loom model check of the lock-free Snowflake generator"
# A separate target directory: --cfg loom rebuilds everything and would otherwise evict
# the normal build from the cache.
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
    cargo test -p idkit-snowflake --test loom --release

step "criterion benches, smoke run (each benchmark once, no timing)"
cargo bench -p bench-harness --benches -- --test
