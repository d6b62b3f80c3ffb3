#![cfg(feature = "etcd")]
//! The etcd store against a real etcd (`SNOWMINT_TEST_ETCD_URL`, e.g.
//! `etcd://127.0.0.1:2379`; `scripts/test-stores etcd` starts one) and an
//! etcd with authentication (`SNOWMINT_TEST_ETCD_AUTH_URL`,
//! `etcd://root:PASSWORD@127.0.0.1:PORT`). Both must be set: a store is never
//! skipped silently. Every test uses namespaces of its own run. Every wait is
//! bounded.

use std::collections::HashSet;
use std::net::TcpListener;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use snowmint::{Layout, Options, SystemClock};
use snowmint_lease::{ClaimRequest, LeaseUrl, LeasedGenerator, SlotSpace, Store, StoreError};

mod common;
use common::*;

fn env(name: &str) -> String {
    std::env::var(name)
        .unwrap_or_else(|_| panic!("{name} is not set: run scripts/test-stores etcd"))
}

fn base() -> String {
    env("SNOWMINT_TEST_ETCD_URL")
}

/// A namespace unique to this run and `name`.
fn ns(name: &str) -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    format!("{name}-{}-{t}", std::process::id())
}

fn url(ns: &str, query: &str) -> String {
    format!("{}?namespace={ns}&{query}", base())
}

fn store(ns: &str) -> Arc<dyn Store> {
    LeaseUrl::parse(&url(ns, "")).unwrap().open_store().unwrap()
}

/// A layout whose `worker` field has `bits` bits (`datacenter` fixed).
fn layout(bits: u32) -> Layout {
    Layout::new(
        1288834974657,
        1,
        &[
            ("timestamp", 41),
            ("datacenter", 10 - bits),
            ("worker", bits),
            ("sequence", 12),
        ],
    )
    .unwrap()
}

fn req(prefer: Option<u64>, ttl_ms: u64) -> ClaimRequest {
    ClaimRequest {
        prefer,
        ttl_ms,
        window_ms: 5000,
    }
}

fn local_ms() -> u64 {
    SystemClock.precise_ms()
}

#[test]
fn contract() {
    let ns1 = ns("contract");
    let s = store(&ns1);
    assert_eq!(
        s.describe(),
        format!("etcd://{}", base().trim_start_matches("etcd://"))
    );
    // The store's clock (the gateway's Date headers) is near the local one.
    let before = local_ms();
    let now = s.now_ms().unwrap();
    assert!(now.abs_diff(before) < 1500, "store {now}, local {before}");

    let space = SlotSpace::new(twitter(), &[("datacenter", 1)], Some(&ns1)).unwrap();
    let claims: Vec<_> = (0..32)
        .map(|_| s.claim(&space, &req(None, 30_000)).unwrap())
        .collect();
    let slots: HashSet<u64> = claims.iter().map(|c| c.holder.slot).collect();
    assert_eq!(slots, (0..32).collect());
    for c in &claims {
        assert_eq!(c.holder.counter, 1);
        assert_eq!(c.prev_hwm_ms, 0);
        assert_eq!(c.holder.token.len(), 32);
        assert!(c.hwm_ms + 1500 >= before + 5000, "{c:?}");
        let exp = c.expires_ms.unwrap();
        assert!(exp + 1500 >= before + 30_000, "{c:?}");
    }
    assert_eq!(
        s.claim(&space, &req(None, 30_000)),
        Err(StoreError::NoFreeSlot)
    );
    // Another namespace is another space.
    let ns2 = ns("contract2");
    let space2 = SlotSpace::new(twitter(), &[("datacenter", 1)], Some(&ns2)).unwrap();
    let other = store(&ns2).claim(&space2, &req(None, 30_000)).unwrap();
    assert_eq!((other.holder.slot, other.holder.counter), (0, 1));

    // Renew raises hwm and the expiry.
    let c3 = &claims[3];
    std::thread::sleep(Duration::from_millis(1100));
    let r = s.renew(&space, &c3.holder, 30_000, 5000).unwrap();
    assert!(r.hwm_ms > c3.hwm_ms, "{r:?} {c3:?}");
    assert!(
        r.expires_ms.unwrap() > c3.expires_ms.unwrap(),
        "{r:?} {c3:?}"
    );

    // Release writes last_ms (lower than hwm) and frees the slot.
    let last = c3.hwm_ms - 4000;
    s.release(&space, &c3.holder, last).unwrap();
    // The stale holder is lost, for renew and release alike.
    assert!(matches!(
        s.renew(&space, &c3.holder, 30_000, 5000),
        Err(StoreError::Lost(_))
    ));
    assert!(matches!(
        s.release(&space, &c3.holder, last),
        Err(StoreError::Lost(_))
    ));
    // Two slots free: prefer is honoured (7, not the lower 3).
    s.release(&space, &claims[7].holder, 1).unwrap();
    let p = s.claim(&space, &req(Some(7), 30_000)).unwrap();
    assert_eq!((p.holder.slot, p.holder.counter, p.prev_hwm_ms), (7, 2, 1));
    let again = s.claim(&space, &req(Some(9), 30_000)).unwrap();
    assert_eq!(
        (again.holder.slot, again.holder.counter, again.prev_hwm_ms),
        (3, 2, last),
        "slot 9 is held: the free one"
    );
    assert!(again.hwm_ms > last);
    // The first holder of slot 3 stays lost against the new one.
    assert!(matches!(
        s.renew(&space, &c3.holder, 30_000, 5000),
        Err(StoreError::Lost(_))
    ));
    // A holder with the right token but another counter is lost too.
    let mut forged = again.holder.clone();
    forged.counter = 1;
    assert!(matches!(
        s.renew(&space, &forged, 30_000, 5000),
        Err(StoreError::Lost(_))
    ));

    for c in claims
        .iter()
        .filter(|c| ![3, 7].contains(&c.holder.slot))
        .chain([&p, &again])
    {
        s.release(&space, &c.holder, c.prev_hwm_ms).unwrap();
    }
    store(&ns2)
        .release(&space2, &other.holder, other.prev_hwm_ms)
        .unwrap();
}

