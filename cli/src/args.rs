//! The command line: clap's schema of every subcommand and its arguments,
//! and the parsers of single arguments (node values, times).

use clap::{Args, Parser, Subcommand, ValueEnum};
use snowmint::{Format, IdMask, Layout};

use crate::output::Failure;

#[derive(Parser)]
#[command(
    name = "snowmint",
    version,
    about = "Snowflake-style 64-bit IDs: generate, decode, inspect."
)]
pub(crate) struct Cli {
    /// One JSON object per line (IDs as decimal strings, times as Unix ms and
    /// RFC 3339); a bad input is also a line: {"input":..., "error":{"code":..., "message":...}}.
    #[arg(long, global = true)]
    pub(crate) json: bool,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Mint new IDs on this machine's clock.
    Generate(GenerateArgs),
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
    /// (docs/LEASES.md, "Operations").
    Lease {
        #[command(subcommand)]
        command: LeaseCommand,
    },
}

/// The arguments of `generate`.
#[derive(Args)]
pub(crate) struct GenerateArgs {
    #[command(flatten)]
    pub(crate) layout: LayoutArg,
    /// A node value, as NAME=VALUE (repeat for each node field of the layout).
    #[arg(long = "node", value_name = "NAME=VALUE", value_parser = parse_node)]
    pub(crate) nodes: Vec<(String, u64)>,
    /// How many IDs.
    #[arg(short = 'n', long, default_value_t = 1)]
    pub(crate) count: u64,
    /// Output form.
    #[arg(long, value_enum, default_value_t = FormatArg::Decimal)]
    pub(crate) format: FormatArg,
    /// Clock-backwards policy: fail, wait:N or borrow:N (default wait:5).
    #[arg(long)]
    pub(crate) clock_backwards: Option<String>,
    /// Sequence-exhausted policy: wait or borrow:N (default wait).
    #[arg(long)]
    pub(crate) sequence_exhausted: Option<String>,
    /// First sequence value of each time unit: zero, random:N or cycle:N (default random:16).
    #[arg(long)]
    pub(crate) sequence_start: Option<String>,
    /// The last ID a previous run issued: continue strictly above it.
    #[arg(long, value_name = "ID")]
    pub(crate) resume_after: Option<u64>,
    /// Lease the one node field not given with --node from a store, e.g.
    /// file:/var/lib/app/ids?namespace=orders (docs/LEASES.md).
    #[arg(long, value_name = "URL")]
    pub(crate) lease: Option<String>,
    /// Before the IDs, write the node values in use and the lease to stderr
    /// as one JSON line.
    #[arg(long)]
    pub(crate) print_lease: bool,
    /// Keep the generator (and its lease) and mint on request: read lines
    /// from stdin, each a count (an empty line is 1), write that many IDs
    /// for each and flush; release at end of input. Replaces --count.
    #[arg(long, conflicts_with = "count")]
    pub(crate) on_demand: bool,
    /// With --on-demand: after the IDs of each line, write the lease as
    /// --print-lease does, to stdout as one line {"lease":{...}}: the
    /// reservation confirmed when those IDs were written, in order with them.
    #[arg(long, requires = "on_demand")]
    pub(crate) lease_lines: bool,
    /// An audit record of issued IDs: append each batch to FILE as one line
    /// of decimal IDs separated by spaces, with one write(2), before the IDs
    /// are written to stdout, so that it holds every ID issued even if this
    /// process is killed before its output is flushed. A failed write is an
    /// error and those IDs are not written.
    #[arg(long, value_name = "FILE")]
    pub(crate) issued_log: Option<std::path::PathBuf>,
}

