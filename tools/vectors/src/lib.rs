//! Builds the shared test vectors (`vectors/*.json`) from the core.
//!
//! The inputs are written here by hand; the expected outputs are computed by
//! the core, except for the facts checked against the outside world first
//! (`known_facts`), which the builder asserts before writing anything. Every
//! language's test suite then runs these files, so all bindings agree with
//! the core and with each other.

use serde_json::{json, Map, Value};
use snowmint::{Format, Id, Layout, Next, Options, PureGenerator};

/// The command that rewrites the files; stale-file errors print it.
pub const REGEN: &str = "cargo run -p snowmint-vectors";

/// Every vector file: (file name, contents).
pub fn all() -> Vec<(&'static str, Value)> {
    known_facts();
    vec![
        ("layouts.json", layouts()),
        ("ids.json", ids()),
        ("strings.json", strings()),
        ("generate.json", generate()),
        ("codes.json", codes()),
        ("arguments.json", arguments()),
        ("mask.json", mask()),
    ]
}

/// The file's text as written to disk.
pub fn render(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).expect("JSON values always serialize");
    s.push('\n');
    s
}

fn layout_of(spec: &str) -> Layout {
    Layout::parse(spec).unwrap_or_else(|e| panic!("vector layout {spec}: {e}"))
}

