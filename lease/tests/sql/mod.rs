//! The SQL store's tests, shared by `store_postgres.rs` and `store_mysql.rs`
//! (one suite, two servers). Every wait is bounded.
#![allow(dead_code)]

use std::collections::HashSet;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use snowmint::{Layout, Options};
use snowmint_lease::{ClaimRequest, LeasedGenerator, SlotSpace, SqlStore, Store, StoreError};

use crate::common::*;

/// One server under test.
pub struct Db {
    /// The connection URL (from the environment).
    pub url: String,
    /// The store's name in messages (`postgres`, `mysql`).
    pub kind: &'static str,
    pub open: fn(&str, u64) -> SqlStore,
    /// Overwrites a space's stored text (to test the check).
    pub corrupt_space: fn(&str, &str),
}

impl Db {
    pub fn from_env(
        var: &str,
        kind: &'static str,
        open: fn(&str, u64) -> SqlStore,
        corrupt_space: fn(&str, &str),
    ) -> Db {
        let url = std::env::var(var).unwrap_or_else(|_| {
            panic!("{var} is not set: the {kind} store is tested against a real server (scripts/test-stores {kind})")
        });
        assert!(!url.contains('?'), "{var}: no query in the URL, please");
        Db {
            url,
            kind,
            open,
            corrupt_space,
        }
    }

    pub fn store(&self) -> SqlStore {
        (self.open)(&self.url, 5000)
    }

    /// The lease URL with `query` (`namespace=...&ttl_ms=...`).
    pub fn lease_url(&self, query: &str) -> String {
        format!("{}?{query}", self.url)
    }

    /// The URL with other credentials.
    pub fn with_userinfo(&self, userinfo: &str) -> String {
        let (scheme, rest) = self.url.split_once("://").unwrap();
        let host = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
        format!("{scheme}://{userinfo}@{host}")
    }
}

/// A namespace no other run (or test) shares.
pub fn unique_ns(tag: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "t{}-{}-{tag}",
        std::process::id(),
        nanos % 1_000_000_000_000
    )
}

fn system_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// A layout whose `worker` field has `bits` bits.
fn layout_with_worker(bits: u32) -> Layout {
    Layout::new(
        1288834974657,
        1,
        &[
            ("timestamp", 41),
            ("datacenter", 5),
            ("worker", bits),
            ("sequence", 17 - bits),
        ],
    )
    .unwrap()
}

