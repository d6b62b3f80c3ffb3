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

/// `lease init` on the shared server, once per run, and its fence waited out
/// (only the first run against a server started since pays it): the tests'
/// new spaces then start without a fence of their own.
fn ready() {
    static INIT: std::sync::Once = std::sync::Once::new();
    INIT.call_once(|| {
        store().init().unwrap();
        let fence: u64 = redis::cmd("HGET")
            .arg("snowmint:lease:init")
            .arg("fence_ms")
            .query(&mut redis_conn().unwrap())
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while store().now_ms().unwrap() <= fence {
            assert!(Instant::now() < deadline, "init's fence {fence} not passed");
            std::thread::sleep(Duration::from_millis(100));
        }
    });
}

impl Ns {
    fn new(test: &str) -> Ns {
        ready();
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
                keys.push(format!("{base}:marker"));
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
                "redis://{userinfo}127.0.0.1:{}/0?timeout_ms=2000&namespace=auth\
                 &window_ms=1000&renew_ms=300&redis_max_window_ms=1000&max_skew_ms=200",
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
    // A fresh server, never vouched for by `lease init`: the first claim is
    // fenced (about a second here), and IDs come once the clock passed it.
    let deadline = Instant::now() + Duration::from_secs(10);
    while let Err(e) = g.next_id() {
        assert_eq!(e.code(), "lease_fenced", "{e}");
        assert!(Instant::now() < deadline, "{e}");
        std::thread::sleep(Duration::from_millis(50));
    }
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
    // SAFETY: kill(2) on the pid of a child this test spawned and still owns.
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

// Data loss: the store fails closed when Redis forgets. Each test runs its
// own throwaway redis-server (never the shared one: these flush, kill and
// reconfigure it).

/// A throwaway `redis-server` on a free port, no persistence unless `args`
/// asks, killed on drop; `restart` starts it again on the same port and dir.
struct Scratch {
    child: Option<Child>,
    port: u16,
    dir: std::path::PathBuf,
    args: Vec<String>,
}

impl Scratch {
    fn start(name: &str, args: &[&str]) -> Scratch {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut s = Scratch {
            child: None,
            port,
            dir: temp_dir(name),
            args: args.iter().map(|a| a.to_string()).collect(),
        };
        s.spawn();
        s
    }

    fn spawn(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .args(&self.args)
            .arg("--dir")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server must be installed for the data-loss tests");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while self
            .conn()
            .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c))
            .is_err()
        {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL (nothing saved on the way out) and wait.
    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    fn conn(&self) -> redis::RedisResult<redis::Connection> {
        redis::Client::open(format!("redis://127.0.0.1:{}/0", self.port))?
            .get_connection_with_timeout(Duration::from_secs(2))
    }

    fn cmd(&self, args: &[&str]) -> redis::Value {
        let mut c = redis::cmd(args[0]);
        for a in &args[1..] {
            c.arg(*a);
        }
        c.query(&mut self.conn().unwrap()).unwrap()
    }

    fn url(&self, opts: &str) -> String {
        format!("redis://127.0.0.1:{}/0?{opts}", self.port)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The data-loss tests' settings: reservations of 1.5 s renewed every
/// second, and a fence of redis_max_window_ms + 2 * max_skew_ms = 3 s.
const LOSS: &str = "namespace=loss&ttl_ms=4000&renew_ms=1000&window_ms=1500\
                    &redis_max_window_ms=2000&max_skew_ms=500&timeout_ms=1000";

/// Issues IDs from `g` on a thread until its lease is lost (bounded).
fn issue_until_lost(
    g: Arc<LeasedGenerator>,
) -> std::thread::JoinHandle<(Vec<u64>, Option<String>)> {
    // The first claim on a server no `lease init` vouched for is fenced:
    // nothing until the clock passed the fence.
    let mut ids = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while ids.len() < 10 {
        assert!(
            Instant::now() < deadline,
            "A issued nothing: {:?}",
            g.info()
        );
        match g.next_id() {
            Ok(id) => ids.push(id.get()),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Some(lost) = g.info().lost {
                return (ids, Some(lost));
            }
            match g.next_id() {
                Ok(id) => ids.push(id.get()),
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
            if ids.len() % 64 == 0 {
                // Many IDs a millisecond, not every core of a shared machine.
                std::thread::sleep(Duration::from_micros(200));
            }
        }
        (ids, None)
    })
}

/// Holder A (in this process, through a proxy) issues on slot 0; right after
/// one of its renewals the proxy is cut and `lose` makes the server forget,
/// so A keeps issuing inside its confirmed reservation (1.5 s) while B (a
/// probe process, straight to the server) claims and issues for 4.5 s. B
/// must get A's slot and issue only above the fence, A must be lost at its
/// first renewal once the proxy is back, and no ID may be issued twice.
fn holders_across_a_loss(server: &mut Scratch, lose: &dyn Fn(&mut Scratch) -> u16) {
    let url = server.url(LOSS);
    let (proxy, a_url) = Proxy::for_url(&url);
    let a = Arc::new(
        LeasedGenerator::open(&a_url, twitter(), &[("datacenter", 5)], Options::default()).unwrap(),
    );
    assert_eq!(a.slot(), 0, "{:?}", a.info());
    let a_thread = issue_until_lost(Arc::clone(&a));
    // Right after a renewal: the loss and B's claim fall inside A's
    // confirmed reservation, before A's next renewal.
    let r = a.info().renewals;
    let deadline = Instant::now() + Duration::from_secs(10);
    while a.info().renewals == r {
        assert!(Instant::now() < deadline, "no renewal: {:?}", a.info());
        std::thread::sleep(Duration::from_millis(2));
    }
    proxy.cut();
    let lost_at = local_ms();
    // The server B claims from: the same, or a promoted replica.
    let b_port = lose(server);
    let url = url.replace(&format!(":{}/", server.port), &format!(":{b_port}/"));
    let b = Probe::spawn(
        &url,
        &[
            "--fixed",
            "datacenter=5",
            "--run-ms",
            "4500",
            "--interval-ms",
            "1",
        ],
    );
    let b_out = b.finish(30);
    assert_eq!(
        value(&b_out, "slot"),
        Some(0),
        "B takes A's slot: {b_out:?}"
    );
    let fence: u64 = redis::cmd("HGET")
        .arg(format!(
            "snowmint:lease:{{{}}}:marker",
            SlotSpace::new(twitter(), &[("datacenter", 5)], Some("loss"))
                .unwrap()
                .key()
        ))
        .arg("fence_ms")
        .query(
            &mut redis::Client::open(url.as_str())
                .unwrap()
                .get_connection()
                .unwrap(),
        )
        .unwrap();
    assert!(fence >= lost_at + 2_000, "fence {fence}, loss at {lost_at}");
    // B's only failures: its clock behind the fence at first.
    for e in errors(&b_out) {
        assert!(e.starts_with("lease_fenced "), "{e}");
    }
    let b_ids = ids(&b_out);
    assert!(b_ids.len() >= 100, "B issued {}: {b_out:?}", b_ids.len());
    proxy.restore();
    let (a_ids, lost) = a_thread.join().unwrap();
    assert!(lost.is_some(), "A was never lost: {:?}", a.info());
    let a_max = *a_ids.iter().max().unwrap();
    let b_min = *b_ids.iter().min().unwrap();
    eprintln!(
        "A issued {} IDs (last at {} ms), B {} (first at {} ms), fence {fence}, A lost: {lost:?}",
        a_ids.len(),
        time_of(a_max),
        b_ids.len(),
        time_of(b_min),
    );
    let a_set: HashSet<u64> = a_ids.iter().copied().collect();
    let twice = b_ids.iter().filter(|id| a_set.contains(id)).count();
    assert_eq!(twice, 0, "{twice} of B's IDs were issued by A too");
    assert!(
        time_of(b_min) > fence,
        "B's first ID is not above the fence"
    );
    assert!(b_min > a_max, "B's first ID is not above A's last");
    assert_eq!(a_set.len(), a_ids.len());
}

#[test]
fn flushall_while_holders_run() {
    let mut server = Scratch::start("redis-flush", &[]);
    holders_across_a_loss(&mut server, &|s| {
        s.cmd(&["FLUSHALL"]);
        s.port
    });
}

#[test]
fn restart_without_persistence_while_holders_run() {
    let mut server = Scratch::start("redis-restart", &[]);
    holders_across_a_loss(&mut server, &|s| {
        s.restart();
        s.port
    });
}

/// The server restarts from an RDB snapshot taken before A's claim: slot 0
/// comes back free with an older `hwm`, and the marker names the old server.
#[test]
fn restart_from_an_old_snapshot_while_holders_run() {
    let mut server = Scratch::start("redis-rdb", &["--dbfilename", "dump.rdb"]);
    // An earlier holder of slot 0, released; then the snapshot.
    earlier_holder(&server);
    server.cmd(&["SAVE"]);
    holders_across_a_loss(&mut server, &|s| {
        s.restart();
        s.port
    });
}

/// An earlier holder of slot 0 on `server`, which issues and releases it
/// (the space, its marker and slot 0's record exist from then on).
fn earlier_holder(server: &Scratch) {
    let x = LeasedGenerator::open(
        &server.url(LOSS),
        twitter(),
        &[("datacenter", 5)],
        Options::default(),
    )
    .unwrap();
    // The first claim on a server no `lease init` vouched for is fenced.
    let deadline = Instant::now() + Duration::from_secs(10);
    while x.next_id().is_err() {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(20));
    }
    x.close().unwrap();
}

/// A replica of `primary` that holds its data as of now, then is detached
/// (promoted: `REPLICAOF NO ONE`), so it misses every later write.
fn stale_replica(primary: &Scratch, name: &str) -> Scratch {
    let replica = Scratch::start(
        name,
        &[
            "--replicaof",
            "127.0.0.1",
            &primary.port.to_string(),
            "--repl-diskless-sync-delay",
            "0",
        ],
    );
    wait_for_link(&replica);
    replica.cmd(&["REPLICAOF", "NO", "ONE"]);
    replica
}

/// Waits until the replica `s` has loaded its primary's data.
fn wait_for_link(s: &Scratch) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let info: String = redis::cmd("INFO")
            .arg("replication")
            .query(&mut s.conn().unwrap())
            .unwrap();
        if info.contains("master_link_status:up") && info.contains("master_sync_in_progress:0") {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the replica did not sync: {info}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A failover to a replica that missed A's claim: B claims on the promoted
/// replica, whose marker names the old primary. The old primary becomes its
/// replica (as Sentinel reconfigures it; writable, so that A's renewals,
/// still routed there, read the new primary's records as they would after
/// following the failover).
#[test]
fn failover_to_a_replica_that_missed_writes() {
    let mut server = Scratch::start("redis-failover", &["--repl-diskless-sync-delay", "0"]);
    earlier_holder(&server);
    let replica = stale_replica(&server, "redis-failover-replica");
    holders_across_a_loss(&mut server, &|s| {
        s.cmd(&["CONFIG", "SET", "replica-read-only", "no"]);
        s.cmd(&["REPLICAOF", "127.0.0.1", &replica.port.to_string()]);
        wait_for_link(s);
        replica.port
    });
}

/// The same server (same `run_id`) loses writes: it becomes a replica of a
/// stale copy (a full resync replaces its data) and is promoted again, as in
/// a failover and back. Only its `master_replid` tells.
#[test]
fn resync_from_a_stale_copy_keeps_the_run_id_but_not_the_replid() {
    let mut server = Scratch::start("redis-resync", &["--repl-diskless-sync-delay", "0"]);
    earlier_holder(&server);
    let copy = stale_replica(&server, "redis-resync-copy");
    let run_id = |s: &Scratch| -> String {
        let info: String = redis::cmd("INFO")
            .arg("server")
            .query(&mut s.conn().unwrap())
            .unwrap();
        info.lines()
            .find_map(|l| l.strip_prefix("run_id:"))
            .unwrap()
            .trim()
            .to_string()
    };
    let before = run_id(&server);
    holders_across_a_loss(&mut server, &|s| {
        s.cmd(&["REPLICAOF", "127.0.0.1", &copy.port.to_string()]);
        wait_for_link(s);
        s.cmd(&["REPLICAOF", "NO", "ONE"]);
        s.port
    });
    assert_eq!(run_id(&server), before);
}

#[test]
fn evicting_servers_are_refused_unless_allowed() {
    let server = Scratch::start(
        "redis-evict",
        &["--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"],
    );
    let open = |opts: &str| {
        LeasedGenerator::open(
            &server.url(&format!("namespace=evict&{opts}")),
            three_bits(),
            &[("datacenter", 5)],
            Options::default(),
        )
    };
    let e = open("").unwrap_err();
    assert_eq!(e.code(), "lease_unavailable", "{e}");
    let m = e.to_string();
    assert!(m.contains("maxmemory-policy is allkeys-lru"), "{m}");
    assert!(m.contains("redis_allow_eviction=true"), "{m}");
    // A refusal names the configuration, not a store that did not answer.
    assert!(m.contains("cannot keep leases safe as configured"), "{m}");
    assert!(!m.contains("did not answer"), "{m}");
    let e = open("redis_allow_eviction=maybe").unwrap_err();
    assert_eq!(e.code(), "invalid_option", "{e}");
    let e = snowmint_lease::ops::init(&server.url("")).unwrap_err();
    assert!(e.to_string().contains("allkeys-lru"), "{e}");

    // Opted out: served, and a slot without a record (maybe evicted) is
    // fenced anew on every claim.
    let settings =
        snowmint_lease::LeaseUrl::parse(&server.url(
            "namespace=evict&redis_allow_eviction=true&redis_max_window_ms=2000&max_skew_ms=500",
        ))
        .unwrap()
        .settings;
    let s = RedisStore::with_settings(&format!("redis://127.0.0.1:{}/0", server.port), &settings)
        .unwrap();
    snowmint_lease::ops::init(&server.url("redis_allow_eviction=true")).unwrap();
    let space = SlotSpace::new(three_bits(), &[("datacenter", 5)], Some("evict")).unwrap();
    let before = s.now_ms().unwrap();
    let first = s.claim(&space, &req(60_000, 1_000)).unwrap();
    assert!(first.prev_hwm_ms >= before + 3_000, "{first:?}");
    // Once the clock passed that fence, the next slot without a record is
    // fenced again: it may have been evicted while held.
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.now_ms().unwrap() <= first.prev_hwm_ms {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(50));
    }
    let before = s.now_ms().unwrap();
    let second = s.claim(&space, &req(60_000, 1_000)).unwrap();
    assert_ne!(second.holder.slot, first.holder.slot);
    assert!(second.prev_hwm_ms >= before + 3_000, "{second:?}");
    // Every holder of a space must use the same redis_max_window_ms.
    let e = open("redis_allow_eviction=true").unwrap_err();
    assert!(e.to_string().contains("redis_max_window_ms=2000"), "{e}");
    let small = "redis_max_window_ms=2000&window_ms=1000&renew_ms=300";
    open(&format!("redis_allow_eviction=true&{small}"))
        .unwrap()
        .close()
        .unwrap();

    // A policy that never evicts keys without a TTL is served.
    server.cmd(&["CONFIG", "SET", "maxmemory-policy", "volatile-lru"]);
    open(small).unwrap().close().unwrap();
}

/// A layout whose `worker` field has `bits` bits.
fn wide(bits: u32) -> Layout {
    Layout::new(
        1288834974657,
        1,
        &[
            ("timestamp", 41),
            ("datacenter", 1),
            ("worker", bits),
            ("sequence", 4),
        ],
    )
    .unwrap()
}

#[test]
fn wide_spaces_are_capped_and_the_widest_claim_is_quick() {
    let server = Scratch::start("redis-wide", &[]);
    let s = RedisStore::new(&format!("redis://127.0.0.1:{}/0", server.port), 5_000).unwrap();
    let space = SlotSpace::new(wide(15), &[("datacenter", 1)], Some("wide")).unwrap();
    match s.claim(&space, &req(60_000, 1_000)) {
        Err(StoreError::Refused(m)) => {
            assert!(m.contains("32768 values"), "{m}");
            assert!(m.contains("at most 16384"), "{m}");
        }
        other => panic!("{other:?}"),
    }
    // 14 bits: the first claim is fenced (no `lease init`), so every slot is
    // ahead of the clock and the script reads all 16,384: the worst case.
    let space = SlotSpace::new(wide(14), &[("datacenter", 1)], Some("wide")).unwrap();
    let mut worst = Duration::ZERO;
    for _ in 0..3 {
        let start = Instant::now();
        s.claim(&space, &req(60_000, 1_000)).unwrap();
        worst = worst.max(start.elapsed());
    }
    eprintln!("a claim reading 16,384 slots took at most {worst:?}");
    assert!(worst < Duration::from_millis(1_000), "{worst:?}");
}

/// `lease init` on a server: new spaces claimed within its own fence wait
/// for it (a wipe just before may have left live holders), later ones start
/// at once; a space that has records but no marker (written before markers
/// existed, or its marker lost) is fenced; a window above
/// redis_max_window_ms is refused.
#[test]
fn init_vouches_for_new_spaces_after_its_fence() {
    let server = Scratch::start("redis-init", &[]);
    let opts = "redis_max_window_ms=2000&max_skew_ms=500";
    let s = RedisStore::with_settings(
        &format!("redis://127.0.0.1:{}/0", server.port),
        &snowmint_lease::LeaseUrl::parse(&server.url(opts))
            .unwrap()
            .settings,
    )
    .unwrap();
    let before = s.now_ms().unwrap();
    s.init().unwrap();
    let space = |ns: &str| SlotSpace::new(three_bits(), &[("datacenter", 5)], Some(ns)).unwrap();
    let early = s.claim(&space("early"), &req(60_000, 1_000)).unwrap();
    assert!(early.prev_hwm_ms >= before + 3_000, "{early:?}");
    // Idempotent: a second init keeps the fence.
    s.init().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.now_ms().unwrap() <= early.prev_hwm_ms {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(50));
    }
    let late = s.claim(&space("late"), &req(60_000, 1_000)).unwrap();
    assert_eq!(late.prev_hwm_ms, 0, "{late:?}");

    // The marker gone, the records kept: fenced, though init vouched.
    server.cmd(&[
        "DEL",
        &format!("snowmint:lease:{{{}}}:marker", space("late").key()),
    ]);
    let before = s.now_ms().unwrap();
    let again = s.claim(&space("late"), &req(60_000, 1_000)).unwrap();
    assert!(again.prev_hwm_ms >= before + 3_000, "{again:?}");

    match s.claim(&space("late"), &req(60_000, 2_001)) {
        Err(StoreError::Refused(m)) => {
            assert!(m.contains("above redis_max_window_ms (2000)"), "{m}")
        }
        other => panic!("{other:?}"),
    }
}

/// The store at `server` with the data-loss tests' settings (`LOSS`).
fn loss_store(server: &Scratch) -> RedisStore {
    let settings = snowmint_lease::LeaseUrl::parse(&server.url(LOSS))
        .unwrap()
        .settings;
    RedisStore::with_settings(&format!("redis://127.0.0.1:{}/0", server.port), &settings).unwrap()
}

#[track_caller]
fn is_lost<T: std::fmt::Debug>(r: Result<T, StoreError>) -> String {
    match r {
        Err(StoreError::Lost(m)) => m,
        other => panic!("expected Lost, got {other:?}"),
    }
}

/// A rollback brings back a replaced holder's record: H1 claims slot 0, the
/// server saves, H1 expires and H2 claims slot 0, then the server is killed
/// and restarts from the old dump, so H1's record (token and counter
/// included) is back and H2's is gone. H1 must be lost, before a new claim
/// (the marker names the old server) and after it (the record carries the
/// old epoch), and the new claim starts above the fence, above H2's `hwm`.
#[test]
fn a_holder_brought_back_by_a_rollback_is_lost() {
    let mut server = Scratch::start("redis-rollback", &["--dbfilename", "dump.rdb"]);
    let s = loss_store(&server);
    let space = SlotSpace::new(three_bits(), &[("datacenter", 5)], Some("loss")).unwrap();
    let at_zero = |ttl_ms| ClaimRequest {
        prefer: Some(0),
        ttl_ms,
        window_ms: 1_000,
    };
    let h1 = s.claim(&space, &at_zero(300)).unwrap();
    assert_eq!(h1.holder.slot, 0);
    server.cmd(&["SAVE"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.now_ms().unwrap() <= h1.expires_ms.unwrap() {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(20));
    }
    let h2 = s.claim(&space, &at_zero(60_000)).unwrap();
    assert_eq!(h2.holder.slot, 0, "{h2:?}");
    let h2_hwm = s.renew(&space, &h2.holder, 60_000, 1_000).unwrap().hwm_ms;

    server.restart();
    // A new connection (the old one died with the server).
    let s = loss_store(&server);
    assert_eq!(field_at(&server, &space, "token"), h1.holder.token);
    // Before any new claim: the marker names the old server.
    let m = is_lost(s.renew(&space, &h1.holder, 60_000, 1_000));
    assert!(m.contains("lost data"), "{m}");
    is_lost(s.release(&space, &h1.holder, 0));

    // A new claim (of slot 1: H1's record stays in slot 0) is fenced:
    // redis_max_window_ms 2,000 + 2 * max_skew_ms 500, above H2's hwm.
    let before = s.now_ms().unwrap();
    let h3 = s
        .claim(
            &space,
            &ClaimRequest {
                prefer: Some(1),
                ..at_zero(60_000)
            },
        )
        .unwrap();
    assert_eq!(h3.holder.slot, 1, "{h3:?}");
    assert!(h3.prev_hwm_ms >= before + 3_000, "{h3:?}");
    assert!(h3.prev_hwm_ms > h2_hwm, "{h3:?}, H2's hwm {h2_hwm}");
    // The marker names this server now, with the new epoch; H1's record
    // (token and counter still matching) carries the old one.
    assert_eq!(field_at(&server, &space, "token"), h1.holder.token);
    let m = is_lost(s.renew(&space, &h1.holder, 60_000, 1_000));
    assert!(m.contains("lost data"), "{m}");
    is_lost(s.release(&space, &h1.holder, 0));
    // H3, claimed under the new epoch, renews and releases.
    s.renew(&space, &h3.holder, 60_000, 1_000).unwrap();
    s.release(&space, &h3.holder, h3.hwm_ms).unwrap();
}

/// Slot 0's field `name` on `server`.
fn field_at(server: &Scratch, space: &SlotSpace, name: &str) -> String {
    redis::cmd("HGET")
        .arg(slot_key(space, 0))
        .arg(name)
        .query(&mut server.conn().unwrap())
        .unwrap()
}

/// The fence after a wipe is at least store time + redis_max_window_ms + 2 *
/// max_skew_ms: a reservation confirmed while the store clock was max_skew_ms
/// ahead must stay below it after a step back of 2 * max_skew_ms.
#[test]
fn the_fence_after_a_wipe_spans_two_skews() {
    let server = Scratch::start("redis-fence", &[]);
    let opts = "namespace=fence&redis_max_window_ms=2000&max_skew_ms=4000";
    let settings = snowmint_lease::LeaseUrl::parse(&server.url(opts))
        .unwrap()
        .settings;
    let s = RedisStore::with_settings(&format!("redis://127.0.0.1:{}/0", server.port), &settings)
        .unwrap();
    let space = SlotSpace::new(three_bits(), &[("datacenter", 5)], Some("fence")).unwrap();
    s.claim(&space, &req(60_000, 1_000)).unwrap();
    server.cmd(&["FLUSHALL"]);
    let before = s.now_ms().unwrap();
    let c = s.claim(&space, &req(60_000, 1_000)).unwrap();
    assert!(
        c.prev_hwm_ms >= before + 2_000 + 2 * 4_000,
        "fence {} is below now {before} + 10,000",
        c.prev_hwm_ms
    );
    // `lease init` fences new spaces by the same span.
    server.cmd(&["FLUSHALL"]);
    let before = s.now_ms().unwrap();
    s.init().unwrap();
    let init_fence: u64 = redis::cmd("HGET")
        .arg("snowmint:lease:init")
        .arg("fence_ms")
        .query(&mut server.conn().unwrap())
        .unwrap();
    assert!(
        init_fence >= before + 10_000,
        "init fence {init_fence}, now {before}"
    );
}

/// A marker and records written before epochs existed (no `epoch` field):
/// the holder is lost, and the next claim is fenced and starts an epoch.
#[test]
fn records_without_an_epoch_are_fenced_and_lost() {
    let server = Scratch::start("redis-noepoch", &[]);
    let s = loss_store(&server);
    let space = SlotSpace::new(three_bits(), &[("datacenter", 5)], Some("loss")).unwrap();
    let old = s.claim(&space, &req(60_000, 1_000)).unwrap();
    let marker = format!("snowmint:lease:{{{}}}:marker", space.key());
    server.cmd(&["HDEL", &marker, "epoch"]);
    server.cmd(&["HDEL", &slot_key(&space, old.holder.slot), "epoch"]);
    is_lost(s.renew(&space, &old.holder, 60_000, 1_000));
    is_lost(s.release(&space, &old.holder, 0));
    let before = s.now_ms().unwrap();
    let new = s.claim(&space, &req(60_000, 1_000)).unwrap();
    assert!(new.prev_hwm_ms >= before + 3_000, "{new:?}");
    s.renew(&space, &new.holder, 60_000, 1_000).unwrap();
    // The old holder's record, still without an epoch, stays lost.
    is_lost(s.renew(&space, &old.holder, 60_000, 1_000));
}

#[test]
fn hwm_too_far_is_refused() {
    let ns = Ns::new("toofar");
    common::hwm_too_far_is_refused(&server_url(), &ns.0);
}