#[test]
fn expired_claim_is_taken_by_the_next_claimer() {
    let n = ns("expiry");
    let s = store(&n);
    let space = SlotSpace::new(layout(1), &[("datacenter", 5)], Some(&n)).unwrap();
    // ttl_ms=300 becomes an etcd lease of 1 s, which etcd raises to its
    // minimum (2 s with the default election timeout).
    let short = s.claim(&space, &req(None, 300)).unwrap();
    let long = s.claim(&space, &req(None, 60_000)).unwrap();
    assert_ne!(short.holder.slot, long.holder.slot);
    let start = Instant::now();
    let taken = loop {
        match s.claim(&space, &req(None, 60_000)) {
            Ok(c) => break c,
            Err(StoreError::NoFreeSlot) => {}
            Err(e) => panic!("{e:?}"),
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the short claim never expired"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(start.elapsed() >= Duration::from_millis(500));
    assert_eq!(taken.holder.slot, short.holder.slot);
    assert_eq!(taken.holder.counter, short.holder.counter + 1);
    assert!(taken.prev_hwm_ms >= short.hwm_ms);
    assert!(taken.hwm_ms >= taken.prev_hwm_ms);
    assert!(matches!(
        s.renew(&space, &short.holder, 300, 5000),
        Err(StoreError::Lost(_))
    ));
    assert!(matches!(
        s.release(&space, &short.holder, 1),
        Err(StoreError::Lost(_))
    ));
    s.release(&space, &taken.holder, taken.prev_hwm_ms).unwrap();
    s.release(&space, &long.holder, long.prev_hwm_ms).unwrap();
}

#[test]
fn space_text_is_checked() {
    let n = ns("badtext");
    let space = SlotSpace::new(twitter(), &[("datacenter", 2)], Some(&n)).unwrap();
    // Another text under this space's key, written behind the store's back.
    let http = base().replace("etcd://", "http://");
    let key = format!("snowmint/lease/{}/space", space.key());
    use base64::Engine as _;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let body = format!(
        r#"{{"key":"{}","value":"{}"}}"#,
        b64(&key),
        b64("something else\n")
    );
    ureq::post(format!("{http}/v3/kv/put"))
        .send(body)
        .expect("put");
    match store(&n).claim(&space, &req(None, 30_000)) {
        Err(StoreError::BadRecord(m)) => assert!(m.contains("another slot space"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn through_the_generator() {
    let n = ns("gen");
    let u = url(&n, "ttl_ms=3000&renew_ms=200&window_ms=2000");
    let g = LeasedGenerator::open(&u, twitter(), &[("datacenter", 1)], Options::default()).unwrap();
    let info = g.info();
    assert_eq!(
        info.store,
        format!("etcd://{}", base().trim_start_matches("etcd://"))
    );
    assert_eq!(info.field, "worker");
    assert_eq!(info.counter, 1);
    assert!(info.expires_ms.is_some());
    let id = g.next_id().unwrap();
    assert_eq!(
        twitter().decompose(id.get()).unwrap().nodes(),
        &[1, g.slot()]
    );
    // The background renewals reach etcd.
    let deadline = Instant::now() + Duration::from_secs(10);
    while g.info().renewals < 2 {
        assert!(Instant::now() < deadline, "{:?}", g.info());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(g.info().hwm_ms > info.hwm_ms);
    let last = time_of(g.next_id().unwrap().get());
    let slot = g.slot();
    g.close().unwrap();
    // The release wrote the last issued unit: the next claim of the slot
    // starts right above it.
    let s = store(&n);
    let space = SlotSpace::new(twitter(), &[("datacenter", 1)], Some(&n)).unwrap();
    let c = s.claim(&space, &req(Some(slot), 30_000)).unwrap();
    assert_eq!((c.holder.slot, c.holder.counter), (slot, 2));
    assert_eq!(c.prev_hwm_ms, last);
    s.release(&space, &c.holder, c.prev_hwm_ms).unwrap();
}

#[test]
fn racing_claimers_get_distinct_slots() {
    let n = ns("race");
    let space = Arc::new(SlotSpace::new(layout(3), &[("datacenter", 9)], Some(&n)).unwrap());
    let barrier = Arc::new(Barrier::new(8));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let (space, barrier, n) = (Arc::clone(&space), Arc::clone(&barrier), n.clone());
            std::thread::spawn(move || {
                let s = store(&n);
                barrier.wait();
                s.claim(&space, &req(None, 30_000))
            })
        })
        .collect();
    let claims: Vec<_> = threads
        .into_iter()
        .map(|t| t.join().unwrap().unwrap())
        .collect();
    let slots: HashSet<u64> = claims.iter().map(|c| c.holder.slot).collect();
    assert_eq!(slots, (0..8).collect());
    let s = store(&n);
    assert_eq!(
        s.claim(&space, &req(None, 30_000)),
        Err(StoreError::NoFreeSlot)
    );
    for c in &claims {
        s.release(&space, &c.holder, c.prev_hwm_ms).unwrap();
    }
}

fn open_error(u: &str) -> (snowmint_lease::LeaseError, Duration) {
    let start = Instant::now();
    let e =
        LeasedGenerator::open(u, twitter(), &[("datacenter", 1)], Options::default()).unwrap_err();
    (e, start.elapsed())
}

#[test]
fn refused_and_silent_servers() {
    let (e, took) = open_error("etcd://127.0.0.1:1?timeout_ms=2000");
    assert_eq!(e.code(), "lease_unavailable", "{e}");
    let m = e.to_string();
    assert!(m.contains("etcd://127.0.0.1:1"), "{m}");
    assert!(m.to_lowercase().contains("refused"), "{m}");
    assert!(took < Duration::from_millis(2500), "{took:?}");

    // A server that accepts and never answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let (e, took) = open_error(&format!("etcd://127.0.0.1:{port}?timeout_ms=1000"));
    assert_eq!(e.code(), "lease_unavailable", "{e}");
    let m = e.to_string();
    assert!(m.contains(&format!("etcd://127.0.0.1:{port}")), "{m}");
    assert!(m.contains("no answer within 1000 ms"), "{m}");
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_millis(2000),
        "{took:?}"
    );
    drop(silent);
}

#[test]
fn authentication() {
    let good = env("SNOWMINT_TEST_ETCD_AUTH_URL");
    let (userinfo, host) = good
        .trim_start_matches("etcd://")
        .rsplit_once('@')
        .expect("etcd://user:password@host:port");
    let (user, password) = userinfo.split_once(':').unwrap();
    let n = ns("auth");

    let bad = format!("etcd://{user}:wrong-{password}@{host}?namespace={n}&timeout_ms=2000");
    let (e, _) = open_error(&bad);
    assert_eq!(e.code(), "lease_unavailable", "{e}");
    let m = e.to_string();
    assert!(
        m.contains(&format!("authentication as '{user}' failed")),
        "{m}"
    );
    assert!(!m.contains(password), "the password leaked: {m}");
    assert!(m.contains(&format!("etcd://{user}:***@{host}")), "{m}");

    // No credentials on a server that requires them.
    let (e, _) = open_error(&format!("etcd://{host}?namespace={n}&timeout_ms=2000"));
    assert_eq!(e.code(), "lease_unavailable", "{e}");
    assert!(e.to_string().contains("authentication failed"), "{e}");

    let g = LeasedGenerator::open(
        &format!("{good}?namespace={n}&ttl_ms=3000&renew_ms=200&window_ms=2000"),
        twitter(),
        &[("datacenter", 1)],
        Options::default(),
    )
    .unwrap();
    assert!(!g.info().store.contains(password));
    g.next_id().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while g.info().renewals < 1 {
        assert!(Instant::now() < deadline, "{:?}", g.info());
        std::thread::sleep(Duration::from_millis(50));
    }
    g.close().unwrap();
}

#[test]
fn forty_processes_thirty_two_slots() {
    let n = ns("forty");
    common::forty_processes_thirty_two_slots(&url(&n, ""), "etcd-forty");
}

#[test]
fn killed_holder_is_replaced_after_the_ttl() {
    common::crash(&base(), &ns("crash"), true, &|| {});
}

#[test]
fn clock_skew_refused_at_claim() {
    common::clock_skew(&base(), &ns("skew"));
}

#[test]
fn server_cut_off_then_back() {
    common::store_down(&base(), &ns("down"));
}

#[test]
fn cut_off_past_the_ttl_while_another_takes_the_slot() {
    common::cut_off_past_ttl(&base(), &ns("cutttl"));
}

/// The member of `SNOWMINT_TEST_ETCD_RESTART_URL`, restarted with its data
/// by `SNOWMINT_TEST_ETCD_RESTART_CMD`.
#[test]
fn hwm_survives_a_server_restart() {
    common::restart_keeps_hwm(
        &env("SNOWMINT_TEST_ETCD_RESTART_URL"),
        &ns("restart"),
        &env("SNOWMINT_TEST_ETCD_RESTART_CMD"),
    );
}

/// Holder A pauses (SIGSTOP) past its TTL; B takes its slot, the only free
/// one; A resumes and never issues above its last confirmed reservation,
/// and stops. B claims as soon as A's etcd lease (2 s) has expired.
#[test]
fn paused_holder_is_replaced_and_stops() {
    let n = ns("paused");
    let u = url(&n, "ttl_ms=1500&renew_ms=300&window_ms=1000");
    common::paused_holder_is_replaced(&*store(&n), &u, &n, "etcd", Duration::from_millis(1500));
}

#[test]
fn hwm_too_far_is_refused() {
    common::hwm_too_far_is_refused(&base(), &ns("toofar"));
}

/// A 3-member cluster (`SNOWMINT_TEST_ETCD_CLUSTER_URL` lists the three):
/// holder A issues while the member it talks to (the first listed) is killed
/// with SIGKILL. A's renewals go on through another member (or it runs dry
/// and fails with `lease_expired` meanwhile: closed, never past its confirmed
/// reservation), it never loses its slot, and B, claiming after the kill,
/// gets another slot through the majority. Every ID is unique and inside its
/// holder's confirmed reservation.
#[test]
fn cluster_member_killed_while_a_holder_issues() {
    use common::faults::{assert_unique, assert_within_confirmed, Issuer};
    let cluster = env("SNOWMINT_TEST_ETCD_CLUSTER_URL");
    let pid_file = env("SNOWMINT_TEST_ETCD_CLUSTER_FIRST_PID_FILE");
    let url = format!(
        "{cluster}?namespace={}&ttl_ms=5000&renew_ms=200&window_ms=1000&timeout_ms=1500",
        ns("cluster")
    );
    let a = Issuer::open(&url, None);
    a.wait_info(10, "A's renewals", |i| i.renewals >= 2);
    let pid: libc::pid_t = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: kill(2) on the member scripts/stores/etcd.sh started for this
    // test (its pid file); no memory is involved.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let killed = Instant::now();
    let r = a.gen.info().renewals;
    a.wait_info(15, "A's renewals through another member", |i| {
        i.renewals >= r + 3
    });
    let renewed_after = killed.elapsed();
    let b = Issuer::open(&url, None);
    b.wait_info(10, "B's renewal", |i| i.renewals >= 1);
    assert_ne!(a.gen.slot(), b.gen.slot());
    assert!(a.gen.info().lost.is_none(), "{:?}", a.gen.info());
    let (a_gen, b_gen) = (Arc::clone(&a.gen), Arc::clone(&b.gen));
    let (a_out, b_out) = (a.stop(), b.stop());
    for g in [a_gen, b_gen] {
        let Ok(g) = Arc::try_unwrap(g) else {
            panic!("a generator is still shared")
        };
        g.close().unwrap();
    }
    eprintln!(
        "etcd cluster: A renewed 3 times within {renewed_after:?} of the kill; A issued {} IDs \
         (errors {:?}), B {}",
        a_out.ids.len(),
        a_out.errors,
        b_out.ids.len()
    );
    assert_within_confirmed("A", &a_out);
    assert_within_confirmed("B", &b_out);
    let ids = |o: &common::faults::Issued| o.ids.iter().map(|p| p.0).collect::<Vec<u64>>();
    assert!(!b_out.ids.is_empty());
    assert_unique("A and B", &[&ids(&a_out), &ids(&b_out)]);
}
