//! Runs every case of every file in `vectors/` (linked from `tests/data/`, so
//! the packaged crate carries them) against the core.
//!
//! The files are read with `include_str!`, so these tests need no file system
//! at run time and would also run on wasm.

use serde_json::Value;
use snowmint::{Error, FieldKind, Format, Id, Layout, Next, Options, PureGenerator};

fn load(text: &str) -> Value {
    serde_json::from_str(text).expect("vector file is JSON")
}

fn u(v: &Value) -> u64 {
    match v {
        Value::String(s) => s.parse().expect("decimal string"),
        Value::Number(n) => n.as_u64().expect("unsigned integer"),
        other => panic!("not an integer: {other}"),
    }
}

fn code<T: std::fmt::Debug>(r: Result<T, Error>) -> String {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.code().to_string(),
    }
}

fn nodes_of(layout: &Layout, m: &Value) -> Result<snowmint::Nodes, Error> {
    let pairs: Vec<(&str, u64)> = m
        .as_object()
        .expect("nodes object")
        .iter()
        .map(|(k, v)| (k.as_str(), u(v)))
        .collect();
    layout.nodes_from_pairs(pairs)
}

#[test]
fn layouts() {
    let v = load(include_str!("data/layouts.json"));
    let cases = v["cases"].as_array().unwrap();
    assert!(cases.len() > 30);
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let parsed = Layout::parse(c["layout"].as_str().unwrap());
        if let Some(now) = c.get("now_ms") {
            let l = parsed.unwrap();
            assert_eq!(code(l.check_epoch(u(now))), c["error"], "{name}");
            continue;
        }
        if let Some(err) = c.get("error") {
            assert_eq!(code(parsed), *err, "{name}");
            continue;
        }
        let l = parsed.unwrap_or_else(|e| panic!("{name}: {e}"));
        let e = &c["expect"];
        assert_eq!(l.to_json(), e["json"], "{name}");
        assert_eq!(
            Layout::from_json(&l.to_json()).unwrap(),
            l,
            "{name}: JSON round trip"
        );
        assert_eq!(l.epoch_ms(), u(&e["epoch_ms"]), "{name}");
        assert_eq!(l.time_unit_ms(), u(&e["time_unit_ms"]), "{name}");
        assert_eq!(l.total_bits() as u64, u(&e["total_bits"]), "{name}");
        assert_eq!(l.max_id(), u(&e["max_id"]), "{name}");
        assert_eq!(l.time_end_ms(), u(&e["time_end_ms"]), "{name}");
        assert_eq!(l.i64_end_ms(), u(&e["i64_end_ms"]), "{name}");
        assert_eq!(l.js_safe_end_ms(), u(&e["js_safe_end_ms"]), "{name}");
        assert_eq!(l.preset_name(), e["preset_name"].as_str(), "{name}");
        let fields = e["fields"].as_array().unwrap();
        assert_eq!(l.fields().len(), fields.len(), "{name}");
        for (f, want) in l.fields().iter().zip(fields) {
            assert_eq!(f.name(), want["name"], "{name}");
            assert_eq!(f.bits() as u64, u(&want["bits"]), "{name}");
            assert_eq!(f.shift() as u64, u(&want["shift"]), "{name}");
            let kind = match f.kind() {
                FieldKind::Timestamp => "timestamp",
                FieldKind::Sequence => "sequence",
                FieldKind::Node => "node",
            };
            assert_eq!(kind, want["kind"], "{name}");
        }
    }
}

