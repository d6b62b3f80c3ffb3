//! The extension's tests, in SQL against a running PostgreSQL whose
//! shared_preload_libraries has snowmint (`cargo xtask test postgres` starts
//! a throwaway cluster and runs this): the shared vectors through SQL, 16
//! connections minting at once, bad input, convert_sequence.
//!
//! Usage: `snowmint-pg-sqltest CONNINFO VECTORS_DIR [CONNINFO_NOT_PRELOADED]`,
//! or `snowmint-pg-sqltest lease CONNINFO PORT` (lease.rs)
//! (CONNINFO as libpq reads it: `host=127.0.0.1 port=5999 user=postgres
//! dbname=postgres`; the third, a server without the preload).

mod lease;

use std::collections::HashSet;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use postgres::types::ToSql;
use postgres::{Client, NoTls};
use serde_json::Value as J;

struct Run {
    failures: Vec<String>,
    checks: usize,
}

impl Run {
    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        self.checks += 1;
        if !ok {
            let w = what();
            eprintln!("FAIL {w}");
            self.failures.push(w);
        }
    }
}

fn connect(conninfo: &str) -> Client {
    let mut config: postgres::Config = conninfo.parse().expect("a libpq connection string");
    config.connect_timeout(Duration::from_secs(10));
    let mut c = config
        .connect(NoTls)
        .expect("connecting to the test server");
    // Every statement bounded: a hung backend fails the test, not the runner.
    c.batch_execute("SET statement_timeout = '120s'").unwrap();
    c
}

/// The outcome of one SQL call: a value, or the error's SQLSTATE and the
/// core's code from its DETAIL (`code: ...`).
#[derive(Debug, PartialEq)]
enum Out<T> {
    Ok(T),
    Err { sqlstate: String, code: String },
}

