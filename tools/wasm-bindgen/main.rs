//! `wasm-bindgen`, as wasm-bindgen-cli's own `src/bin/wasm-bindgen.rs` runs
//! it, built from this folder's lock file (see Cargo.toml).

use std::process::ExitCode;

fn main() -> ExitCode {
    env_logger::init();
    match wasm_bindgen_cli::wasm_bindgen::run_cli_with_args(std::env::args_os()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:?}");
            ExitCode::FAILURE
        }
    }
}
