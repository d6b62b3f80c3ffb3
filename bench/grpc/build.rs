//! The client and server code of `server/proto/snowmint/v1/snowmint.proto`,
//! into OUT_DIR, with protoc from the pinned protoc-bin-vendored crate.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    const PROTO: &str = "../../server/proto/snowmint/v1/snowmint.proto";
    println!("cargo:rerun-if-changed={PROTO}");
    std::env::set_var("PROTOC", protoc_bin_vendored::protoc_bin_path()?);
    tonic_prost_build::configure().compile_protos(&[PROTO], &["../../server/proto"])?;
    Ok(())
}
