//! A backend killed with SIGKILL while inside `next_ids`: the postmaster's
//! crash restart loses the shared state words, and every ID after it must be
//! above every ID seen before and above what the lost words could have held.

use super::*;

/// A layout of 1 ms units and 4 IDs a unit: a generator borrowing 3 s ahead
/// of the clock holds IDs up to 3 s ahead of it in the shared word.
const QUICK: &str = r#"{"epoch_ms":1700000000000,"time_unit_ms":1,"fields":[["timestamp",41],["worker",4],["sequence",2]]}"#;

/// The highest ID a generator of `layout` and node values `nodes` can have
/// issued by a clock reading at most `now_ms`, borrowing `lead_units` ahead.
fn time_bound(layout: &Layout, nodes: &[(&str, u64)], now_ms: i64, lead_units: u64) -> u64 {
    let tick = layout.tick_of(now_ms as u64).unwrap() + lead_units;
    let ms = layout.ms_of_tick(tick);
    let nodes = layout.nodes_from_pairs(nodes.iter().copied()).unwrap();
    layout
        .compose(ms, layout.sequence().max(), &nodes)
        .unwrap()
        .get()
}

/// Mints from `name` until it answers, for up to 20 s, retrying the
/// refusals a crash restart may cause (the worker's claim not made yet or
/// its resume point too far ahead of the clock).
fn first_ids(c: &mut Client, name: &str, n: i32) -> Result<Vec<i64>, String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match ids(c, name, n) {
            Ok(v) => return Ok(v),
            Err((s, d)) if s == "55000" && Instant::now() < deadline => {
                let _ = d;
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => return Err(format!("{name}: {e:?}")),
        }
    }
}

