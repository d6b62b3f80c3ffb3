//! The ID service's query parameters, as axum hands them to the handlers:
//! `count`, `generator`, `layout=` (a preset or a JSON descriptor), the
//! decode path's ID and Leaf's `snowflakeId`. The input is a query string
//! (after a byte choosing `max_count`), read by axum's `Query` extractor;
//! the raw text also goes to each parser directly.
//!
//! Properties: nothing panics; every error has a stable code from the
//! service's list or the core's table, a 4xx status and a bounded message;
//! a parsed count is within 1..=max and is the decimal given; a generator
//! picked is the one named (or the only one); an accepted layout reads back
//! from its canonical JSON and its preset name; a decoded ID composes back
//! from the fields `/v1/decode` and `/decodeSnowflakeId` report. The same
//! bytes as an HTTP/1.1 request's head go to the fast path's classifier: it
//! takes only GETs whose target the router parses to the same route and key.
#![no_main]

use std::collections::HashMap;
use std::sync::OnceLock;

use axum::extract::Query;
use axum::http::{StatusCode, Uri};
use libfuzzer_sys::fuzz_target;
use serde_json::Value as Json;
use snowmint::{Error, Layout, Value};
use snowmint_lease::AnyGenerator;
use snowmint_server::app::{self, ApiError, AppState, Gen};

#[path = "common.rs"]
mod common;

/// The service's own codes.
const OWN_CODES: [&str; 2] = ["unknown_generator", "missing_generator"];

/// Two servers' states: one generator (`default`, twitter) and two
/// (`orders`, leaf; `users`, sonyflake). Plain generators: no lease.
struct States {
    one: AppState,
    two: AppState,
}

fn gen(name: &str, preset: &str, nodes: &[(&str, u64)]) -> Gen {
    let layout = Layout::preset(preset).unwrap();
    let nodes = Value::Map(
        nodes
            .iter()
            .map(|(n, v)| (n.to_string(), (*v).into()))
            .collect(),
    );
    Gen::new(
        name,
        AnyGenerator::from_values(layout, &nodes, &Value::Absent).unwrap(),
    )
}

fn state(gens: Vec<Gen>) -> AppState {
    AppState::new(gens, 10_000)
}

fn states() -> &'static States {
    static S: OnceLock<States> = OnceLock::new();
    S.get_or_init(|| States {
        one: state(vec![gen(
            "default",
            "twitter",
            &[("datacenter", 1), ("worker", 3)],
        )]),
        two: state(vec![
            gen("orders", "leaf", &[("worker", 5)]),
            gen("users", "sonyflake", &[("machine", 77)]),
        ]),
    })
}

/// An error has a code from the service's list or the core's table, the
/// status that code calls for, and a message that echoes at most a bounded
/// part of the input.
fn check_error(e: &ApiError, allowed: &[&str]) {
    let code = e.code();
    assert!(
        OWN_CODES.contains(&code) || Error::ALL_CODES.contains(&code),
        "unknown code {code}"
    );
    assert!(
        allowed.contains(&code),
        "code {code} not in {allowed:?}: {e:?}"
    );
    let want = if code == "unknown_generator" {
        StatusCode::NOT_FOUND
    } else {
        StatusCode::BAD_REQUEST
    };
    assert_eq!(e.status(), want, "{e:?}");
    assert!(!e.message().is_empty());
    assert!(e.message().len() <= 1024, "a long message: {e:?}");
}