#[derive(Subcommand)]
pub(crate) enum LeaseCommand {
    /// Prepare a store for leases, and check that it answers.
    ///
    /// PostgreSQL and MySQL: creates the two tables if they are missing. The
    /// file store: creates its directory. Redis: vouches for the server (run
    /// it when the server starts): a new, restarted or emptied server may
    /// have forgotten reservations it confirmed, so leases on it are fenced
    /// for redis_max_window_ms + 2 x max_skew_ms (40 s by default), and init
    /// starts that fence now instead of at the first lease; it prints when
    /// the fence ends, and --wait waits for it. etcd and ZooKeeper: nothing
    /// to create (it checks that the store answers). Safe to run again.
    /// Claims create the same on first use: run it where the users who
    /// claim may not create tables.
    Init {
        /// The lease URL, as given to --lease (its namespace is ignored).
        #[arg(long, value_name = "URL")]
        store: String,
        /// Return only once the store's fence (Redis) has passed, so that a
        /// lease taken next issues at once.
        #[arg(long)]
        wait: bool,
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
        #[arg(long, conflicts_with = "reset_hwm")]
        force: bool,
        /// Repair a slot whose hwm a store clock step put far ahead: free it
        /// and set its hwm to TIME (RFC 3339, e.g. 2026-11-25T18:00:00Z, or
        /// Unix ms). Refused while the slot is held and not expired, and
        /// unless TIME is between now + window_ms + max_skew_ms (the URL's)
        /// and an hour later. Lowering hwm is safe only if no ID of the slot
        /// was issued above TIME: see docs/LEASES.md, "Operations".
        #[arg(long, value_name = "TIME")]
        reset_hwm: Option<String>,
    },
}

#[derive(Args)]
#[group(required = true, multiple = false)]
pub(crate) struct LayoutArg {
    /// A preset: twitter, discord, instagram, sonyflake, sonyflake-v2, shardingsphere, leaf, baidu, tsid, mastodon.
    #[arg(long)]
    pub(crate) preset: Option<String>,
    /// A JSON layout descriptor (or @FILE to read one), e.g.
    /// '{"epoch_ms":1288834974657,"fields":[["timestamp",41],["worker",10],["sequence",12]]}'.
    #[arg(long)]
    pub(crate) layout: Option<String>,
}

/// The arguments of `mask` and `unmask`.
#[derive(Args)]
pub(crate) struct MaskArgs {
    #[command(flatten)]
    pub(crate) layout: LayoutArg,
    /// A file holding the key as hex (32 or 64 hex digits: AES-128 or
    /// AES-256; surrounding whitespace is ignored), e.g. made by
    /// `openssl rand -hex 16`. Without it, the SNOWMINT_MASK_KEY environment
    /// variable holds the hex key.
    #[arg(long, value_name = "PATH")]
    pub(crate) key_file: Option<std::path::PathBuf>,
    /// The tweak, as hex (not a secret: e.g. one per table or tenant, so the
    /// same ID has unrelated public IDs in different places). Default: none.
    #[arg(long, value_name = "HEX", default_value = "")]
    pub(crate) tweak: String,
    /// The form the input IDs are written in.
    #[arg(long = "from", value_enum, default_value_t = FormatArg::Decimal)]
    pub(crate) from: FormatArg,
    /// Output form.
    #[arg(long, value_enum, default_value_t = FormatArg::Decimal)]
    pub(crate) format: FormatArg,
    /// The IDs; none or `-` reads them from stdin (whitespace-separated).
    #[arg(value_name = "ID")]
    pub(crate) ids: Vec<String>,
}

/// The environment variable that holds the mask key (hex) when there is no
/// --key-file.
pub(crate) const MASK_KEY_VAR: &str = "SNOWMINT_MASK_KEY";

impl MaskArgs {
    /// The mask of these arguments: the key from the file or the environment.
    pub(crate) fn resolve(&self) -> Result<IdMask, Failure> {
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
pub(crate) enum FormatArg {
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

/// A `--node NAME=VALUE` argument.
pub(crate) fn parse_node(s: &str) -> Result<(String, u64), String> {
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
pub(crate) fn parse_time(s: &str) -> Result<u64, String> {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s
            .parse()
            .map_err(|_| format!("'{s}' is too large for Unix milliseconds"));
    }
    let ms = snowmint::time::parse_rfc3339(s).ok_or_else(|| {
        format!(
            "'{s}' is neither Unix milliseconds nor an RFC 3339 time \
             (e.g. 2022-06-28T16:07:40Z or 2022-06-28T18:07:40.105+02:00)"
        )
    })?;
    u64::try_from(ms).map_err(|_| format!("'{s}' is before 1970-01-01T00:00:00Z"))
}

impl LayoutArg {
    /// The layout of these arguments: a preset, a descriptor or a descriptor file.
    pub(crate) fn resolve(&self) -> Result<Layout, Failure> {
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

/// A format's name, as the JSON output's keys spell it.
pub(crate) fn format_name(f: FormatArg) -> &'static str {
    match f {
        FormatArg::Decimal => "decimal",
        FormatArg::Base32 => "base32",
        FormatArg::Base62 => "base62",
    }
}
