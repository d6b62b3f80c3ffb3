//! Decodes IDs given as arguments (decimal, base32 or base62) with a preset:
//! `cargo run --example decode -- discord 175928847299117063`.
use snowmint::{Format, Id, Iso8601, Layout};

fn main() -> Result<(), snowmint::Error> {
    let mut args = std::env::args().skip(1);
    let preset = args.next().unwrap_or_else(|| "discord".into());
    let layout = Layout::preset(&preset)?;
    let mut inputs: Vec<String> = args.collect();
    if inputs.is_empty() {
        inputs.push("175928847299117063".into());
    }
    for input in inputs {
        // 13 characters: base32, 11: base62, anything else: decimal.
        let format = match input.len() {
            13 => Format::Base32,
            11 => Format::Base62,
            _ => Format::Decimal,
        };
        let id = Id::parse(&input, format)?;
        let parts = layout.decompose(id)?;
        let nodes: Vec<String> = layout
            .nodes()
            .zip(parts.nodes())
            .map(|(f, v)| format!("{}={v}", f.name()))
            .collect();
        println!(
            "{id}  {}  sequence={} {}  base32={} base62={}",
            Iso8601(parts.timestamp_ms()),
            parts.sequence(),
            nodes.join(" "),
            id.to_string_in(Format::Base32),
            id.to_string_in(Format::Base62),
        );
    }
    Ok(())
}
