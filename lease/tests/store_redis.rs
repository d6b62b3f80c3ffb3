#![cfg(feature = "redis")]
//! The Redis store against a real server: `SNOWMINT_TEST_REDIS_URL`
//! (`scripts/test-stores redis` sets it; the tests fail without it). Every
//! test uses namespaces of its own run (pid and time) and deletes their keys
//! at the end. Every wait is bounded.

use std::collections::HashSet;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use snowmint::{Layout, Options, SystemClock};
use snowmint_lease::{ClaimRequest, LeasedGenerator, RedisStore, SlotSpace, Store, StoreError};

mod common;
use common::*;

fn server_url() -> String {
    std::env::var("SNOWMINT_TEST_REDIS_URL").expect(
        "SNOWMINT_TEST_REDIS_URL must name a Redis server (redis://host:port/db); \
         scripts/test-stores redis sets it",
    )
}

/// A namespace of this run and test; its keys are deleted on drop.
struct Ns(String);

impl Ns {
    fn new(test: &str) -> Ns {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis();
        Ns(format!("t{}-{t}-{test}", std::process::id()))
    }

    fn sub(&self, suffix: &str) -> String {
        format!("{}-{suffix}", self.0)
    }

    /// The lease URL of this namespace with `opts`.
    fn url(&self, opts: &str) -> String {
        format!(
            "{}?namespace={}&timeout_ms=2000&{opts}",
            server_url(),
            self.0
        )
    }
}

impl Drop for Ns {
    /// Deletes the keys of every space whose namespace starts with ours.
    fn drop(&mut self) {
        // Not server_url(): no second panic while a failed test unwinds.
        let Ok(url) = std::env::var("SNOWMINT_TEST_REDIS_URL") else {
            return;
        };
        let Ok(mut c) = redis::Client::open(url)
            .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(5)))
        else {
            return;
        };
        let spaces: Vec<String> = redis::cmd("KEYS")
            .arg("snowmint:lease:*:space")
            .query(&mut c)
            .unwrap_or_default();
        for key in spaces {
            let text: Option<String> = redis::cmd("GET").arg(&key).query(&mut c).unwrap_or(None);
            if text.is_some_and(|t| t.contains(&format!("\nnamespace={}", self.0))) {
                let base = key.trim_end_matches(":space");
                let mut keys: Vec<String> = redis::cmd("KEYS")
                    .arg(format!("{base}:slot:*"))
                    .query(&mut c)
                    .unwrap_or_default();
                keys.push(key.clone());
                let _: redis::RedisResult<()> = redis::cmd("DEL").arg(keys).query(&mut c);
            }
        }
    }
}

fn redis_conn() -> redis::RedisResult<redis::Connection> {
    redis::Client::open(server_url())?.get_connection_with_timeout(Duration::from_secs(5))
}

fn slot_key(space: &SlotSpace, slot: u64) -> String {
    format!("snowmint:lease:{{{}}}:slot:{slot}", space.key())
}

fn field(space: &SlotSpace, slot: u64, name: &str) -> String {
    let mut c = redis_conn().unwrap();
    redis::cmd("HGET")
        .arg(slot_key(space, slot))
        .arg(name)
        .query(&mut c)
        .unwrap()
}

fn store() -> RedisStore {
    RedisStore::new(&server_url(), 2000).unwrap()
}

fn local_ms() -> u64 {
    SystemClock.precise_ms()
}

fn req(ttl_ms: u64, window_ms: u64) -> ClaimRequest {
    ClaimRequest {
        prefer: None,
        ttl_ms,
        window_ms,
    }
}

