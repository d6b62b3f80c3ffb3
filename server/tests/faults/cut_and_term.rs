//! The store cut off past the reservation, SIGTERM under load, and the
//! later cases of faults.rs (split off to keep each file readable); the
//! helpers are the parent's.

use super::*;

// ---- 3. The store cut off past the reservation -------------------------

/// A server leases through a TCP proxy (TTL 4 s, reservation 1 s, renewals
/// every 200 ms) under load; the proxy cuts the store off for about 2.5 s
/// and restores it (inside the TTL, so the slot is still the server's).
/// While cut: `/readyz` turns 503 naming the ended reservation; `/v1/ids`
/// answers 503 `lease_expired` (or `lease_unavailable`) with Retry-After;
/// no ID answered during the cut has a timestamp past the reservation the
/// server reported after it ended (`reserved_until_ms`, the last one the
/// store confirmed: nothing can be confirmed through a cut proxy). After the
/// restore: `/readyz` 200 and IDs again, none issued twice.
///
/// A run in which no ID was answered after the cut (the load threads, or a
/// renewal, starved on a loaded machine until the reservation had ended)
/// checks nothing of the cut: it is run again, at most three times.
fn store_cut(store: &str) {
    for attempt in 1..=3 {
        let during = store_cut_once(store);
        if during > 0 {
            return;
        }
        eprintln!("{store}: attempt {attempt}: no ID was issued after the cut (it came too late)");
    }
    panic!("{store}: no ID was issued after the cut in three attempts: the cut came too late");
}

