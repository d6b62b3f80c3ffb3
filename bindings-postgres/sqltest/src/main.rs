//! The extension's tests, in SQL against a running PostgreSQL whose
//! shared_preload_libraries has snowmint (`cargo xtask test postgres` starts
//! a throwaway cluster and runs this): the shared vectors through SQL, 16
//! connections minting at once, bad input, convert_sequence.
//!
//! Usage: `snowmint-pg-sqltest CONNINFO VECTORS_DIR [CONNINFO_NOT_PRELOADED]`,
//! or `snowmint-pg-sqltest lease CONNINFO PORT` (lease.rs, with the stores
//! across machines in `SNOWMINT_TEST_<STORE>_URL`), or
//! `snowmint-pg-sqltest init --store URL --json` (a store's init), or
//! `snowmint-pg-sqltest clock CONNINFO OFFSET_FILE` (clock.rs), or
//! `snowmint-pg-sqltest failover DIR` (lease/failover.rs)
//! (CONNINFO as libpq reads it: `host=127.0.0.1 port=5999 user=postgres
//! dbname=postgres`; the third, a server without the preload).

mod clock;
mod errors;
mod lease;
mod vectors;

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

/// The held slots of lease namespace `namespace` in the lease tables of
/// `c`'s database: `(slot, hwm_ms)`, by slot; `lock`: locked (`FOR
/// UPDATE`, in the caller's transaction) so that no renewal can change them.
fn held_slots(c: &mut Client, namespace: &str, lock: bool) -> Vec<(i64, i64)> {
    let sql = format!(
        "SELECT slot, hwm_ms FROM snowmint_lease_slot WHERE token <> '' AND space_key IN \
         (SELECT space_key FROM snowmint_lease_space WHERE space_text LIKE '%namespace=' || $1 || '%') \
         ORDER BY slot{}",
        if lock { " FOR UPDATE" } else { "" }
    );
    c.query(&sql, &[&namespace])
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
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
    // A leased one is declared too (no worker to ask for), and refused the same way.
    let out: Out<String> = call(
        &mut c,
        "SELECT snowmint.create_generator('leased', 'twitter', '{\"datacenter\": 1}', \
         lease => 'database?namespace=bare')::text",
        &[],
    );
    run.check(matches!(out, Out::Ok(_)), || {
        format!("not preloaded: a leased generator declared: {out:?}")
    });
    let out: Out<i64> = call(&mut c, "SELECT snowmint.next_id('leased')", &[]);
    expect_error(
        run,
        &mut c,
        "not preloaded, leased",
        out,
        "not_preloaded",
        Some("55000"),
    );
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

/// `init --store URL --json`: the lease crate's own init of a store, as
/// `snowmint lease init` runs it, printing its fence as that command does
/// (`fence_ms`, `now_ms`): the test runner vouches for a Redis with it, the
/// CLI not built.
fn init(args: &[String]) -> ExitCode {
    let [flag, url, json] = args else {
        eprintln!("usage: snowmint-pg-sqltest init --store URL --json");
        return ExitCode::from(2);
    };
    if flag != "--store" || json != "--json" {
        eprintln!("usage: snowmint-pg-sqltest init --store URL --json");
        return ExitCode::from(2);
    }
    match snowmint_lease::ops::initialize(url) {
        Ok(i) => {
            let (fence_ms, now_ms) = i
                .fence
                .map_or((None, None), |f| (Some(f.fence_ms), Some(f.now_ms)));
            println!(
                "{}",
                serde_json::json!({"store": i.store, "fence_ms": fence_ms, "now_ms": now_ms})
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("init: {e}");
            ExitCode::from(1)
        }
    }
}

/// `WHERE id >= snowmint.min_id(now() - interval '1 day')` is a condition
/// on the primary key's index (`min_id` is immutable): with sequential scans
/// off, the plan scans the index.
fn range_uses_index(run: &mut Run, c: &mut Client) {
    c.batch_execute(
        "DROP TABLE IF EXISTS range_t; \
         CREATE TABLE range_t (id bigint PRIMARY KEY, note text); \
         INSERT INTO range_t SELECT g, 'x' FROM generate_series(1, 1000) g; \
         ANALYZE range_t;",
    )
    .unwrap();
    let mut tx = c.transaction().unwrap();
    tx.batch_execute("SET LOCAL enable_seqscan = off").unwrap();
    let plan: Vec<String> = tx
        .query(
            "EXPLAIN SELECT * FROM range_t \
             WHERE id >= snowmint.min_id(now() - interval '1 day') \
             AND id <= snowmint.max_id(now())",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    drop(tx);
    let plan = plan.join("\n");
    run.check(plan.contains("range_t_pkey"), || {
        format!("min_id/max_id range: not on the index:\n{plan}")
    });
    c.batch_execute("DROP TABLE range_t").unwrap();
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("init") {
        return init(&args[2..]);
    }
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
    if args.get(1).map(String::as_str) == Some("failover") {
        let Some(dir) = args.get(2) else {
            eprintln!("usage: snowmint-pg-sqltest failover DIR");
            return ExitCode::from(2);
        };
        let mut run = Run {
            failures: Vec::new(),
            checks: 0,
        };
        lease::failover::run_all(&mut run, dir);
        return finish(&run, "postgres failover");
    }
    if args.get(1).map(String::as_str) == Some("clock") {
        let (Some(conninfo), Some(offset_file)) = (args.get(2), args.get(3)) else {
            eprintln!("usage: snowmint-pg-sqltest clock CONNINFO OFFSET_FILE");
            return ExitCode::from(2);
        };
        let mut run = Run {
            failures: Vec::new(),
            checks: 0,
        };
        clock::run_all(&mut run, conninfo, offset_file);
        return finish(&run, "postgres clock steps");
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
    vectors::vectors(&mut run, &mut c, vectors_dir);
    vectors::equal_to_core(&mut run, &mut c);
    generators(&mut run, &mut c);
    dump(&mut run, conninfo);
    errors::bad_input(&mut run, &mut c);
    convert(&mut run, &mut c);
    range_uses_index(&mut run, &mut c);
    concurrent(&mut run, conninfo);
    // Last on this server: it fills the shared slots.
    errors::refusals(&mut run, &mut c);
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
