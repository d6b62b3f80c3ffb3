//! `snowmint`: generate, decode and inspect Snowflake-style IDs.

use std::io::{self, BufRead, BufWriter, Write};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{json, Map, Value};
use snowmint::{Error, Format, Generator, Id, Iso8601, Layout};
use snowmint_lease::ops::{self, OpsError};
use snowmint_lease::{AnyGenerator, LeaseError, SlotRecord, SlotState};

#[derive(Parser)]
#[command(
    name = "snowmint",
    version,
    about = "Snowflake-style 64-bit IDs: generate, decode, inspect."
)]
struct Cli {
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
    Decode {
        #[command(flatten)]
        layout: LayoutArg,
        /// One JSON object per line: id, timestamp_ms, time, sequence and each node field.
        #[arg(long)]
        json: bool,
        /// The form the IDs are written in.
        #[arg(long = "from", value_enum, default_value_t = FormatArg::Decimal)]
        from: FormatArg,
        /// The IDs.
        #[arg(required = true, value_name = "ID")]
        ids: Vec<String>,
    },
    /// Show a layout: fields, epoch, and when its IDs run out.
    Layout {
        #[command(flatten)]
        layout: LayoutArg,
        /// Print JSON (the descriptor and the lifetime instants).
        #[arg(long)]
        json: bool,
    },
    /// List the preset layouts.
    Presets,
    /// Write IDs in a string form.
    Encode {
        /// Output form.
        #[arg(long, value_enum)]
        format: FormatArg,
        /// Decimal IDs.
        #[arg(required = true, value_name = "ID")]
        ids: Vec<String>,
    },
    /// Read IDs from a string form (prints them in decimal).
    Parse {
        /// Input form.
        #[arg(long, value_enum)]
        format: FormatArg,
        /// The strings.
        #[arg(required = true, value_name = "STRING")]
        strings: Vec<String>,
    },
    /// The smallest and largest IDs of the time unit that contains a time (for range queries).
    Bounds {
        #[command(flatten)]
        layout: LayoutArg,
        /// Unix milliseconds.
        time_ms: u64,
    },
    /// Which presets an ID could come from (those that decode it to a plausible time).
    Fits {
        /// Decimal IDs.
        #[arg(required = true, value_name = "ID")]
        ids: Vec<String>,
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
        /// One JSON object per line: a "space" object, then one "slot"
        /// object per slot (times as Unix ms and as dates, the full token).
        #[arg(long)]
        json: bool,
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
        /// Print the result as one JSON object.
        #[arg(long)]
        json: bool,
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

/// What can go wrong: a core error (with its code) or a file that can't be read.
enum Failure {
    Core(Error),
    Lease(LeaseError),
    Ops(OpsError),
    Io(String),
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

fn encode(id: u64, format: Format) -> String {
    let mut buf = [0u8; snowmint::MAX_STR_LEN];
    Id::new(id).encode(format, &mut buf).to_string()
}

fn parse_decimal(s: &str) -> Result<u64, Failure> {
    Ok(Id::parse(s, Format::Decimal)?.get())
}

/// Writes `count` new IDs, one per line, minted in batches.
fn write_ids(
    generator: &AnyGenerator,
    count: u64,
    format: Format,
    out: &mut impl Write,
) -> Result<(), Failure> {
    let mut batch = vec![0u64; Generator::<snowmint::SystemClock>::check_batch(count)?.min(65_536)];
    let mut left = count as usize;
    while left > 0 {
        let chunk = &mut batch[..left.min(65_536)];
        generator.next_ids(chunk)?;
        for &id in chunk.iter() {
            writeln!(out, "{}", encode(id, format))?;
        }
        left -= chunk.len();
    }
    Ok(())
}

fn run(cli: Cli, out: &mut impl Write) -> Result<(), Failure> {
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
            let format = Format::from(format);
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
                    write_ids(&generator, n, format, out)?;
                    out.flush()?;
                }
            } else {
                write_ids(&generator, count, format, out)?;
            }
            out.flush()?;
            generator.close()?;
        }
        Command::Decode {
            layout,
            json,
            from,
            ids,
        } => {
            let layout = layout.resolve()?;
            for s in &ids {
                let id = Id::parse(s, from.into())?.get();
                let parts = layout.decompose(id)?;
                if json {
                    let mut m = Map::new();
                    m.insert("id".into(), json!(id.to_string()));
                    m.insert("timestamp_ms".into(), json!(parts.timestamp_ms()));
                    m.insert(
                        "time".into(),
                        json!(Iso8601(parts.timestamp_ms()).to_string()),
                    );
                    m.insert("sequence".into(), json!(parts.sequence()));
                    for (f, v) in layout.nodes().zip(parts.nodes()) {
                        m.insert(f.name().into(), json!(v));
                    }
                    writeln!(out, "{}", Value::Object(m))?;
                } else {
                    write!(
                        out,
                        "{id}  {}  sequence={}",
                        Iso8601(parts.timestamp_ms()),
                        parts.sequence()
                    )?;
                    for (f, v) in layout.nodes().zip(parts.nodes()) {
                        write!(out, " {}={v}", f.name())?;
                    }
                    writeln!(out)?;
                }
            }
        }
        Command::Layout { layout, json } => {
            let l = layout.resolve()?;
            if json {
                let fields: Vec<Value> = l
                    .fields()
                    .iter()
                    .map(|f| json!({"name": f.name(), "bits": f.bits(), "shift": f.shift()}))
                    .collect();
                let v = json!({
                    "preset": l.preset_name(),
                    "descriptor": l.to_json(),
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
                });
                writeln!(out, "{v}")?;
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
                writeln!(out, "{name:<16}{}", Layout::preset(name)?.to_json())?;
            }
        }
        Command::Encode { format, ids } => {
            for s in &ids {
                writeln!(out, "{}", encode(parse_decimal(s)?, format.into()))?;
            }
        }
        Command::Parse { format, strings } => {
            for s in &strings {
                writeln!(out, "{}", Id::parse(s, format.into())?)?;
            }
        }
        Command::Bounds { layout, time_ms } => {
            let (lo, hi) = layout.resolve()?.id_bounds(time_ms)?;
            writeln!(out, "{lo} {hi}")?;
        }
        Command::Fits { ids } => {
            let now = snowmint::SystemClock.precise_ms();
            for s in &ids {
                let id = parse_decimal(s)?;
                let names: Vec<&str> = Layout::PRESETS
                    .iter()
                    .copied()
                    .filter(|n| Layout::preset(n).is_ok_and(|l| l.is_plausible(id, now)))
                    .collect();
                writeln!(out, "{id}  {}", names.join(" "))?;
            }
        }
        Command::Lease { command } => lease(command, out)?,
    }
    Ok(())
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

fn lease(command: LeaseCommand, out: &mut impl Write) -> Result<(), Failure> {
    match command {
        LeaseCommand::Init { store } => {
            let name = ops::init(&store)?;
            writeln!(out, "{name}: ready")?;
        }
        LeaseCommand::List { store, json } => {
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
            json,
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
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`snowmint generate -n 1000000 | head`) is not an error.
        Err(Failure::Io(e)) if e.contains("Broken pipe") => ExitCode::SUCCESS,
        Err(Failure::Io(e)) => {
            eprintln!("snowmint: error: {e}");
            ExitCode::from(1)
        }
        // The Display text ends with the stable code in brackets.
        Err(Failure::Core(e)) => {
            eprintln!("snowmint: error: {e}");
            ExitCode::from(1)
        }
        Err(Failure::Lease(e)) => {
            eprintln!("snowmint: error: {e}");
            ExitCode::from(1)
        }
        Err(Failure::Ops(e)) => {
            eprintln!("snowmint: error: {e}");
            ExitCode::from(1)
        }
    }
}