fn nodes_json(layout: &Layout, values: &[u64]) -> Value {
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

fn layouts() -> Value {
    let mut cases = Vec::new();
    for name in Layout::PRESETS {
        let l = Layout::preset(name).unwrap();
        cases.push(
            json!({"name": format!("preset {name}"), "layout": name, "expect": layout_info(&l)}),
        );
    }
    let valid = [
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
    for (name, desc) in valid {
        cases.push(json!({"name": name, "layout": desc, "expect": layout_info(&layout_of(desc))}));
    }
    let invalid: &[(&str, &str)] = &[
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
    for (name, desc) in invalid {
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

fn decode_case(l: &Layout, spec: &str, id: u64) -> Value {
    match l.decompose(id) {
        Ok(p) => {
            let (lo, hi) = l.id_bounds(p.timestamp_ms()).unwrap();
            let mut b = [0u8; 20];
            json!({
                "layout": spec,
                "id": id.to_string(),
                "expect": {
                    "timestamp_ms": p.timestamp_ms(),
                    "sequence": p.sequence(),
                    "nodes": nodes_json(l, p.nodes()),
                    "base32": Id::new(id).encode(Format::Base32, &mut b).to_string(),
                    "bounds": [lo.to_string(), hi.to_string()],
                }
            })
        }
        Err(e) => json!({"layout": spec, "id": id.to_string(), "error": e.code()}),
    }
}

fn ids() -> Value {
    let mut decode = vec![
        decode_case(&layout_of("discord"), "discord", 175928847299117063),
        decode_case(&layout_of("twitter"), "twitter", 1541815603606036480),
    ];
    let mut compose = Vec::new();
    let mut bounds = Vec::new();
    let nowish = 1763812800000u64; // 2025-11-22T12:00:00Z
    for name in Layout::PRESETS {
        let l = layout_of(name);
        let maxes: Vec<u64> = l.nodes().map(|f| f.max()).collect();
        let ones: Vec<u64> = l.nodes().map(|f| 1.min(f.max())).collect();
        let t = if l.time_end_ms() <= nowish {
            1700000000000
        } else {
            nowish.max(l.epoch_ms())
        };
        let last = l.time_end_ms() - l.time_unit_ms();
        let plan: [(u64, u64, &[u64]); 4] = [
            (l.epoch_ms(), 0, &ones),
            (t + 7, 5, &ones),
            (t + 1234, l.sequence().max(), &maxes),
            (last, l.sequence().max(), &maxes),
        ];
        for (time, seq, nodes) in plan {
            let n = l.nodes_from_values(nodes).unwrap();
            let id = l.compose(time, seq, &n).unwrap();
            compose.push(json!({"layout": name, "timestamp_ms": time, "sequence": seq, "nodes": nodes_json(&l, nodes), "expect": id.to_string()}));
            decode.push(decode_case(&l, name, id.get()));
        }
        // Errors.
        let n = l.nodes_from_values(&ones).unwrap();
        let e = l.compose(l.epoch_ms().wrapping_sub(1), 0, &n);
        if l.epoch_ms() > 0 {
            compose.push(json!({"layout": name, "timestamp_ms": l.epoch_ms() - 1, "sequence": 0, "nodes": nodes_json(&l, &ones), "error": e.unwrap_err().code()}));
        }
        let e = l.compose(l.time_end_ms(), 0, &n).unwrap_err();
        compose.push(json!({"layout": name, "timestamp_ms": l.time_end_ms(), "sequence": 0, "nodes": nodes_json(&l, &ones), "error": e.code()}));
        let e = l.compose(t, l.sequence().max() + 1, &n).unwrap_err();
        compose.push(json!({"layout": name, "timestamp_ms": t, "sequence": l.sequence().max() + 1, "nodes": nodes_json(&l, &ones), "error": e.code()}));
        if let Some(f) = l.node(0) {
            let mut m = nodes_json(&l, &ones);
            m[f.name()] = json!(f.max() + 1);
            compose.push(json!({"layout": name, "timestamp_ms": t, "sequence": 0, "nodes": m, "error": "node_out_of_range"}));
            let mut m = nodes_json(&l, &ones);
            m.as_object_mut().unwrap().remove(f.name());
            compose.push(json!({"layout": name, "timestamp_ms": t, "sequence": 0, "nodes": m, "error": "missing_node"}));
        }
        let mut m = nodes_json(&l, &ones);
        m["bogus"] = json!(1);
        compose.push(json!({"layout": name, "timestamp_ms": t, "sequence": 0, "nodes": m, "error": "unknown_field"}));
        if l.total_bits() < 64 {
            decode.push(decode_case(&l, name, l.max_id().get() + 1));
            decode.push(decode_case(&l, name, u64::MAX));
        }
        for time in [l.epoch_ms(), t, t + 999, last] {
            let (lo, hi) = l.id_bounds(time).unwrap();
            bounds.push(json!({"layout": name, "timestamp_ms": time, "expect": [lo.to_string(), hi.to_string()]}));
        }
        if l.epoch_ms() > 0 {
            let e = l.id_bounds(l.epoch_ms() - 1).unwrap_err();
            bounds
                .push(json!({"layout": name, "timestamp_ms": l.epoch_ms() - 1, "error": e.code()}));
        }
        let e = l.id_bounds(l.time_end_ms()).unwrap_err();
        bounds.push(json!({"layout": name, "timestamp_ms": l.time_end_ms(), "error": e.code()}));
    }
    // "Which layout fits?": presets under which an ID decodes to a time
    // between the epoch and a day after now_ms.
    let mut fits = Vec::new();
    for id in [
        175928847299117063u64,
        1541815603606036480,
        7234567890123456789,
        115740947451117568,
    ] {
        let names: Vec<&str> = Layout::PRESETS
            .iter()
            .copied()
            .filter(|n| layout_of(n).is_plausible(id, nowish))
            .collect();
        fits.push(json!({"id": id.to_string(), "now_ms": nowish, "expect": names}));
    }
    json!({
        "_comment": "Compose, decompose, ID bounds and plausibility. IDs are decimal strings (JSON numbers lose \
            precision above 2^53 in JavaScript); times are Unix ms. `layout` is read as in layouts.json. \
            `decode`: decompose `id`; `expect` has `timestamp_ms` (start of the ID's time unit), `sequence`, \
            `nodes` (node field name -> value), `base32` (the ID's base32 form) and `bounds` (the smallest and \
            largest IDs of the same time unit, as decimal strings); or `error` is the code. `compose`: build an \
            ID from `timestamp_ms`, `sequence` and `nodes` (by name); `expect` is the ID or `error` the code. \
            `bounds`: the smallest and largest IDs whose time unit contains `timestamp_ms`, or `error`. \
            `fits`: the presets, in preset order, under which `id` decodes to a time between the layout's \
            epoch and `now_ms` plus one day (the decoder page's \"which layout fits?\").",
        "decode": decode,
        "compose": compose,
        "bounds": bounds,
        "fits": fits,
    })
}

fn strings() -> Value {
    let mut encode = Vec::new();
    for id in [
        0u64,
        1,
        31,
        32,
        61,
        62,
        1 << 53,
        (1 << 53) - 1,
        (1 << 63) - 1,
        1 << 63,
        u64::MAX,
        175928847299117063,
        1541815603606036480,
    ] {
        let mut m = Map::new();
        m.insert("id".into(), json!(id.to_string()));
        for f in Format::ALL {
            let mut b = [0u8; 20];
            m.insert(f.name().into(), json!(Id::new(id).encode(f, &mut b)));
        }
        encode.push(Value::Object(m));
    }
    let parse_inputs: &[(&str, &str)] = &[
        ("decimal", "0"),
        ("decimal", "00042"),
        ("decimal", "18446744073709551615"),
        ("decimal", "18446744073709551616"),
        ("decimal", "99999999999999999999999"),
        ("decimal", ""),
        ("decimal", "-1"),
        ("decimal", "+1"),
        ("decimal", " 1"),
        ("decimal", "1 "),
        ("decimal", "1e5"),
        ("decimal", "0x10"),
        ("decimal", "12.0"),
        ("decimal", "١٢٣"),
        ("base32", "1ASD13XH1F800"),
        ("base32", "1asd13xh1f800"),
        ("base32", "0000000000001"),
        ("base32", "OOOOOOOOOOOOI"),
        ("base32", "000000000000l"),
        ("base32", "FZZZZZZZZZZZZ"),
        ("base32", "G000000000000"),
        ("base32", "ZZZZZZZZZZZZZ"),
        ("base32", "000000000000U"),
        ("base32", "1ASD13XH1F80"),
        ("base32", "1ASD13XH1F8000"),
        ("base32", ""),
        ("base32", "1ASD13XH1F80-"),
        ("base62", "00000000001"),
        ("base62", "LygHa16AHYF"),
        ("base62", "LygHa16AHYG"),
        ("base62", "zzzzzzzzzzz"),
        ("base62", "0000000000"),
        ("base62", "0000000000_"),
        ("hex", "ff"),
    ];
    let mut parse = Vec::new();
    for (fmt, input) in parse_inputs {
        let r = Format::from_name(fmt).and_then(|f| Id::parse(input, f));
        parse.push(match r {
            Ok(id) => json!({"format": fmt, "input": input, "expect": id.get().to_string()}),
            Err(e) => json!({"format": fmt, "input": input, "error": e.code()}),
        });
    }
    let numbers: &[f64] = &[
        0.0,
        42.0,
        9007199254740991.0,
        9007199254740992.0,
        1e300,
        -1.0,
        1.5,
        f64::NAN,
        f64::INFINITY,
    ];
    let mut js_numbers = Vec::new();
    for &n in numbers {
        let label = if n.is_nan() {
            "NaN".to_string()
        } else if n.is_infinite() {
            "Infinity".to_string()
        } else {
            format!("{n}")
        };
        js_numbers.push(match Id::from_f64(n) {
            Ok(id) => json!({"number": label, "expect": id.get().to_string()}),
            Err(e) => json!({"number": label, "error": e.code()}),
        });
    }
    json!({
        "_comment": "String forms. `encode`: for each `id` (decimal string), its `decimal`, `base32` (Crockford, \
            13 characters, upper case) and `base62` (11 characters, 0-9A-Za-z) forms. `parse`: reading `input` \
            in `format` gives `expect` (decimal string) or `error` (code); an unknown format name is an error \
            too. `js_numbers`: what the JavaScript bindings do with a `number` argument, written as JavaScript \
            source text (`NaN`, `Infinity`, `1e+300`): only safe integers are IDs, anything that may already \
            have been rounded is an error.",
        "encode": encode,
        "parse": parse,
        "js_numbers": js_numbers,
    })
}

struct Script {
    name: &'static str,
    layout: &'static str,
    nodes: Vec<(&'static str, u64)>,
    policies: [Option<&'static str>; 3],
    seed: u64,
    resume_after: Option<u64>,
    times: Vec<u64>,
}

/// Runs a script; `reserve` sets the reservation (`reserve_until`) before
/// the step of that index (`None` removes it).
fn run_script(s: &Script, reserve: &[(usize, Option<u64>)]) -> Value {
    let l = layout_of(s.layout);
    let mut options = json!({});
    for (key, v) in ["clock_backwards", "sequence_exhausted", "sequence_start"]
        .iter()
        .zip(s.policies)
    {
        if let Some(v) = v {
            options[*key] = json!(v);
        }
    }
    options["seed"] = json!(s.seed.to_string());
    if let Some(r) = s.resume_after {
        options["resume_after"] = json!(r.to_string());
    }
    let mut nodes = Map::new();
    for (k, v) in &s.nodes {
        nodes.insert(k.to_string(), json!(v));
    }
    let mut case = json!({"name": s.name, "layout": s.layout, "nodes": nodes, "options": options});
    let built = l.nodes_from_pairs(s.nodes.iter().copied()).and_then(|n| {
        let mut o = Options::from_policies(s.policies[0], s.policies[1], s.policies[2])?;
        o.seed = s.seed;
        o.resume_after = s.resume_after.map(Id::new);
        PureGenerator::new(l, n, o)
    });
    let mut g = match built {
        Ok(g) => g,
        Err(e) => {
            case["error"] = json!(e.code());
            return case;
        }
    };
    let mut steps = Vec::new();
    for (i, &now) in s.times.iter().enumerate() {
        for &(_, until) in reserve.iter().filter(|(at, _)| *at == i) {
            g.reserve_until(until);
            steps.push(json!({"reserve_until_ms": until}));
        }
        steps.push(match g.next(now) {
            Ok(Next::Id(id)) => json!({"now_ms": now, "id": id.get().to_string()}),
            Ok(Next::RetryAt(at)) => json!({"now_ms": now, "retry_at": at}),
            Err(e) => json!({"now_ms": now, "error": e.code()}),
        });
    }
    case["steps"] = json!(steps);
    case
}

fn generate() -> Value {
    const T: u64 = 1763812800000; // 2025-11-22T12:00:00Z
    const H: u64 = 3_600_000;
    let tw = || vec![("datacenter", 1), ("worker", 3)];
    // 2 sequence bits: 4 IDs per unit, so exhaustion shows in a few steps.
    const SMALL: &str =
        r#"{"epoch_ms":1700000000000,"fields":[["timestamp",41],["node",4],["sequence",2]]}"#;
    // A layout whose time field ends soon after its epoch (16 units of 1 s).
    const SHORT: &str = r#"{"epoch_ms":1700000000000,"time_unit_ms":1000,"fields":[["timestamp",4],["sequence",2]]}"#;
    let zero = [Some("fail"), Some("wait"), Some("zero")];
    // The last ID of a previous run: 3 ms after the times of the steps below.
    let twitter = layout_of("twitter");
    let resume = twitter
        .compose(
            T + 10_000_003,
            7,
            &twitter.nodes_from_values(&[1, 3]).unwrap(),
        )
        .unwrap()
        .get();
    let scripts = vec![
        Script {
            name: "twitter: same ms counts up, new ms restarts at 0",
            layout: "twitter",
            nodes: tw(),
            policies: zero,
            seed: 0,
            resume_after: None,
            times: vec![T, T, T, T + 1, T + 5, T + 5],
        },
        Script {
            name: "exhausted, wait: retry at the next unit",
            layout: SMALL,
            nodes: vec![("node", 9)],
            policies: zero,
            seed: 0,
            resume_after: None,
            times: vec![T, T, T, T, T, T, T + 1, T + 1],
        },
        Script {
            name: "exhausted, borrow:2: runs up to 2 units ahead, then waits",
            layout: SMALL,
            nodes: vec![("node", 9)],
            policies: [Some("fail"), Some("borrow:2"), Some("zero")],
            seed: 0,
            resume_after: None,
            times: vec![T; 14]
                .into_iter()
                .chain([T + 1, T + 1, T + 3])
                .collect(),
        },
        Script {
            name: "clock back 1 ms, fail",
            layout: "twitter",
            nodes: tw(),
            policies: zero,
            seed: 0,
            resume_after: None,
            times: vec![T, T - 1, T, T],
        },
        Script {
            name: "clock back 3 ms, wait:5: retry at the last ID's ms",
            layout: "twitter",
            nodes: tw(),
            policies: [Some("wait:5"), Some("wait"), Some("zero")],
            seed: 0,
            resume_after: None,
            times: vec![T + 3, T, T + 2, T + 3, T + 4],
        },
        Script {
            name: "clock back 6 ms, wait:5: fails",
            layout: "twitter",
            nodes: tw(),
            policies: [Some("wait:5"), Some("wait"), Some("zero")],
            seed: 0,
            resume_after: None,
            times: vec![T + 6, T, T + 1, T + 6],
        },
        Script {
            name: "clock back an hour, wait:5: fails until the clock catches up",
            layout: "twitter",
            nodes: tw(),
            policies: [Some("wait:5"), Some("wait"), Some("zero")],
            seed: 0,
            resume_after: None,
            times: vec![T, T - H, T - 5, T + 1],
        },
        Script {
            name: "clock back 3 ms, borrow:10: keeps issuing on the last ms",
            layout: "twitter",
            nodes: tw(),
            policies: [Some("borrow:10"), Some("wait"), Some("zero")],
            seed: 0,
            resume_after: None,
            times: vec![T + 3, T, T + 1, T + 4],
        },
        Script {
            name: "clock back, borrow:2 with 4 IDs per unit: borrows units, then waits, then fails",
            layout: SMALL,
            nodes: vec![("node", 1)],
            policies: [Some("borrow:2"), Some("wait"), Some("zero")],
            seed: 0,
            resume_after: None,
            times: vec![
                T + 2,
                T + 2,
                T + 1,
                T + 1,
                T + 1,
                T + 1,
                T + 1,
                T + 1,
                T + 1,
                T + 1,
                T + 1,
                T + 1,
                T - 5,
            ],
        },
        Script {
            name: "clock back an hour, borrow:10: fails",
            layout: "twitter",
            nodes: tw(),
            policies: [Some("borrow:10"), Some("wait"), Some("zero")],
            seed: 0,
            resume_after: None,
            times: vec![T, T - H],
        },
        Script {
            name: "random:16 start, seed 42",
            layout: "twitter",
            nodes: tw(),
            policies: [Some("fail"), Some("wait"), Some("random:16")],
            seed: 42,
            resume_after: None,
            times: vec![T, T, T + 1, T + 2, T + 3, T + 4, T + 5, T + 6, T + 7],
        },
        Script {
            name: "random:100 start (Leaf's bound), seed 7",
            layout: "leaf",
            nodes: vec![("worker", 5)],
            policies: [Some("fail"), Some("wait"), Some("random:100")],
            seed: 7,
            resume_after: None,
            times: vec![T, T + 1, T + 2, T + 3, T + 3],
        },
        Script {
            name: "random bound above the sequence range is capped",
            layout: SMALL,
            nodes: vec![("node", 2)],
            policies: [Some("fail"), Some("wait"), Some("random:1000")],
            seed: 3,
            resume_after: None,
            times: vec![T, T + 1, T + 2, T + 3, T + 4],
        },
        Script {
            name: "cycle:2 start (vibration)",
            layout: "shardingsphere",
            nodes: vec![("worker", 7)],
            policies: [Some("fail"), Some("wait"), Some("cycle:2")],
            seed: 0,
            resume_after: None,
            times: vec![T, T + 1, T + 2, T + 3, T + 3],
        },
        Script {
            name: "default options, seed 1",
            layout: "twitter",
            nodes: tw(),
            policies: [None, None, None],
            seed: 1,
            resume_after: None,
            times: vec![T, T, T + 1, T - 2, T + 1],
        },
        Script {
            name: "sonyflake: 10 ms units, machine last, retry at unit boundary",
            layout: "sonyflake",
            nodes: vec![("machine", 513)],
            policies: zero,
            seed: 0,
            resume_after: None,
            times: vec![T + 3, T + 9, T + 10, T + 25, T + 12],
        },
        Script {
            name: "baidu ran out on 2024-11-20: time_overflow",
            layout: "baidu",
            nodes: vec![("worker", 1)],
            policies: zero,
            seed: 0,
            resume_after: None,
            times: vec![T, 1732109055999, 1732109056000],
        },
        Script {
            name: "before the epoch",
            layout: "sonyflake-v2",
            nodes: vec![("machine", 1)],
            policies: zero,
            seed: 0,
            resume_after: None,
            times: vec![1735689599999, 1735689600000],
        },
        Script {
            name: "short layout: last unit, then overflow; exhaustion in the last unit overflows",
            layout: SHORT,
            nodes: vec![],
            policies: [Some("fail"), Some("borrow:5"), Some("zero")],
            seed: 0,
            resume_after: None,
            times: vec![
                1700000014000,
                1700000015999,
                1700000015999,
                1700000015999,
                1700000015999,
                1700000015999,
                1700000016000,
            ],
        },
        Script {
            name: "resume_after: continue above the last run's ID",
            layout: "twitter",
            nodes: tw(),
            policies: [Some("wait:5"), Some("wait"), Some("zero")],
            seed: 0,
            resume_after: Some(resume),
            times: vec![T + 10_000_000, T + 10_000_003, T + 10_000_010],
        },
        Script {
            name: "node out of range",
            layout: "twitter",
            nodes: vec![("datacenter", 32), ("worker", 3)],
            policies: zero,
            seed: 0,
            resume_after: None,
            times: vec![],
        },
        Script {
            name: "missing node",
            layout: "twitter",
            nodes: vec![("worker", 3)],
            policies: zero,
            seed: 0,
            resume_after: None,
            times: vec![],
        },
        Script {
            name: "unknown node field",
            layout: "twitter",
            nodes: vec![("datacenter", 1), ("worker", 3), ("rack", 1)],
            policies: zero,
            seed: 0,
            resume_after: None,
            times: vec![],
        },
        Script {
            name: "bad policy: wait without N",
            layout: "twitter",
            nodes: tw(),
            policies: [Some("wait"), None, None],
            seed: 0,
            resume_after: None,
            times: vec![],
        },
        Script {
            name: "bad policy: random:0",
            layout: "twitter",
            nodes: tw(),
            policies: [None, None, Some("random:0")],
            seed: 0,
            resume_after: None,
            times: vec![],
        },
        Script {
            name: "bad policy: borrow:-1",
            layout: "twitter",
            nodes: tw(),
            policies: [None, Some("borrow:-1"), None],
            seed: 0,
            resume_after: None,
            times: vec![],
        },
        Script {
            name: "resume_after wider than the layout",
            layout: "twitter",
            nodes: tw(),
            policies: zero,
            seed: 0,
            resume_after: Some(1 << 63),
            times: vec![],
        },
    ];
    let mut cases: Vec<Value> = scripts.iter().map(|s| run_script(s, &[])).collect();
    // Reservations (a lease's confirmed high-water mark): never an ID in a
    // time unit past it, whatever the policies would allow.
    let reserved = [
        (
            Script {
                name: "reservation: IDs up to its unit, lease_expired after, raised, removed",
                layout: "twitter",
                nodes: tw(),
                policies: zero,
                seed: 0,
                resume_after: None,
                times: vec![T, T + 5, T + 6, T + 7, T + 7, T + 20, T + 21, T + 30],
            },
            vec![(0, Some(T + 5)), (4, Some(T + 20)), (7, None)],
        ),
        (
            Script {
                name: "reservation: a unit of 1 s holds the reserved ms (sonyflake)",
                layout: "sonyflake",
                nodes: vec![("machine", 7)],
                policies: zero,
                seed: 0,
                resume_after: None,
                times: vec![T, T + 9, T + 10, T + 999, T + 1_000],
            },
            vec![(0, Some(T + 10))],
        ),
        (
            Script {
                name: "reservation: borrowing stops at it (exhausted, borrow:2)",
                layout: SMALL,
                nodes: vec![("node", 9)],
                policies: [Some("fail"), Some("borrow:2"), Some("zero")],
                seed: 0,
                resume_after: None,
                times: vec![T; 10],
            },
            vec![(0, Some(T + 1))],
        ),
        (
            Script {
                name: "reservation: the clock waiting back (wait:5) is still refused past it",
                layout: "twitter",
                nodes: tw(),
                policies: [Some("wait:5"), Some("wait"), Some("zero")],
                seed: 0,
                resume_after: None,
                times: vec![T, T + 8, T + 3, T + 8],
            },
            vec![(0, Some(T + 8)), (2, Some(T + 2))],
        ),
        (
            Script {
                name: "reservation: before the epoch, nothing may be issued",
                layout: "twitter",
                nodes: tw(),
                policies: zero,
                seed: 0,
                resume_after: None,
                times: vec![T, T],
            },
            vec![(0, Some(0)), (1, Some(T))],
        ),
    ];
    cases.extend(reserved.iter().map(|(s, r)| run_script(s, r)));
    json!({
        "_comment": "Generation scripts for the pure generator (the clock is injected). Build a generator from \
            `layout` (as in layouts.json), `nodes` (field name -> value) and `options`: `clock_backwards`, \
            `sequence_exhausted`, `sequence_start` (policy strings; an absent key means the default), `seed` \
            (decimal string; the pure generator uses it as given, 0 included) and `resume_after` (decimal \
            string, optional). If the case has `error`, building must fail with that code. Otherwise feed each \
            step's `now_ms` (Unix ms) in order and expect exactly one of: `id` (decimal string), `retry_at` \
            (no ID before that Unix ms; the state is unchanged) or `error` (the code; the state is unchanged). \
            A step with `reserve_until_ms` instead of `now_ms` sets the generator's reservation \
            (`reserve_until`: IDs only in time units up to the one holding that Unix ms, `lease_expired` \
            past it; null removes the bound) and expects nothing.",
        "cases": cases,
    })
}

fn codes() -> Value {
    json!({
        "_comment": "Every error code, in a fixed order. Each binding checks that it maps every one of them \
            (to an exception class, an Error code, a C status).",
        "codes": snowmint::Error::ALL_CODES,
    })
}

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

fn arguments() -> Value {
    use Arg::*;
    let twitter = layout_of("twitter");
    let t = 1700000000000u64;
    let nodes = |d: Arg, w: Arg| Map(vec![("datacenter", d), ("worker", w)]);
    let numbers = || {
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
    };
    let mut cases = Vec::new();
    let mut push = |what: &str, arg: &Arg, r: snowmint::Result<Value>| {
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
        cases.push(case);
    };
    let ok_nodes = twitter
        .nodes_from_pairs([("datacenter", 1), ("worker", 1)])
        .unwrap();
    let id_text = |id: Id| json!(id.to_string());

    let mut ids = numbers();
    ids.extend([
        Str(""),
        Str("12a"),
        Str("-1"),
        Str("18446744073709551616"),
        Str("18446744073709551615"),
    ]);
    for a in &ids {
        push("id", a, a.value().to_id().map(id_text));
    }
    for a in &numbers() {
        let r = a.value().to_time_ms().and_then(|ms| twitter.id_bounds(ms));
        push(
            "time",
            a,
            r.map(|(lo, hi)| json!([lo.to_string(), hi.to_string()])),
        );
        let r = a
            .value()
            .to_sequence()
            .and_then(|s| twitter.compose(t, s, &ok_nodes));
        push("sequence", a, r.map(id_text));
        let r = nodes(Int(1), a.clone())
            .value()
            .to_nodes(&twitter)
            .and_then(|n| twitter.compose(t, 0, &n));
        push("node", a, r.map(id_text));
        if !matches!(a, Int(v) if *v > 1000) && !matches!(a, Float(f) if *f > 1000.0) {
            let r = a.value().to_count();
            push("count", a, r.map(|n| json!(n)));
        }
    }
    for a in [Int(0), Int(1 << 32 | 1), Float(4294967297.0)] {
        push("count", &a, a.value().to_count().map(|n| json!(n)));
    }
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
        let r = a.value().to_layout().and_then(|l| l.id_bounds(t));
        push(
            "layout",
            a,
            r.map(|(lo, hi)| json!([lo.to_string(), hi.to_string()])),
        );
    }
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
            .and_then(|n| twitter.compose(t, 0, &n));
        push("nodes", a, r.map(id_text));
    }
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
            let mut g = PureGenerator::new(twitter, ok_nodes, o)?;
            match g.next(t)? {
                Next::Id(id) => Ok(id_text(id)),
                Next::RetryAt(at) => Ok(json!({"retry_at": at})),
            }
        });
        push("options", a, r);
    }
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
        push("format", &a, r);
    }
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

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The public-ID mask: FF1 (radix 2) with AES-128/256 over each layout's
/// bits. The expected outputs come from the core (the `fpe` crate's FF1);
/// core/tests/mask_ff1_spec.rs checks them against an independent
/// implementation of SP 800-38G that passes NIST's samples.
fn mask() -> Value {
    use snowmint::IdMask;
    let key16: Vec<u8> = (0u8..16).collect();
    let key32: Vec<u8> = (0u8..32)
        .map(|i| i.wrapping_mul(37).wrapping_add(11))
        .collect();
    let nist128 = [
        0x2B, 0x7E, 0x15, 0x16, 0x28, 0xAE, 0xD2, 0xA6, 0xAB, 0xF7, 0x15, 0x88, 0x09, 0xCF, 0x4F,
        0x3C,
    ];
    let long_tweak: Vec<u8> = (0u8..40).collect();
    let twenty =
        r#"{"epoch_ms":1700000000000,"fields":[["timestamp",10],["sequence",5],["node",5]]}"#;
    let full = r#"{"epoch_ms":0,"fields":[["timestamp",41],["sequence",12],["node",11]]}"#;
    let tiny = r#"{"epoch_ms":1700000000000,"time_unit_ms":60000,"fields":[["timestamp",20],["sequence",6],["node",4]]}"#;
    let plan: [(&str, &str, &[u8], &[u8]); 10] = [
        ("twitter, AES-128, no tweak", "twitter", &key16, b""),
        (
            "twitter, AES-128, tweak 'orders'",
            "twitter",
            &key16,
            b"orders",
        ),
        (
            "twitter, AES-128, tweak 'users'",
            "twitter",
            &key16,
            b"users",
        ),
        (
            "twitter, AES-256, tweak 'orders'",
            "twitter",
            &key32,
            b"orders",
        ),
        (
            "twitter, NIST sample key, no tweak",
            "twitter",
            &nist128,
            b"",
        ),
        (
            "sonyflake (63 bits), AES-256, no tweak",
            "sonyflake",
            &key32,
            b"",
        ),
        (
            "64 bits (the whole u64), AES-256, tweak of 40 bytes",
            full,
            &key32,
            &long_tweak,
        ),
        (
            "30 bits, AES-128, tweak 'tenant-42'",
            tiny,
            &key16,
            b"tenant-42",
        ),
        (
            "20 bits (the least FF1 allows), AES-128, no tweak",
            twenty,
            &key16,
            b"",
        ),
        ("20 bits, AES-256, tweak 'x'", twenty, &key32, b"x"),
    ];
    let mut cases = Vec::new();
    for (name, spec, key, tweak) in plan {
        let l = layout_of(spec);
        let m = IdMask::new(l, key, tweak).unwrap_or_else(|e| panic!("{name}: {e}"));
        let max = l.max_id().get();
        let mut ids = vec![0, 1, 2, 3, max - 1, max, max >> 1, (max >> 1) + 1];
        // Consecutive IDs from the middle of the space, and a spread.
        let mid = max / 3;
        ids.extend(mid..mid + 4);
        let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ max;
        for _ in 0..4 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ids.push(x & max);
        }
        let pairs: Vec<Value> = ids
            .iter()
            .map(|&id| {
                let p = m.mask(id).unwrap();
                assert_eq!(m.unmask(p).unwrap(), id, "{name}");
                json!({
                    "id": id.to_string(),
                    "public": p.get().to_string(),
                    "base32": p.to_string_in(Format::Base32),
                    "base62": p.to_string_in(Format::Base62),
                })
            })
            .collect();
        cases.push(json!({
            "name": name,
            "layout": spec,
            "key": hex(key),
            "tweak": hex(tweak),
            "pairs": pairs,
        }));
    }
    let nineteen =
        r#"{"epoch_ms":1700000000000,"fields":[["timestamp",10],["sequence",5],["node",4]]}"#;
    let mut errors = Vec::new();
    let mut err = |name: &str, spec: &str, key: &[u8], op: &str, value: Option<u64>| {
        let l = layout_of(spec);
        let r = IdMask::new(l, key, b"");
        let code = match (op, value) {
            ("new", None) => r.map(|_| ()).unwrap_err().code(),
            ("mask", Some(v)) => r.unwrap().mask(v).unwrap_err().code(),
            ("unmask", Some(v)) => r.unwrap().unmask(v).unwrap_err().code(),
            _ => unreachable!(),
        };
        let mut case = json!({"name": name, "layout": spec, "key": hex(key), "tweak": "", "op": op, "error": code});
        if let Some(v) = value {
            case["value"] = json!(v.to_string());
        }
        errors.push(case);
    };
    err("key of 0 bytes", "twitter", &[], "new", None);
    err("key of 15 bytes", "twitter", &key16[..15], "new", None);
    err(
        "key of 24 bytes (AES-192 is not offered)",
        "twitter",
        &key32[..24],
        "new",
        None,
    );
    err("key of 33 bytes", "twitter", &[7; 33], "new", None);
    err(
        "19-bit layout (below FF1's 10^6 values)",
        nineteen,
        &key16,
        "new",
        None,
    );
    err(
        "mask: an ID above the layout's 63 bits",
        "twitter",
        &key16,
        "mask",
        Some(1 << 63),
    );
    err(
        "unmask: a public ID above the layout's 63 bits",
        "twitter",
        &key16,
        "unmask",
        Some(u64::MAX),
    );
    err(
        "mask: an ID above 20 bits",
        twenty,
        &key32,
        "mask",
        Some(1 << 20),
    );
    err(
        "unmask: a public ID above 20 bits",
        twenty,
        &key32,
        "unmask",
        Some(1 << 20),
    );
    json!({
        "_comment": "Public IDs: NIST SP 800-38G FF1 with AES-128 (16-byte key) or AES-256 (32-byte key), \
            radix 2, over the layout's total_bits bits, most significant bit first (NUM_2 of the numeral \
            string is the ID); the tweak is FF1's tweak T. Keys and tweaks are hex; IDs are decimal strings. \
            Each case: `IdMask(layout, key, tweak)`; for every pair, mask(id) == public, unmask(public) == id, \
            and the public ID's base32/base62 strings. Each error: `op` is `new` (the constructor fails), \
            `mask` or `unmask` of `value` (the constructor succeeds, the call fails) with the code `error`.",
        "cases": cases,
        "errors": errors,
    })
}
