//! The shared vectors through SQL, and decode and mask equal to the Rust
//! core on IDs outside the vectors.

use postgres::Client;
use serde_json::Value as J;

use crate::{call, expect_error, Out, Run};

fn read(dir: &str, name: &str) -> J {
    let text = std::fs::read_to_string(format!("{dir}/{name}"))
        .unwrap_or_else(|e| panic!("reading {dir}/{name}: {e}"));
    serde_json::from_str(&text).expect("vector JSON")
}

fn s(v: &J) -> &str {
    v.as_str().expect("a string in the vectors")
}

/// A decimal ID from the vectors as a bigint, `None` at 2^63 and above.
fn big(v: &J) -> Option<i64> {
    v.as_str()?.parse::<i64>().ok()
}

/// The timestamptz of Unix ms `ms`, exact (an interval from the epoch).
const TS: &str = "(timestamptz 'epoch' + $1::bigint * interval '1 millisecond')";

pub(crate) fn vectors(run: &mut Run, c: &mut Client, dir: &str) {
    let mut skipped = 0usize;
    let ids = read(dir, "ids.json");
    for case in ids["decode"].as_array().unwrap() {
        let layout = s(&case["layout"]);
        let Some(id) = big(&case["id"]) else {
            skipped += 1;
            continue;
        };
        let what = format!("decode {id} {layout}");
        let out: Out<J> = call(c, "SELECT snowmint.decode($1, $2)", &[&id, &layout]);
        if let Some(code) = case["error"].as_str() {
            expect_error(run, c, &what, out, code, None);
            continue;
        }
        let e = &case["expect"];
        match out {
            Out::Ok(got) => {
                run.check(got["timestamp_ms"] == e["timestamp_ms"], || {
                    format!("{what}: timestamp_ms {}", got["timestamp_ms"])
                });
                run.check(got["sequence"] == e["sequence"], || {
                    format!("{what}: sequence {}", got["sequence"])
                });
                run.check(got["nodes"] == e["nodes"], || {
                    format!("{what}: nodes {}", got["nodes"])
                });
            }
            Out::Err { code, .. } => run.check(false, || format!("{what}: error {code}")),
        }
        let b32: Out<String> = call(c, "SELECT snowmint.format_id($1, 'base32')", &[&id]);
        run.check(b32 == Out::Ok(s(&e["base32"]).to_string()), || {
            format!("{what}: base32 {b32:?}")
        });
        let ms = e["timestamp_ms"].as_i64().unwrap();
        let ts: Out<i64> = call(
            c,
            "SELECT (extract(epoch FROM snowmint.id_timestamp($1, $2)) * 1000)::bigint",
            &[&id, &layout],
        );
        run.check(ts == Out::Ok(ms), || format!("{what}: id_timestamp {ts:?}"));
        if let (Some(lo), Some(hi)) = (big(&e["bounds"][0]), big(&e["bounds"][1])) {
            let sql = format!("SELECT snowmint.min_id({TS}, $2)");
            let got: Out<i64> = call(c, &sql, &[&ms, &layout]);
            run.check(got == Out::Ok(lo), || format!("{what}: min_id {got:?}"));
            let sql = format!("SELECT snowmint.max_id({TS}, $2)");
            let got: Out<i64> = call(c, &sql, &[&ms, &layout]);
            run.check(got == Out::Ok(hi), || format!("{what}: max_id {got:?}"));
        }
    }
    for case in ids["compose"].as_array().unwrap() {
        let layout = s(&case["layout"]);
        let ms = case["timestamp_ms"].as_i64().unwrap();
        let seq = case["sequence"].as_i64().unwrap();
        let nodes = case["nodes"].clone();
        let what = format!("compose {case}");
        let sql = format!("SELECT snowmint.compose({TS}, $2, $3, $4)");
        let out: Out<i64> = call(c, &sql, &[&ms, &seq, &nodes, &layout]);
        match (case["error"].as_str(), big(&case["expect"])) {
            (Some(code), _) => expect_error(run, c, &what, out, code, None),
            (None, Some(id)) => run.check(out == Out::Ok(id), || format!("{what}: {out:?}")),
            (None, None) => {
                // Above 2^63: a bigint cannot hold it, an out-of-range error.
                expect_error(run, c, &what, out, "invalid_id", Some("22003"))
            }
        }
    }
    for case in ids["bounds"].as_array().unwrap() {
        let layout = s(&case["layout"]);
        let ms = case["timestamp_ms"].as_i64().unwrap();
        let what = format!("bounds {case}");
        let sql = format!("SELECT snowmint.min_id({TS}, $2)");
        let out: Out<i64> = call(c, &sql, &[&ms, &layout]);
        if let Some(code) = case["error"].as_str() {
            expect_error(run, c, &what, out, code, None);
        } else if let Some(lo) = big(&case["expect"][0]) {
            run.check(out == Out::Ok(lo), || format!("{what}: {out:?}"));
        } else {
            skipped += 1;
        }
    }

    let layouts = read(dir, "layouts.json");
    for case in layouts["cases"].as_array().unwrap() {
        if case.get("now_ms").is_some() {
            continue;
        }
        let layout = s(&case["layout"]);
        let what = format!("layout {}", case["name"]);
        let out: Out<J> = call(c, "SELECT snowmint.decode(0, $1)", &[&layout]);
        match case["error"].as_str() {
            Some(code) => expect_error(run, c, &what, out, code, Some("22023")),
            None => run.check(matches!(out, Out::Ok(_)), || format!("{what}: {out:?}")),
        }
    }

    let strings = read(dir, "strings.json");
    for case in strings["encode"].as_array().unwrap() {
        let Some(id) = big(&case["id"]) else {
            skipped += 1;
            continue;
        };
        for format in ["decimal", "base32", "base62"] {
            let out: Out<String> = call(c, "SELECT snowmint.format_id($1, $2)", &[&id, &format]);
            let want = s(&case[format]).to_string();
            run.check(out == Out::Ok(want), || {
                format!("format_id {id} {format}: {out:?}")
            });
            let back: Out<i64> = call(
                c,
                "SELECT snowmint.parse_id($1, $2)",
                &[&s(&case[format]), &format],
            );
            run.check(back == Out::Ok(id), || {
                format!("parse_id {id} {format}: {back:?}")
            });
        }
    }
    for case in strings["parse"].as_array().unwrap() {
        let (input, format) = (s(&case["input"]), s(&case["format"]));
        let what = format!("parse_id {input:?} {format}");
        let out: Out<i64> = call(c, "SELECT snowmint.parse_id($1, $2)", &[&input, &format]);
        match (case["error"].as_str(), case.get("expect").map(big)) {
            (Some(code), _) => expect_error(run, c, &what, out, code, None),
            (None, Some(Some(id))) => run.check(out == Out::Ok(id), || format!("{what}: {out:?}")),
            _ => expect_error(run, c, &what, out, "invalid_id", Some("22003")),
        }
    }

    let masks = read(dir, "mask.json");
    let hex = |v: &J| decode_hex(s(v));
    for case in masks["cases"].as_array().unwrap() {
        let (layout, key, tweak) = (s(&case["layout"]), hex(&case["key"]), hex(&case["tweak"]));
        for pair in case["pairs"].as_array().unwrap() {
            let (Some(id), Some(public)) = (big(&pair["id"]), big(&pair["public"])) else {
                skipped += 1;
                continue;
            };
            let what = format!("mask {} {id}", case["name"]);
            let out: Out<i64> = call(
                c,
                "SELECT snowmint.mask($1, $2, $3, $4)",
                &[&id, &key, &layout, &tweak],
            );
            run.check(out == Out::Ok(public), || format!("{what}: {out:?}"));
            let back: Out<i64> = call(
                c,
                "SELECT snowmint.unmask($1, $2, $3, $4)",
                &[&public, &key, &layout, &tweak],
            );
            run.check(back == Out::Ok(id), || format!("un{what}: {back:?}"));
        }
    }
    for case in masks["errors"].as_array().unwrap() {
        let (layout, key, tweak) = (s(&case["layout"]), hex(&case["key"]), hex(&case["tweak"]));
        let code = s(&case["error"]);
        let what = format!("mask error {}", case["name"]);
        let value = case.get("value").and_then(|v| match v {
            J::String(t) => t.parse::<i64>().ok(),
            J::Number(n) => n.as_i64(),
            _ => None,
        });
        let op = s(&case["op"]);
        let Some(v) = (if op == "new" { Some(0) } else { value }) else {
            skipped += 1;
            continue;
        };
        let sql = if op == "unmask" {
            "SELECT snowmint.unmask($1, $2, $3, $4)"
        } else {
            "SELECT snowmint.mask($1, $2, $3, $4)"
        };
        let out: Out<i64> = call(c, sql, &[&v, &key, &layout, &tweak]);
        expect_error(run, c, &what, out, code, None);
    }
    println!("vectors: {} checks so far, {skipped} cases skipped (IDs at or above 2^63 do not fit a bigint)", run.checks);
}