fn check_count(text: Option<&str>, max: u64) {
    match app::parse_count(text, max) {
        Ok(n) => {
            let n = n as u64;
            assert!((1..=max).contains(&n), "count {n} outside 1..={max}");
            match text {
                None => assert_eq!(n, 1),
                Some(t) => {
                    assert!(t.bytes().all(|b| b.is_ascii_digit()), "{t:?} accepted");
                    assert_eq!(t.parse::<u64>(), Ok(n));
                    assert_eq!(
                        app::parse_count(Some(&n.to_string()), max).ok(),
                        Some(n as usize)
                    );
                }
            }
        }
        Err(e) => {
            check_error(&e, &["invalid_option"]);
            // Refused only when it is not a decimal in 1..=max.
            let t = text.expect("an absent count refused");
            let good = !t.is_empty()
                && t.bytes().all(|b| b.is_ascii_digit())
                && t.parse::<u64>().is_ok_and(|n| (1..=max).contains(&n));
            assert!(!good, "count {t:?} (max {max}) refused: {e:?}");
        }
    }
}

fn check_layout(text: &str) -> Option<Layout> {
    match app::parse_layout(text) {
        Ok(l) => {
            common::check_layout(&l);
            assert_eq!(app::parse_layout(&l.to_json()).ok(), Some(l));
            if let Some(name) = l.preset_name() {
                assert_eq!(app::parse_layout(name).ok(), Some(l));
            }
            Some(l)
        }
        Err(e) => {
            check_error(&e, &["invalid_layout", "unknown_preset"]);
            None
        }
    }
}

fn str_field<'a>(v: &'a Json, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} is not a string in {v}"))
}

fn check_decode(layout: &Layout, text: &str) {
    let parsed = snowmint::Id::parse(text, snowmint::Format::Decimal);
    match app::decode_json(layout, text) {
        Ok(v) => {
            let id: u64 = str_field(&v, "id").parse().unwrap();
            assert_eq!(parsed.map(|i| i.get()), Ok(id));
            let ts = v["timestamp_ms"].as_u64().unwrap();
            let seq = v["sequence"].as_u64().unwrap();
            let values: Vec<u64> = layout
                .nodes()
                .map(|f| v[f.name()].as_u64().unwrap())
                .collect();
            let nodes = layout.nodes_from_values(&values).unwrap();
            assert_eq!(layout.compose(ts, seq, &nodes).unwrap().get(), id);
            assert!(str_field(&v, "time").ends_with('Z'));
        }
        Err(e) => check_error(&e, &["invalid_id"]),
    }
    match app::leaf_decode_json(layout, text) {
        Ok(v) => {
            let id = snowmint::Id::parse(text, snowmint::Format::Decimal)
                .unwrap()
                .get();
            let stamp = str_field(&v, "timestamp");
            let (ms, date) = stamp.split_once('(').unwrap();
            assert!(date.ends_with(')') && !date.contains('T'), "{stamp}");
            let ms: u64 = ms.parse().unwrap();
            let seq: u64 = str_field(&v, "sequenceId").parse().unwrap();
            let mut worker: u64 = str_field(&v, "workerId").parse().unwrap();
            // The node bits as one number: split it back, lowest field last.
            let fields: Vec<_> = layout.nodes().collect();
            let mut values = vec![0; fields.len()];
            for (i, f) in fields.iter().enumerate().rev() {
                values[i] = worker & f.max();
                worker = worker.checked_shr(f.bits()).unwrap_or(0);
            }
            assert_eq!(worker, 0, "workerId wider than the node fields");
            let nodes = layout.nodes_from_values(&values).unwrap();
            assert_eq!(layout.compose(ms, seq, &nodes).unwrap().get(), id);
        }
        Err(e) => check_error(&e, &["invalid_id"]),
    }
}

fn check_pick(s: &AppState, name: Option<&str>) {
    match s.pick(name) {
        Ok(g) => match name {
            Some(n) => assert_eq!(g.name, n),
            None => assert_eq!(s.gens.len(), 1),
        },
        Err(e) => {
            check_error(&e, &OWN_CODES);
            match name {
                Some(n) => assert!(s.gens.iter().all(|g| g.name != n)),
                None => assert!(s.gens.len() > 1),
            }
        }
    }
}

