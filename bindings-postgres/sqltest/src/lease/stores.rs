//! Leased generators on the stores across machines the extension has built
//! in (MySQL/MariaDB, Redis, etcd, ZooKeeper: the lease crate's `stores`;
//! PostgreSQL's is the `database` lease of the tests before), each on the
//! server `SNOWMINT_TEST_<STORE>_URL` names (the test runner's stores: the
//! server already answering, else a throwaway one; Redis vouched for by
//! `lease init`; its fence waited out: `SNOWMINT_TEST_REDIS_READY_AT_MS`),
//! in a namespace of this run's own. For each:
//! - the database's generator mints, on the node value of the lease it holds
//!   in the store (`snowmint.leases()` shows it), and an application holder
//!   in the same namespace (the lease crate's own driver) has the other;
//! - the slot taken away in the store (a forced release, the operator's
//!   `snowmint lease release --force`, then a third holder on it: the
//!   namespace's two slots are both held by others): `next_id` refuses with
//!   the lease error's SQLSTATE 55000 and its code, and goes on refusing;
//! - the third holder gone, the database's worker claims again and mints
//!   above the slot's earlier IDs: every ID of the three holders unique.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use postgres::Client;
use snowmint::{Layout, Options};
use snowmint_lease::LeasedGenerator;

use super::{ids_when_reserved, node, now_ms, wait_ready, FAST};
use crate::{call, Out, Run};

/// One worker bit: two slots, one for the application, one for the
/// database; a third holder leaves the database none.
const TWO: &str = r#"{"epoch_ms":1288834974657,"time_unit_ms":1,"fields":[["timestamp",41],["worker",1],["sequence",12]]}"#;

/// The stores tested here, with the variable naming each one's server.
const STORES: [(&str, &str); 4] = [
    ("mysql", "SNOWMINT_TEST_MYSQL_URL"),
    ("redis", "SNOWMINT_TEST_REDIS_URL"),
    ("etcd", "SNOWMINT_TEST_ETCD_URL"),
    ("zookeeper", "SNOWMINT_TEST_ZOOKEEPER_URL"),
];

pub(crate) fn other_stores(run: &mut Run, c: &mut Client) {
    for (store, var) in STORES {
        match std::env::var(var) {
            Ok(base) if !base.is_empty() => {
                if store == "redis" {
                    fence_wait();
                }
                let t = Instant::now();
                one_store(run, c, store, &base);
                println!("lease: {store}: {:?}", t.elapsed());
            }
            _ => println!("lease: {store}: no {var}: not tested"),
        }
    }
}