/// decode and mask through SQL equal the Rust core on IDs the vectors do
/// not list (a fixed pseudo-random walk over each layout's range).
pub(crate) fn equal_to_core(run: &mut Run, c: &mut Client) {
    let key = decode_hex("2b7e151628aed2a6abf7158809cf4f3c");
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for preset in ["twitter", "discord", "instagram", "mastodon", "leaf"] {
        let layout = snowmint::Layout::preset(preset).unwrap();
        let mask = snowmint::IdMask::new(layout, &key, b"").unwrap();
        let max = layout.max_id().get().min(i64::MAX as u64);
        for _ in 0..40 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let id = x % (max + 1);
            let parts = layout.decompose(id).unwrap();
            let got: J = c
                .query_one("SELECT snowmint.decode($1, $2)", &[&(id as i64), &preset])
                .unwrap()
                .get(0);
            let nodes: Vec<u64> = layout
                .nodes()
                .map(|f| got["nodes"][f.name()].as_u64().unwrap_or(u64::MAX))
                .collect();
            run.check(
                got["timestamp_ms"].as_u64() == Some(parts.timestamp_ms())
                    && got["sequence"].as_u64() == Some(parts.sequence())
                    && nodes == parts.nodes(),
                || format!("decode {id} {preset}: {got} vs {parts:?}"),
            );
            let public = mask.mask(id).unwrap().get();
            let out: Out<i64> = call(
                c,
                "SELECT snowmint.mask($1, $2, $3)",
                &[&(id as i64), &key, &preset],
            );
            run.check(
                i64::try_from(public).map_or(
                    matches!(&out, Out::Err { sqlstate, .. } if sqlstate == "22003"),
                    |p| out == Out::Ok(p),
                ),
                || format!("mask {id} {preset}: {out:?}, core {public}"),
            );
        }
    }
}

fn decode_hex(t: &str) -> Vec<u8> {
    (0..t.len() / 2)
        .map(|i| u8::from_str_radix(&t[2 * i..2 * i + 2], 16).expect("hex in the vectors"))
        .collect()
}