#[test]
fn contract_on_the_store() {
    let ns = Ns::new("contract");
    let s = store();
    assert!(s.describe().starts_with("redis://"), "{}", s.describe());
    // The store clock is near the local one (same machine or close).
    let before = local_ms();
    let now = s.now_ms().unwrap();
    assert!(
        now + 1000 >= before && now <= local_ms() + 1000,
        "{now} vs {before}"
    );

    let space = SlotSpace::new(twitter(), &[("datacenter", 1)], Some(&ns.0)).unwrap();
    let mut claims = Vec::new();
    for _ in 0..32 {
        let before = s.now_ms().unwrap();
        let c = s.claim(&space, &req(60_000, 5_000)).unwrap();
        assert_eq!(c.holder.counter, 1);
        assert_eq!(c.prev_hwm_ms, 0);
        assert_eq!(c.holder.token.len(), 32);
        assert!(c.hwm_ms >= before + 5_000, "{c:?}");
        let exp = c.expires_ms.unwrap();
        assert!(exp >= before + 60_000 && exp <= before + 62_000, "{c:?}");
        claims.push(c);
    }
    let slots: HashSet<u64> = claims.iter().map(|c| c.holder.slot).collect();
    assert_eq!(slots, (0..32).collect());
    assert_eq!(
        s.claim(&space, &req(60_000, 5_000)),
        Err(StoreError::NoFreeSlot)
    );
    // prefer is not honoured when the slot is held.
    let held = ClaimRequest {
        prefer: Some(3),
        ..req(60_000, 5_000)
    };
    assert_eq!(s.claim(&space, &held), Err(StoreError::NoFreeSlot));

    // Renew raises hwm and expiry.
    let c0 = &claims[0];
    std::thread::sleep(Duration::from_millis(20));
    let r = s.renew(&space, &c0.holder, 90_000, 10_000).unwrap();
    assert!(r.hwm_ms > c0.hwm_ms, "{r:?} {c0:?}");
    assert!(r.expires_ms.unwrap() > c0.expires_ms.unwrap());
    assert_eq!(
        field(&space, c0.holder.slot, "hwm_ms"),
        r.hwm_ms.to_string()
    );
    // A smaller window never lowers hwm.
    let r2 = s.renew(&space, &c0.holder, 90_000, 1).unwrap();
    assert_eq!(r2.hwm_ms, r.hwm_ms);

    // Release writes last_ms (even below hwm) and frees the slot.
    let c1 = &claims[1];
    let last = c1.hwm_ms - 4_000;
    s.release(&space, &c1.holder, last).unwrap();
    let slot1 = c1.holder.slot;
    assert_eq!(field(&space, slot1, "hwm_ms"), last.to_string());
    assert_eq!(field(&space, slot1, "token"), "");
    // A stale holder: renew and release are Lost.
    assert!(matches!(
        s.renew(&space, &c1.holder, 1000, 1000),
        Err(StoreError::Lost(_))
    ));
    assert!(matches!(
        s.release(&space, &c1.holder, 0),
        Err(StoreError::Lost(_))
    ));
    // The freed slot is the only one: taken (preferred or not), counter + 1.
    let prefer = ClaimRequest {
        prefer: Some(slot1),
        ..req(60_000, 5_000)
    };
    let again = s.claim(&space, &prefer).unwrap();
    assert_eq!(again.holder.slot, slot1);
    assert_eq!(again.holder.counter, 2);
    assert_eq!(again.prev_hwm_ms, last);
    assert_ne!(again.holder.token, c1.holder.token);
    // The old holder of slot 1 stays lost; a right token with an old counter too.
    let mut old_counter = again.holder.clone();
    old_counter.counter = 1;
    match s.renew(&space, &old_counter, 1000, 1000) {
        Err(StoreError::Lost(m)) => assert!(m.contains("another holder"), "{m}"),
        other => panic!("{other:?}"),
    }

    // A second namespace is independent.
    let other = SlotSpace::new(twitter(), &[("datacenter", 1)], Some(&ns.sub("b"))).unwrap();
    let o = s.claim(&other, &req(60_000, 5_000)).unwrap();
    assert_eq!((o.holder.slot, o.holder.counter, o.prev_hwm_ms), (0, 1, 0));

    // prefer is honoured when free (not the lowest free slot).
    let p = s
        .claim(
            &other,
            &ClaimRequest {
                prefer: Some(17),
                ..req(60_000, 5_000)
            },
        )
        .unwrap();
    assert_eq!(p.holder.slot, 17);

    for c in claims.iter().skip(2).chain([&claims[0], &again, &o, &p]) {
        let sp = if c == &o || c == &p { &other } else { &space };
        s.release(sp, &c.holder, c.hwm_ms).unwrap();
    }
}

