//! `snowmint`: generate, decode and inspect Snowflake-style IDs.

use std::io::{self, BufRead, BufWriter, IsTerminal, Write};
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use serde_json::{json, Map, Value};
use snowmint::{Error, Format, Generator, Id, IdMask, Iso8601, Layout};
use snowmint_lease::ops::{self, OpsError};
use snowmint_lease::{AnyGenerator, LeaseError, SlotRecord, SlotState};

#[derive(Parser)]
#[command(
    name = "snowmint",
    version,
    about = "Snowflake-style 64-bit IDs: generate, decode, inspect."
)]
struct Cli {
    /// One JSON object per line (IDs as decimal strings, times as Unix ms and
    /// RFC 3339); a bad input is also a line: {"input":..., "error":{"code":..., "message":...}}.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Mint new IDs on this machine's clock.
    Generate {
        #[command(flatten)]
        layout: LayoutArg,
        /// A node value, as NAME=VALUE (repeat for each node field of the layout).
        #[arg(long = "node", value_name = "NAME=VALUE", value_parser = parse_node)]
        nodes: Vec<(String, u64)>,
        /// How many IDs.
        #[arg(short = 'n', long, default_value_t = 1)]
        count: u64,
        /// Output form.
        #[arg(long, value_enum, default_value_t = FormatArg::Decimal)]
        format: FormatArg,
        /// Clock-backwards policy: fail, wait:N or borrow:N (default wait:5).
        #[arg(long)]
        clock_backwards: Option<String>,
        /// Sequence-exhausted policy: wait or borrow:N (default wait).
        #[arg(long)]
        sequence_exhausted: Option<String>,
        /// First sequence value of each time unit: zero, random:N or cycle:N (default random:16).
        #[arg(long)]
        sequence_start: Option<String>,
        /// The last ID a previous run issued: continue strictly above it.
        #[arg(long, value_name = "ID")]
        resume_after: Option<u64>,
        /// Lease the one node field not given with --node from a store, e.g.
        /// file:/var/lib/app/ids?namespace=orders (docs/SEMANTICS.md, "Leases").
        #[arg(long, value_name = "URL")]
        lease: Option<String>,
        /// Before the IDs, write the node values in use and the lease to stderr
        /// as one JSON line.
        #[arg(long)]
        print_lease: bool,
        /// Keep the generator (and its lease) and mint on request: read lines
        /// from stdin, each a count (an empty line is 1), write that many IDs
        /// for each and flush; release at end of input. Replaces --count.
        #[arg(long, conflicts_with = "count")]
        on_demand: bool,
    },
    /// Split IDs into time, sequence and node fields.
    ///
    /// With --json, one object per ID: id, timestamp_ms, time, sequence and
    /// each node field.
    Decode {
        #[command(flatten)]
        layout: LayoutArg,
        /// The form the IDs are written in.
        #[arg(long = "from", value_enum, default_value_t = FormatArg::Decimal)]
        from: FormatArg,
        /// The IDs; none or `-` reads them from stdin (whitespace-separated).
        #[arg(value_name = "ID")]
        ids: Vec<String>,
    },
    /// Show a layout: fields, epoch, and when its IDs run out.
    Layout {
        #[command(flatten)]
        layout: LayoutArg,
    },
    /// List the preset layouts.
    Presets,
    /// Write IDs in a string form.
    Encode {
        /// Output form.
        #[arg(long, value_enum)]
        format: FormatArg,
        /// Decimal IDs; none or `-` reads them from stdin.
        #[arg(value_name = "ID")]
        ids: Vec<String>,
    },
    /// Read IDs from a string form (prints them in decimal).
    Parse {
        /// Input form.
        #[arg(long, value_enum)]
        format: FormatArg,
        /// The strings; none or `-` reads them from stdin.
        #[arg(value_name = "STRING")]
        strings: Vec<String>,
    },
    /// The smallest and largest IDs of the time unit that contains a time (for range queries).
    Bounds {
        #[command(flatten)]
        layout: LayoutArg,
        /// A time: Unix milliseconds or RFC 3339 / ISO-8601
        /// (2022-06-28T16:07:40Z, 2022-06-28T18:07:40.105+02:00, 2022-06-28).
        #[arg(value_name = "TIME", value_parser = parse_time)]
        time_ms: u64,
    },
    /// Which presets an ID could come from (those that decode it to a plausible time).
    Fits {
        /// Decimal IDs; none or `-` reads them from stdin.
        #[arg(value_name = "ID")]
        ids: Vec<String>,
    },
    /// Public IDs: mask IDs into public IDs (a keyed permutation of the
    /// layout's IDs, NIST FF1 with AES; docs/SEMANTICS.md "Public IDs").
    ///
    /// The key (16 or 32 bytes, as hex) comes from --key-file or the
    /// SNOWMINT_MASK_KEY environment variable, never from an argument.
    /// With --json, one object per ID: id, public (decimal strings) and, with
    /// --format base32/base62, public_base32/public_base62.
    Mask(MaskArgs),
    /// Public IDs: unmask public IDs back into IDs (the inverse of `mask`,
    /// with the same key, tweak and layout).
    ///
    /// With --json, one object per ID: id, public (decimal strings) and, with
    /// --format base32/base62, id_base32/id_base62.
    Unmask(MaskArgs),
    /// Print a shell completion script, e.g. `snowmint completions bash > /etc/bash_completion.d/snowmint`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), e.g. `snowmint man | man -l -`; with a
    /// subcommand, that subcommand's page (snowmint-decode(1)).
    Man {
        /// A subcommand (generate, decode, ...).
        subcommand: Option<String>,
    },
    /// Operate a lease store: create its tables, list its slots, free a slot.
    ///
    /// The store is given as a lease URL, as to `generate --lease`
    /// (docs/SEMANTICS.md, "Leases", "Operations").
    Lease {
        #[command(subcommand)]
        command: LeaseCommand,
    },
}