pub fn contract(db: &Db) {
    let store = db.store();
    // The test URLs have no password: the description is the URL itself.
    assert_eq!(store.describe(), db.url);
    // The clock is near the local one.
    let local = system_ms();
    let remote = store.now_ms().unwrap();
    assert!(
        local.abs_diff(remote) < 1000,
        "local {local}, store {remote}"
    );

    let ns = unique_ns("contract");
    let space = SlotSpace::new(twitter(), &[("datacenter", 1)], Some(&ns)).unwrap();
    let req = ClaimRequest {
        prefer: None,
        ttl_ms: 20_000,
        window_ms: 5_000,
    };
    let before = store.now_ms().unwrap();
    let claims: Vec<_> = (0..32)
        .map(|_| store.claim(&space, &req).unwrap())
        .collect();
    let slots: HashSet<u64> = claims.iter().map(|c| c.holder.slot).collect();
    assert_eq!(slots, (0..32).collect::<HashSet<u64>>());
    for c in &claims {
        assert_eq!(c.prev_hwm_ms, 0, "{c:?}");
        assert_eq!(c.holder.counter, 1);
        assert_eq!(c.holder.token.len(), 32);
        assert!(c.hwm_ms >= before + 5_000, "{c:?}");
        assert!(c.expires_ms.unwrap() >= before + 20_000, "{c:?}");
    }
    assert_eq!(
        store.claim(&space, &req).unwrap_err(),
        StoreError::NoFreeSlot
    );

    // Renew raises hwm and expiry.
    std::thread::sleep(Duration::from_millis(30));
    let c0 = &claims[0];
    let r = store.renew(&space, &c0.holder, 30_000, 8_000).unwrap();
    assert!(r.hwm_ms > c0.hwm_ms, "{r:?} {c0:?}");
    assert!(r.expires_ms.unwrap() > c0.expires_ms.unwrap());
    // hwm is never lowered by a renewal with a shorter window.
    let r2 = store.renew(&space, &c0.holder, 30_000, 10).unwrap();
    assert_eq!(r2.hwm_ms, r.hwm_ms);

    // Release writes last_ms and frees; the preferred slot is taken again,
    // with the released hwm as prev_hwm.
    let c1 = &claims[1];
    let last = before - 1234;
    store.release(&space, &c1.holder, last).unwrap();
    let again = store
        .claim(
            &space,
            &ClaimRequest {
                prefer: Some(c1.holder.slot),
                ..req
            },
        )
        .unwrap();
    assert_eq!(again.holder.slot, c1.holder.slot);
    assert_eq!(again.holder.counter, 2);
    assert_eq!(again.prev_hwm_ms, last);
    assert_ne!(again.holder.token, c1.holder.token);
    // The old holder is stale now: renew and release are Lost.
    assert!(matches!(
        store.renew(&space, &c1.holder, 1000, 1000),
        Err(StoreError::Lost(_))
    ));
    assert!(matches!(
        store.release(&space, &c1.holder, 0),
        Err(StoreError::Lost(_))
    ));
    // A wrong token is Lost too, and changes nothing.
    let mut forged = claims[2].holder.clone();
    forged.token = "0".repeat(32);
    assert!(matches!(
        store.release(&space, &forged, 0),
        Err(StoreError::Lost(_))
    ));
    assert!(store
        .renew(&space, &claims[2].holder, 20_000, 5_000)
        .is_ok());

    // A second namespace is independent; prefer works for a slot never used.
    let ns2 = unique_ns("contract2");
    let space2 = SlotSpace::new(twitter(), &[("datacenter", 1)], Some(&ns2)).unwrap();
    let other = store
        .claim(
            &space2,
            &ClaimRequest {
                prefer: Some(17),
                ..req
            },
        )
        .unwrap();
    assert_eq!(
        (other.holder.slot, other.holder.counter, other.prev_hwm_ms),
        (17, 1, 0)
    );
    let other2 = store.claim(&space2, &req).unwrap();
    assert_eq!(other2.holder.slot, 0, "the lowest slot never used");

    // Release everything (the namespaces are this run's own anyway).
    for c in claims.iter().skip(2).chain([&again, &other, &other2]) {
        store
            .release(&space, &c.holder, 0)
            .or_else(|_| store.release(&space2, &c.holder, 0))
            .unwrap();
    }
}

pub fn expiry(db: &Db) {
    let store = db.store();
    // A 1-bit leased field: two slots.
    let layout = layout_with_worker(1);
    let space = SlotSpace::new(layout, &[("datacenter", 2)], Some(&unique_ns("expiry"))).unwrap();
    let short = ClaimRequest {
        prefer: None,
        ttl_ms: 300,
        window_ms: 1_000,
    };
    let long = ClaimRequest {
        ttl_ms: 20_000,
        ..short
    };
    let a = store.claim(&space, &short).unwrap();
    let b = store.claim(&space, &long).unwrap();
    assert_ne!(a.holder.slot, b.holder.slot);
    assert_eq!(
        store.claim(&space, &long).unwrap_err(),
        StoreError::NoFreeSlot
    );
    std::thread::sleep(Duration::from_millis(450));
    // A's claim expired: the next claimer takes its slot, above its hwm.
    let c = store.claim(&space, &long).unwrap();
    assert_eq!(c.holder.slot, a.holder.slot);
    assert_eq!(c.holder.counter, a.holder.counter + 1);
    assert!(c.prev_hwm_ms >= a.hwm_ms, "{c:?} {a:?}");
    assert!(matches!(
        store.renew(&space, &a.holder, 300, 1000),
        Err(StoreError::Lost(_))
    ));
    store.release(&space, &b.holder, 0).unwrap();
    store.release(&space, &c.holder, 0).unwrap();
}

pub fn space_text_is_checked(db: &Db) {
    let store = db.store();
    let space = SlotSpace::new(twitter(), &[("datacenter", 3)], Some(&unique_ns("text"))).unwrap();
    let req = ClaimRequest {
        prefer: None,
        ttl_ms: 5_000,
        window_ms: 1_000,
    };
    let c = store.claim(&space, &req).unwrap();
    store.release(&space, &c.holder, 0).unwrap();
    (db.corrupt_space)(&db.url, space.key());
    match store.claim(&space, &req) {
        Err(StoreError::BadRecord(m)) => assert!(m.contains(space.key()), "{m}"),
        other => panic!("{other:?}"),
    }
}

