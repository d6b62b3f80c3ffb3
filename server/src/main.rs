//! The `snowmint-server` binary: its flags, then [`snowmint_server::run`].

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    if let Some(why) = snowmint_lease::control_build_refusal() {
        eprintln!("snowmint-server: error: {why}");
        return ExitCode::from(2);
    }
    snowmint_server::run(snowmint_server::config::Flags::parse())
}
