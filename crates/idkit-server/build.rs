//! Compiles `proto/idkit/v1/idkit.proto` into the gRPC messages, client and server trait
//! (`idkit.v1.rs`) and the descriptor that reflection serves (`idkit_v1_descriptor.bin`),
//! both in `OUT_DIR`. The compiler is protox, written in Rust: building this crate needs no
//! `protoc`.

use std::path::PathBuf;

use prost::Message;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let mut descriptor = protox::compile(["idkit/v1/idkit.proto"], ["proto"])?;
    // Source positions would tie the descriptor to the file's layout; reflection needs none.
    for file in &mut descriptor.file {
        file.source_code_info = None;
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").ok_or("cargo sets OUT_DIR")?);
    std::fs::write(
        out.join("idkit_v1_descriptor.bin"),
        descriptor.encode_to_vec(),
    )?;
    tonic_prost_build::configure()
        .build_transport(false)
        .out_dir(&out)
        .compile_fds(descriptor)?;
    Ok(())
}