pub fn through_the_driver(db: &Db) {
    let url = db.lease_url(&format!(
        "namespace={}&ttl_ms=3000&renew_ms=100&window_ms=2000",
        unique_ns("driver")
    ));
    let open = || LeasedGenerator::open(&url, twitter(), &[("datacenter", 4)], Options::default());
    let a = open().unwrap();
    let b = open().unwrap();
    assert_ne!(a.slot(), b.slot());
    let mut ids = HashSet::new();
    for _ in 0..100 {
        assert!(ids.insert(a.next_id().unwrap().get()));
        assert!(ids.insert(b.next_id().unwrap().get()));
    }
    let info = a.info();
    assert_eq!(info.field, "worker");
    assert!(
        info.store.starts_with(db.url.split("://").next().unwrap()),
        "{info:?}"
    );
    assert!(info.expires_ms.is_some());
    // The background thread renews.
    std::thread::sleep(Duration::from_millis(400));
    let later = a.info();
    assert!(later.renewals >= 1, "{later:?}");
    assert!(later.hwm_ms > info.hwm_ms);
    assert_eq!(later.last_error, None);
    let slot = a.slot();
    let last = a.next_id().unwrap();
    a.close().unwrap();
    // The slot is free again and the next holder starts above the last ID.
    let url_prefer = LeaseUrl::parse(&url).unwrap();
    let c = LeasedGenerator::open_with(
        &url_prefer,
        twitter(),
        &[("datacenter", 4)],
        Options::default(),
        Some(slot),
        snowmint::SystemClock,
    )
    .unwrap();
    assert_eq!(c.slot(), slot);
    assert!(c.next_id().unwrap() > last);
    c.close().unwrap();
    b.close().unwrap();
}

use snowmint_lease::LeaseUrl;

pub fn racing_claimers(db: &Db) {
    let store: Arc<dyn Store> = Arc::new(db.store());
    let space = Arc::new(
        SlotSpace::new(
            layout_with_worker(3),
            &[("datacenter", 5)],
            Some(&unique_ns("race")),
        )
        .unwrap(),
    );
    let barrier = Arc::new(Barrier::new(8));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let (store, space, barrier) =
                (Arc::clone(&store), Arc::clone(&space), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                store.claim(
                    &space,
                    &ClaimRequest {
                        prefer: None,
                        ttl_ms: 10_000,
                        window_ms: 1_000,
                    },
                )
            })
        })
        .collect();
    let claims: Vec<_> = threads
        .into_iter()
        .map(|t| t.join().unwrap().unwrap())
        .collect();
    let slots: HashSet<u64> = claims.iter().map(|c| c.holder.slot).collect();
    assert_eq!(slots, (0..8).collect::<HashSet<u64>>());
    // Separate store objects (separate connections) race the same way.
    let space2 = Arc::new(
        SlotSpace::new(
            layout_with_worker(3),
            &[("datacenter", 5)],
            Some(&unique_ns("race2")),
        )
        .unwrap(),
    );
    let barrier = Arc::new(Barrier::new(8));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let store = db.store();
            let (space, barrier) = (Arc::clone(&space2), Arc::clone(&barrier));
            std::thread::spawn(move || {
                store.now_ms().unwrap(); // connected before the start
                barrier.wait();
                store.claim(
                    &space,
                    &ClaimRequest {
                        prefer: Some(0),
                        ttl_ms: 10_000,
                        window_ms: 1_000,
                    },
                )
            })
        })
        .collect();
    let slots: HashSet<u64> = threads
        .into_iter()
        .map(|t| t.join().unwrap().unwrap().holder.slot)
        .collect();
    assert_eq!(slots, (0..8).collect::<HashSet<u64>>());
}

fn open_error(url: &str) -> (String, Duration) {
    let start = Instant::now();
    let e = LeasedGenerator::open(url, twitter(), &[("datacenter", 1)], Options::default())
        .unwrap_err();
    let took = start.elapsed();
    assert_eq!(e.code(), "lease_unavailable", "{e}");
    eprintln!("{url} -> {e} ({took:?})");
    (e.to_string(), took)
}

