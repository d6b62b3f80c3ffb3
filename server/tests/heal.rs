//! A lost lease is claimed again: a server paused (SIGSTOP) past its TTL
//! while two other holders take both slots of a 1-bit leased field, then
//! resumed, says it is not ready (`slot lost`), keeps trying while the slots
//! are held, and serves again within seconds once they are free; no ID of
//! the server (before and after) or of the holders repeats.
//!
//! On the network stores only (a directory lease is held while its process
//! lives, paused or not): `#[ignore]`d, run by `cargo xtask test server` with
//! `--ignored` and the stores it names in `SNOWMINT_TEST_<STORE>_URL`.

mod common;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use common::*;
use snowmint::{Layout, Options};
use snowmint_lease::LeasedGenerator;

/// Leaf's bit positions with a 1-bit leased `worker` beside a fixed
/// `datacenter`: two slots.
const TWO_SLOTS: &str = r#"{"epoch_ms":1288834974657,"time_unit_ms":1,"fields":[["timestamp",41],["datacenter",9],["worker",1],["sequence",12]]}"#;

/// The lease timings: short, so that the test takes seconds.
const TIMINGS: &str = "&ttl_ms=1500&renew_ms=300&window_ms=1000&timeout_ms=1000";

fn store_url(store: &str, tag: &str) -> String {
    let var = format!("SNOWMINT_TEST_{}_URL", store.to_uppercase());
    let base = std::env::var(&var)
        .unwrap_or_else(|_| panic!("{var} is not set: run ./scripts/test server"));
    let ns = format!(
        "srvh-{}-{}-{tag}",
        std::process::id(),
        now_ms() % 1_000_000_000
    );
    format!("{base}?namespace={ns}{TIMINGS}")
}

