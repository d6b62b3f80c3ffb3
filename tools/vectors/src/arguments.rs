//! `vectors/arguments.json`: loose arguments (the values a binding hands
//! the core) and what the core makes of them.

use serde_json::{json, Value};
use snowmint::{Id, Layout, Next, Nodes, PureGenerator};

use crate::layout_of;

/// A loose argument, written in the vectors as a one-key object: `{"int":
/// "-1"}` (decimal text, any size), `{"float": 1.5}` or `{"float": "NaN"}`
/// (also `"Infinity"`, `"-Infinity"`, `"-0"`), `{"str": ".."}`, `{"bool":
/// true}`, `{"absent": true}`, `{"map": [["key", <argument>], ...]}`,
/// `{"other": "list"}` (any other type: an array in JavaScript, a list in
/// Python).
#[derive(Clone)]
enum Arg {
    Int(i128),
    Big(bool),
    Float(f64),
    Str(&'static str),
    Bool(bool),
    Absent,
    Map(Vec<(&'static str, Arg)>),
    Other,
}

impl Arg {
    fn json(&self) -> Value {
        match self {
            Arg::Int(v) => json!({"int": v.to_string()}),
            Arg::Big(negative) => {
                let sign = if *negative { "-" } else { "" };
                json!({"int": format!("{sign}340282366920938463463374607431768211456")})
            }
            Arg::Float(f) if f.is_nan() => json!({"float": "NaN"}),
            Arg::Float(f) if f.is_infinite() => {
                json!({"float": if *f > 0.0 { "Infinity" } else { "-Infinity" }})
            }
            Arg::Float(f) if *f == 0.0 && f.is_sign_negative() => json!({"float": "-0"}),
            Arg::Float(f) => json!({"float": f}),
            Arg::Str(s) => json!({"str": s}),
            Arg::Bool(b) => json!({"bool": b}),
            Arg::Absent => json!({"absent": true}),
            Arg::Map(pairs) => {
                json!({"map": pairs.iter().map(|(k, v)| json!([k, v.json()])).collect::<Vec<_>>()})
            }
            Arg::Other => json!({"other": "list"}),
        }
    }

    fn value(&self) -> snowmint::Value {
        use snowmint::Value as V;
        match self {
            Arg::Int(v) => V::from(*v),
            Arg::Big(negative) => V::Int {
                negative: *negative,
                low: 0,
                lossless: false,
            },
            Arg::Float(f) => V::Float(*f),
            Arg::Str(s) => V::from(*s),
            Arg::Bool(b) => V::Bool(*b),
            Arg::Absent => V::Absent,
            Arg::Map(pairs) => V::Map(
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.value()))
                    .collect(),
            ),
            Arg::Other => V::Other("a list"),
        }
    }
}

/// The time every case runs at (2023-11-14T22:13:20Z).
const T: u64 = 1700000000000;

/// The layout every case runs under (but `layout`'s own).
fn twitter() -> Layout {
    layout_of("twitter")
}

/// Datacenter 1, worker 1: the node values of every case but `node`'s and `nodes`'.
fn ok_nodes() -> Nodes {
    twitter()
        .nodes_from_pairs([("datacenter", 1), ("worker", 1)])
        .unwrap()
}

/// A node map of twitter's two fields.
fn nodes(d: Arg, w: Arg) -> Arg {
    Arg::Map(vec![("datacenter", d), ("worker", w)])
}

/// An ID as the vectors write it: its decimal string.
fn id_text(id: Id) -> Value {
    json!(id.to_string())
}

/// One case: where the argument goes, the argument, and what the core made
/// of it (a value, or an error with its code and class).
fn case(what: &str, arg: &Arg, r: snowmint::Result<Value>) -> Value {
    let mut case = json!({"arg": what, "value": arg.json()});
    match r {
        Ok(v) => case["expect"] = v,
        Err(e) => {
            case["error"] = json!(e.code());
            case["class"] = json!(match e.class() {
                snowmint::ErrorClass::Type => "type",
                snowmint::ErrorClass::Range => "range",
                snowmint::ErrorClass::Value => "value",
            });
        }
    }
    case
}

/// Numbers in every form a language may hand over.
fn numbers() -> Vec<Arg> {
    use Arg::*;
    vec![
        Int(0),
        Int(7),
        Int(-1),
        Int(u64::MAX as i128),
        Int(u64::MAX as i128 + 1),
        Big(false),
        Big(true),
        Float(7.0),
        Float(-0.0),
        Float(1.5),
        Float(-1.0),
        Float(9007199254740991.0),
        Float(9007199254740992.0),
        Float(f64::NAN),
        Float(f64::INFINITY),
        Str("7"),
        Bool(true),
        Absent,
        Other,
    ]
}

/// IDs, and numbers as times, sequences, node values and counts.
fn number_cases() -> Vec<Value> {
    use Arg::*;
    let twitter = twitter();
    let mut cases = Vec::new();
    let mut ids = numbers();
    ids.extend([
        Str(""),
        Str("12a"),
        Str("-1"),
        Str("18446744073709551616"),
        Str("18446744073709551615"),
    ]);
    for a in &ids {
        cases.push(case("id", a, a.value().to_id().map(id_text)));
    }
    for a in &numbers() {
        let r = a.value().to_time_ms().and_then(|ms| twitter.id_bounds(ms));
        cases.push(case(
            "time",
            a,
            r.map(|(lo, hi)| json!([lo.to_string(), hi.to_string()])),
        ));
        let r = a
            .value()
            .to_sequence()
            .and_then(|s| twitter.compose(T, s, &ok_nodes()));
        cases.push(case("sequence", a, r.map(id_text)));
        let r = nodes(Int(1), a.clone())
            .value()
            .to_nodes(&twitter)
            .and_then(|n| twitter.compose(T, 0, &n));
        cases.push(case("node", a, r.map(id_text)));
        if !matches!(a, Int(v) if *v > 1000) && !matches!(a, Float(f) if *f > 1000.0) {
            let r = a.value().to_count();
            cases.push(case("count", a, r.map(|n| json!(n))));
        }
    }
    for a in [Int(0), Int(1 << 32 | 1), Float(4294967297.0)] {
        cases.push(case("count", &a, a.value().to_count().map(|n| json!(n))));
    }
    cases
}

/// Layouts by preset name, descriptor, and what is neither.
fn layout_cases() -> Vec<Value> {
    use Arg::*;
    let mut cases = Vec::new();
    let layouts = [
        Str("mastodon"),
        Str("{\"epoch_ms\":0,\"fields\":[[\"timestamp\",48],[\"sequence\",16]]}"),
        Str("\"mastodon\""),
        Str("nope"),
        Str("{"),
        Int(1),
        Absent,
        Map(vec![]),
    ];
    for a in &layouts {
        let r = a.value().to_layout().and_then(|l| l.id_bounds(T));
        cases.push(case(
            "layout",
            a,
            r.map(|(lo, hi)| json!([lo.to_string(), hi.to_string()])),
        ));
    }
    cases
}

/// Maps of node values.
fn node_map_cases() -> Vec<Value> {
    use Arg::*;
    let twitter = twitter();
    let mut cases = Vec::new();
    let node_maps = [
        nodes(Int(1), Int(2)),
        nodes(Float(1.0), Int(31)),
        nodes(Int(1), Int(32)),
        nodes(Int(1), Absent),
        Map(vec![("worker", Int(1))]),
        Map(vec![
            ("datacenter", Int(1)),
            ("worker", Int(1)),
            ("shard", Int(1)),
        ]),
        Absent,
        Str("datacenter=1"),
        Other,
    ];
    for a in &node_maps {
        let r = a
            .value()
            .to_nodes(&twitter)
            .and_then(|n| twitter.compose(T, 0, &n));
        cases.push(case("nodes", a, r.map(id_text)));
    }
    cases
}

/// Maps of generator options (either spelling of their keys).
fn option_cases() -> Vec<Value> {
    use Arg::*;
    let twitter = twitter();
    let mut cases = Vec::new();
    let option_maps = [
        Map(vec![]),
        Map(vec![("sequence_start", Str("zero"))]),
        Map(vec![("sequenceStart", Str("cycle:4"))]),
        Map(vec![
            ("sequence_start", Str("random:100")),
            ("seed", Int(42)),
        ]),
        Map(vec![
            ("sequenceStart", Str("random:100")),
            ("seed", Str("42")),
        ]),
        Map(vec![("resume_after", Str("1439381121794232320"))]),
        Map(vec![("resumeAfter", Int(1439381121794232320))]),
        Map(vec![
            ("clock_backwards", Str("fail")),
            ("sequence_exhausted", Str("borrow:2")),
        ]),
        Map(vec![("seed", Absent), ("sequence_start", Str("zero"))]),
        Map(vec![("sequence_start", Str("random:0"))]),
        Map(vec![("clock_backwards", Str("later"))]),
        Map(vec![("clock_backwards", Int(1))]),
        Map(vec![("seed", Int(-1))]),
        Map(vec![("seed", Float(0.5))]),
        Map(vec![("seed", Bool(true))]),
        Map(vec![("resume_after", Int(-1))]),
        Map(vec![("resume_after", Str("x"))]),
        Map(vec![("clock", Str("fail"))]),
        Map(vec![("ClockBackwards", Str("fail"))]),
        // A pure generator has no lease (the system-clock Generator has).
        Map(vec![("lease", Str("file:/tmp/snowmint-ids"))]),
        Absent,
        Str("fail"),
        Other,
    ];
    for a in &option_maps {
        // The first ID of a pure generator with these options at `t`.
        let r = a.value().to_options().and_then(|o| {
            let mut g = PureGenerator::new(twitter, ok_nodes(), o)?;
            match g.next(T)? {
                Next::Id(id) => Ok(id_text(id)),
                Next::RetryAt(at) => Ok(json!({"retry_at": at})),
            }
        });
        cases.push(case("options", a, r));
    }
    cases
}

/// Format names.
fn format_cases() -> Vec<Value> {
    use Arg::*;
    let mut cases = Vec::new();
    for a in [
        Str("decimal"),
        Str("base32"),
        Str("base62"),
        Str("hex"),
        Str(""),
        Int(1),
        Absent,
    ] {
        let r = a.value().to_format().map(|f| {
            json!(Id::new(1541815603606036480).encode(f, &mut [0; snowmint::MAX_STR_LEN]))
        });
        cases.push(case("format", &a, r));
    }
    cases
}

/// The contents of `vectors/arguments.json`.
pub(crate) fn arguments() -> Value {
    let cases = [
        number_cases(),
        layout_cases(),
        node_map_cases(),
        option_cases(),
        format_cases(),
    ]
    .concat();
    json!({
        "_comment": "How every binding converts a loosely typed argument (docs/SEMANTICS.md, \"Arguments\"). \
            `value` is the argument as the caller's language has it: {\"int\": decimal text of any size} \
            (a JavaScript bigint, a Python int), {\"float\": number, or \"NaN\", \"Infinity\", \"-Infinity\", \"-0\"} \
            (a JavaScript number, a Python float), {\"str\": ..}, {\"bool\": ..}, {\"absent\": true} \
            (undefined/None), {\"map\": [[key, value], ...]} (an object, a dict or keyword arguments), \
            {\"other\": \"list\"} (an array, a list). `arg` says where it goes, under the twitter layout, \
            datacenter 1, worker 1 unless the argument is that, at t = 1700000000000 ms: \
            `id`: format it as decimal (expect: the decimal string); `time`: the ID bounds of that time \
            (expect: [lo, hi]); `sequence`: compose(t, value, nodes) (absent: the default, 0); `node`: compose(t, 0, {datacenter: 1, \
            worker: value}); `count`: next_ids(value) on a thread-safe generator (expect: how many); \
            `layout`: id_bounds(t) under that layout; `nodes`: compose(t, 0, value); `options`: the first \
            ID of a pure generator with these options at t; `format`: format_id(1541815603606036480, value). \
            Either `expect` or `error` (code) and `class` (`type`: a TypeError in JavaScript and Python; \
            `range`: a RangeError in JavaScript, a ValueError in Python; `value`: an Error in JavaScript, a \
            ValueError in Python).",
        "cases": cases,
    })
}