fn call<T: for<'a> postgres::types::FromSql<'a>>(
    c: &mut Client,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Out<T> {
    match c.query_one(sql, params) {
        Ok(row) => Out::Ok(row.get(0)),
        Err(e) => {
            let Some(db) = e.as_db_error() else {
                panic!("{sql}: not a server error: {e}")
            };
            let code = db
                .detail()
                .and_then(|d| d.strip_prefix("code: "))
                .unwrap_or("(no code in DETAIL)")
                .to_string();
            Out::Err {
                sqlstate: db.code().code().to_string(),
                code,
            }
        }
    }
}

/// Checks that `out` is the error with `code` and that the connection
/// still answers.
fn expect_error<T: std::fmt::Debug>(
    run: &mut Run,
    c: &mut Client,
    what: &str,
    out: Out<T>,
    code: &str,
    sqlstate: Option<&str>,
) {
    match &out {
        Out::Err {
            sqlstate: s,
            code: k,
        } => {
            run.check(k == code, || format!("{what}: code {k}, want {code}"));
            if let Some(want) = sqlstate {
                run.check(s == want, || format!("{what}: SQLSTATE {s}, want {want}"));
            }
        }
        Out::Ok(v) => run.check(false, || format!("{what}: got {v:?}, want error {code}")),
    }
    let alive: Out<i32> = call(c, "SELECT 1", &[]);
    run.check(alive == Out::Ok(1), || {
        format!("{what}: the connection did not survive")
    });
}

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

fn vectors(run: &mut Run, c: &mut Client, dir: &str) {
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
fn equal_to_core(run: &mut Run, c: &mut Client) {
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

/// 16 connections x 10,000 next_id at once: all unique, one node value.
fn concurrent(run: &mut Run, conninfo: &str) {
    let mut c = connect(conninfo);
    c.batch_execute(
        "SELECT snowmint.create_generator('conc', 'twitter', '{\"datacenter\": 3, \"worker\": 7}')",
    )
    .unwrap();
    let start = Instant::now();
    let threads: Vec<_> = (0..16)
        .map(|t| {
            let conninfo = conninfo.to_string();
            std::thread::spawn(move || {
                let mut c = connect(&conninfo);
                let mut ids = Vec::with_capacity(10_000);
                // One statement per ID for half of them, in runs for the rest:
                // both interleave with the other 15 backends.
                for _ in 0..(if t % 2 == 0 { 5_000 } else { 0 }) {
                    ids.push(
                        c.query_one("SELECT snowmint.next_id('conc')", &[])
                            .unwrap()
                            .get::<_, i64>(0),
                    );
                }
                while ids.len() < 10_000 {
                    for row in c
                        .query(
                            "SELECT snowmint.next_id('conc') FROM generate_series(1, 500)",
                            &[],
                        )
                        .unwrap()
                    {
                        ids.push(row.get(0));
                    }
                }
                ids
            })
        })
        .collect();
    let mut all = Vec::new();
    for t in threads {
        all.extend(t.join().expect("a minting thread"));
    }
    let took = start.elapsed();
    let unique: HashSet<i64> = all.iter().copied().collect();
    run.check(all.len() == 160_000, || {
        format!("concurrent: {} IDs", all.len())
    });
    run.check(unique.len() == all.len(), || {
        format!(
            "concurrent: {} duplicates among {}",
            all.len() - unique.len(),
            all.len()
        )
    });
    let layout = snowmint::Layout::preset("twitter").unwrap();
    let nodes: HashSet<Vec<u64>> = all
        .iter()
        .map(|id| layout.decompose(*id as u64).unwrap().nodes().to_vec())
        .collect();
    run.check(nodes.len() == 1 && nodes.contains(&vec![3, 7]), || {
        format!("concurrent: node values {nodes:?}")
    });
    // A batch continues above the connections' IDs.
    let batch: Vec<i64> = c
        .query("SELECT snowmint.next_ids('conc', 5000)", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let top = *all.iter().max().unwrap();
    run.check(
        batch.len() == 5000 && batch.windows(2).all(|w| w[0] < w[1]) && batch[0] > top,
        || {
            format!(
                "next_ids: {} IDs, first above {top}: {:?}",
                batch.len(),
                batch.first()
            )
        },
    );
    println!(
        "concurrent: 16 connections x 10,000 next_id in {:.2} s, {} unique, node values {nodes:?}",
        took.as_secs_f64(),
        unique.len()
    );
}

fn generators(run: &mut Run, c: &mut Client) {
    c.batch_execute(
        "SELECT snowmint.create_generator('orders', 'twitter', '{\"datacenter\": 1, \"worker\": 1}');
         SELECT snowmint.create_generator('events', 'mastodon', NULL, '{\"sequence_start\": \"zero\"}');
         CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowmint.next_id('orders'), note text);
         INSERT INTO orders (note) SELECT 'n' || g FROM generate_series(1, 1000) g;",
    )
    .unwrap();
    let n: i64 = c
        .query_one("SELECT count(DISTINCT id) FROM orders", &[])
        .unwrap()
        .get(0);
    run.check(n == 1000, || format!("column default: {n} distinct IDs"));
    let view: Vec<(String, String)> = c
        .query("SELECT name, layout FROM snowmint.generators", &[])
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    run.check(
        view.iter().any(|(n, l)| n == "orders" && l == "twitter")
            && view.iter().any(|(n, l)| n == "events" && l == "mastodon"),
        || format!("generators view: {view:?}"),
    );
    // A lease URL's password is stored, but the view shows it as ***.
    c.batch_execute(
        "SELECT snowmint.create_generator('secret', 'twitter', '{\"datacenter\": 1}', \
         lease => 'postgres://app:s3cr%40t@127.0.0.1:1/db?namespace=secret');",
    )
    .unwrap();
    let shown: String = c
        .query_one(
            "SELECT lease FROM snowmint.generators WHERE name = 'secret'",
            &[],
        )
        .unwrap()
        .get(0);
    run.check(
        shown == "postgres://app:***@127.0.0.1:1/db?namespace=secret",
        || format!("generators view shows the lease URL as {shown}"),
    );
    c.batch_execute("SELECT snowmint.drop_generator('secret')")
        .unwrap();
    // IDs of the last day are found through the index bounds.
    let recent: i64 = c
        .query_one(
            "SELECT count(*) FROM orders WHERE id >= snowmint.min_id(now() - interval '1 day')",
            &[],
        )
        .unwrap()
        .get(0);
    run.check(recent == 1000, || format!("min_id bound: {recent} rows"));
    // Dropped and declared again: the state continues above the earlier IDs.
    let before: i64 = c
        .query_one("SELECT max(id) FROM orders", &[])
        .unwrap()
        .get(0);
    c.batch_execute(
        "SELECT snowmint.drop_generator('orders');
         SELECT snowmint.create_generator('orders', 'twitter', '{\"datacenter\": 1, \"worker\": 1}');",
    )
    .unwrap();
    let after: i64 = c
        .query_one("SELECT snowmint.next_id('orders')", &[])
        .unwrap()
        .get(0);
    run.check(after > before, || {
        format!("re-declared: {after} <= {before}")
    });
    let decoded: J = c
        .query_one(
            "SELECT snowmint.decode(snowmint.next_id('events'), 'mastodon')",
            &[],
        )
        .unwrap()
        .get(0);
    run.check(
        decoded["timestamp"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z')),
        || format!("decode of a mastodon ID: {decoded}"),
    );
}

/// pg_dump carries the definitions (the extension's configuration table).
fn dump(run: &mut Run, conninfo: &str) {
    let Some(pg_dump) = std::env::var_os("SNOWMINT_PG_DUMP") else {
        println!("pg_dump: SNOWMINT_PG_DUMP not set, not checked");
        return;
    };
    let out = std::process::Command::new(pg_dump)
        .args(["--data-only", "--dbname"])
        .arg(conninfo)
        .output()
        .expect("running pg_dump");
    let text = String::from_utf8_lossy(&out.stdout);
    run.check(
        out.status.success()
            && text.contains("COPY snowmint.generator_defs")
            && text.contains("orders\ttwitter\t{\"worker\": 1, \"datacenter\": 1}"),
        || {
            format!(
                "pg_dump: {} {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            )
        },
    );
}

fn bad_input(run: &mut Run, c: &mut Client) {
    let out: Out<i64> = call(c, "SELECT snowmint.next_id('nope')", &[]);
    expect_error(
        run,
        c,
        "unknown generator",
        out,
        "unknown_generator",
        Some("42704"),
    );
    let out: Out<i64> = call(c, "SELECT snowmint.next_ids('nope', 3)", &[]);
    expect_error(
        run,
        c,
        "unknown generator (batch)",
        out,
        "unknown_generator",
        Some("42704"),
    );
    let out: Out<J> = call(c, "SELECT snowmint.decode(1, 'twittter')", &[]);
    expect_error(
        run,
        c,
        "unknown preset",
        out,
        "unknown_preset",
        Some("22023"),
    );
    let out: Out<J> = call(c, "SELECT snowmint.decode(1, '{\"epoch_ms\": 0}')", &[]);
    expect_error(
        run,
        c,
        "bad descriptor",
        out,
        "invalid_layout",
        Some("22023"),
    );
    let out: Out<String> = call(
        c,
        "SELECT snowmint.create_generator('wide', 'twitter', '{\"datacenter\": 99, \"worker\": 1}')::text",
        &[],
    );
    expect_error(
        run,
        c,
        "node value out of range",
        out,
        "node_out_of_range",
        Some("22003"),
    );
    let out: Out<String> = call(
        c,
        "SELECT snowmint.create_generator('half', 'twitter', '{\"worker\": 1}')::text",
        &[],
    );
    expect_error(run, c, "missing node", out, "missing_node", Some("22023"));
    let out: Out<String> = call(
        c,
        "SELECT snowmint.create_generator('pol', 'twitter', '{\"datacenter\": 1, \"worker\": 1}', '{\"clock_backwards\": \"sometimes\"}')::text",
        &[],
    );
    expect_error(run, c, "bad policy", out, "invalid_option", Some("22023"));
    let out: Out<String> = call(
        c,
        "SELECT snowmint.create_generator('leased', 'twitter', NULL, NULL, 'database')::text",
        &[],
    );
    expect_error(
        run,
        c,
        "lease with two node fields left to lease",
        out,
        "invalid_option",
        Some("22023"),
    );
    let out: Out<String> = call(
        c,
        "SELECT snowmint.create_generator('orders', 'twitter', '{\"datacenter\": 1, \"worker\": 1}')::text",
        &[],
    );
    expect_error(
        run,
        c,
        "duplicate generator",
        out,
        "duplicate_generator",
        Some("42710"),
    );
    let out: Out<J> = call(c, "SELECT snowmint.decode(-1)", &[]);
    expect_error(run, c, "negative ID", out, "invalid_id", Some("22003"));
    let out: Out<i64> = call(c, "SELECT snowmint.mask(1, '\\x0001'::bytea)", &[]);
    expect_error(
        run,
        c,
        "mask key of 2 bytes",
        out,
        "invalid_option",
        Some("22023"),
    );
    let out: Out<i64> = call(c, "SELECT snowmint.min_id('1970-01-01'::timestamptz)", &[]);
    expect_error(
        run,
        c,
        "time before the epoch",
        out,
        "time_before_epoch",
        None,
    );
    let out: Out<i64> = call(c, "SELECT snowmint.min_id('infinity'::timestamptz)", &[]);
    expect_error(
        run,
        c,
        "infinite time",
        out,
        "time_before_epoch",
        Some("22008"),
    );
    let out: Out<i64> = call(c, "SELECT snowmint.next_ids('orders', -1)::bigint", &[]);
    expect_error(
        run,
        c,
        "negative count",
        out,
        "invalid_option",
        Some("22003"),
    );
    let out: Out<String> = call(c, "SELECT snowmint.format_id(1, 'base64')", &[]);
    expect_error(run, c, "unknown format", out, "invalid_id", Some("22023"));
    // NULLs: the STRICT functions answer NULL; compose's NULL time is an error.
    let out: Out<Option<i64>> = call(c, "SELECT snowmint.next_id(NULL)", &[]);
    run.check(out == Out::Ok(None), || format!("next_id(NULL): {out:?}"));
    let out: Out<Option<J>> = call(c, "SELECT snowmint.decode(NULL)", &[]);
    run.check(out == Out::Ok(None), || format!("decode(NULL): {out:?}"));
    let out = c.query_one(
        "SELECT snowmint.compose(NULL, 0, '{\"datacenter\":1,\"worker\":1}')",
        &[],
    );
    run.check(out.is_err(), || "compose(NULL, ...) answered".into());
    let alive: Out<i32> = call(c, "SELECT 1", &[]);
    run.check(alive == Out::Ok(1), || {
        "compose(NULL): connection lost".into()
    });
    // A failed call inside a transaction rolls it back, nothing more.
    c.batch_execute("BEGIN").unwrap();
    let _: Out<i64> = call(c, "SELECT snowmint.next_id('nope')", &[]);
    c.batch_execute("ROLLBACK").unwrap();
    let out: Out<i64> = call(c, "SELECT snowmint.next_id('orders')", &[]);
    run.check(matches!(out, Out::Ok(_)), || {
        format!("after a rollback: {out:?}")
    });
}

/// Generation refusals (55000) and the shared slots' limit (54000).
fn refusals(run: &mut Run, c: &mut Client) {
    // resume_after far ahead of the clock with clock_backwards = fail: the
    // shared state starts above it, and the clock reads as moved back.
    let ahead: i64 = c
        .query_one(
            "SELECT snowmint.compose('2040-01-01', 0, '{\"datacenter\": 31, \"worker\": 31}')",
            &[],
        )
        .unwrap()
        .get(0);
    let options = serde_json::json!({"resume_after": ahead.to_string(), "clock_backwards": "fail"});
    c.execute(
        "SELECT snowmint.create_generator('ahead', 'twitter', '{\"datacenter\": 31, \"worker\": 31}', $1)",
        &[&options],
    )
    .unwrap();
    let out: Out<i64> = call(c, "SELECT snowmint.next_id('ahead')", &[]);
    expect_error(
        run,
        c,
        "clock behind resume_after",
        out,
        "clock_moved_backwards",
        Some("55000"),
    );
    // Every distinct node configuration takes a slot until the server stops:
    // the 65th is refused, the others keep working.
    let mut refused = None;
    for worker in 0..70 {
        let name = format!("slot{worker}");
        c.execute(
            "SELECT snowmint.create_generator($1, 'leaf', jsonb_build_object('worker', $2::int))",
            &[&name, &worker],
        )
        .unwrap();
        let out: Out<i64> = call(c, "SELECT snowmint.next_id($1)", &[&name]);
        if let Out::Err { sqlstate, code } = out {
            refused = Some((worker, sqlstate, code));
            break;
        }
    }
    run.check(
        matches!(&refused, Some((_, s, k)) if s == "54000" && k == "slots_full"),
        || format!("slots: {refused:?}"),
    );
    let out: Out<i64> = call(c, "SELECT snowmint.next_id('orders')", &[]);
    run.check(matches!(out, Out::Ok(_)), || {
        format!("after slots_full: {out:?}")
    });
    println!(
        "slots: the generator after {:?} more was refused",
        refused.map(|r| r.0)
    );
}

fn convert(run: &mut Run, c: &mut Client) {
    c.batch_execute(
        "CREATE TABLE legacy_serial (id bigserial PRIMARY KEY, v text);
         INSERT INTO legacy_serial (v) VALUES ('a'), ('b'), ('c');
         CREATE TABLE legacy_ident (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v text);
         INSERT INTO legacy_ident (v) VALUES ('a'), ('b');
         SELECT snowmint.convert_sequence('legacy_serial', 'id', 'orders');
         SELECT snowmint.convert_sequence('legacy_ident', 'id', 'orders');
         INSERT INTO legacy_serial (v) VALUES ('d');
         INSERT INTO legacy_ident (v) VALUES ('c');",
    )
    .unwrap();
    for table in ["legacy_serial", "legacy_ident"] {
        let rows: Vec<(i64, String)> = c
            .query(&format!("SELECT id, v FROM {table} ORDER BY id"), &[])
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        let last = rows.last().unwrap();
        run.check(
            last.0 > 1 << 40 && rows[..rows.len() - 1].iter().all(|r| r.0 < 10),
            || format!("convert_sequence {table}: {rows:?}"),
        );
    }
    let identity: String = c
        .query_one(
            "SELECT attidentity::text FROM pg_attribute WHERE attrelid = 'legacy_ident'::regclass AND attname = 'id'",
            &[],
        )
        .unwrap()
        .get(0);
    run.check(identity.is_empty(), || {
        format!("identity kept: {identity:?}")
    });
    // Keys above the generator's IDs: refused, the column unchanged.
    c.batch_execute(
        "CREATE TABLE legacy_high (id bigserial PRIMARY KEY);
         INSERT INTO legacy_high VALUES (9000000000000000000);",
    )
    .unwrap();
    let out: Out<String> = call(
        c,
        "SELECT snowmint.convert_sequence('legacy_high', 'id', 'orders')::text",
        &[],
    );
    expect_error(
        run,
        c,
        "convert above",
        out,
        "keys_above_generator",
        Some("55000"),
    );
    let default: String = c
        .query_one("SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'legacy_high'::regclass", &[])
        .unwrap()
        .get(0);
    run.check(default.contains("nextval"), || {
        format!("refused convert changed the default: {default}")
    });
    let out: Out<String> = call(
        c,
        "SELECT snowmint.convert_sequence('legacy_serial', 'id', 'nope')::text",
        &[],
    );
    expect_error(
        run,
        c,
        "convert to an unknown generator",
        out,
        "unknown_generator",
        Some("42704"),
    );
}

/// A server without shared_preload_libraries = snowmint: the extension
/// installs and reads IDs, and next_id says what is missing.
fn not_preloaded(run: &mut Run, conninfo: &str) {
    let mut c = connect(conninfo);
    c.batch_execute(
        "DROP EXTENSION IF EXISTS snowmint CASCADE; CREATE EXTENSION snowmint;
         SELECT snowmint.create_generator('orders', 'twitter', '{\"datacenter\": 1, \"worker\": 1}');",
    )
    .unwrap();
    let out: Out<String> = call(&mut c, "SELECT snowmint.format_id(42, 'base62')", &[]);
    run.check(out == Out::Ok("0000000000g".into()), || {
        format!("not preloaded: format_id {out:?}")
    });
    let out: Out<i64> = call(&mut c, "SELECT snowmint.next_id('orders')", &[]);
    expect_error(
        run,
        &mut c,
        "not preloaded",
        out,
        "not_preloaded",
        Some("55000"),
    );
    println!("not preloaded: next_id refused with not_preloaded");
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("lease") {
        let (Some(conninfo), Some(Ok(port))) = (args.get(2), args.get(3).map(|p| p.parse())) else {
            eprintln!("usage: snowmint-pg-sqltest lease CONNINFO PORT");
            return ExitCode::from(2);
        };
        let mut run = Run {
            failures: Vec::new(),
            checks: 0,
        };
        lease::run_all(&mut run, conninfo, port);
        return finish(&run, "postgres leases");
    }
    let (Some(conninfo), Some(vectors_dir)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: snowmint-pg-sqltest CONNINFO VECTORS_DIR [CONNINFO_NOT_PRELOADED]");
        return ExitCode::from(2);
    };
    let mut run = Run {
        failures: Vec::new(),
        checks: 0,
    };
    let mut c = connect(conninfo);
    c.batch_execute("DROP EXTENSION IF EXISTS snowmint CASCADE; CREATE EXTENSION snowmint;")
        .unwrap();
    vectors(&mut run, &mut c, vectors_dir);
    equal_to_core(&mut run, &mut c);
    generators(&mut run, &mut c);
    dump(&mut run, conninfo);
    bad_input(&mut run, &mut c);
    convert(&mut run, &mut c);
    concurrent(&mut run, conninfo);
    // Last on this server: it fills the shared slots.
    refusals(&mut run, &mut c);
    if let Some(bare) = args.get(3) {
        not_preloaded(&mut run, bare);
    }
    finish(&run, "postgres")
}

fn finish(run: &Run, what: &str) -> ExitCode {
    if run.failures.is_empty() {
        println!("{what}: {} checks passed", run.checks);
        ExitCode::SUCCESS
    } else {
        println!(
            "{what}: {} of {} checks failed",
            run.failures.len(),
            run.checks
        );
        ExitCode::FAILURE
    }
}