/// A holder of one slot in this process, claimed as soon as one is free
/// (bounded).
fn holder(url: &str) -> LeasedGenerator {
    let layout = Layout::parse(TWO_SLOTS).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match LeasedGenerator::open(url, layout, &[("datacenter", 3)], Options::default()) {
            Ok(h) => return h,
            Err(e) => {
                assert!(
                    Instant::now() < deadline,
                    "no slot for a holder in 20 s: {e}"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

/// `n` IDs of a holder (waiting while its clock is below the `hwm` it took over).
fn holder_ids(h: &LeasedGenerator, n: usize) -> Vec<u64> {
    (0..n).map(|_| h.next_id().unwrap().get()).collect()
}

/// IDs from the server, `count` at a time, `times` times; each must succeed.
fn server_ids(s: &Server, times: usize) -> Vec<u64> {
    let mut all = Vec::new();
    for _ in 0..times {
        let r = s.get("/v1/ids?count=100");
        assert_eq!(r.status, 200, "{}", r.body);
        all.extend(ids_of(&r));
    }
    all
}

/// Polls `/readyz` until its status is `want` (bounded); the last answer.
fn until_ready_is(s: &Server, want: u16, within: Duration) -> Response {
    until_readyz(s, want, "", within)
}

/// Polls `/readyz` until its status is `want` and its body holds `text` (bounded).
fn until_readyz(s: &Server, want: u16, text: &str, within: Duration) -> Response {
    let deadline = Instant::now() + within;
    loop {
        let r = s.get("/readyz");
        if r.status == want && r.body.contains(text) {
            return r;
        }
        assert!(
            Instant::now() < deadline,
            "/readyz did not answer {want} within {within:?}: {} {}",
            r.status,
            r.body
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The value of the metric line starting with `series`.
fn metric(s: &Server, series: &str) -> Option<f64> {
    let body = s.get("/metrics").body;
    body.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
}

fn lost_lease_is_reclaimed(store: &str) {
    let url = store_url(store, "lost");
    let mut a = Server::start(&[
        "--layout",
        TWO_SLOTS,
        "--node",
        "datacenter=3",
        "--lease",
        &url,
        "--log-format",
        "json",
    ]);
    until_ready_is(&a, 200, Duration::from_secs(10));
    let before = server_ids(&a, 5);
    let name = a.generator()["name"].as_str().unwrap().to_string();

    // Paused past its TTL: two holders take both slots.
    a.signal("-STOP");
    let (h1, h2) = (holder(&url), holder(&url));
    let slots: HashSet<u64> = [h1.slot(), h2.slot()].into();
    assert_eq!(slots.len(), 2, "the holders share a slot");
    let mut held = holder_ids(&h1, 200);
    held.extend(holder_ids(&h2, 200));
    a.signal("-CONT");

    // It learns that its slot is gone, and stays not ready while both are held.
    until_readyz(&a, 503, "slot lost", Duration::from_secs(10));
    std::thread::sleep(Duration::from_secs(2));
    let r = a.get("/readyz");
    assert_eq!(r.status, 503, "ready while both slots are held: {}", r.body);
    let state = format!("snowmint_lease_state{{generator=\"{name}\",state=\"lost\"}}");
    assert_eq!(metric(&a, &state), Some(1.0));
    held.extend(holder_ids(&h1, 200));
    held.extend(holder_ids(&h2, 200));

    // The holders leave: it claims again and serves within seconds.
    h1.close().unwrap();
    h2.close().unwrap();
    let freed = Instant::now();
    until_ready_is(&a, 200, Duration::from_secs(10));
    let back_ms = freed.elapsed().as_millis();
    let after = server_ids(&a, 5);

    let mut all: Vec<u64> = before.iter().chain(&held).chain(&after).copied().collect();
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "{} IDs issued twice", n - all.len());
    let state = format!("snowmint_lease_state{{generator=\"{name}\",state=\"held\"}}");
    assert_eq!(metric(&a, &state), Some(1.0));
    let reclaims = format!("snowmint_lease_reclaims_total{{generator=\"{name}\"}}");
    assert_eq!(metric(&a, &reclaims), Some(1.0));
    a.terminate();
    let lines = a.log_lines();
    assert!(
        lines.iter().any(|l| l.contains("\"lease_reclaimed\"")),
        "no lease_reclaimed line: {lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.contains("\"lease_reclaim_failed\"")),
        "no failed attempt logged while the slots were held: {lines:?}"
    );
    eprintln!("{store}: {n} IDs unique; serving again {back_ms} ms after the slots were freed");
}

#[test]
#[ignore = "needs the store servers: ./scripts/test server"]
fn a_lost_lease_is_claimed_again_on_postgres() {
    lost_lease_is_reclaimed("postgres");
}

#[test]
#[ignore = "needs the store servers: ./scripts/test server"]
fn a_lost_lease_is_claimed_again_on_redis() {
    lost_lease_is_reclaimed("redis");
}

#[test]
#[ignore = "needs the store servers: ./scripts/test server"]
fn a_lost_lease_is_claimed_again_on_mysql() {
    lost_lease_is_reclaimed("mysql");
}

#[test]
#[ignore = "needs the store servers: ./scripts/test server"]
fn a_lost_lease_is_claimed_again_on_etcd() {
    lost_lease_is_reclaimed("etcd");
}

#[test]
#[ignore = "needs the store servers: ./scripts/test server"]
fn a_lost_lease_is_claimed_again_on_zookeeper() {
    lost_lease_is_reclaimed("zookeeper");
}

/// `/readyz` without a valid token says what is wrong but not the store's
/// error text (it may name hosts, users, databases); with one, the cause too.
#[test]
#[ignore = "needs the store servers: ./scripts/test server"]
fn readyz_shows_the_store_error_only_with_a_token() {
    let (proxy, url) = common::proxy::Proxy::for_url(&store_url("redis", "readyz"));
    let dir = temp_dir("readyz-token");
    let tokens = dir.join("tokens");
    secret_file(&tokens, "readyz-token-1\n");
    let s = Server::start(&[
        "--layout",
        TWO_SLOTS,
        "--node",
        "datacenter=3",
        "--lease",
        &url,
        "--token-file",
        tokens.to_str().unwrap(),
    ]);
    until_ready_is(&s, 200, Duration::from_secs(10));
    proxy.cut();
    let public = until_ready_is(&s, 503, Duration::from_secs(10));
    assert_eq!(
        public.json()["reasons"],
        serde_json::json!(["default: reservation ended"]),
        "{}",
        public.body
    );
    let full = s.get_with("/readyz", &[("Authorization", "Bearer readyz-token-1")]);
    let reason = full.json()["reasons"][0].as_str().unwrap().to_string();
    assert!(
        full.status == 503 && reason.starts_with("default: reservation ended: "),
        "{}",
        full.body
    );
    let wrong = s.get_with("/readyz", &[("Authorization", "Bearer readyz-token-")]);
    assert_eq!(wrong.json()["reasons"], public.json()["reasons"]);
    proxy.restore();
}
