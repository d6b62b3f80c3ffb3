//! Builds the shared test vectors (`vectors/*.json`) from the core.
//!
//! The inputs are written here by hand; the expected outputs are computed by
//! the core, except for the facts checked against the outside world first
//! (`known_facts`), which the builder asserts before writing anything. Every
//! language's test suite then runs these files, so all bindings agree with
//! the core and with each other.

mod arguments;
mod codes;
mod generate;
mod ids;
mod layouts;
mod mask;
mod strings;

use serde_json::{json, Map, Value};
use snowmint::Layout;

/// The command that rewrites the files; stale-file errors print it.
pub const REGEN: &str = "cargo run -p snowmint-vectors";

/// Every vector file: (file name, contents).
pub fn all() -> Vec<(&'static str, Value)> {
    known_facts();
    vec![
        ("layouts.json", layouts::layouts()),
        ("ids.json", ids::ids()),
        ("strings.json", strings::strings()),
        ("generate.json", generate::generate()),
        ("codes.json", codes::codes()),
        ("arguments.json", arguments::arguments()),
        ("mask.json", mask::mask()),
    ]
}

/// The file's text as written to disk.
pub fn render(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).expect("JSON values always serialize");
    s.push('\n');
    s
}

/// A layout of the vectors by preset name or descriptor.
pub(crate) fn layout_of(spec: &str) -> Layout {
    Layout::parse(spec).unwrap_or_else(|e| panic!("vector layout {spec}: {e}"))
}

/// Node values as the vectors write them: field name -> value.
pub(crate) fn nodes_json(layout: &Layout, values: &[u64]) -> Value {
    let mut m = Map::new();
    for (f, v) in layout.nodes().zip(values) {
        m.insert(f.name().to_string(), json!(v));
    }
    Value::Object(m)
}

/// Facts from outside snowmint, checked before anything is written: if the
/// core disagreed with them, the vectors would pin a wrong answer.
fn known_facts() {
    // Discord's documentation decodes 175928847299117063 as 2016-04-30
    // 11:18:25.796 UTC, worker 1, process 0, increment 7.
    let d = Layout::preset("discord").unwrap();
    let p = d.decompose(175928847299117063).unwrap();
    assert_eq!(p.timestamp_ms(), 1462015105796);
    assert_eq!(p.nodes(), &[1, 0]);
    assert_eq!(p.sequence(), 7);
    // A tweet of 2022-06-28 16:07:40.105 UTC.
    let t = Layout::preset("twitter").unwrap();
    assert_eq!(
        t.decompose(1541815603606036480).unwrap().timestamp_ms(),
        1656432460105
    );
    // 41 bits of ms last 69.7 years: Twitter's run out on 2080-07-10.
    assert_eq!(t.time_end_ms(), 1288834974657 + (1u64 << 41));
    // ShardingSphere: from 2016-11-01 "until 2086".
    let s = Layout::preset("shardingsphere").unwrap();
    assert_eq!(s.time_end_ms(), 3676981655552); // 2086-07-08T15:47:35.552Z
                                                // Baidu's 28 bits of seconds from 2016-05-20 ended on 2024-11-20.
    let b = Layout::preset("baidu").unwrap();
    assert_eq!(b.time_end_ms(), 1732109056000); // 2024-11-20T13:24:16Z
                                                // Sonyflake: 39 bits of 10 ms last 174 years.
    let y = Layout::preset("sonyflake").unwrap();
    assert_eq!((y.time_end_ms() - y.epoch_ms()) / (365 * 86_400_000), 174);
}
