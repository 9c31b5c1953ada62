# Sourced by the scripts that run a cargo subcommand (scripts/fuzz.sh, scripts/pg-extension.sh,
# scripts/test.sh), from the repository's root: each function installs its tool with
# `cargo install` when it is missing, so that a fresh machine needs only the Rust toolchain.
# Both are built unoptimized (--debug): each only drives cargo and the compiler, which do
# the work, and cargo-pgrx 0.18.0 took 244 s of CPU to build so against 602 s optimized
# (`/usr/bin/time cargo install cargo-pgrx --version 0.18.0 --locked [--debug]`, empty
# target directories, two cores).

# cargo-fuzz, which runs under the nightly toolchain (`cargo +nightly fuzz`).
install_cargo_fuzz() {
    if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
        echo "==> installing cargo-fuzz"
        cargo install cargo-fuzz --locked --debug
    fi
}

# cargo-pgrx at the version the PostgreSQL extension pins (pgrx = "=X.Y.Z" in its
# Cargo.toml): the two must match.
install_cargo_pgrx() {
    local version
    version=$(sed -n 's/^pgrx = "=\([0-9.]*\)"/\1/p' extensions/idkit-pg/Cargo.toml)
    if [ "$(cargo pgrx --version 2>/dev/null)" != "cargo-pgrx $version" ]; then
        echo "==> installing cargo-pgrx $version (cargo install, a few minutes)"
        cargo install cargo-pgrx --version "$version" --locked --debug
    fi
}