#[test]
fn expired_claims_are_taken_over() {
    let ns = Ns::new("expiry");
    let s = store();
    let space = SlotSpace::new(twitter(), &[("datacenter", 2)], Some(&ns.0)).unwrap();
    let claims: Vec<_> = (0..32)
        .map(|_| s.claim(&space, &req(300, 3_000)).unwrap())
        .collect();
    assert_eq!(
        s.claim(&space, &req(300, 3_000)),
        Err(StoreError::NoFreeSlot)
    );
    std::thread::sleep(Duration::from_millis(450));
    // Every slot expired, every hwm ahead of the clock: the lowest hwm wins.
    let lowest = claims.iter().min_by_key(|c| c.hwm_ms).unwrap();
    let next = s.claim(&space, &req(60_000, 3_000)).unwrap();
    assert_eq!(next.holder.slot, lowest.holder.slot);
    assert_eq!(next.holder.counter, 2);
    assert!(next.prev_hwm_ms >= lowest.hwm_ms, "{next:?} {lowest:?}");
    assert!(next.hwm_ms >= next.prev_hwm_ms);
    // Its old holder lost it; the other expired holders may still renew
    // (nobody claimed their slots).
    assert!(matches!(
        s.renew(&space, &lowest.holder, 60_000, 3_000),
        Err(StoreError::Lost(_))
    ));
    let other = claims
        .iter()
        .find(|c| c.holder.slot != lowest.holder.slot)
        .unwrap();
    s.renew(&space, &other.holder, 60_000, 3_000).unwrap();
    // A preferred expired slot is taken over too.
    let p = claims
        .iter()
        .find(|c| c.holder.slot != lowest.holder.slot && c.holder.slot != other.holder.slot)
        .unwrap();
    let q = s
        .claim(
            &space,
            &ClaimRequest {
                prefer: Some(p.holder.slot),
                ..req(60_000, 3_000)
            },
        )
        .unwrap();
    assert_eq!((q.holder.slot, q.holder.counter), (p.holder.slot, 2));
    assert_eq!(q.prev_hwm_ms, p.hwm_ms);
}

#[test]
fn foreign_records_are_bad_records() {
    let ns = Ns::new("bad");
    let s = store();
    let space = SlotSpace::new(twitter(), &[("datacenter", 3)], Some(&ns.0)).unwrap();
    s.claim(&space, &req(60_000, 1_000)).unwrap();
    let mut c = redis_conn().unwrap();
    let base = format!("snowmint:lease:{{{}}}", space.key());
    // Another text under the space's key.
    let text = space.text().replace("unit_ms=1", "unit_ms=2");
    let _: () = redis::cmd("SET")
        .arg(format!("{base}:space"))
        .arg(&text)
        .query(&mut c)
        .unwrap();
    match s.claim(&space, &req(60_000, 1_000)) {
        Err(StoreError::BadRecord(m)) => assert!(m.contains("another slot space"), "{m}"),
        other => panic!("{other:?}"),
    }
    let _: () = redis::cmd("SET")
        .arg(format!("{base}:space"))
        .arg(space.text())
        .query(&mut c)
        .unwrap();
    // A slot key that is not a slot record.
    let _: () = redis::cmd("SET")
        .arg(format!("{base}:slot:1"))
        .arg("x")
        .query(&mut c)
        .unwrap();
    match s.claim(&space, &req(60_000, 1_000)) {
        Err(StoreError::BadRecord(m)) => assert!(m.contains(":slot:1"), "{m}"),
        other => panic!("{other:?}"),
    }
    // The store still answers afterwards.
    s.now_ms().unwrap();
}

#[test]
fn through_the_driver() {
    let ns = Ns::new("driver");
    let url = ns.url("ttl_ms=3000&renew_ms=100&window_ms=2000");
    let g =
        LeasedGenerator::open(&url, twitter(), &[("datacenter", 1)], Options::default()).unwrap();
    let info = g.info();
    assert_eq!(info.slot, 0);
    assert_eq!(info.counter, 1);
    assert!(info.store.starts_with("redis://"), "{info:?}");
    let exp = info.expires_ms.unwrap();
    assert!(
        exp > local_ms() + 2_000 && exp < local_ms() + 4_000,
        "{info:?}"
    );
    let first = g.next_id().unwrap().get();
    let deadline = Instant::now() + Duration::from_secs(10);
    while g.info().renewals < 2 {
        assert!(Instant::now() < deadline, "no renewals: {:?}", g.info());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(g.info().hwm_ms > info.hwm_ms);
    assert!(g.info().last_error.is_none(), "{:?}", g.info());
    let mut last = first;
    for _ in 0..100 {
        last = g.next_id().unwrap().get();
    }
    g.close().unwrap();
    let space = SlotSpace::new(twitter(), &[("datacenter", 1)], Some(&ns.0)).unwrap();
    assert_eq!(field(&space, 0, "hwm_ms"), time_of(last).to_string());
    assert_eq!(field(&space, 0, "token"), "");
    // The next holder takes the same slot and starts above.
    let h =
        LeasedGenerator::open(&url, twitter(), &[("datacenter", 1)], Options::default()).unwrap();
    assert_eq!((h.slot(), h.info().counter), (0, 2));
    assert!(h.next_id().unwrap().get() > last);
    h.close().unwrap();
}

/// A 63-bit layout whose `worker` field has 3 bits (8 slots).
fn three_bits() -> Layout {
    Layout::new(
        1288834974657,
        1,
        &[
            ("timestamp", 41),
            ("datacenter", 7),
            ("worker", 3),
            ("sequence", 12),
        ],
    )
    .unwrap()
}

#[test]
fn racing_claimers_get_distinct_slots() {
    let ns = Ns::new("race");
    let space = Arc::new(SlotSpace::new(three_bits(), &[("datacenter", 5)], Some(&ns.0)).unwrap());
    let barrier = Arc::new(Barrier::new(8));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let (space, barrier) = (Arc::clone(&space), Arc::clone(&barrier));
            std::thread::spawn(move || {
                let s = store(); // a connection of its own
                s.now_ms().unwrap();
                barrier.wait();
                s.claim(&space, &req(60_000, 1_000))
            })
        })
        .collect();
    let claims: Vec<_> = threads
        .into_iter()
        .map(|t| t.join().unwrap().unwrap())
        .collect();
    let slots: HashSet<u64> = claims.iter().map(|c| c.holder.slot).collect();
    assert_eq!(slots, (0..8).collect());
    assert!(claims.iter().all(|c| c.holder.counter == 1));
    assert_eq!(
        store().claim(&space, &req(60_000, 1_000)),
        Err(StoreError::NoFreeSlot)
    );
}

