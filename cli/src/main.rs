//! `snowmint`: generate, decode and inspect Snowflake-style IDs.
//!
//! The modules: `args` (clap's schema of the command line), `output`
//! (failures, styling, the loop over many inputs), and one per command
//! family: `generate`, `ids` (decode, encode, parse, bounds, fits, mask),
//! `layouts`, `docs` (completions, man) and `lease`.

mod args;
mod docs;
mod generate;
mod ids;
mod layouts;
mod lease;
mod output;

use std::io::{self, BufWriter, IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};
use crate::output::{error_prefix, Failure, Style};

/// Runs one command line, writing its output to `out`.
fn run(cli: Cli, out: &mut impl Write) -> Result<(), Failure> {
    let style = Style::new(cli.json);
    let json = cli.json;
    match cli.command {
        Command::Generate(args) => generate::generate(args, json, out),
        Command::Decode { layout, from, ids } => ids::decode(&layout, from, &ids, &style, out),
        Command::Mask(args) => ids::mask_ids(&args, true, &style, out),
        Command::Unmask(args) => ids::mask_ids(&args, false, &style, out),
        Command::Layout { layout } => layouts::layout(&layout, json, out),
        Command::Presets => layouts::presets(json, out),
        Command::Encode { format, ids } => ids::encode_ids(format, &ids, &style, out),
        Command::Parse { format, strings } => ids::parse_ids(format, &strings, &style, out),
        Command::Bounds { layout, time_ms } => ids::bounds(&layout, time_ms, json, out),
        Command::Fits { ids } => ids::fits(&ids, &style, out),
        Command::Completions { shell } => docs::completions(shell, out),
        Command::Man { subcommand } => docs::man(subcommand, out),
        Command::Lease { command } => lease::lease(command, json, out),
    }
}

fn main() -> ExitCode {
    if let Some(why) = snowmint_lease::control_build_refusal() {
        eprintln!("snowmint: error: {why}");
        return ExitCode::from(2);
    }
    let cli = Cli::parse();
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = run(cli, &mut out).and_then(|()| out.flush().map_err(Failure::from));
    let hint = match &result {
        Err(Failure::Core(e)) => lease::hint(e),
        _ => None,
    };
    let message = match result {
        Ok(()) => return ExitCode::SUCCESS,
        // Each failed input has had its line.
        Err(Failure::Reported) => return ExitCode::from(1),
        // A closed pipe (`snowmint generate -n 1000000 | head`) is not an error.
        Err(Failure::Io(e)) if e.contains("Broken pipe") => return ExitCode::SUCCESS,
        Err(Failure::Io(e) | Failure::Record(e)) => e,
        // The Display text ends with the stable code in brackets.
        Err(Failure::Core(e)) => e.to_string(),
        Err(Failure::Lease(e)) => e.to_string(),
        Err(Failure::Ops(e)) => e.to_string(),
    };
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let prefix = error_prefix(io::stderr().is_terminal() && !no_color);
    eprintln!("{prefix}: {message}");
    if let Some(hint) = hint {
        eprintln!("{hint}");
    }
    ExitCode::from(1)
}
