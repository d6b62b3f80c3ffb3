//! The commands about layouts: `layout` (one layout's fields, epoch and end
//! dates) and `presets`.

use std::io::Write;

use serde_json::{json, Value};
use snowmint::{Iso8601, Layout};

use crate::args::LayoutArg;
use crate::output::Failure;

/// `layout`: a layout's descriptor, fields, epoch and when its IDs run out.
pub(crate) fn layout(layout: &LayoutArg, json: bool, out: &mut impl Write) -> Result<(), Failure> {
    let l = layout.resolve()?;
    if json {
        writeln!(out, "{}", layout_json(&l)?)?;
        return Ok(());
    }
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
    Ok(())
}

/// `presets`: each preset's name and descriptor.
pub(crate) fn presets(json: bool, out: &mut impl Write) -> Result<(), Failure> {
    for name in Layout::PRESETS {
        let l = Layout::preset(name)?;
        if json {
            let v = json!({"name": name, "descriptor": descriptor(&l)?});
            writeln!(out, "{v}")?;
        } else {
            writeln!(out, "{name:<16}{}", l.to_json())?;
        }
    }
    Ok(())
}

/// A layout's JSON descriptor as JSON (not as a string holding JSON).
fn descriptor(l: &Layout) -> Result<Value, Failure> {
    serde_json::from_str(&l.to_json()).map_err(|e| Failure::Io(e.to_string()))
}

/// `layout --json`: the layout and its end dates as one object.
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