#[derive(Subcommand)]
enum LeaseCommand {
    /// Create the store's tables if they are missing, and check that it answers.
    ///
    /// The SQL stores get their two tables, the file store its directory;
    /// Redis and etcd need nothing. Safe to run again. Claims create the same
    /// on first use: run it where the users who claim may not create tables.
    Init {
        /// The lease URL, as given to --lease (its namespace is ignored).
        #[arg(long, value_name = "URL")]
        store: String,
    },
    /// Show every slot space of a store and its slots.
    ///
    /// Only the URL's namespace if it has one. For each slot ever claimed: its
    /// state (free, held or expired, by the store's clock), the holder's
    /// token (first 8 digits), the claim counter, the expiry and the
    /// reservation (hwm), dates in RFC 3339 UTC.
    List {
        /// The lease URL, e.g. postgres://app@db:5432/ids or file:/var/lib/app/ids?namespace=orders.
        #[arg(long, value_name = "URL")]
        store: String,
        // With --json, one JSON object per line: a "space" object, then one
        // "slot" object per slot (times as Unix ms and as dates, the full token).
    },
    /// Free a slot whose holder is gone, keeping its hwm.
    ///
    /// The next holder starts above the hwm. Without --force only an expired
    /// slot is freed (a free one is left alone) and a held one is refused.
    /// With --force a held slot is freed too, and its holder's next renewal
    /// fails, so it stops issuing IDs: use it only when you know the holder
    /// is gone.
    Release {
        /// The lease URL, as given to --lease.
        #[arg(long, value_name = "URL")]
        store: String,
        /// The space's key, as `list` shows it; needed when the store (or the
        /// URL's namespace) holds more than one space.
        #[arg(long, value_name = "KEY")]
        space: Option<String>,
        /// The slot (the value of the leased node field).
        #[arg(long, value_name = "N")]
        slot: u64,
        /// Also free a slot that is held and not expired.
        #[arg(long)]
        force: bool,
    },
}

#[derive(Args)]
#[group(required = true, multiple = false)]
struct LayoutArg {
    /// A preset: twitter, discord, instagram, sonyflake, sonyflake-v2, shardingsphere, leaf, baidu, tsid, mastodon.
    #[arg(long)]
    preset: Option<String>,
    /// A JSON layout descriptor (or @FILE to read one), e.g.
    /// '{"epoch_ms":1288834974657,"fields":[["timestamp",41],["worker",10],["sequence",12]]}'.
    #[arg(long)]
    layout: Option<String>,
}

