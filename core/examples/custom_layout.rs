//! A layout of your own from a JSON descriptor: its lifetime, its limits, and
//! a layout that cannot work (73 bits) refused with its code:
//! `cargo run --example custom_layout`.
use snowmint::{Iso8601, Layout};

fn main() -> Result<(), snowmint::Error> {
    // 10-ms units from 2024-01-01, a 16-bit shard, 8 bits of sequence.
    let layout = Layout::parse(
        r#"{"epoch_ms":1704067200000,"time_unit_ms":10,"fields":[["timestamp",39],["shard",16],["sequence",8]]}"#,
    )?;
    println!("descriptor      {}", layout.to_json());
    println!("total bits      {}", layout.total_bits());
    println!("runs out        {}", Iso8601(layout.time_end_ms()));
    println!("JS-safe until   {}", Iso8601(layout.js_safe_end_ms()));
    let nodes = layout.nodes_from_pairs([("shard", 513)])?;
    let id = layout.compose(1_750_000_000_000, 5, &nodes)?;
    let (lo, hi) = layout.id_bounds(1_750_000_000_000)?;
    assert!(lo <= id && id <= hi);
    println!("composed        {id} (bounds of its unit {lo}..={hi})");

    let err = Layout::parse(
        r#"{"epoch_ms":0,"fields":[["timestamp",37],["server",20],["sequence",16]]}"#,
    )
    .unwrap_err();
    assert_eq!(err.code(), "invalid_layout");
    println!("37+20+16 bits   {err}");
    Ok(())
}