fn check_decode_layout(s: &AppState, q: &HashMap<String, String>) {
    match app::decode_layout(
        s,
        q.get("generator").map(String::as_str),
        q.get("layout").map(String::as_str),
    ) {
        Ok(l) => match q.get("layout") {
            Some(t) => assert_eq!(app::parse_layout(t).ok(), Some(l)),
            None => {
                let g = s.pick(q.get("generator").map(String::as_str)).unwrap();
                assert_eq!(*g.gen().config().layout(), l);
            }
        },
        Err(e) => check_error(
            &e,
            &[
                OWN_CODES[0],
                OWN_CODES[1],
                "invalid_layout",
                "unknown_preset",
            ],
        ),
    }
}

/// The HTTP/1.1 fast path takes only what the router routes to the same
/// place: a GET over HTTP/1.1 whose target parses as a URI with the route's
/// path exactly, the Leaf key being its last segment unchanged by decoding.
fn check_fast(raw: &[u8]) {
    let Some((route, key, close)) = snowmint_server::fast::classify(raw) else {
        return;
    };
    // httparse takes bare LF line ends and bytes past 0x7f in header values,
    // and skips empty lines (CRLF or LF) before the request line, as RFC
    // 9112 section 2.2 allows; hyper's parser is httparse, so the router
    // reads such a request the same way.
    let text = String::from_utf8_lossy(raw);
    let mut lines = text
        .trim_start_matches(['\r', '\n'])
        .split('\n')
        .map(|l| l.trim_end_matches('\r'));
    let line = lines.next().unwrap_or_default();
    let mut words = line.split(' ');
    assert_eq!(words.next(), Some("GET"), "{text:?}");
    let target = words.next().expect("a target");
    assert_eq!(words.next(), Some("HTTP/1.1"), "{text:?}");
    let uri: Uri = target.parse().expect("the router parses the target");
    match key {
        None => assert_eq!((route, uri.path()), ("/healthz", "/healthz")),
        Some(k) => {
            assert_eq!(route, "/api/snowflake/get/{key}");
            assert_eq!(uri.path(), format!("/api/snowflake/get/{k}"));
            assert!(!k.is_empty() && !k.contains(['/', '%']), "{k:?}");
        }
    }
    let asked = lines.take_while(|l| !l.is_empty()).any(|l| {
        l.split_once(':').is_some_and(|(name, value)| {
            name.eq_ignore_ascii_case("connection") && value.trim().eq_ignore_ascii_case("close")
        })
    });
    assert!(!asked || close, "{text:?}");
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let max = match first % 5 {
        0 => 1,
        1 => 7,
        2 => 10_000,
        3 => u64::from(u32::MAX),
        _ => u64::from(first) + 1,
    };
    let text = String::from_utf8_lossy(rest);

    // The raw text through each parser.
    check_count(Some(&text), max);
    let raw_layout = check_layout(&text);
    check_decode(&Layout::preset("twitter").unwrap(), &text);
    if let Some(l) = &raw_layout {
        check_decode(l, "1");
        check_decode(l, &l.max_id().get().to_string());
    }

    // The text as an HTTP/1.1 request's head, as the fast path reads it.
    check_fast(rest);

    // The text as a query string, read as the handlers read it.
    let Ok(uri) = format!("/v1/ids?{text}").parse::<Uri>() else {
        return;
    };
    let Ok(Query(q)) = Query::<HashMap<String, String>>::try_from_uri(&uri) else {
        return;
    };
    check_count(q.get("count").map(String::as_str), max);
    let s = states();
    for st in [&s.one, &s.two] {
        check_pick(st, q.get("generator").map(String::as_str));
        check_decode_layout(st, &q);
        if let Ok(l) = app::decode_layout(
            st,
            q.get("generator").map(String::as_str),
            q.get("layout").map(String::as_str),
        ) {
            for key in ["id", "snowflakeId"] {
                if let Some(t) = q.get(key) {
                    check_decode(&l, t);
                }
            }
            // Leaf's handler reads an absent `snowflakeId` as empty.
            if !q.contains_key("snowflakeId") {
                check_decode(&l, "");
            }
        }
    }
});