/// Sleeps until the Unix ms `SNOWMINT_TEST_REDIS_READY_AT_MS` (when the
/// init fence of a Redis new to `lease init` passes: the test runner's).
fn fence_wait() {
    let at: i64 = std::env::var("SNOWMINT_TEST_REDIS_READY_AT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let left = at - now_ms();
    if left > 0 {
        println!("lease: redis: {left} ms more for its init fence");
        std::thread::sleep(Duration::from_millis(left as u64));
    }
}

/// A holder of `url`'s namespace (the lease crate's own driver): its error
/// as text.
fn holder(url: &str) -> Result<LeasedGenerator, String> {
    LeasedGenerator::open(url, Layout::parse(TWO).unwrap(), &[], Options::default())
        .map_err(|e| e.to_string())
}

fn one_store(run: &mut Run, c: &mut Client, store: &str, base: &str) {
    let layout = Layout::parse(TWO).unwrap();
    let ns = format!("pgtest-{store}-{}-{}", std::process::id(), now_ms());
    let sep = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{sep}namespace={ns}&{FAST}&window_ms=3000");
    let name = format!("store_{store}");
    // The application first: the database's worker must take the other slot.
    let app = match holder(&url) {
        Ok(app) => app,
        Err(e) => return run.check(false, || format!("{store}: the application's lease: {e}")),
    };
    c.execute(
        "SELECT snowmint.create_generator($1, $2, lease => $3)",
        &[&name, &TWO, &url],
    )
    .unwrap();
    if let Err(e) = wait_ready(c, &name, Duration::from_secs(20)) {
        return run.check(false, || format!("{store}: {e}"));
    }
    let mut all: Vec<i64> = Vec::new();
    let before = match ids_when_reserved(c, &name, 1000) {
        Ok(v) => v,
        Err(e) => return run.check(false, || format!("{store}: next_ids: {e:?}")),
    };
    all.extend(&before);
    let nodes: HashSet<u64> = before.iter().map(|&id| node(&layout, id)).collect();
    let slot = node(&layout, before[0]);
    let listed: Option<i64> = c
        .query_one(
            "SELECT slot FROM snowmint.leases() WHERE generator = $1",
            &[&name],
        )
        .unwrap()
        .get(0);
    run.check(
        nodes.len() == 1 && slot != app.slot() && listed == Some(slot as i64),
        || {
            format!(
                "{store}: the database's node values {nodes:?}, its lease's slot {listed:?}, \
                 the application's slot {}",
                app.slot()
            )
        },
    );
    let mut buf = vec![0u64; 1000];
    app.next_ids(&mut buf).unwrap();
    all.extend(buf.iter().map(|&id| id as i64));

    // The slot taken away: a forced release, then a third holder on it (the
    // worker may claim it back first: then again).
    let mut thief = Err(String::new());
    for _ in 0..5 {
        if let Err(e) = snowmint_lease::ops::release(&url, None, slot, true) {
            thief = Err(format!("the forced release: {e}"));
            break;
        }
        thief = holder(&url);
        if thief.is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let thief = match thief {
        Ok(t) => t,
        Err(e) => return run.check(false, || format!("{store}: taking slot {slot}: {e}")),
    };
    run.check(thief.slot() == slot, || {
        format!(
            "{store}: the third holder has slot {}, not {slot}",
            thief.slot()
        )
    });
    // The worker's next renewal (300 ms) finds the slot lost; from then on
    // next_id refuses (until then IDs are inside the old reservation).
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut refusal = None;
    while Instant::now() < deadline {
        match call::<i64>(c, "SELECT snowmint.next_id($1)", &[&name]) {
            Out::Ok(id) => all.push(id),
            Out::Err { sqlstate, code } => {
                refusal = Some((sqlstate, code));
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // Both slots held by others: it goes on refusing, never an ID.
    std::thread::sleep(Duration::from_millis(1500));
    let still: Out<i64> = call(c, "SELECT snowmint.next_id($1)", &[&name]);
    let refused = |r: &(String, String)| {
        r.0 == "55000" && (r.1 == "lease_unavailable" || r.1 == "lease_expired")
    };
    run.check(
        refusal.as_ref().is_some_and(refused)
            && matches!(&still, Out::Err { sqlstate, code } if refused(&(sqlstate.clone(), code.clone()))),
        || format!("{store}: slot {slot} taken: next_id gave {refusal:?}, then {still:?}"),
    );
    // A successor resumes above the slot's reserved hwm: fenced until then.
    let deadline = Instant::now() + Duration::from_secs(10);
    while let Err(e) = thief.next_ids(&mut buf) {
        assert!(
            e.code() == "lease_fenced" && Instant::now() < deadline,
            "{store}: the third holder: {e}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    all.extend(buf.iter().map(|&id| id as i64));
    thief.close().unwrap();
    let back = wait_ready(c, &name, Duration::from_secs(20));
    let after = back
        .as_ref()
        .map_err(|e| format!("{e:?}"))
        .and_then(|_| ids_when_reserved(c, &name, 1000).map_err(|e| format!("{e:?}")));
    match after {
        Ok(v) => {
            let low = v.iter().min().copied().unwrap_or(0);
            let top = before.iter().max().copied().unwrap_or(0);
            run.check(low > top, || {
                format!("{store}: after the new claim {low}, before {top}")
            });
            all.extend(v);
        }
        Err(e) => run.check(false, || {
            format!("{store}: after the third holder left: {e}")
        }),
    }
    let unique: HashSet<i64> = all.iter().copied().collect();
    run.check(unique.len() == all.len(), || {
        format!("{store}: {} IDs repeated", all.len() - unique.len())
    });
    println!(
        "lease: {store}: the database's generator on slot {slot}, the application's on {}; \
         slot taken: next_id refused with {refusal:?} and {still:?}; claimed again, \
         {} IDs unique",
        app.slot(),
        unique.len()
    );
    app.close().unwrap();
    c.execute("SELECT snowmint.drop_generator($1)", &[&name])
        .unwrap();
}
