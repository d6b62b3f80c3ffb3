//! The commands over IDs: `decode`, `encode`, `parse`, `bounds`, `fits`,
//! `mask` and `unmask`. Each reads its inputs through `each_input`, so a bad
//! input is its own error line and the others go on.

use std::io::Write;

use serde_json::{json, Map, Value};
use snowmint::{Id, Iso8601, Layout, Parts};

use crate::args::{format_name, FormatArg, LayoutArg, MaskArgs};
use crate::output::{date, digits, each_input, encode, id_json, parse_decimal, Failure, Style};

/// `decode`: each ID's time, sequence and node fields; on a terminal in
/// aligned columns under a heading.
pub(crate) fn decode(
    layout: &LayoutArg,
    from: FormatArg,
    ids: &[String],
    style: &Style,
    out: &mut impl Write,
) -> Result<(), Failure> {
    let layout = layout.resolve()?;
    let columns = (style.tty && !style.json).then(|| decode_columns(&layout));
    if let Some(cols) = &columns {
        let heads: Vec<String> = cols
            .iter()
            .enumerate()
            .map(|(i, (name, w))| style.head(&align(i, name, *w)))
            .collect();
        writeln!(out, "{}", heads.join("  ").trim_end())?;
    }
    each_input(ids, style, out, |s, out| {
        let id = Id::parse(s, from.into())?.get();
        let parts = layout.decompose(id)?;
        if style.json {
            writeln!(out, "{}", decoded_json(&layout, id, &parts))?;
        } else if let Some(cols) = &columns {
            let time = Iso8601(parts.timestamp_ms());
            let mut cells = vec![id.to_string(), time.to_string()];
            cells.push(parts.sequence().to_string());
            cells.extend(parts.nodes().iter().map(u64::to_string));
            let line: Vec<String> = cells
                .iter()
                .zip(cols)
                .enumerate()
                .map(|(i, (c, (_, w)))| align(i, c, *w))
                .collect();
            writeln!(out, "{}", line.join("  "))?;
        } else {
            let time = Iso8601(parts.timestamp_ms());
            write!(out, "{id}  {time}  sequence={}", parts.sequence())?;
            for (f, v) in layout.nodes().zip(parts.nodes()) {
                write!(out, " {}={v}", f.name())?;
            }
            writeln!(out)?;
        }
        Ok(())
    })
}

/// A cell of `decode`'s columns: numbers right-aligned, the time (column 1)
/// left-aligned.
fn align(column: usize, cell: &str, width: usize) -> String {
    if column == 1 {
        format!("{cell:<width$}")
    } else {
        format!("{cell:>width$}")
    }
}

/// One decoded ID as `decode --json` writes it.
fn decoded_json(layout: &Layout, id: u64, parts: &Parts) -> Value {
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
    Value::Object(m)
}

/// `encode`: decimal IDs in a string form.
pub(crate) fn encode_ids(
    format: FormatArg,
    ids: &[String],
    style: &Style,
    out: &mut impl Write,
) -> Result<(), Failure> {
    each_input(ids, style, out, |s, out| {
        let id = parse_decimal(s)?;
        if style.json {
            writeln!(out, "{}", id_json(id, format))?;
        } else {
            writeln!(out, "{}", encode(id, format.into()))?;
        }
        Ok(())
    })
}

/// `parse`: IDs in a string form, in decimal.
pub(crate) fn parse_ids(
    format: FormatArg,
    strings: &[String],
    style: &Style,
    out: &mut impl Write,
) -> Result<(), Failure> {
    each_input(strings, style, out, |s, out| {
        let id = Id::parse(s, format.into())?.get();
        if style.json {
            let v = json!({"input": s, "id": id.to_string()});
            writeln!(out, "{v}")?;
        } else {
            writeln!(out, "{id}")?;
        }
        Ok(())
    })
}

/// `bounds`: the smallest and largest IDs of the time unit holding `time_ms`.
pub(crate) fn bounds(
    layout: &LayoutArg,
    time_ms: u64,
    json: bool,
    out: &mut impl Write,
) -> Result<(), Failure> {
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
    Ok(())
}

/// `fits`: the presets that decode each ID to a plausible time.
pub(crate) fn fits(ids: &[String], style: &Style, out: &mut impl Write) -> Result<(), Failure> {
    let now = snowmint::SystemClock.precise_ms();
    each_input(ids, style, out, |s, out| {
        let id = parse_decimal(s)?;
        let names: Vec<&str> = Layout::PRESETS
            .iter()
            .copied()
            .filter(|n| Layout::preset(n).is_ok_and(|l| l.is_plausible(id, now)))
            .collect();
        if style.json {
            writeln!(out, "{}", json!({"id": id.to_string(), "presets": names}))?;
        } else if style.tty {
            writeln!(out, "{id:>20}  {}", names.join(" "))?;
        } else {
            writeln!(out, "{id}  {}", names.join(" "))?;
        }
        Ok(())
    })
}

/// `mask` (`forward`) or `unmask`: each input ID's line, or its error line.
pub(crate) fn mask_ids(
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
