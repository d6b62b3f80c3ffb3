//! `vectors/layouts.json`: every preset and custom layouts, with what the
//! core computes of each, and the descriptors it refuses.

use serde_json::{json, Value};
use snowmint::Layout;

use crate::layout_of;

fn layout_info(l: &Layout) -> Value {
    let fields: Vec<Value> = l
        .fields()
        .iter()
        .map(|f| {
            json!({
                "name": f.name(),
                "bits": f.bits(),
                "shift": f.shift(),
                "kind": f.kind().as_str(),
            })
        })
        .collect();
    json!({
        "json": l.to_json(),
        "epoch_ms": l.epoch_ms(),
        "time_unit_ms": l.time_unit_ms(),
        "total_bits": l.total_bits(),
        "max_id": l.max_id().to_string(),
        "time_end_ms": l.time_end_ms(),
        "i64_end_ms": l.i64_end_ms(),
        "js_safe_end_ms": l.js_safe_end_ms(),
        "fields": fields,
        "preset_name": l.preset_name(),
    })
}

/// Custom layouts the core accepts: (case name, descriptor).
const VALID: &[(&str, &str)] = &[
    (
        "game server layout that fits: 41 ms + 12 server + 10 sequence",
        r#"{"epoch_ms":1700000000000,"time_unit_ms":1,"fields":[["timestamp",41],["server",12],["sequence",10]]}"#,
    ),
    (
        "spaces, key order, default unit",
        r#" { "fields" : [ ["timestamp", 44], ["region", 4], ["sequence", 16] ], "epoch_ms" : 1600000000000 } "#,
    ),
    (
        "64 bits: IDs outgrow BIGINT before the time field ends",
        r#"{"epoch_ms":1600000000000,"fields":[["timestamp",44],["shard",8],["sequence",12]]}"#,
    ),
    (
        "1 second units, sequence before node",
        r#"{"epoch_ms":1600000000000,"time_unit_ms":1000,"fields":[["timestamp",32],["sequence",20],["node",11]]}"#,
    ),
    (
        "tiny: 30 bits, always a JS safe integer",
        r#"{"epoch_ms":1700000000000,"time_unit_ms":60000,"fields":[["timestamp",20],["sequence",6],["node",4]]}"#,
    ),
    ("preset name as a JSON string", r#""sonyflake""#),
    (
        "many node fields",
        r#"{"epoch_ms":0,"fields":[["timestamp",43],["a",1],["b",1],["c",1],["d",1],["e",1],["f",1],["sequence",14]]}"#,
    ),
];

/// Descriptors and names the core refuses: (case name, descriptor).
const INVALID: &[(&str, &str)] = &[
    (
        "the seed article's 37 + 20 + 16 = 73 bits",
        r#"{"epoch_ms":0,"fields":[["timestamp",37],["server",20],["sequence",16]]}"#,
    ),
    (
        "65 bits",
        r#"{"epoch_ms":0,"fields":[["timestamp",42],["worker",11],["sequence",12]]}"#,
    ),
    (
        "zero-width sequence",
        r#"{"epoch_ms":0,"fields":[["timestamp",41],["worker",10],["sequence",0]]}"#,
    ),
    (
        "zero-width time",
        r#"{"epoch_ms":0,"fields":[["timestamp",0],["sequence",12]]}"#,
    ),
    (
        "zero-width node",
        r#"{"epoch_ms":0,"fields":[["timestamp",41],["worker",0],["sequence",12]]}"#,
    ),
    (
        "duplicate field",
        r#"{"epoch_ms":0,"fields":[["timestamp",41],["worker",5],["worker",5],["sequence",12]]}"#,
    ),
    (
        "no timestamp",
        r#"{"epoch_ms":0,"fields":[["worker",10],["sequence",12]]}"#,
    ),
    (
        "timestamp not first",
        r#"{"epoch_ms":0,"fields":[["sequence",12],["timestamp",41]]}"#,
    ),
    (
        "no sequence",
        r#"{"epoch_ms":0,"fields":[["timestamp",41],["worker",10]]}"#,
    ),
    (
        "time unit 0",
        r#"{"epoch_ms":0,"time_unit_ms":0,"fields":[["timestamp",41],["sequence",12]]}"#,
    ),
    (
        "nine fields",
        r#"{"epoch_ms":0,"fields":[["timestamp",40],["a",1],["b",1],["c",1],["d",1],["e",1],["f",1],["g",1],["sequence",12]]}"#,
    ),
    (
        "upper-case name",
        r#"{"epoch_ms":0,"fields":[["timestamp",41],["Worker",10],["sequence",12]]}"#,
    ),
    (
        "name starting with a digit",
        r#"{"epoch_ms":0,"fields":[["timestamp",41],["1worker",10],["sequence",12]]}"#,
    ),
    (
        "a node field wider than 53 bits",
        r#"{"epoch_ms":0,"fields":[["timestamp",8],["node",54],["sequence",2]]}"#,
    ),
    (
        "time range past 2^53 ms",
        r#"{"epoch_ms":0,"time_unit_ms":1000,"fields":[["timestamp",44],["sequence",12]]}"#,
    ),
    ("not JSON", "{epoch_ms: 0}"),
    (
        "trailing comma",
        r#"{"epoch_ms":0,"fields":[["timestamp",41],["sequence",12]],}"#,
    ),
    (
        "negative epoch",
        r#"{"epoch_ms":-1,"fields":[["timestamp",41],["sequence",12]]}"#,
    ),
    (
        "fractional epoch",
        r#"{"epoch_ms":1.5,"fields":[["timestamp",41],["sequence",12]]}"#,
    ),
    (
        "unknown key",
        r#"{"epoch_ms":0,"name":"x","fields":[["timestamp",41],["sequence",12]]}"#,
    ),
    ("missing fields", r#"{"epoch_ms":0}"#),
    (
        "missing epoch",
        r#"{"fields":[["timestamp",41],["sequence",12]]}"#,
    ),
    (
        "trailing garbage",
        r#"{"epoch_ms":0,"fields":[["timestamp",41],["sequence",12]]} x"#,
    ),
    ("empty", ""),
    ("unknown preset", "snowflake"),
    ("unknown preset as JSON string", r#""nope""#),
];

/// The contents of `vectors/layouts.json`.
pub(crate) fn layouts() -> Value {
    let mut cases = Vec::new();
    for name in Layout::PRESETS {
        let l = Layout::preset(name).unwrap();
        cases.push(
            json!({"name": format!("preset {name}"), "layout": name, "expect": layout_info(&l)}),
        );
    }
    for &(name, desc) in VALID {
        cases.push(json!({"name": name, "layout": desc, "expect": layout_info(&layout_of(desc))}));
    }
    for &(name, desc) in INVALID {
        let err = Layout::parse(desc).expect_err(name);
        cases.push(json!({"name": name, "layout": desc, "error": err.code()}));
    }
    // The epoch check needs a clock reading: generators refuse a future epoch.
    let future = r#"{"epoch_ms":1900000000000,"fields":[["timestamp",41],["sequence",12]]}"#;
    let err = layout_of(future).check_epoch(1763812800000).unwrap_err();
    cases.push(json!({"name": "epoch in the future (checked against now_ms)", "layout": future, "now_ms": 1763812800000u64, "error": err.code()}));
    let ok = layout_of(future).check_epoch(1900000000000);
    assert!(ok.is_ok());
    json!({
        "_comment": "Layouts. Each case has `layout`: a preset name or a JSON descriptor, read with the same \
            function every binding uses (Layout.parse: a string starting with `{` or `\"` is JSON, anything \
            else a preset name). Then either `error`: the error code reading it must give, or `expect`: \
            `json` (the canonical descriptor, which must also read back to the same layout), `epoch_ms`, \
            `time_unit_ms`, `total_bits`, `max_id` (decimal string), `time_end_ms` (first Unix ms the time \
            field cannot hold), `i64_end_ms` (first Unix ms from which IDs may not fit a signed 64-bit \
            integer), `js_safe_end_ms` (the same for 2^53), `fields` (most significant first: name, bits, \
            shift of the lowest bit, kind timestamp|sequence|node) and `preset_name` (the preset equal to the \
            layout, or null). A case with `now_ms` checks the epoch against that clock reading instead \
            (generators refuse an epoch in the future).",
        "cases": cases,
    })
}
