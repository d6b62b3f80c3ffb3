//! `generate`: mint IDs on this machine's clock, with node values given or
//! leased from a store, all at once or on request.

use std::fs::File;
use std::io::{self, BufRead, Write};
use std::path::PathBuf;

use serde_json::{json, Map, Value};
use snowmint::Generator;
use snowmint_lease::AnyGenerator;

use crate::args::{FormatArg, GenerateArgs};
use crate::output::{encode, id_json, Failure};

/// Runs `generate`: builds the generator (and takes its lease), writes the
/// IDs, then closes it (releasing the lease).
pub(crate) fn generate(
    args: GenerateArgs,
    json: bool,
    out: &mut impl Write,
) -> Result<(), Failure> {
    let GenerateArgs {
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
        lease_lines,
        issued_log,
    } = args;
    let layout = layout.resolve()?;
    // Opened before the lease is taken: a record that cannot be written
    // issues nothing.
    let record = issued_log.map(IssuedLog::open).transpose()?;
    // The maps every language hands the core (options by their core keys).
    let nodes = snowmint::Value::Map(nodes.into_iter().map(|(k, v)| (k, v.into())).collect());
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
        eprintln!("{}", lease_json(&generator)?);
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
            write_ids(&generator, n, format, json, record.as_ref(), out)?;
            if lease_lines {
                let lease = lease_json(&generator)?["lease"].take();
                writeln!(out, "{}", json!({ "lease": lease }))?;
            }
            out.flush()?;
        }
    } else {
        write_ids(&generator, count, format, json, record.as_ref(), out)?;
    }
    out.flush()?;
    generator.close()?;
    Ok(())
}

/// What `--print-lease` writes: the node values in use and the lease.
fn lease_json(generator: &AnyGenerator) -> Result<Value, Failure> {
    let cfg = generator.config();
    let names = cfg.layout().nodes().map(|f| f.name().to_string());
    let nodes: Map<String, Value> = names
        .zip(cfg.nodes().values().iter().map(|v| json!(v)))
        .collect();
    let lease = match generator.lease() {
        Some(info) => {
            serde_json::from_str(&info.to_json()).map_err(|e| Failure::Io(e.to_string()))?
        }
        None => Value::Null,
    };
    Ok(json!({"nodes": nodes, "lease": lease}))
}

/// Writes `count` new IDs, one per line, minted in batches (each recorded
/// first, with `--issued-log`).
fn write_ids(
    generator: &AnyGenerator,
    count: u64,
    format: FormatArg,
    json: bool,
    record: Option<&IssuedLog>,
    out: &mut impl Write,
) -> Result<(), Failure> {
    let mut batch = vec![0u64; Generator::<snowmint::SystemClock>::check_batch(count)?.min(65_536)];
    let mut left = count as usize;
    while left > 0 {
        let chunk = &mut batch[..left.min(65_536)];
        generator.next_ids(chunk)?;
        if let Some(record) = record {
            record.append(chunk)?;
        }
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

/// `--issued-log FILE`: the record of issued IDs, one line per batch, each
/// line one write(2) to a file opened with `O_APPEND` (unbuffered), made
/// before the batch goes to stdout. Not fsynced: it survives this process
/// being killed, not a crash of the machine.
struct IssuedLog {
    file: File,
    path: PathBuf,
}

impl IssuedLog {
    fn open(path: PathBuf) -> Result<IssuedLog, Failure> {
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path)
            .map(|file| IssuedLog {
                file,
                path: path.clone(),
            })
            .map_err(|e| Failure::Record(format!("--issued-log {}: {e}", path.display())))
    }

    /// Appends one line: `ids` in decimal, separated by spaces.
    fn append(&self, ids: &[u64]) -> Result<(), Failure> {
        let mut line = String::with_capacity(ids.len() * 21);
        let mut buf = [0u8; snowmint::MAX_STR_LEN];
        for &id in ids {
            line.push_str(snowmint::Id::new(id).encode(snowmint::Format::Decimal, &mut buf));
            line.push(' ');
        }
        line.pop();
        line.push('\n');
        (&self.file).write_all(line.as_bytes()).map_err(|e| {
            Failure::Record(format!(
                "--issued-log {}: {e}: these IDs are not handed out",
                self.path.display()
            ))
        })
    }
}