#[test]
fn ids() {
    let v = load(include_str!("data/ids.json"));
    for c in v["decode"].as_array().unwrap() {
        let l = Layout::parse(c["layout"].as_str().unwrap()).unwrap();
        let id = u(&c["id"]);
        let mut f = [0.0; 8];
        if let Some(err) = c.get("error") {
            assert_eq!(code(l.decompose(id)), *err, "decode {c}");
            assert_eq!(code(l.decompose_f64(id, &mut f)), *err, "decode {c}");
            continue;
        }
        let p = l.decompose(id).unwrap();
        // The f64 form (for the JavaScript bindings) says the same.
        assert_eq!(l.decompose_f64(id, &mut f), Ok(2 + l.node_count()), "{c}");
        let mut want_f = vec![p.timestamp_ms() as f64, p.sequence() as f64];
        want_f.extend(p.nodes().iter().map(|&v| v as f64));
        assert_eq!(&f[..want_f.len()], &want_f[..], "{c}");
        let e = &c["expect"];
        assert_eq!(p.timestamp_ms(), u(&e["timestamp_ms"]), "{c}");
        assert_eq!(p.sequence(), u(&e["sequence"]), "{c}");
        let want: Vec<u64> = l.nodes().map(|f| u(&e["nodes"][f.name()])).collect();
        assert_eq!(p.nodes(), &want[..], "{c}");
        assert_eq!(e["nodes"].as_object().unwrap().len(), l.node_count(), "{c}");
        let mut b = [0u8; 20];
        assert_eq!(
            Id::new(id).encode(Format::Base32, &mut b),
            e["base32"],
            "{c}"
        );
        let (lo, hi) = l.id_bounds(p.timestamp_ms()).unwrap();
        assert_eq!([lo, hi], [u(&e["bounds"][0]), u(&e["bounds"][1])], "{c}");
        assert!(lo <= id && id <= hi);
    }
    for c in v["compose"].as_array().unwrap() {
        let l = Layout::parse(c["layout"].as_str().unwrap()).unwrap();
        let r = nodes_of(&l, &c["nodes"])
            .and_then(|n| l.compose(u(&c["timestamp_ms"]), u(&c["sequence"]), &n));
        match c.get("error") {
            Some(err) => assert_eq!(code(r), *err, "compose {c}"),
            None => assert_eq!(r.unwrap(), u(&c["expect"]), "compose {c}"),
        }
    }
    for c in v["bounds"].as_array().unwrap() {
        let l = Layout::parse(c["layout"].as_str().unwrap()).unwrap();
        let r = l.id_bounds(u(&c["timestamp_ms"]));
        match c.get("error") {
            Some(err) => assert_eq!(code(r), *err, "bounds {c}"),
            None => {
                let (lo, hi) = r.unwrap();
                assert_eq!([lo, hi], [u(&c["expect"][0]), u(&c["expect"][1])], "{c}");
            }
        }
    }
    for c in v["fits"].as_array().unwrap() {
        let id = u(&c["id"]);
        let now = u(&c["now_ms"]);
        let names: Vec<&str> = Layout::PRESETS
            .iter()
            .copied()
            .filter(|n| Layout::preset(n).unwrap().is_plausible(id, now))
            .collect();
        let want: Vec<&str> = c["expect"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        assert_eq!(names, want, "{c}");
    }
}

#[test]
fn strings() {
    let v = load(include_str!("data/strings.json"));
    for c in v["encode"].as_array().unwrap() {
        let id = Id::new(u(&c["id"]));
        for f in Format::ALL {
            let mut b = [0u8; 20];
            let s = id.encode(f, &mut b).to_string();
            assert_eq!(s, c[f.name()], "{c}");
            assert_eq!(Id::parse(&s, f).unwrap(), id, "{c}: round trip");
        }
    }
    for c in v["parse"].as_array().unwrap() {
        let r = Format::from_name(c["format"].as_str().unwrap())
            .and_then(|f| Id::parse(c["input"].as_str().unwrap(), f));
        match c.get("error") {
            Some(err) => assert_eq!(code(r), *err, "{c}"),
            None => assert_eq!(r.unwrap().get(), u(&c["expect"]), "{c}"),
        }
    }
    for c in v["js_numbers"].as_array().unwrap() {
        let n: f64 = match c["number"].as_str().unwrap() {
            "NaN" => f64::NAN,
            "Infinity" => f64::INFINITY,
            s => s.parse().unwrap(),
        };
        let r = Id::from_f64(n);
        match c.get("error") {
            Some(err) => assert_eq!(code(r), *err, "{c}"),
            None => assert_eq!(r.unwrap().get(), u(&c["expect"]), "{c}"),
        }
    }
}

#[test]
fn generate() {
    let v = load(include_str!("data/generate.json"));
    let cases = v["cases"].as_array().unwrap();
    assert!(cases.len() > 20);
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let l = Layout::parse(c["layout"].as_str().unwrap()).unwrap();
        let o = &c["options"];
        let built = nodes_of(&l, &c["nodes"]).and_then(|n| {
            let mut opts = Options::from_policies(
                o["clock_backwards"].as_str(),
                o["sequence_exhausted"].as_str(),
                o["sequence_start"].as_str(),
            )?;
            opts.seed = u(&o["seed"]);
            opts.resume_after = o.get("resume_after").map(|v| Id::new(u(v)));
            PureGenerator::new(l, n, opts)
        });
        if let Some(err) = c.get("error") {
            assert_eq!(code(built), *err, "{name}");
            continue;
        }
        let mut g = built.unwrap_or_else(|e| panic!("{name}: {e}"));
        for (i, s) in c["steps"].as_array().unwrap().iter().enumerate() {
            if let Some(until) = s.get("reserve_until_ms") {
                g.reserve_until(until.as_u64());
                continue;
            }
            let got = g.next(u(&s["now_ms"]));
            if let Some(id) = s.get("id") {
                assert_eq!(got, Ok(Next::Id(Id::new(u(id)))), "{name} step {i}");
            } else if let Some(at) = s.get("retry_at") {
                assert_eq!(got, Ok(Next::RetryAt(u(at))), "{name} step {i}");
            } else {
                assert_eq!(code(got), s["error"], "{name} step {i}");
            }
        }
    }
}

#[test]
fn codes() {
    let v = load(include_str!("data/codes.json"));
    let want: Vec<&str> = v["codes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(want, Error::ALL_CODES);
}