#[test]
fn closed_port_is_lease_unavailable_in_time() {
    let start = Instant::now();
    let e = LeasedGenerator::open(
        "redis://127.0.0.1:1/0?timeout_ms=2000",
        twitter(),
        &[("datacenter", 1)],
        Options::default(),
    )
    .unwrap_err();
    assert!(start.elapsed() < Duration::from_millis(3_000));
    assert_eq!(e.code(), "lease_unavailable");
    let m = e.to_string();
    assert!(m.contains("redis://127.0.0.1:1/0"), "{m}");
    assert!(m.contains("connection refused"), "{m}");
}

#[test]
fn a_url_the_client_refuses_is_invalid_option() {
    let e = LeasedGenerator::open(
        "redis://:pw123456@127.0.0.1:6379/notanumber",
        twitter(),
        &[("datacenter", 1)],
        Options::default(),
    )
    .unwrap_err();
    assert_eq!(e.code(), "invalid_option", "{e}");
    assert!(!e.to_string().contains("pw123456"), "{e}");
}

/// A throwaway `redis-server --requirepass` on a free port (killed on drop),
/// or `None` when this machine has no redis-server.
struct AuthServer {
    child: Child,
    port: u16,
    _dir: std::path::PathBuf,
}

impl AuthServer {
    fn start(password: &str) -> Option<AuthServer> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        Self::start_on(port, password)
    }

    fn start_on(port: u16, password: &str) -> Option<AuthServer> {
        let dir = temp_dir("redis-auth");
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--requirepass",
                password,
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .arg("--dir")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let server = AuthServer {
            child,
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(server)
    }
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self._dir);
    }
}

#[test]
fn authentication_problems_are_named() {
    // Stands on its own: every machine that runs these tests has a reachable
    // server, but not necessarily redis-server to start one that wants a password.
    let Some(server) = AuthServer::start("s3cret-pass") else {
        eprintln!(
            "SKIPPED (only this test): no redis-server binary to start a server with a password"
        );
        return;
    };
    let open = |userinfo: &str| {
        LeasedGenerator::open(
            &format!(
                "redis://{userinfo}127.0.0.1:{}/0?timeout_ms=2000&namespace=auth",
                server.port
            ),
            twitter(),
            &[("datacenter", 1)],
            Options::default(),
        )
    };
    let e = open("").unwrap_err();
    assert_eq!(e.code(), "lease_unavailable");
    assert!(e.to_string().contains("authentication failed"), "{e}");
    assert!(e.to_string().contains("NOAUTH"), "{e}");
    let e = open(":wrong-pass@").unwrap_err();
    assert_eq!(e.code(), "lease_unavailable");
    let m = e.to_string();
    assert!(m.contains("authentication failed"), "{m}");
    assert!(m.contains("redis://:***@127.0.0.1:"), "{m}");
    assert!(!m.contains("wrong-pass"), "{m}");
    let g = open(":s3cret-pass@").unwrap();
    assert!(
        g.info().store.starts_with("redis://:***@"),
        "{:?}",
        g.info()
    );
    g.next_id().unwrap();
    g.close().unwrap();

    // The store reconnects after the server went away and came back.
    let s = RedisStore::new(
        &format!("redis://:s3cret-pass@127.0.0.1:{}/0", server.port),
        2000,
    )
    .unwrap();
    s.now_ms().unwrap();
    let port = server.port;
    drop(server);
    match s.now_ms() {
        Err(StoreError::Unreachable(m)) => assert!(!m.contains("s3cret"), "{m}"),
        other => panic!("{other:?}"),
    }
    let _server = AuthServer::start_on(port, "s3cret-pass").unwrap();
    s.now_ms().unwrap();
}