pub fn unreachable(db: &Db) {
    let (scheme, rest) = db.url.split_once("://").unwrap();
    let userinfo = rest.rsplit_once('@').map(|(u, _)| u);
    let closed = match userinfo {
        Some(u) => format!("{scheme}://{u}@127.0.0.1:1/test?timeout_ms=2000"),
        None => format!("{scheme}://127.0.0.1:1/test?timeout_ms=2000"),
    };
    let (m, took) = open_error(&closed);
    assert!(took < Duration::from_millis(3000), "{took:?}");
    assert!(m.contains("127.0.0.1:1"), "{m}");
    assert!(m.to_lowercase().contains("refused"), "{m}");

    // A port that accepts but never answers: the timeout bounds the call.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let hung = format!("{scheme}://root@127.0.0.1:{port}/test?timeout_ms=1000");
    let (m, took) = open_error(&hung);
    assert!(took < Duration::from_millis(2500), "{took:?}");
    assert!(m.contains(&format!("127.0.0.1:{port}")), "{m}");
    drop(silent);
}

/// A user the server does not know, and a wrong password: `lease_unavailable`
/// saying authentication failed, without the password.
pub fn wrong_credentials(db: &Db, userinfos: &[&str]) {
    for u in userinfos {
        let url = format!("{}?timeout_ms=3000", db.with_userinfo(u));
        let (m, _) = open_error(&url);
        assert!(m.contains("authentication failed"), "{m}");
        assert!(!m.contains("s3cret-pw"), "password in the message: {m}");
        if u.contains(':') {
            assert!(m.contains(":***@"), "{m}");
        }
    }
}

pub fn crash(db: &Db) {
    crate::common::crash(&db.url, &unique_ns("crash"), true, &|| {});
}

pub fn clock_skew(db: &Db) {
    crate::common::clock_skew(&db.url, &unique_ns("skew"));
}

pub fn store_down(db: &Db) {
    crate::common::store_down(&db.url, &unique_ns("down"));
}

/// The restart test on the dedicated server of `<VAR>_RESTART_URL`,
/// restarted by `<VAR>_RESTART_CMD` (`scripts/test-stores` sets both).
pub fn restart(var: &str) {
    let url_var = format!("{var}_RESTART_URL");
    let cmd_var = format!("{var}_RESTART_CMD");
    let get = |v: &str| {
        std::env::var(v).unwrap_or_else(|_| {
            panic!(
                "{v} is not set: the restart test needs a server of its own (scripts/test-stores)"
            )
        })
    };
    crate::common::restart_keeps_hwm(&get(&url_var), &unique_ns("restart"), &get(&cmd_var));
}

pub fn forty_processes(db: &Db) {
    let url = db.lease_url(&format!("namespace={}", unique_ns("forty")));
    crate::common::forty_processes_thirty_two_slots(&url, &format!("{}-forty", db.kind));
}

