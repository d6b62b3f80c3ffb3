//! Compiles `proto/snowmint/v1/snowmint.proto` into OUT_DIR: the server side
//! for the library, the client side (`client/`) for the tests, and the
//! descriptor set that gRPC reflection serves. Nothing generated is checked in.
//! Also the compiler's version, for `snowmint_build_info` (`SNOWMINT_RUSTC_VERSION`).

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    const PROTO: &str = "proto/snowmint/v1/snowmint.proto";
    println!("cargo:rerun-if-changed={PROTO}");
    // protoc from the protoc-bin-vendored crate (pinned in Cargo.toml, so the
    // same protoc everywhere): the build needs crates.io only, never a system
    // protoc or a download.
    std::env::set_var("PROTOC", protoc_bin_vendored::protoc_bin_path()?);
    // `rustc 1.95.0 (hash date)`: the version alone ("unknown" if it cannot be run).
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|v| v.split_whitespace().nth(1).map(str::to_string))
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=SNOWMINT_RUSTC_VERSION={version}");
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    tonic_prost_build::configure()
        .build_client(false)
        .file_descriptor_set_path(out.join("snowmint_descriptor.bin"))
        .compile_protos(&[PROTO], &["proto"])?;
    let client = out.join("client");
    std::fs::create_dir_all(&client)?;
    tonic_prost_build::configure()
        .build_server(false)
        .out_dir(&client)
        .compile_protos(&[PROTO], &["proto"])?;
    Ok(())
}
