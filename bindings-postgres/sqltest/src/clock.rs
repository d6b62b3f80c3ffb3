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
//!   earlier IDs;
//! - stepped forward 8 s, past the leased generator's 5 s lease window,
//!   while its store cannot confirm a renewal (the slot's row locked): no
//!   ID past the reservation the store confirmed (its `hwm_ms`), so
//!   `lease_expired`; once the store answers, IDs again under a renewed
//!   reservation, never past it; stepped back to real time: every ID above
//!   every earlier one, or a refusal.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use postgres::Client;

use crate::{connect, held_slots, Run};

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
    let mut c = connect(conninfo);
    past_the_window(run, &mut c, conninfo, offset_file, top["clk_leased"]);
    println!(
        "clock steps: {:.1} s in all",
        started.elapsed().as_secs_f64()
    );
}

/// Mints `clk_leased` in batches of 200 for `for_ms`: the IDs, and the
/// refusals seen.
fn mint_for(c: &mut Client, for_ms: u64) -> (Vec<i64>, Vec<String>) {
    let deadline = Instant::now() + Duration::from_millis(for_ms);
    let (mut ids, mut refusals) = (Vec::new(), Vec::new());
    while Instant::now() < deadline {
        match mint(c, "clk_leased", 200) {
            Ok(v) => ids.extend(v),
            Err(e) => {
                if !refusals.contains(&e) {
                    refusals.push(e);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    (ids, refusals)
}

fn ts(id: i64) -> i64 {
    let layout = snowmint::Layout::parse(WIDE).unwrap();
    layout.decompose(id as u64).unwrap().timestamp_ms() as i64
}

/// The wall clock stepped forward 8 s, past the 5 s lease window of
/// `clk_leased`, while its store cannot confirm a renewal (another
/// connection holds the slot's row locked): every ID issued is inside the
/// reservation the store confirmed (at or below the slot's `hwm_ms`), so
/// the generator refuses until the store answers; then it issues under a
/// renewed reservation, still never past the store's `hwm_ms`.
/// Stepped back to real time: every ID above every earlier one, or a
/// refusal.
fn past_the_window(run: &mut Run, c: &mut Client, conninfo: &str, offset_file: &str, top: i64) {
    let mut blocker = connect(conninfo);
    blocker.batch_execute("BEGIN").unwrap();
    let locked = held_slots(&mut blocker, "clock", true);
    run.check(locked.len() == 1, || {
        format!("clock past the window: held slots {locked:?}, want one")
    });
    let Some(&(slot, hwm_before)) = locked.first() else {
        return;
    };
    step(offset_file, "+8");
    // The renewals wait on the row (up to the store's timeout, then fail).
    let (blocked, refused_blocked) = mint_for(c, 1500);
    let past = blocked.iter().filter(|&&id| ts(id) > hwm_before).count();
    run.check(past == 0, || {
        format!(
            "clock stepped 8 s forward, store blocked: {past} of {} IDs past the confirmed \
             reservation (hwm_ms {hwm_before}; the last ID's time {:?})",
            blocked.len(),
            blocked.last().map(|&id| ts(id))
        )
    });
    run.check(
        blocked.is_empty() && refused_blocked.iter().all(|e| e.starts_with("55000")),
        || {
            format!(
                "clock stepped 8 s forward, store blocked: {} IDs, refusals {refused_blocked:?}",
                blocked.len()
            )
        },
    );
    blocker.batch_execute("ROLLBACK").unwrap();
    drop(blocker);
    // The store answers again: a renewed reservation (or a new claim).
    let (renewed, refused_renewed) = mint_for(c, 3000);
    let now_held = held_slots(c, "clock", false);
    let hwm_after = now_held.iter().map(|&(_, h)| h).max().unwrap_or(0);
    let past = renewed.iter().filter(|&&id| ts(id) > hwm_after).count();
    let below = renewed.iter().filter(|&&id| id <= top).count();
    run.check(past == 0 && below == 0, || {
        format!(
            "clock stepped 8 s forward, store answering: {past} IDs past hwm_ms {hwm_after}, \
             {below} at or below the earlier {top}"
        )
    });
    // The worker counts its reservation on the wall clock the backends
    // read, which stepped with the store's: a renewal confirms again.
    run.check(!renewed.is_empty(), || {
        format!(
            "clock stepped 8 s forward, store answering: no ID in 3 s (refusals \
             {refused_renewed:?}, hwm_ms {hwm_after})"
        )
    });
    run.check(
        refused_renewed.iter().all(|e| e.starts_with("55000")),
        || format!("clock stepped 8 s forward, store answering: refusals {refused_renewed:?}"),
    );
    // What the worker says about the lease (a renewal's failure, if any).
    let said: Option<String> = c
        .query_one(
            "SELECT message FROM snowmint.leases() WHERE generator = 'clk_leased'",
            &[],
        )
        .ok()
        .and_then(|r| r.get(0));
    let top = renewed.iter().copied().max().unwrap_or(top);
    // Back to real time: above every earlier ID, or refused.
    step(offset_file, "+0");
    let (back, refused_back) = mint_for(c, 1500);
    let below = back.iter().filter(|&&id| id <= top).count();
    run.check(below == 0, || {
        format!(
            "clock stepped back 8 s: {below} of {} IDs at or below the earlier {top}",
            back.len()
        )
    });
    run.check(refused_back.iter().all(|e| e.starts_with("55000")), || {
        format!("clock stepped back 8 s: refusals {refused_back:?}")
    });
    println!(
        "clock stepped 8 s forward past the 5 s window (slot {slot}, hwm_ms {hwm_before}): with the \
         store blocked {} IDs, refused with {refused_blocked:?}; store answering {} IDs (hwm_ms \
         now {hwm_after}), refusals {refused_renewed:?} (the worker: {said:?}); stepped back: {} IDs, all above, refusals \
         {refused_back:?}",
        blocked.len(),
        renewed.len(),
        back.len()
    );
}