/// The arguments of `mask` and `unmask`.
#[derive(Args)]
struct MaskArgs {
    #[command(flatten)]
    layout: LayoutArg,
    /// A file holding the key as hex (32 or 64 hex digits: AES-128 or
    /// AES-256; surrounding whitespace is ignored), e.g. made by
    /// `openssl rand -hex 16`. Without it, the SNOWMINT_MASK_KEY environment
    /// variable holds the hex key.
    #[arg(long, value_name = "PATH")]
    key_file: Option<std::path::PathBuf>,
    /// The tweak, as hex (not a secret: e.g. one per table or tenant, so the
    /// same ID has unrelated public IDs in different places). Default: none.
    #[arg(long, value_name = "HEX", default_value = "")]
    tweak: String,
    /// The form the input IDs are written in.
    #[arg(long = "from", value_enum, default_value_t = FormatArg::Decimal)]
    from: FormatArg,
    /// Output form.
    #[arg(long, value_enum, default_value_t = FormatArg::Decimal)]
    format: FormatArg,
    /// The IDs; none or `-` reads them from stdin (whitespace-separated).
    #[arg(value_name = "ID")]
    ids: Vec<String>,
}

/// The environment variable that holds the mask key (hex) when there is no
/// --key-file.
const MASK_KEY_VAR: &str = "SNOWMINT_MASK_KEY";

impl MaskArgs {
    /// The mask of these arguments: the key from the file or the environment.
    fn resolve(&self) -> Result<IdMask, Failure> {
        let layout = self.layout.resolve()?;
        let hex = match &self.key_file {
            Some(path) => std::fs::read_to_string(path)
                .map_err(|e| Failure::Io(format!("--key-file {}: {e}", path.display())))?,
            None => std::env::var(MASK_KEY_VAR).map_err(|_| {
                Failure::Io(format!(
                    "no key: give --key-file PATH or set {MASK_KEY_VAR} (hex) [invalid_option]"
                ))
            })?,
        };
        let key = IdMask::bytes_from_hex(hex.trim())?;
        let tweak = IdMask::bytes_from_hex(&self.tweak)?;
        Ok(IdMask::new(layout, &key, &tweak)?)
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    Decimal,
    Base32,
    Base62,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Decimal => Format::Decimal,
            FormatArg::Base32 => Format::Base32,
            FormatArg::Base62 => Format::Base62,
        }
    }
}

fn parse_node(s: &str) -> Result<(String, u64), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=VALUE, got '{s}'"))?;
    let value = value
        .parse()
        .map_err(|_| format!("'{value}' is not a non-negative integer"))?;
    Ok((name.to_string(), value))
}

/// A time given on the command line: Unix milliseconds, or an RFC 3339 /
/// ISO-8601 date-time in UTC or with an offset (`2022-06-28T16:07:40Z`,
/// `2022-06-28T18:07:40.105+02:00`), or a date alone (midnight UTC).
/// Fractions past milliseconds are cut. Times before 1970 are refused.
fn parse_time(s: &str) -> Result<u64, String> {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s
            .parse()
            .map_err(|_| format!("'{s}' is too large for Unix milliseconds"));
    }
    let bad = || {
        format!(
            "'{s}' is neither Unix milliseconds nor an RFC 3339 time \
             (e.g. 2022-06-28T16:07:40Z or 2022-06-28T18:07:40.105+02:00)"
        )
    };
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Result<i64, String> {
        let part = b.get(from..from + len).ok_or_else(bad)?;
        if !part.iter().all(u8::is_ascii_digit) {
            return Err(bad());
        }
        Ok(part.iter().fold(0, |n, d| n * 10 + i64::from(d - b'0')))
    };
    let sep = |at: usize, c: &[u8]| b.get(at).is_some_and(|x| c.contains(x));
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    if !sep(4, b"-") || !sep(7, b"-") {
        return Err(bad());
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&month) || day < 1 || day > month_days[month as usize - 1] {
        return Err(bad());
    }
    // Howard Hinnant's days_from_civil.
    let (y, m) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + day - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    let mut ms = days * 86_400_000;
    if b.len() > 10 {
        if !sep(10, b"Tt ") || !sep(13, b":") || !sep(16, b":") {
            return Err(bad());
        }
        let (h, mi, sec) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
        if h > 23 || mi > 59 || sec > 60 {
            return Err(bad());
        }
        // Unix time has no leap second: :60 (whatever its fraction) counts as
        // the last millisecond of the minute, :59.999.
        ms += (h * 3600 + mi * 60 + sec.min(59)) * 1000;
        let mut at = 19;
        if sep(at, b".") {
            at += 1;
            let start = at;
            while b.get(at).is_some_and(u8::is_ascii_digit) {
                at += 1;
            }
            if at == start {
                return Err(bad());
            }
            let frac = &s[start..at.min(start + 3)];
            if sec < 60 {
                ms += format!("{frac:0<3}").parse::<i64>().map_err(|_| bad())?;
            }
        }
        if sec == 60 {
            ms += 999;
        }
        match b.get(at) {
            Some(b'Z' | b'z') if at + 1 == b.len() => {}
            Some(&sign @ (b'+' | b'-')) if at + 6 == b.len() && sep(at + 3, b":") => {
                let (oh, om) = (num(at + 1, 2)?, num(at + 4, 2)?);
                if oh > 23 || om > 59 {
                    return Err(bad());
                }
                let offset = (oh * 60 + om) * 60_000;
                ms -= if sign == b'+' { offset } else { -offset };
            }
            _ => return Err(bad()),
        }
    }
    u64::try_from(ms).map_err(|_| format!("'{s}' is before 1970-01-01T00:00:00Z"))
}

