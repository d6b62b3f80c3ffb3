//! Output: the failures a command can end with, how output is styled (JSON,
//! a terminal or a pipe), the loop over many inputs with one error line per
//! bad input, and the small formatters the commands share.

use std::io::{self, BufRead, IsTerminal, Write};

use serde_json::{json, Map, Value};
use snowmint::{Error, Format, Id, Iso8601};
use snowmint_lease::ops::OpsError;
use snowmint_lease::LeaseError;

use crate::args::{format_name, FormatArg};

/// What can go wrong: a core error (with its code) or a file that can't be read.
pub(crate) enum Failure {
    Core(Error),
    Lease(LeaseError),
    Ops(OpsError),
    Io(String),
    /// `--issued-log` could not be written (never taken for a closed stdout).
    Record(String),
    /// Some inputs failed; each has had its error line: exit 1.
    Reported,
}

impl From<OpsError> for Failure {
    fn from(e: OpsError) -> Self {
        Failure::Ops(e)
    }
}

impl From<LeaseError> for Failure {
    fn from(e: LeaseError) -> Self {
        Failure::Lease(e)
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Core(e)
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        Failure::Io(e.to_string())
    }
}

/// How output is written: JSON or for people, on a terminal or not.
pub(crate) struct Style {
    pub(crate) json: bool,
    /// stdout is a terminal: human output goes into aligned columns.
    pub(crate) tty: bool,
    /// Colour on stdout (a terminal and no NO_COLOR).
    pub(crate) color: bool,
    /// Colour on stderr.
    pub(crate) err_color: bool,
}

impl Style {
    pub(crate) fn new(json: bool) -> Style {
        // https://no-color.org: set and not empty disables colour.
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let tty = io::stdout().is_terminal();
        Style {
            json,
            tty,
            color: tty && !no_color,
            err_color: io::stderr().is_terminal() && !no_color,
        }
    }

    /// A column heading, bold when colour is on.
    pub(crate) fn head(&self, s: &str) -> String {
        if self.color {
            format!("\x1b[1m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
}

/// The inputs of a subcommand that takes many: the arguments in order, where
/// `-` (or no argument at all) stands for the whitespace-separated words of
/// stdin. `each` handles one input; a core error is that input's error line
/// (naming it) and the run goes on; at the end, `Failure::Reported` if any failed.
pub(crate) fn each_input(
    args: &[String],
    style: &Style,
    out: &mut impl Write,
    mut each: impl FnMut(&str, &mut dyn Write) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let mut failed = false;
    let mut one = |input: &str, out: &mut dyn Write| -> Result<(), Failure> {
        match each(input, out) {
            Err(Failure::Core(e)) => {
                failed = true;
                report(input, &e, style, out)
            }
            other => other,
        }
    };
    let stdin_only = [String::from("-")];
    let args = if args.is_empty() { &stdin_only } else { args };
    for arg in args {
        if arg != "-" {
            one(arg, out)?;
            continue;
        }
        let mut stdin = io::BufReader::new(io::stdin());
        let mut line = String::new();
        loop {
            // Answer what was read before waiting for more (an interactive
            // or coprocess caller sees each result as its line is read).
            if stdin.buffer().is_empty() {
                out.flush()?;
            }
            line.clear();
            if stdin.read_line(&mut line)? == 0 {
                break;
            }
            for word in line.split_whitespace() {
                one(word, out)?;
            }
        }
    }
    if failed {
        Err(Failure::Reported)
    } else {
        Ok(())
    }
}

/// One input's error: a line on stderr naming it, and with --json also an
/// object on stdout (so a reader of stdout sees one line per input).
fn report(input: &str, e: &Error, style: &Style, out: &mut dyn Write) -> Result<(), Failure> {
    if style.json {
        let text = e.to_string();
        let message = text
            .strip_suffix(&format!(" [{}]", e.code()))
            .unwrap_or(&text);
        let v = json!({"input": input, "error": {"code": e.code(), "message": message}});
        writeln!(out, "{v}")?;
    }
    // stdout first, so that on a terminal the error comes after the lines before it.
    out.flush()?;
    eprintln!("{}: '{input}': {e}", error_prefix(style.err_color));
    Ok(())
}

/// The `snowmint: error` prefix of an error line, red when `color`.
pub(crate) fn error_prefix(color: bool) -> &'static str {
    if color {
        "snowmint: \x1b[1;31merror\x1b[0m"
    } else {
        "snowmint: error"
    }
}

/// An ID in a string form.
pub(crate) fn encode(id: u64, format: Format) -> String {
    let mut buf = [0u8; snowmint::MAX_STR_LEN];
    Id::new(id).encode(format, &mut buf).to_string()
}

/// A decimal ID argument.
pub(crate) fn parse_decimal(s: &str) -> Result<u64, Failure> {
    Ok(Id::parse(s, Format::Decimal)?.get())
}

/// One ID as JSON: its decimal string, and its text in `format` if not decimal.
pub(crate) fn id_json(id: u64, format: FormatArg) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(id.to_string()));
    if !matches!(format, FormatArg::Decimal) {
        m.insert(format_name(format).into(), json!(encode(id, format.into())));
    }
    Value::Object(m)
}

/// The number of decimal digits of `n`.
pub(crate) fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// A Unix ms time as RFC 3339 UTC (the format `decode` prints).
pub(crate) fn date(ms: u64) -> String {
    Iso8601(ms).to_string()
}
