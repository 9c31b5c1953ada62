//! What the CLI's test suites share.

use std::process::Command;

/// The built `idkit` with a state directory of its own: tests run in parallel, and two
/// processes holding one static worker id in one state directory (rightly) refuse each
/// other. The directories are under Cargo's `target/tmp` (a command may outlive any scope
/// that could remove its directory), not the system's temp directory.
pub fn idkit_cmd() -> Command {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("idkit-cli-state-{}-{n}", std::process::id()));
    let mut command = Command::new(env!("CARGO_BIN_EXE_idkit"));
    command.env("IDKIT_STATE_DIR", dir);
    command
}