/// A server that accepts connections and never answers: every call gives up
/// after timeout_ms by itself (not only under the driver's timeout).
#[test]
fn a_silent_server_times_out() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let s = RedisStore::new(&format!("redis://127.0.0.1:{port}"), 300).unwrap();
    for _ in 0..2 {
        let start = Instant::now();
        match s.now_ms() {
            Err(StoreError::Unreachable(m)) => assert!(m.contains("timed out"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert!(start.elapsed() < Duration::from_millis(1_500));
    }
    drop(listener);
}

#[test]
fn forty_processes_thirty_two_slots() {
    let ns = Ns::new("forty");
    common::forty_processes_thirty_two_slots(&ns.url(""), "redis-forty");
}

#[test]
fn killed_holder_is_replaced_after_the_ttl() {
    let ns = Ns::new("crash");
    common::crash(&server_url(), &ns.0, true, &|| {});
}

#[test]
fn clock_skew_refused_at_claim() {
    let ns = Ns::new("skew");
    common::clock_skew(&server_url(), &ns.0);
}

#[test]
fn server_cut_off_then_back() {
    let ns = Ns::new("down");
    common::store_down(&server_url(), &ns.0);
}

#[test]
fn cut_off_past_the_ttl_while_another_takes_the_slot() {
    let ns = Ns::new("cutttl");
    common::cut_off_past_ttl(&server_url(), &ns.0);
}

/// Holder A is stopped (SIGSTOP) past its TTL on the only free slot; B takes
/// the slot and issues; A, continued, never issues above its last confirmed
/// reservation and stops; B's IDs are all above A's.
#[test]
fn paused_holder_is_replaced_safely() {
    let ns = Ns::new("paused");
    let dir = temp_dir("redis-paused");
    let go = dir.join("go").display().to_string();
    let s = store();
    let space = SlotSpace::new(twitter(), &[("datacenter", 1)], Some(&ns.0)).unwrap();
    // Fill 31 of the 32 slots for the whole test.
    let fillers: Vec<_> = (0..31)
        .map(|_| s.claim(&space, &req(60_000, 1_000)).unwrap())
        .collect();
    let url = ns.url("ttl_ms=1500&renew_ms=300&window_ms=1000");
    let mut a = Probe::spawn(
        &url,
        &[
            "--fixed",
            "datacenter=1",
            "--until-error",
            "--interval-ms",
            "5",
        ],
    );
    a.wait_for(20, |l| ids(l).len() >= 50);
    let slot = value(&a.lines(), "slot").unwrap();
    assert!(!fillers.iter().any(|c| c.holder.slot == slot));
    let pid = a.child.id() as libc::pid_t;
    // SAFETY: signals to our own child.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    let stopped_at = local_ms();
    std::thread::sleep(Duration::from_millis(2_500));
    let mut b = Probe::spawn(
        &url,
        &[
            "--fixed",
            "datacenter=1",
            "--count",
            "200",
            "--hold-until-file",
            &go,
        ],
    );
    b.wait_for(20, |l| l.iter().any(|x| x.starts_with("hwm ")));
    assert_eq!(value(&b.lines(), "slot"), Some(slot), "{:?}", b.lines());
    assert_eq!(field(&space, slot, "counter"), "2");
    assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
    let a_out = a.finish(20);
    std::fs::write(&go, "").unwrap();
    let b_out = b.finish(20);

    let e = errors(&a_out);
    assert!(
        !e.is_empty() && e[0].starts_with("lease_expired "),
        "{a_out:?}"
    );
    let a_ids = ids(&a_out);
    let a_hwm = value(&a_out, "hwm").unwrap();
    let a_max = *a_ids.iter().max().unwrap();
    assert!(time_of(a_max) <= a_hwm, "A issued above its reservation");
    assert!(a_hwm < stopped_at + 1_500, "A's reservation: {a_hwm}");
    assert!(errors(&b_out).is_empty(), "{b_out:?}");
    assert!(b_out.iter().any(|l| l == "closed"), "{b_out:?}");
    let b_ids = ids(&b_out);
    assert_eq!(b_ids.len(), 200);
    assert!(*b_ids.iter().min().unwrap() > a_max);
    let all: HashSet<u64> = a_ids.iter().chain(&b_ids).copied().collect();
    assert_eq!(all.len(), a_ids.len() + b_ids.len());
    for c in &fillers {
        s.release(&space, &c.holder, c.hwm_ms).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
