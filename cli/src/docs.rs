//! The commands that document the CLI itself: `completions` and `man`.

use std::io::Write;

use clap::CommandFactory;

use crate::args::Cli;
use crate::output::Failure;

/// `completions`: the completion script of a shell.
pub(crate) fn completions(
    shell: clap_complete::Shell,
    out: &mut impl Write,
) -> Result<(), Failure> {
    // Into memory first: clap_complete panics on a failed write.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "snowmint", &mut script);
    out.write_all(&script)?;
    Ok(())
}

/// `man`: the manual page (roff) of the CLI or of one subcommand.
pub(crate) fn man(subcommand: Option<String>, out: &mut impl Write) -> Result<(), Failure> {
    let mut cmd = Cli::command();
    // Built, so that each subcommand knows its display name (snowmint-decode).
    cmd.build();
    let page = match subcommand {
        None => cmd,
        Some(name) => match cmd.find_subcommand(&name) {
            Some(sub) => sub.clone().version(env!("CARGO_PKG_VERSION")),
            None => {
                let names: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).collect();
                let msg = format!("no subcommand '{name}' (one of: {})", names.join(", "));
                cmd.error(clap::error::ErrorKind::InvalidValue, msg).exit();
            }
        },
    };
    clap_mangen::Man::new(page).render(out)?;
    Ok(())
}
