//! The `snowmint-server` binary: its flags, then [`snowmint_server::run`].

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    snowmint_server::run(snowmint_server::config::Flags::parse())
}