/// A backend SIGKILLed while inside `next_ids`: the postmaster's crash
/// restart starts the shared memory afresh, and the IDs the killed call
/// took (returned or not) are gone with it. The guarantee: every ID minted
/// after is above every ID another backend saw before, and above the
/// highest ID the lost state word can have held: for a generator with fixed
/// node values, the last ID of the time unit of the clock when the old
/// processes were gone plus the units its options borrow ahead (its new
/// word starts there, `Config::start_state_after`); for a leased one, the
/// same bound, which the slot's `hwm` (the confirmed reservation, past that
/// lead here) covers: the new claim resumes above it.
pub(super) fn killed_inside_next_ids(run: &mut Run, s: &Server) {
    let started = Instant::now();
    let layout = Layout::parse(SLOW).unwrap();
    let quick = Layout::parse(QUICK).unwrap();
    let twitter = Layout::preset("twitter").unwrap();
    // The application holds the other slot of the leased generator's space:
    // after the restart the worker can only take its own again (its TTL
    // passed), which it resumes above the slot's hwm.
    let app_q = "namespace=inside&ttl_ms=60000&renew_ms=300&window_ms=5000&timeout_ms=1500";
    let app = LeasedGenerator::open(&s.url(app_q), layout, &[], Options::default())
        .expect("the application's lease");
    let mut c = reconnect(s);
    c.batch_execute(&format!(
        "SELECT snowmint.create_generator('inside_twitter', 'twitter', '{{\"datacenter\": 2, \"worker\": 9}}');
         SELECT snowmint.create_generator('inside_borrow', '{QUICK}', '{{\"worker\": 5}}',
             '{{\"sequence_exhausted\": \"borrow:3000\"}}');
         SELECT snowmint.create_generator('inside_leased', '{SLOW}', NULL,
             '{{\"sequence_exhausted\": \"borrow:30\"}}',
             'database?namespace=inside&{FAST}&window_ms=6000');"
    ))
    .unwrap();
    if let Err(e) = wait_ready(&mut c, "inside_leased", Duration::from_secs(20)) {
        run.check(false, || e);
        return;
    }
    // (generator, nodes, lead in units, the big call)
    let gens: [(&str, &Layout, u64, i32); 3] = [
        ("inside_twitter", &twitter, 0, 5_000_000),
        ("inside_borrow", &quick, 3000, 2_000_000),
        ("inside_leased", &layout, 30, 100_000),
    ];
    // One backend per generator inside a long next_ids (the borrowing ones
    // run ahead to their lead, then wait unit by unit: minutes), one more
    // minting next_id of each in a loop (what other backends observe).
    let mut pids = Vec::new();
    let mut busy = Vec::new();
    for (name, _, _, n) in gens {
        let mut b = reconnect(s);
        b.batch_execute("SET statement_timeout = 0").unwrap();
        pids.push(
            b.query_one("SELECT pg_backend_pid()", &[])
                .unwrap()
                .get::<_, i32>(0),
        );
        busy.push(std::thread::spawn(move || {
            b.query("SELECT snowmint.next_ids($1, $2)", &[&name, &n])
                .map(|r| r.len())
                .map_err(|e| e.to_string())
        }));
    }
    let observer = {
        let mut o = reconnect(s);
        let names: Vec<&'static str> = gens.iter().map(|g| g.0).collect();
        std::thread::spawn(move || {
            let mut seen: Vec<i64> = vec![0; names.len()];
            loop {
                for (i, name) in names.iter().enumerate() {
                    match o.query_one("SELECT snowmint.next_id($1)", &[name]) {
                        Ok(r) => seen[i] = seen[i].max(r.get(0)),
                        // Ended by the crash restart (or refused: counted
                        // as nothing seen).
                        Err(e) if e.as_db_error().is_some() && !e.is_closed() => {
                            if e.code() == Some(&postgres::error::SqlState::ADMIN_SHUTDOWN)
                                || e.code() == Some(&postgres::error::SqlState::CRASH_SHUTDOWN)
                            {
                                return seen;
                            }
                        }
                        Err(_) => return seen,
                    }
                }
            }
        })
    };
    // Let the calls run ahead to their leads (3 s of QUICK takes 12,000 IDs).
    std::thread::sleep(Duration::from_millis(700));
    let still: Vec<bool> = busy.iter().map(|b| !b.is_finished()).collect();
    // SAFETY: a plain signal to one backend of the test server.
    assert_eq!(unsafe { libc_kill(pids[1], 9) }, 0, "kill -9 {}", pids[1]);
    let ends: Vec<String> = busy
        .into_iter()
        .map(|b| format!("{:?}", b.join().unwrap()))
        .collect();
    let seen = observer.join().unwrap();
    // The new connection is served by the new shared memory: every process
    // of the old one is gone by then.
    let mut c = reconnect(s);
    let mut ok = false;
    for _ in 0..300 {
        // A connection made just before the crash recovery ended is closed.
        if c.batch_execute("SELECT 1").is_ok() {
            ok = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        c = reconnect(s);
    }
    let gone_ms = now_ms();
    run.check(ok, || {
        "killed inside next_ids: the server did not come back".into()
    });
    run.check(still.iter().all(|b| *b), || {
        format!("killed inside next_ids: a call ended before the kill: {still:?} {ends:?}")
    });
    for (i, (name, l, lead, _)) in gens.into_iter().enumerate() {
        let after = match first_ids(&mut c, name, 20) {
            Ok(v) => v,
            Err(e) => {
                run.check(false, || format!("killed inside next_ids: after: {e}"));
                continue;
            }
        };
        let low = *after.iter().min().unwrap();
        let node_vals: Vec<(&str, u64)> = match name {
            "inside_twitter" => vec![("datacenter", 2), ("worker", 9)],
            "inside_borrow" => vec![("worker", 5)],
            _ => vec![("worker", node(l, low))],
        };
        let bound = time_bound(l, &node_vals, gone_ms, lead);
        let at = |id: u64| {
            l.decompose(id)
                .map(|p| p.timestamp_ms() as i64 - gone_ms)
                .ok()
        };
        run.check(seen[i] > 0 && low > seen[i] && low as u64 > bound, || {
            format!(
                "killed inside next_ids: {name}: lowest ID after {low} ({:?} ms from the restart), \
                 highest seen before {} ({:?}), the lost word's bound {bound} ({:?})",
                at(low as u64),
                seen[i],
                at(seen[i] as u64),
                at(bound)
            )
        });
        println!(
            "lease: killed inside next_ids: {name}: the first ID after is {:?} ms from the restart, \
             the highest seen before {:?}, the lost word's bound {:?}",
            at(low as u64),
            at(seen[i] as u64),
            at(bound)
        );
    }
    run.check(
        app.slot()
            != node(
                &layout,
                first_ids(&mut c, "inside_leased", 1).unwrap_or(vec![0])[0],
            ),
        || "killed inside next_ids: the database used the application's slot".into(),
    );
    drop(app);
    println!(
        "lease: killed inside next_ids: {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