/// Holder A is stopped (SIGSTOP) past its TTL on the only free slot; B takes
/// the slot and issues; A, continued, never issues above its last confirmed
/// reservation, stops, and every ID of B is above every ID of A.
pub fn paused_holder(db: &Db) {
    let ns = unique_ns("paused");
    let store = db.store();
    let space = SlotSpace::new(twitter(), &[("datacenter", 1)], Some(&ns)).unwrap();
    // Everything but slot 7 is held by this test.
    let mut fillers = Vec::new();
    for slot in (0..32).filter(|&s| s != 7) {
        let c = store
            .claim(
                &space,
                &ClaimRequest {
                    prefer: Some(slot),
                    ttl_ms: 60_000,
                    window_ms: 1_000,
                },
            )
            .unwrap();
        assert_eq!(c.holder.slot, slot);
        fillers.push(c);
    }
    let url = db.lease_url(&format!(
        "namespace={ns}&ttl_ms=1500&renew_ms=300&window_ms=1000&timeout_ms=1000"
    ));
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
    a.wait_for(20, |l| ids(l).len() >= 100);
    assert_eq!(value(&a.lines(), "slot"), Some(7));
    let pid = a.child.id() as i32;
    // SAFETY: kill(2) on the pid of a child this test spawned and still owns.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    let a_before = ids(&a.lines());
    std::thread::sleep(Duration::from_millis(2500));

    let dir = temp_dir(&format!("{}-paused", db.kind));
    let go = dir.join("go");
    let go_arg = go.display().to_string();
    let mut b = Probe::spawn(
        &url,
        &[
            "--fixed",
            "datacenter=1",
            "--count",
            "100",
            "--interval-ms",
            "1",
            "--hold-until-file",
            &go_arg,
        ],
    );
    b.wait_for(20, |l| l.iter().any(|x| x.starts_with("hwm ")));
    assert_eq!(value(&b.lines(), "slot"), Some(7), "{:?}", b.lines());

    // SAFETY: kill(2) on the pid of a child this test spawned and still owns.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
    let a_out = a.finish(20);
    std::fs::write(&go, "").unwrap();
    let b_out = b.finish(20);

    let a_ids = ids(&a_out);
    let b_ids = ids(&b_out);
    assert!(a_ids.len() >= a_before.len());
    let e = errors(&a_out);
    assert!(!e.is_empty(), "{a_out:?}");
    assert!(e[0].starts_with("lease_expired "), "{e:?}");
    // A's last confirmed reservation bounds everything A issued.
    let a_hwm = value(&a_out, "hwm").unwrap();
    let a_max = *a_ids.iter().max().unwrap();
    assert!(
        time_of(a_max) <= a_hwm,
        "A issued {} above its hwm {a_hwm}",
        time_of(a_max)
    );
    assert!(errors(&b_out).is_empty(), "{b_out:?}");
    assert_eq!(b_ids.len(), 100);
    let b_min = *b_ids.iter().min().unwrap();
    assert!(b_min > a_max, "B issued {b_min} <= A's {a_max}");
    let all: HashSet<u64> = a_ids.iter().chain(&b_ids).copied().collect();
    assert_eq!(all.len(), a_ids.len() + b_ids.len());
    for c in &fillers {
        store.release(&space, &c.holder, 0).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Calls one after another reuse one connection: the connection is back in
/// the pool before a call returns (a regression: it was returned after, so a
/// holder renewing back to back opened a new connection whenever its thread
/// was preempted in between, and 48 such holders on two cores ran PostgreSQL
/// out of connections). Eight holders on eight threads make that likely.
pub fn calls_reuse_one_connection(db: &Db) {
    let ns = unique_ns("reuse");
    let opened: Vec<u64> = std::thread::scope(|scope| {
        let holders: Vec<_> = (0..8)
            .map(|_| {
                let ns = ns.as_str();
                scope.spawn(move || {
                    let store = db.store();
                    let space = SlotSpace::new(twitter(), &[("datacenter", 5)], Some(ns)).unwrap();
                    let req = ClaimRequest {
                        prefer: None,
                        ttl_ms: 30_000,
                        window_ms: 1_000,
                    };
                    let claim = store.claim(&space, &req).unwrap();
                    for _ in 0..200 {
                        store.renew(&space, &claim.holder, 30_000, 1_000).unwrap();
                    }
                    store
                        .release(&space, &claim.holder, claim.prev_hwm_ms)
                        .unwrap();
                    store.connections_opened()
                })
            })
            .collect();
        holders.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(opened, vec![1; 8], "connections opened per store");
}

/// A TCP relay to `upstream` that can freeze: what arrives is then held,
/// never delivered, while both connections stay open (as a stopped server or
/// a hung middlebox does: the kernel still acknowledges, so no TCP-level
/// timeout fires). Thawed on drop, which lets its threads end.
struct Freezer {
    port: u16,
    frozen: Arc<std::sync::atomic::AtomicBool>,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

impl Freezer {
    fn start(upstream: &str) -> Freezer {
        use std::io::{Read, Write};
        use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let frozen = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let (f, s, upstream) = (Arc::clone(&frozen), Arc::clone(&stop), upstream.to_string());
        std::thread::spawn(move || {
            while !s.load(SeqCst) {
                let Ok((client, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                client.set_nonblocking(false).unwrap();
                let Ok(server) = std::net::TcpStream::connect(&upstream) else {
                    continue;
                };
                let pairs = [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ];
                for (mut from, mut to) in pairs {
                    let f = Arc::clone(&f);
                    std::thread::spawn(move || {
                        let mut buf = [0u8; 16 * 1024];
                        while let Ok(n @ 1..) = from.read(&mut buf) {
                            while f.load(SeqCst) {
                                std::thread::sleep(Duration::from_millis(20));
                            }
                            if to.write_all(&buf[..n]).is_err() {
                                break;
                            }
                        }
                        let _ = to.shutdown(std::net::Shutdown::Both);
                    });
                }
            }
        });
        Freezer { port, frozen, stop }
    }

    fn freeze(&self, on: bool) {
        self.frozen.store(on, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Drop for Freezer {
    fn drop(&mut self) {
        self.freeze(false);
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Runs `f` on a thread; panics if it has not returned within `limit`
/// (a call the store does not bound itself would hang there).
fn returns_within<T: Send + 'static>(
    limit: Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> (T, Duration) {
    let (tx, rx) = std::sync::mpsc::channel();
    let start = Instant::now();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    let r = rx
        .recv_timeout(limit)
        .unwrap_or_else(|_| panic!("the call did not return within {limit:?} on its own"));
    (r, start.elapsed())
}

/// A store call returns in bounded time on its own, without the driver's
/// timeout around it: against a port that accepts and never answers (the
/// handshake waits), and against a server that stops answering in the middle
/// of a session (a statement waits). The store then opens a new connection.
pub fn calls_are_bounded_on_their_own(db: &Db) {
    let (scheme, rest) = db.url.split_once("://").unwrap();
    let (userinfo, hostpath) = rest.rsplit_once('@').unwrap();
    let (hostport, path) = hostpath.split_once('/').unwrap();
    let limit = Duration::from_secs(15);

    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let store = (db.open)(
        &format!("{scheme}://{userinfo}@127.0.0.1:{port}/{path}"),
        1000,
    );
    let (r, took) = returns_within(limit, move || store.now_ms());
    assert!(matches!(r, Err(StoreError::Unreachable(_))), "{r:?}");
    assert!(took < Duration::from_millis(3000), "{took:?}");
    drop(silent);

    let freezer = Freezer::start(hostport);
    let url = format!("{scheme}://{userinfo}@127.0.0.1:{}/{path}", freezer.port);
    let store = Arc::new((db.open)(&url, 1000));
    store.now_ms().unwrap();
    freezer.freeze(true);
    let s = Arc::clone(&store);
    let (r, took) = returns_within(limit, move || s.now_ms());
    assert!(
        matches!(&r, Err(StoreError::Unreachable(m)) if m.contains("timed out")),
        "{r:?}"
    );
    assert!(took < Duration::from_millis(3000), "{took:?}");
    freezer.freeze(false);
    // The timed-out connection was dropped: the next call opens another.
    store.now_ms().unwrap();
    assert_eq!(store.connections_opened(), 2);
}

/// The slot space of the rows the hand-made tables of [`bad_hwm_is_refused`]
/// hold (its namespace is `bad-hwm`).
pub fn bad_hwm_space() -> SlotSpace {
    SlotSpace::new(twitter(), &[("datacenter", 1)], Some("bad-hwm")).unwrap()
}

/// The hwm column types and values of [`bad_hwm_is_refused`]'s cases: the
/// column's SQL type, the value written (SQL), and how the refusal shows it.
pub const BAD_HWM_CASES: [(&str, &str, &str); 3] = [
    ("DECIMAL(20,3)", "1795000000000.5", "\"1795000000000.500\""),
    ("VARCHAR(40)", "'soon'", "\"soon\""),
    ("BIGINT", "-5", "-5"),
];

/// A claim on a store whose `snowmint_lease_slot` was made by hand, with a
/// row of [`bad_hwm_space`] (slot 0, free) whose `hwm_ms` is not a whole
/// number >= 0, is a bad record naming the column and the value, never a
/// claim starting from hwm 0.
pub fn bad_hwm_is_refused(store: &SqlStore, shown: &str) {
    let space = bad_hwm_space();
    let req = ClaimRequest {
        prefer: None,
        ttl_ms: 5_000,
        window_ms: 1_000,
    };
    for prefer in [None, Some(0)] {
        match store.claim(&space, &ClaimRequest { prefer, ..req }) {
            Err(StoreError::BadRecord(m)) => assert!(
                m.contains("hwm_ms")
                    && m.contains(&format!("= {shown} "))
                    && m.contains(space.key()),
                "{m}"
            ),
            other => panic!("{shown}: {other:?}"),
        }
    }
}

/// The hand-made slot table of [`bad_hwm_is_refused`] (`hwm_type` for
/// `hwm_ms`) and its one row (`hwm` as SQL), as statements.
pub fn bad_hwm_table(hwm_type: &str, hwm: &str) -> [String; 2] {
    [
        format!(
            "CREATE TABLE snowmint_lease_slot (space_key VARCHAR(64) NOT NULL, \
             slot BIGINT NOT NULL, token VARCHAR(32) NOT NULL, counter BIGINT NOT NULL, \
             expires_ms BIGINT NOT NULL, hwm_ms {hwm_type} NOT NULL, \
             PRIMARY KEY (space_key, slot))"
        ),
        format!(
            "INSERT INTO snowmint_lease_slot VALUES ('{}', 0, '', 3, 0, {hwm})",
            bad_hwm_space().key()
        ),
    ]
}
