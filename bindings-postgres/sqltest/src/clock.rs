//! A wall-clock step under the server (`snowmint-pg-sqltest clock CONNINFO
//! OFFSET_FILE`): the cluster runs under Debian's libfaketime, reading its
//! offset from OFFSET_FILE on every clock call ("+0", "-1.5": seconds), so
//! that the backends' wall clock (which `next_id` reads on every call)
//! steps back and forward while the generators' shared words stay:
//! - stepped back 1.5 s: `next_id` and `next_ids` never return an ID at or
//!   below an earlier one of their generator: a generator under
//!   `clock_backwards = fail` and one under the default (`wait:5`, five
//!   units) refuse with `clock_moved_backwards` (55000), one under
//!   `wait:3000` waits the step out (about 1.5 s) and continues above, and
//!   a leased one refuses (its shared word is above the stepped clock, so
//!   the lease's reservation cannot lend it IDs below the earlier ones);
//! - stepped forward again: every generator mints again, above all of its
//!   earlier IDs.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use postgres::Client;

use crate::{connect, Run};

fn step(file: &str, offset: &str) {
    std::fs::write(file, format!("{offset}\n")).expect("writing the clock offset");
    // libfaketime reads the file on every call; give a busy call a moment.
    std::thread::sleep(Duration::from_millis(50));
}

fn server_ms(c: &mut Client) -> i64 {
    c.query_one(
        "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint",
        &[],
    )
    .unwrap()
    .get(0)
}

/// One call: the IDs, or the SQLSTATE and the code in DETAIL.
fn mint(c: &mut Client, name: &str, n: i32) -> Result<Vec<i64>, String> {
    let r = if n == 1 {
        c.query("SELECT snowmint.next_id($1)", &[&name])
    } else {
        c.query("SELECT snowmint.next_ids($1, $2)", &[&name, &n])
    };
    match r {
        Ok(rows) => Ok(rows.iter().map(|r| r.get(0)).collect()),
        Err(e) => match e.as_db_error() {
            Some(db) => Err(format!(
                "{} {}",
                db.code().code(),
                db.detail().unwrap_or("").trim_start_matches("code: ")
            )),
            None => Err(e.to_string()),
        },
    }
}

const WIDE: &str = r#"{"epoch_ms":1288834974657,"time_unit_ms":1,"fields":[["timestamp",41],["worker",4],["sequence",12]]}"#;

pub(crate) fn run_all(run: &mut Run, conninfo: &str, offset_file: &str) {
    let started = Instant::now();
    step(offset_file, "+0");
    let mut c = connect(conninfo);
    c.batch_execute(&format!(
        "DROP EXTENSION IF EXISTS snowmint CASCADE; CREATE EXTENSION snowmint;
         SELECT snowmint.create_generator('clk_fail', 'twitter', '{{\"datacenter\": 1, \"worker\": 1}}',
             '{{\"clock_backwards\": \"fail\"}}');
         SELECT snowmint.create_generator('clk_default', 'twitter', '{{\"datacenter\": 1, \"worker\": 2}}');
         SELECT snowmint.create_generator('clk_wait', 'twitter', '{{\"datacenter\": 1, \"worker\": 3}}',
             '{{\"clock_backwards\": \"wait:3000\"}}');
         SELECT snowmint.create_generator('clk_leased', '{WIDE}',
             lease => 'database?namespace=clock&ttl_ms=2000&renew_ms=300&timeout_ms=1500&window_ms=5000');"
    ))
    .unwrap();
    // clk_wait last: its wait moves the stepped clock past the others' IDs.
    let names = ["clk_fail", "clk_default", "clk_leased", "clk_wait"];
    let mut top: HashMap<&str, i64> = HashMap::new();
    // The leased one answers once the worker has claimed.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match mint(&mut c, "clk_leased", 1) {
            Ok(_) => break,
            Err(e) if Instant::now() < deadline && e.starts_with("55000") => {
                std::thread::sleep(Duration::from_millis(100))
            }
            Err(e) => {
                run.check(false, || format!("clock: the leased generator: {e}"));
                return;
            }
        }
    }
    for name in names {
        let v = mint(&mut c, name, 2000).unwrap();
        top.insert(name, *v.iter().max().unwrap());
    }
    let before_ms = server_ms(&mut c);
    step(offset_file, "-1.5");
    let back_ms = server_ms(&mut c);
    run.check(back_ms < before_ms - 1000, || {
        format!("clock: the server's clock did not step back ({before_ms} then {back_ms})")
    });
    // Stepped back: refused, or (wait:3000) an ID above after a wait.
    let mut outcomes = Vec::new();
    for name in names {
        for n in [1, 500] {
            let t = Instant::now();
            let got = mint(&mut c, name, n);
            let waited = t.elapsed();
            let was = top[name];
            match &got {
                Ok(v) => {
                    let low = *v.iter().min().unwrap();
                    run.check(low > was, || {
                        format!(
                            "clock stepped back: {name} (n = {n}) gave {low}, at or below its earlier {was}"
                        )
                    });
                    run.check(
                        name == "clk_wait" && (n > 1 || waited >= Duration::from_millis(500)),
                        || format!("clock stepped back: {name} (n = {n}) minted after {waited:?}"),
                    );
                    top.insert(name, *v.iter().max().unwrap());
                }
                Err(e) => run.check(
                    name != "clk_wait" && e == "55000 clock_moved_backwards",
                    || format!("clock stepped back: {name} (n = {n}) refused with {e}"),
                ),
            }
            outcomes.push(format!(
                "{name} x{n}: {} in {:.2} s",
                got.map_or_else(|e| e, |_| "IDs".into()),
                waited.as_secs_f64()
            ));
        }
    }
    println!("clock stepped back 1.5 s: {}", outcomes.join("; "));
    // Stepped forward again (+1.5 s): every generator mints, above.
    step(offset_file, "+0");
    let mut outcomes = Vec::new();
    for name in names {
        let deadline = Instant::now() + Duration::from_secs(10);
        let got = loop {
            match mint(&mut c, name, 500) {
                // The leased one's reservation was made by the worker's
                // clock; a refusal while it catches up is retried.
                Err(e)
                    if name == "clk_leased"
                        && e.starts_with("55000")
                        && Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(100))
                }
                other => break other,
            }
        };
        match got {
            Ok(v) => {
                let was = top[name];
                run.check(v[0] > was && v.windows(2).all(|w| w[0] < w[1]), || {
                    format!("clock stepped forward: {name} gave {} after {was}", v[0])
                });
                outcomes.push(format!("{name}: IDs"));
            }
            Err(e) => run.check(false, || format!("clock stepped forward: {name}: {e}")),
        }
    }
    println!(
        "clock stepped forward 1.5 s: {} ({:.1} s in all)",
        outcomes.join("; "),
        started.elapsed().as_secs_f64()
    );
}
