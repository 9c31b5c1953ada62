//! The gRPC code and descriptor checked in under `src/grpc/` are what `proto/` gives today,
//! so that building the crate needs no protobuf compiler. After changing the `.proto`:
//!
//! ```sh
//! IDKIT_REGENERATE_PROTO=1 cargo test -p idkit-server --test proto_current
//! ```

use std::path::Path;

use prost::Message;

#[test]
fn generated_code_and_descriptor_are_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut fds = protox::compile(["idkit/v1/idkit.proto"], [root.join("proto")]).unwrap();
    // Source positions would tie the descriptor to the file's layout; reflection needs none.
    for file in &mut fds.file {
        file.source_code_info = None;
    }
    let out = std::env::temp_dir().join(format!("idkit-proto-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    tonic_prost_build::configure()
        .build_transport(false)
        .out_dir(&out)
        .compile_fds(fds.clone())
        .unwrap();
    let code = std::fs::read_to_string(out.join("idkit.v1.rs")).unwrap();
    let descriptor = fds.encode_to_vec();
    std::fs::remove_dir_all(&out).unwrap();

    let code_path = root.join("src/grpc/idkit.v1.rs");
    let descriptor_path = root.join("src/grpc/idkit_v1_descriptor.bin");
    if std::env::var_os("IDKIT_REGENERATE_PROTO").is_some() {
        std::fs::write(&code_path, &code).unwrap();
        std::fs::write(&descriptor_path, &descriptor).unwrap();
    }
    assert!(
        std::fs::read_to_string(&code_path).unwrap_or_default() == code,
        "src/grpc/idkit.v1.rs is not what proto/ gives: regenerate it (see this file's docs)"
    );
    assert!(
        std::fs::read(&descriptor_path).unwrap_or_default() == descriptor,
        "src/grpc/idkit_v1_descriptor.bin is not what proto/ gives: regenerate it"
    );
}
