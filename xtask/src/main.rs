//! The project's test runner: `cargo xtask COMMAND` (the alias is in
//! `.cargo/config.toml`; `./scripts/test`, `./scripts/release-check` and
//! `./scripts/harness` call it).
//!
//! ```text
//! cargo xtask test [PART...]            every part of the test command, or those named
//! cargo xtask release-check [PART...]   the artifacts for other platforms
//! cargo xtask harness [ARGS...]         the multi-host fault harness (docs/HARNESS.md)
//! cargo xtask stores up STORE...        throwaway store servers until Ctrl-C, their
//!                                       SNOWMINT_TEST_* variables printed for `cargo test`
//! cargo xtask times [--write]           the last full test run's times per part, and
//!                                       CONTRIBUTING.md's table rewritten from them
//! cargo xtask install-pg [--pg-config PATH]  the PostgreSQL extension built and installed
//!                                       (scripts/install-pg)
//! cargo xtask build-wasm [--check]      the WebAssembly packages (bindings-wasm/pkg-node,
//!                                       pkg-web) and the decoder page's copy (www/pkg)
//! ```
//!
//! Each part is a child process in a group of its own (`proc`), stopped with
//! the runner: a failed part, Ctrl-C or SIGTERM stops what it started.

mod cargo_json;
mod harness;
mod part_c;
mod part_core;
mod part_fuzz;
mod part_interop;
mod part_js;
mod part_lease;
mod part_lint;
mod part_node;
mod part_postgres;
mod part_python;
mod part_release_c;
mod part_release_lint;
mod part_release_node;
mod part_release_python;
mod part_release_rust;
mod part_server;
mod part_stores;
mod part_wasm;
mod parts;
mod prefetch;
mod proc;
mod run;
mod sources;
mod step;
mod stores;
mod times;
mod tools;
mod venv;
mod wasm_build;

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str =
    "usage: cargo xtask test [PART...] | release-check [PART...] | harness [ARGS...] \
| stores up STORE... | times [--write] | build-wheels [all|x86_64|others] \
| install-pg [--pg-config PATH] | build-wasm [--check]";

fn main() -> ExitCode {
    let root = root();
    forget_cargo_run();
    proc::catch_signals();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    // Every command but these builds in the shared build folders: first the
    // checkout and the folders' record of sources agree (xtask/src/sources.rs).
    // (`stores up` runs until stopped, and builds only the CLI, through the
    // checkout's own wrapper: its units are the checkout's alone.)
    let _hold = if matches!(
        command.as_str(),
        "times" | "stores" | "-h" | "--help" | "help"
    ) {
        None
    } else {
        match sources::hold_for_run(&root) {
            Ok(hold) => hold,
            Err(e) => {
                eprintln!("xtask: the shared build folders' record of sources: {e}");
                return ExitCode::from(1);
            }
        }
    };
    let code = match command.as_str() {
        "test" => run::test(&root, rest),
        "release-check" => run::release_check(&root, rest),
        "harness" => run::harness(&root, rest),
        "stores" => match rest.split_first() {
            Some((up, stores)) if up == "up" && !stores.is_empty() => run::stores_up(&root, stores),
            _ => {
                eprintln!(
                    "usage: cargo xtask stores up STORE... ({})",
                    parts::STORES.join(" ")
                );
                2
            }
        },
        "times" => times::command(&root, rest),
        "install-pg" => part_postgres::install_command(&root, rest),
        "build-wheels" => part_release_python::build_wheels_command(&root, rest),
        "build-wasm" => wasm_build::command(&root, rest),
        // A part written in Rust, as the test runner starts it (a child in a
        // process group of its own, like the parts still in shell).
        "run-part" => match rest {
            [name, parts @ ..] if name == "prefetch" => {
                match prefetch::run(&step::Part::new(&root), parts) {
                    Ok(()) => 0,
                    Err(e) => {
                        eprintln!("prefetch: {e}");
                        1
                    }
                }
            }
            [name] => run::part_in_process(&root, name),
            _ => {
                eprintln!("usage: cargo xtask run-part PART");
                2
            }
        },
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            0
        }
        other => {
            eprintln!("xtask: unknown command '{other}'\n{USAGE}");
            2
        }
    };
    ExitCode::from(code)
}

/// Removes what `cargo run` (`cargo xtask`) told this program about its own
/// package: the builds and tools it starts must not see it. Cargo compares a
/// build script's `rerun-if-env-changed` variables with its own environment,
/// and ring's build script names `CARGO_MANIFEST_DIR` and `CARGO_PKG_NAME`:
/// inherited from here, they held this checkout's `xtask/` folder, so a build
/// from another checkout (CI's fresh clone), or a `cargo` typed in a shell,
/// found ring's build stale in the shared build folder and compiled it and
/// what stands on it again (rustls, tokio-rustls, rcgen, the server).
fn forget_cargo_run() {
    let ours: Vec<std::ffi::OsString> = std::env::vars_os()
        .map(|(k, _)| k)
        .filter(|k| {
            let k = k.to_string_lossy();
            k.starts_with("CARGO_PKG_")
                || [
                    "CARGO_MANIFEST_DIR",
                    "CARGO_MANIFEST_PATH",
                    "CARGO_CRATE_NAME",
                    "CARGO_BIN_NAME",
                    "CARGO_PRIMARY_PACKAGE",
                ]
                .contains(&k.as_ref())
        })
        .collect();
    for k in ours {
        std::env::remove_var(k);
    }
}

/// The workspace's root: the folder above this crate's.
fn root() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.parent().map(PathBuf::from).unwrap_or(here)
}