/// One run of [`store_cut`]: the IDs answered between the cut and the restore.
fn store_cut_once(store: &str) -> usize {
    let st = Store::open(store);
    let (proxy, purl) = Proxy::for_url(&st.base);
    let url = Store::url_on(
        &purl,
        &ns("cut"),
        "&ttl_ms=4000&renew_ms=200&window_ms=1000&timeout_ms=500",
    );
    let s = start(&server_args("leaf", &url, None));
    let load = Load::start(&s.addr, "/v1/ids?count=20", 2);
    // Leaf's route (the HTTP/1.1 fast path) under the same checks.
    let leaf = Load::start(&s.addr, "/api/snowflake/get/any", 1);
    let ready = Load::start(&s.addr, "/readyz", 1);
    std::thread::sleep(Duration::from_millis(1000));
    let cut_at = now_ms();
    proxy.cut();
    // The reservation ends within window_ms of the last renewal.
    let deadline = Instant::now() + Duration::from_secs(5);
    let reasons = loop {
        let r = s.get("/readyz");
        if r.status == 503 {
            break r.json()["reasons"].clone();
        }
        assert!(
            Instant::now() < deadline,
            "/readyz stayed 200 after the cut"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let lease = s.generator()["lease"].clone();
    let reserved = lease["reserved_until_ms"].as_u64().unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let lease_later = s.generator()["lease"].clone();
    assert_eq!(
        lease_later["reserved_until_ms"].as_u64(),
        Some(reserved),
        "the reservation moved while the store was cut off: {lease_later}"
    );
    let restore_at = now_ms();
    proxy.restore();
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.get("/readyz").status != 200 {
        assert!(
            Instant::now() < deadline,
            "/readyz never turned 200 again: {}",
            s.get("/readyz").body
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let recovered_ms = now_ms() - restore_at;
    std::thread::sleep(Duration::from_millis(500));
    let leaf_calls = leaf.stop();
    assert!(
        leaf_calls
            .iter()
            .any(|c| c.status == Some(503) && c.error.starts_with("lease_")),
        "no Leaf request was refused (lease_expired or lease_unavailable) while cut off"
    );
    let mut calls = load.stop();
    calls.extend(leaf_calls);
    calls.sort_by_key(|c| c.sent_ms);
    let probes = ready.stop();

    let reason = reasons.to_string();
    assert!(
        reason.contains("reservation ended"),
        "/readyz's reason: {reason}"
    );
    // The checker's bound (moved 300 ms short to see it fail).
    let bound = if weakened("reservation-short") {
        reserved - 300
    } else {
        reserved
    };
    let mut during = 0;
    let mut refused = 0;
    let mut refused_outside = 0;
    for c in &calls {
        match c.status {
            Some(200) => {
                if c.done_ms >= cut_at && c.sent_ms <= restore_at {
                    during += c.ids.len();
                    let late = c.ids.iter().copied().max().unwrap();
                    assert!(
                        time_of(late) <= bound,
                        "issued {late} at {} ms, past the confirmed reservation (until {bound} ms)",
                        time_of(late)
                    );
                }
            }
            Some(503) => {
                assert!(
                    c.error == "lease_expired" || c.error == "lease_unavailable",
                    "{c:?}"
                );
                assert_eq!(c.retry_after.as_deref(), Some("1"), "{c:?}");
                // A renewal may also miss the window outside the cut on this
                // loaded machine: safe, and counted.
                if c.sent_ms + 50 < cut_at || c.done_ms > restore_at + 2000 {
                    refused_outside += 1;
                }
                refused += 1;
            }
            _ => panic!("a request failed otherwise: {c:?}"),
        }
    }
    assert!(refused > 0, "no request was refused while cut off");
    let after: usize = calls
        .iter()
        .filter(|c| c.sent_ms > restore_at + recovered_ms)
        .map(|c| c.ids.len())
        .sum();
    assert!(after > 0, "no ID after the recovery");
    // The readiness probe: 200 or 503 (around the cut), nothing else.
    let not_ready: Vec<&Call> = probes.iter().filter(|c| c.status != Some(200)).collect();
    for c in &not_ready {
        assert!(c.status == Some(503) && !c.reasons.is_empty(), "{c:?}");
    }
    let n = check_unique(&[("server", &all_ids(&calls))]).unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "{store}: cut {} ms; reservation until {reserved} ({} ms after the cut); {during} IDs during the cut, none past it; {refused} refusals (503 + Retry-After; {refused_outside} outside the cut); /readyz 503 {} times, 200 again {recovered_ms} ms after the restore; {n} IDs unique; reason {reason}",
        restore_at - cut_at,
        reserved as i64 - cut_at as i64,
        not_ready.len(),
    );
    during
}

#[test]
#[ignore = "needs the store servers: ./scripts/test server"]
fn store_cut_past_the_reservation() {
    on_stores(&["postgres", "redis"], store_cut);
}

// ---- 4. SIGTERM under load ---------------------------------------------

/// Server A (of two holding [`TWO_SLOTS`]) gets SIGTERM while four clients
/// call it. The rule for the clients' requests: one sent before the signal
/// gets a 200 with its IDs; one sent after it gets a 200, or is refused
/// before any byte of a response (connection refused or reset: the server
/// stopped accepting when the signal came and `/readyz` is 503 from then
/// on) or gets a complete 503; nothing else (no truncated response, no
/// other status). A exits 0 within 1 s plus the grace, and a new server
/// started at once claims A's slot and issues at once: the lease was
/// released (on a network store the TTL, 10 s here, would otherwise hold
/// the slot; on a directory its `hwm` would be a 5 s reservation ahead).
fn sigterm_under_load(store: &str) {
    let st = Store::open(store);
    let url = st.url(
        &ns("term"),
        "&ttl_ms=10000&renew_ms=1000&window_ms=5000&timeout_ms=2000",
    );
    let args = server_args(TWO_SLOTS, &url, None);
    let mut a = start(&args);
    let c = start(&args);
    let va = node_of(&a);
    let load = Load::start(&a.addr, "/v1/ids?count=50", 4);
    // Requests of tens of ms: some are in flight when the signal comes.
    let slow = Load::start(&a.addr, "/v1/ids?count=100000", 1);
    let ready = Load::start(&a.addr, "/readyz", 1);
    std::thread::sleep(Duration::from_millis(1000));
    let signal = if weakened("sigkill") {
        "-KILL"
    } else {
        "-TERM"
    };
    let sig_at = now_ms();
    let t = Instant::now();
    a.signal(signal);
    // kill(1) has returned: the signal is delivered.
    let sig_done = now_ms();
    let status = a.wait(GRACE + Duration::from_secs(5));
    let took = t.elapsed();
    let mut calls = load.stop();
    let slow = slow.stop();
    let in_flight = slow
        .iter()
        .filter(|c| c.sent_ms < sig_at && c.done_ms > sig_done)
        .count();
    calls.extend(slow);
    let probes = ready.stop();

    let mut problems = Vec::new();
    let (mut before, mut after_ok, mut after_refused) = (0, 0, 0);
    for c in &calls {
        let refused_early = c.status.is_none()
            && (c.error.starts_with("ConnectionRefused") || c.error.starts_with("ConnectionReset"));
        if c.sent_ms < sig_at {
            before += 1;
            if c.status != Some(200) {
                problems.push(format!("a request sent before the signal failed: {c:?}"));
            }
        } else if c.status == Some(200) {
            after_ok += 1;
        } else if refused_early || c.status == Some(503) {
            after_refused += 1;
        } else {
            problems.push(format!(
                "a request sent after the signal failed otherwise: {c:?}"
            ));
        }
    }
    if let Some(c) = probes
        .iter()
        .find(|c| c.done_ms < sig_at && c.status != Some(200))
    {
        problems.push(format!("/readyz was not 200 before the signal: {c:?}"));
    }
    // Readiness ends with the signal: a probe sent after it (and 250 ms for
    // the runtime to see it) says so or finds the listener closed.
    let probes_after = probes.iter().filter(|c| c.sent_ms > sig_done + 250);
    for c in probes_after {
        if c.status == Some(200) {
            problems.push(format!("/readyz was 200 after the signal: {c:?}"));
        }
    }
    if !status.success() {
        problems.push(format!("exit status {status:?}, not 0"));
    }
    if took > GRACE + Duration::from_secs(1) {
        problems.push(format!("exited {took:?} after the signal"));
    }
    let max_a = all_ids(&calls).into_iter().max().unwrap();
    // The slot is free at once: a new server claims it and issues now.
    let t = Instant::now();
    match try_start(&args) {
        Err(e) => problems.push(format!(
            "a new server started right after A's exit got no slot: {e}"
        )),
        Ok(b) => {
            let got = node_of(&b);
            let r = b.get("/v1/ids?count=10");
            let claim_ms = t.elapsed().as_millis();
            if got != va {
                problems.push(format!("the new server got slot {got}, not A's {va}"));
            } else if r.status != 200 {
                problems.push(format!(
                    "the new server on A's slot cannot issue at once: {} {}",
                    r.status, r.body
                ));
            } else {
                let low = ids_of(&r)[0];
                if low <= max_a {
                    problems.push(format!(
                        "the new server issued {low}, not above A's {max_a}"
                    ));
                }
                eprintln!("{store}: the new server held A's slot {va} and issued {claim_ms} ms after A's exit");
            }
        }
    }
    drop(c);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    eprintln!(
        "{store}: {signal} under load: exit 0 in {took:?}; {before} requests sent before the signal all 200 ({in_flight} of 100,000 IDs in flight at the signal); after it {after_ok} 200 and {after_refused} refused"
    );
}

#[test]
fn sigterm_under_load_on_a_directory() {
    sigterm_under_load("dir");
}

/// A connection the server accepted before SIGTERM whose request comes just
/// after it (a client that connected while the server was accepting) gets a
/// complete answer, then the connection closes; not a close before any byte.
/// Without the wait for a first request at shutdown the request got an empty
/// read (`sigterm_under_load` failed so once in ten CI runs).
#[test]
fn a_connection_accepted_before_sigterm_gets_its_first_request_answered() {
    use std::io::{Read, Write};
    let st = Store::open("dir");
    let mut s = start(&server_args("leaf", &st.url(&ns("first"), ""), None));
    let mut conn = std::net::TcpStream::connect(&s.addr).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    // Accepted by now (the server's accept loop is idle).
    std::thread::sleep(Duration::from_millis(300));
    s.signal("-TERM");
    // The shutdown has begun: the listener is closed.
    let t = Instant::now();
    while std::net::TcpStream::connect(&s.addr).is_ok() {
        assert!(t.elapsed() < Duration::from_secs(2), "still accepting");
        std::thread::sleep(Duration::from_millis(5));
    }
    conn.write_all(format!("GET /v1/ids?count=3 HTTP/1.1\r\nHost: {}\r\n\r\n", s.addr).as_bytes())
        .unwrap();
    let mut raw = String::new();
    let read = conn.read_to_string(&mut raw);
    let r = try_parse_response(&raw).unwrap_or_else(|e| panic!("{e} ({read:?})"));
    assert!(
        r.status == 200 || r.status == 503,
        "{}: {}",
        r.status,
        r.body
    );
    // The whole answer, then the close (read_to_string saw the end).
    assert!(read.is_ok(), "{read:?}");
    if r.status == 200 {
        assert_eq!(ids_of(&r).len(), 3, "{raw}");
    }
    assert!(s.wait(Duration::from_secs(10)).success());
}

#[test]
#[ignore = "needs the store servers: ./scripts/test server"]
fn sigterm_under_load_on_postgres() {
    sigterm_under_load("postgres");
}

// ---- 5. Bad input --------------------------------------------------------

/// Malformed `count`s, generators and IDs, each a JSON error with the
/// core's or the service's stable code and the right status, on a leased
/// server; it serves IDs between them and after.
#[test]
fn bad_input_gets_a_stable_code_and_the_server_serves_on() {
    let st = Store::open("dir");
    let s = start(&server_args("leaf", &st.url(&ns("bad"), ""), None));
    let cases: &[(&str, u16, &str)] = &[
        ("/v1/ids?count=0", 400, "invalid_option"),
        ("/v1/ids?count=-1", 400, "invalid_option"),
        ("/v1/ids?count=-0", 400, "invalid_option"),
        ("/v1/ids?count=100001", 400, "invalid_option"),
        ("/v1/ids?count=18446744073709551615", 400, "invalid_option"),
        ("/v1/ids?count=18446744073709551616", 400, "invalid_option"),
        (
            "/v1/ids?count=99999999999999999999999999999",
            400,
            "invalid_option",
        ),
        ("/v1/ids?count=abc", 400, "invalid_option"),
        ("/v1/ids?count=", 400, "invalid_option"),
        ("/v1/ids?count", 400, "invalid_option"),
        ("/v1/ids?count=1.5", 400, "invalid_option"),
        ("/v1/ids?count=+1", 400, "invalid_option"),
        ("/v1/ids?count=%201", 400, "invalid_option"),
        ("/v1/ids?count=0x10", 400, "invalid_option"),
        ("/v1/ids?count=1e3", 400, "invalid_option"),
        ("/v1/ids?count=%EF%BC%91", 400, "invalid_option"),
        ("/v1/ids?count=1&count=2", 400, "invalid_option"),
        ("/v1/ids?count=5&count=5", 400, "invalid_option"),
        ("/v1/ids?generator=nope", 404, "unknown_generator"),
        ("/v1/ids?generator=", 404, "unknown_generator"),
        (
            "/v1/ids?generator=default&generator=other",
            400,
            "invalid_option",
        ),
        ("/v1/decode/abc", 400, "invalid_id"),
        ("/v1/decode/-1", 400, "invalid_id"),
        ("/v1/decode/1.0", 400, "invalid_id"),
        ("/v1/decode/%201", 400, "invalid_id"),
        ("/v1/decode/18446744073709551616", 400, "invalid_id"),
        (
            "/v1/decode/99999999999999999999999999999",
            400,
            "invalid_id",
        ),
        // 2^63 does not fit leaf's 63 bits; nor does it sonyflake's.
        ("/v1/decode/9223372036854775808", 400, "invalid_id"),
        (
            "/v1/decode/9223372036854775808?layout=sonyflake",
            400,
            "invalid_id",
        ),
        ("/v1/decode/%FF", 400, "invalid_id"),
        ("/v1/decode/1?layout=nope", 400, "unknown_preset"),
        (
            "/v1/decode/1?layout=leaf&layout=sonyflake",
            400,
            "invalid_option",
        ),
        ("/v1/decode/1?generator=nope", 404, "unknown_generator"),
        ("/decodeSnowflakeId?snowflakeId=-1", 400, "invalid_id"),
        (
            "/decodeSnowflakeId?snowflakeId=18446744073709551616",
            400,
            "invalid_id",
        ),
        (
            "/decodeSnowflakeId?snowflakeId=9223372036854775808",
            400,
            "invalid_id",
        ),
    ];
    let mut wrong = Vec::new();
    for &(path, status, code) in cases {
        let r = s.get(path);
        let v: Value = serde_json::from_str(&r.body).unwrap_or(Value::Null);
        let json = r
            .header("content-type")
            .is_some_and(|t| t.starts_with("application/json"));
        let message = v["error"]["message"].as_str().unwrap_or_default();
        if (r.status, v["error"]["code"].as_str()) != (status, Some(code))
            || !json
            || message.is_empty()
        {
            wrong.push(format!(
                "{path}: {} {:?} {}, expected {status} {code}",
                r.status,
                r.header("content-type"),
                r.body
            ));
        }
        // Still serving.
        assert_eq!(ids_of(&s.get("/v1/ids?count=2")).len(), 2, "after {path}");
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Leaf serves every key when one generator is configured, even a key
    // that is not UTF-8.
    let r = s.get("/api/snowflake/get/%FF");
    assert_eq!(r.status, 200, "{}", r.body);
    let ids = ids_of(&s.get("/v1/ids?count=1000"));
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 1000);
    assert_eq!(s.get("/readyz").status, 200);
}

/// Debian's libfaketime (package `libfaketime`), thread-safe variant.
const FAKETIME_MT: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";

/// The wall clock stepped 60 s ahead while the server runs (an NTP step):
/// `/readyz` and the ID routes must agree. The generators' clock is the
/// wall clock read once and then the monotonic clock, so the step does not
/// move it; readiness read the wall clock and said the reservation had
/// ended while IDs were still issued inside it. libfaketime steps the
/// server's wall clock only (its monotonic clock stays real), from a file
/// rewritten during the test.
#[test]
#[ignore = "needs libfaketime: ./scripts/test server"]
fn readiness_and_ids_agree_after_a_wall_clock_step() {
    assert!(
        std::path::Path::new(FAKETIME_MT).exists(),
        "{FAKETIME_MT} is missing: apt-get install libfaketime"
    );
    let dir = temp_dir("wall-step");
    let offset = dir.0.join("offset");
    std::fs::write(&offset, "+0\n").unwrap();
    let lease = format!(
        "{}&ttl_ms=3000&renew_ms=1000&window_ms=2000",
        lease_arg(&dir.0)
    );
    let offset_path = offset.display().to_string();
    let s = Server::try_start(
        &["--preset", "leaf", "--lease", &lease],
        &[
            ("LD_PRELOAD", FAKETIME_MT),
            ("FAKETIME_TIMESTAMP_FILE", &offset_path),
            ("FAKETIME_NO_CACHE", "1"),
            ("FAKETIME_DONT_FAKE_MONOTONIC", "1"),
        ],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.get("/readyz").status, 200);
    assert_eq!(ids_of(&s.get("/v1/ids?count=10")).len(), 10);
    // Atomically (rename), so the server never reads half a file.
    let tmp = dir.0.join("offset.new");
    std::fs::write(&tmp, "+60\n").unwrap();
    std::fs::rename(&tmp, &offset).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    // Each pair: readiness, then an ID at once; until the reservation the
    // generator's clock confirmed has ended by that clock (about 2 s), both
    // must say the same, and afterwards both 503.
    let mut disagree = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(4);
    while Instant::now() < deadline {
        let ready = s.get("/readyz");
        let ids = s.get("/v1/ids?count=1");
        if (ready.status == 200) != (ids.status == 200) {
            disagree.push(format!(
                "/readyz {} ({}), /v1/ids {}",
                ready.status, ready.body, ids.status
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        disagree.is_empty(),
        "{} disagreements: {:?}",
        disagree.len(),
        &disagree[..disagree.len().min(3)]
    );
}