/// What can go wrong: a core error (with its code) or a file that can't be read.
enum Failure {
    Core(Error),
    Lease(LeaseError),
    Ops(OpsError),
    Io(String),
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

impl LayoutArg {
    fn resolve(&self) -> Result<Layout, Failure> {
        match (&self.preset, &self.layout) {
            (Some(p), _) => Ok(Layout::preset(p)?),
            (None, Some(l)) => match l.strip_prefix('@') {
                Some(path) => {
                    let text = std::fs::read_to_string(path)
                        .map_err(|e| Failure::Io(format!("{path}: {e}")))?;
                    Ok(Layout::parse(&text)?)
                }
                None => Ok(Layout::parse(l)?),
            },
            // clap's group makes one of the two required.
            (None, None) => Ok(Layout::preset("twitter")?),
        }
    }
}

/// How output is written: JSON or for people, on a terminal or not.
struct Style {
    json: bool,
    /// stdout is a terminal: human output goes into aligned columns.
    tty: bool,
    /// Colour on stdout (a terminal and no NO_COLOR).
    color: bool,
    /// Colour on stderr.
    err_color: bool,
}

impl Style {
    fn new(json: bool) -> Style {
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
    fn head(&self, s: &str) -> String {
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
fn each_input(
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

fn error_prefix(color: bool) -> &'static str {
    if color {
        "snowmint: \x1b[1;31merror\x1b[0m"
    } else {
        "snowmint: error"
    }
}

fn encode(id: u64, format: Format) -> String {
    let mut buf = [0u8; snowmint::MAX_STR_LEN];
    Id::new(id).encode(format, &mut buf).to_string()
}

fn parse_decimal(s: &str) -> Result<u64, Failure> {
    Ok(Id::parse(s, Format::Decimal)?.get())
}

fn format_name(f: FormatArg) -> &'static str {
    match f {
        FormatArg::Decimal => "decimal",
        FormatArg::Base32 => "base32",
        FormatArg::Base62 => "base62",
    }
}

/// One ID as JSON: its decimal string, and its text in `format` if not decimal.
fn id_json(id: u64, format: FormatArg) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(id.to_string()));
    if !matches!(format, FormatArg::Decimal) {
        m.insert(format_name(format).into(), json!(encode(id, format.into())));
    }
    Value::Object(m)
}

/// Writes `count` new IDs, one per line, minted in batches.
fn write_ids(
    generator: &AnyGenerator,
    count: u64,
    format: FormatArg,
    json: bool,
    out: &mut impl Write,
) -> Result<(), Failure> {
    let mut batch = vec![0u64; Generator::<snowmint::SystemClock>::check_batch(count)?.min(65_536)];
    let mut left = count as usize;
    while left > 0 {
        let chunk = &mut batch[..left.min(65_536)];
        generator.next_ids(chunk)?;
        for &id in chunk.iter() {
            if json {
                writeln!(out, "{}", id_json(id, format))?;
            } else {
                writeln!(out, "{}", encode(id, format.into()))?;
            }
        }
        left -= chunk.len();
    }
    Ok(())
}

/// `mask` (`forward`) or `unmask`: each input ID's line, or its error line.
fn mask_ids(
    args: &MaskArgs,
    forward: bool,
    style: &Style,
    out: &mut impl Write,
) -> Result<(), Failure> {
    let mask = args.resolve()?;
    each_input(&args.ids, style, out, |s, out| {
        let input = Id::parse(s, args.from.into())?;
        let output = if forward {
            mask.mask(input)?
        } else {
            mask.unmask(input)?
        };
        if style.json {
            let (id, public) = if forward {
                (input, output)
            } else {
                (output, input)
            };
            let mut m = Map::new();
            m.insert("id".into(), json!(id.get().to_string()));
            m.insert("public".into(), json!(public.get().to_string()));
            if !matches!(args.format, FormatArg::Decimal) {
                let name = format_name(args.format);
                let key = if forward { "public_" } else { "id_" };
                m.insert(
                    format!("{key}{name}"),
                    json!(encode(output.get(), args.format.into())),
                );
            }
            writeln!(out, "{}", Value::Object(m))?;
        } else {
            writeln!(out, "{}", encode(output.get(), args.format.into()))?;
        }
        Ok(())
    })
}

/// The number of decimal digits of `n`.
fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// `decode` on a terminal: the column headings and each column's width.
fn decode_columns(layout: &Layout) -> Vec<(String, usize)> {
    let width_bits = layout.total_bits();
    let max_id = if width_bits >= 64 {
        u64::MAX
    } else {
        (1u64 << width_bits) - 1
    };
    let mut cols = vec![
        ("id".to_string(), digits(max_id)),
        ("time".to_string(), Iso8601(0).to_string().len()),
    ];
    let seq = layout.fields().iter().find(|f| f.name() == "sequence");
    cols.push(("sequence".into(), seq.map_or(1, |f| digits(f.max()))));
    for f in layout.nodes() {
        cols.push((f.name().to_string(), digits(f.max())));
    }
    for (name, width) in &mut cols {
        *width = (*width).max(name.len());
    }
    cols
}

fn run(cli: Cli, out: &mut impl Write) -> Result<(), Failure> {
    let style = Style::new(cli.json);
    let json = cli.json;
    match cli.command {
        Command::Generate {
            layout,
            nodes,
            count,
            format,
            clock_backwards,
            sequence_exhausted,
            sequence_start,
            resume_after,
            lease,
            print_lease,
            on_demand,
        } => {
            let layout = layout.resolve()?;
            // The maps every language hands the core (options by their core keys).
            let nodes =
                snowmint::Value::Map(nodes.into_iter().map(|(k, v)| (k, v.into())).collect());
            let text = |o: Option<String>| o.map_or(snowmint::Value::Absent, snowmint::Value::from);
            let options = snowmint::Value::Map(vec![
                ("clock_backwards".into(), text(clock_backwards)),
                ("sequence_exhausted".into(), text(sequence_exhausted)),
                ("sequence_start".into(), text(sequence_start)),
                (
                    "resume_after".into(),
                    resume_after.map_or(snowmint::Value::Absent, snowmint::Value::from),
                ),
                ("lease".into(), text(lease)),
            ]);
            let generator = AnyGenerator::from_values(layout, &nodes, &options)?;
            if print_lease {
                let cfg = generator.config();
                let names = cfg.layout().nodes().map(|f| f.name().to_string());
                let nodes: Map<String, Value> = names
                    .zip(cfg.nodes().values().iter().map(|v| json!(v)))
                    .collect();
                let lease = match generator.lease() {
                    Some(info) => serde_json::from_str(&info.to_json())
                        .map_err(|e| Failure::Io(e.to_string()))?,
                    None => Value::Null,
                };
                eprintln!("{}", json!({"nodes": nodes, "lease": lease}));
            }
            if on_demand {
                for line in io::stdin().lock().lines() {
                    let line = line?;
                    let n = match line.trim() {
                        "" => 1,
                        t => t.parse().map_err(|_| {
                            Failure::Io(format!(
                                "--on-demand: '{t}' is not a count of IDs [invalid_option]"
                            ))
                        })?,
                    };
                    write_ids(&generator, n, format, json, out)?;
                    out.flush()?;
                }
            } else {
                write_ids(&generator, count, format, json, out)?;
            }
            out.flush()?;
            generator.close()?;
        }
        Command::Decode { layout, from, ids } => {
            let layout = layout.resolve()?;
            let columns = (style.tty && !json).then(|| decode_columns(&layout));
            if let Some(cols) = &columns {
                let heads: Vec<String> = cols
                    .iter()
                    .enumerate()
                    .map(|(i, (name, w))| {
                        // Numbers right-aligned, the time left-aligned.
                        let cell = if i == 1 {
                            format!("{name:<w$}")
                        } else {
                            format!("{name:>w$}")
                        };
                        style.head(&cell)
                    })
                    .collect();
                writeln!(out, "{}", heads.join("  ").trim_end())?;
            }
            each_input(&ids, &style, out, |s, out| {
                let id = Id::parse(s, from.into())?.get();
                let parts = layout.decompose(id)?;
                let time = Iso8601(parts.timestamp_ms());
                if json {
                    let mut m = Map::new();
                    m.insert("id".into(), json!(id.to_string()));
                    m.insert("timestamp_ms".into(), json!(parts.timestamp_ms()));
                    m.insert("time".into(), json!(time.to_string()));
                    m.insert("sequence".into(), json!(parts.sequence()));
                    for (f, v) in layout.nodes().zip(parts.nodes()) {
                        m.insert(f.name().into(), json!(v));
                    }
                    writeln!(out, "{}", Value::Object(m))?;
                } else if let Some(cols) = &columns {
                    let mut cells = vec![id.to_string(), time.to_string()];
                    cells.push(parts.sequence().to_string());
                    cells.extend(parts.nodes().iter().map(u64::to_string));
                    let line: Vec<String> = cells
                        .iter()
                        .zip(cols)
                        .enumerate()
                        .map(|(i, (c, (_, w)))| {
                            if i == 1 {
                                format!("{c:<w$}")
                            } else {
                                format!("{c:>w$}")
                            }
                        })
                        .collect();
                    writeln!(out, "{}", line.join("  "))?;
                } else {
                    write!(out, "{id}  {time}  sequence={}", parts.sequence())?;
                    for (f, v) in layout.nodes().zip(parts.nodes()) {
                        write!(out, " {}={v}", f.name())?;
                    }
                    writeln!(out)?;
                }
                Ok(())
            })?;
        }
        Command::Mask(args) => mask_ids(&args, true, &style, out)?,
        Command::Unmask(args) => mask_ids(&args, false, &style, out)?,
        Command::Layout { layout } => {
            let l = layout.resolve()?;
            if json {
                writeln!(out, "{}", layout_json(&l)?)?;
            } else {
                writeln!(out, "layout      {}", l.preset_name().unwrap_or("(custom)"))?;
                writeln!(out, "descriptor  {}", l.to_json())?;
                writeln!(
                    out,
                    "epoch       {} ({} ms)",
                    Iso8601(l.epoch_ms()),
                    l.epoch_ms()
                )?;
                writeln!(out, "time unit   {} ms", l.time_unit_ms())?;
                writeln!(out, "bits        {} of 64", l.total_bits())?;
                for f in l.fields() {
                    writeln!(
                        out,
                        "  {:<14} {:>2} bits at {:>2}  (0..={})",
                        f.name(),
                        f.bits(),
                        f.shift(),
                        f.max()
                    )?;
                }
                writeln!(out, "time field ends       {}", Iso8601(l.time_end_ms()))?;
                writeln!(out, "fits signed 64 until  {}", Iso8601(l.i64_end_ms()))?;
                writeln!(out, "JS-safe (2^53) until  {}", Iso8601(l.js_safe_end_ms()))?;
            }
        }
        Command::Presets => {
            for name in Layout::PRESETS {
                let l = Layout::preset(name)?;
                if json {
                    let v = json!({"name": name, "descriptor": descriptor(&l)?});
                    writeln!(out, "{v}")?;
                } else {
                    writeln!(out, "{name:<16}{}", l.to_json())?;
                }
            }
        }
        Command::Encode { format, ids } => {
            each_input(&ids, &style, out, |s, out| {
                let id = parse_decimal(s)?;
                if json {
                    writeln!(out, "{}", id_json(id, format))?;
                } else {
                    writeln!(out, "{}", encode(id, format.into()))?;
                }
                Ok(())
            })?;
        }
        Command::Parse { format, strings } => {
            each_input(&strings, &style, out, |s, out| {
                let id = Id::parse(s, format.into())?.get();
                if json {
                    let v = json!({"input": s, "id": id.to_string()});
                    writeln!(out, "{v}")?;
                } else {
                    writeln!(out, "{id}")?;
                }
                Ok(())
            })?;
        }
        Command::Bounds { layout, time_ms } => {
            let (lo, hi) = layout.resolve()?.id_bounds(time_ms)?;
            if json {
                let v = json!({
                    "time_ms": time_ms,
                    "time": date(time_ms),
                    "min": lo.to_string(),
                    "max": hi.to_string(),
                });
                writeln!(out, "{v}")?;
            } else {
                writeln!(out, "{lo} {hi}")?;
            }
        }
        Command::Fits { ids } => {
            let now = snowmint::SystemClock.precise_ms();
            each_input(&ids, &style, out, |s, out| {
                let id = parse_decimal(s)?;
                let names: Vec<&str> = Layout::PRESETS
                    .iter()
                    .copied()
                    .filter(|n| Layout::preset(n).is_ok_and(|l| l.is_plausible(id, now)))
                    .collect();
                if json {
                    writeln!(out, "{}", json!({"id": id.to_string(), "presets": names}))?;
                } else if style.tty {
                    writeln!(out, "{id:>20}  {}", names.join(" "))?;
                } else {
                    writeln!(out, "{id}  {}", names.join(" "))?;
                }
                Ok(())
            })?;
        }
        Command::Completions { shell } => {
            // Into memory first: clap_complete panics on a failed write.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "snowmint", &mut script);
            out.write_all(&script)?;
        }
        Command::Man { subcommand } => {
            let mut cmd = Cli::command();
            // Built, so that each subcommand knows its display name (snowmint-decode).
            cmd.build();
            let page = match subcommand {
                None => cmd,
                Some(name) => match cmd.find_subcommand(&name) {
                    Some(sub) => sub.clone().version(env!("CARGO_PKG_VERSION")),
                    None => {
                        let names: Vec<&str> =
                            cmd.get_subcommands().map(|c| c.get_name()).collect();
                        let msg = format!("no subcommand '{name}' (one of: {})", names.join(", "));
                        cmd.error(clap::error::ErrorKind::InvalidValue, msg).exit();
                    }
                },
            };
            clap_mangen::Man::new(page).render(out)?;
        }
        Command::Lease { command } => lease(command, json, out)?,
    }
    Ok(())
}

/// A layout's JSON descriptor as JSON (not as a string holding JSON).
fn descriptor(l: &Layout) -> Result<Value, Failure> {
    serde_json::from_str(&l.to_json()).map_err(|e| Failure::Io(e.to_string()))
}

fn layout_json(l: &Layout) -> Result<Value, Failure> {
    let fields: Vec<Value> = l
        .fields()
        .iter()
        .map(|f| json!({"name": f.name(), "bits": f.bits(), "shift": f.shift(), "max": f.max()}))
        .collect();
    Ok(json!({
        "preset": l.preset_name(),
        "descriptor": descriptor(l)?,
        "epoch_ms": l.epoch_ms(),
        "epoch": Iso8601(l.epoch_ms()).to_string(),
        "time_unit_ms": l.time_unit_ms(),
        "total_bits": l.total_bits(),
        "fields": fields,
        "time_end_ms": l.time_end_ms(),
        "time_end": Iso8601(l.time_end_ms()).to_string(),
        "i64_end_ms": l.i64_end_ms(),
        "i64_end": Iso8601(l.i64_end_ms()).to_string(),
        "js_safe_end_ms": l.js_safe_end_ms(),
        "js_safe_end": Iso8601(l.js_safe_end_ms()).to_string(),
    }))
}
/// A Unix ms time as RFC 3339 UTC (the format `decode` prints).
fn date(ms: u64) -> String {
    Iso8601(ms).to_string()
}

fn slot_json(space: &str, r: &SlotRecord) -> Value {
    json!({
        "type": "slot",
        "space": space,
        "slot": r.slot,
        "state": r.state.name(),
        // A free slot's record may keep its last holder's token: not shown.
        "holder": if r.state == SlotState::Free || r.token.is_empty() { Value::Null } else { json!(r.token) },
        "claim": r.counter,
        "expires_ms": r.expires_ms,
        "expires": r.expires_ms.map(date),
        "hwm_ms": r.hwm_ms,
        "reserved_until": date(r.hwm_ms),
    })
}

fn lease(command: LeaseCommand, json: bool, out: &mut impl Write) -> Result<(), Failure> {
    match command {
        LeaseCommand::Init { store } => {
            let name = ops::init(&store)?;
            if json {
                writeln!(out, "{}", json!({"store": name, "ready": true}))?;
            } else {
                writeln!(out, "{name}: ready")?;
            }
        }
        LeaseCommand::List { store } => {
            let l = ops::list(&store)?;
            if json {
                for s in &l.spaces {
                    let v = json!({
                        "type": "space",
                        "store": l.store,
                        "space": s.key,
                        "namespace": s.namespace,
                        "leased": s.leased,
                        "slots": s.slots,
                        "now_ms": l.now_ms,
                        "text": s.text,
                    });
                    writeln!(out, "{v}")?;
                    for r in &s.records {
                        writeln!(out, "{}", slot_json(&s.key, r))?;
                    }
                }
                return Ok(());
            }
            writeln!(out, "store {}  (store clock {})", l.store, date(l.now_ms))?;
            if l.spaces.is_empty() {
                writeln!(out, "no slot spaces")?;
            }
            for s in &l.spaces {
                writeln!(out)?;
                writeln!(
                    out,
                    "space {}  namespace {}  leased {}  {} slots, {} claimed at some time",
                    s.key,
                    s.namespace.as_deref().unwrap_or("(none)"),
                    s.leased,
                    s.slots.map_or("?".to_string(), |n| n.to_string()),
                    s.records.len()
                )?;
                writeln!(
                    out,
                    "{:>6}  {:<7}  {:>6}  {:<8}  {:<24}  reserved until (hwm)",
                    "slot", "state", "claim", "holder", "expires"
                )?;
                for r in &s.records {
                    let holder = if r.state == SlotState::Free || r.token.is_empty() {
                        "-".to_string()
                    } else {
                        r.token.chars().take(8).collect()
                    };
                    let expires = match (r.state, r.expires_ms) {
                        (SlotState::Free, _) => "-".to_string(),
                        (_, Some(ms)) => date(ms),
                        (_, None) => "while the process lives".to_string(),
                    };
                    writeln!(
                        out,
                        "{:>6}  {:<7}  {:>6}  {:<8}  {:<24}  {}",
                        r.slot,
                        r.state.name(),
                        r.counter,
                        holder,
                        expires,
                        date(r.hwm_ms)
                    )?;
                }
            }
        }
        LeaseCommand::Release {
            store,
            space,
            slot,
            force,
        } => {
            let r = ops::release(&store, space.as_deref(), slot, force)?;
            if json {
                let v = json!({
                    "store": r.store,
                    "space": r.space,
                    "slot": r.slot,
                    "released": r.before.is_some(),
                    "before": r.before.as_ref().map(|b| slot_json(&r.space, b)),
                });
                writeln!(out, "{v}")?;
            } else {
                match &r.before {
                    Some(b) => writeln!(
                        out,
                        "slot {} of {} released (was {}, claim {}); hwm kept: reserved until {}",
                        r.slot,
                        r.space,
                        b.state.name(),
                        b.counter,
                        date(b.hwm_ms)
                    )?,
                    None => writeln!(
                        out,
                        "slot {} of {} is free: nothing to release",
                        r.slot, r.space
                    )?,
                }
            }
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = run(cli, &mut out).and_then(|()| out.flush().map_err(Failure::from));
    let message = match result {
        Ok(()) => return ExitCode::SUCCESS,
        // Each failed input has had its line.
        Err(Failure::Reported) => return ExitCode::from(1),
        // A closed pipe (`snowmint generate -n 1000000 | head`) is not an error.
        Err(Failure::Io(e)) if e.contains("Broken pipe") => return ExitCode::SUCCESS,
        Err(Failure::Io(e)) => e,
        // The Display text ends with the stable code in brackets.
        Err(Failure::Core(e)) => e.to_string(),
        Err(Failure::Lease(e)) => e.to_string(),
        Err(Failure::Ops(e)) => e.to_string(),
    };
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let prefix = error_prefix(io::stderr().is_terminal() && !no_color);
    eprintln!("{prefix}: {message}");
    ExitCode::from(1)
}
