//! The SQL store's own tests, shared by `store_postgres.rs` and
//! `store_mysql.rs` (one suite, two servers: [`sql_suite!`](crate::sql_suite)):
//! connections reused and every call bounded on its own, credentials refused,
//! and the hand-made tables of the bad-`hwm` tests. Every wait is bounded.

use std::sync::Arc;
use std::time::{Duration, Instant};

use snowmint::Options;
use snowmint_lease::{
    Claim, ClaimRequest, LeasedGenerator, SlotSpace, SqlStore, Store, StoreError,
};

use crate::{twitter, unique_ns, Subject};

/// An SQL server under test: a [`Subject`] whose URL is its [`Db`]'s (no
/// password: the store describes itself by its URL).
pub trait SqlServer {
    /// As [`Subject::NAME`].
    const NAME: &'static str;
    /// As [`Subject::VAR`].
    const VAR: &'static str;
    /// As [`Subject::PROBE`].
    const PROBE: &'static str;
    /// The clock server's variables, as [`Subject::CLOCK_SERVER`].
    const CLOCK_SERVER: &'static str = "CLOCK";
    /// The server (`SNOWMINT_TEST_<VAR>_URL`).
    fn db() -> Db;
    /// As [`Subject::overwrite_space_text`].
    fn overwrite_space_text(space: &SlotSpace, text: &str);
}

impl<T: SqlServer> Subject for T {
    const NAME: &'static str = T::NAME;
    const VAR: &'static str = T::VAR;
    const PROBE: &'static str = T::PROBE;
    const CLOCK_SERVER: &'static str = T::CLOCK_SERVER;
    type Ns = String;

    fn ns_on(_server: &str, tag: &str) -> String {
        unique_ns(tag)
    }

    fn describe() -> String {
        T::db().url
    }

    fn at(host_port: &str) -> String {
        T::db().at(host_port)
    }

    fn overwrite_space_text(space: &SlotSpace, text: &str) {
        T::overwrite_space_text(space, text)
    }
}

/// After a fenced claim `fenced` of `space`, the next claim (of slot 4)
/// starts at the same fence, not a new one.
pub fn next_claim_at_the_same_fence(
    store: &dyn Store,
    space: &SlotSpace,
    req: &ClaimRequest,
    fenced: &Claim,
) -> Claim {
    let req = ClaimRequest {
        prefer: Some(4),
        ..*req
    };
    let c = store.claim(space, &req).unwrap();
    assert_eq!(c.prev_hwm_ms, fenced.prev_hwm_ms, "{c:?} {fenced:?}");
    c
}

/// One server under test.
pub struct Db {
    /// The connection URL (from the environment).
    pub url: String,
    pub open: fn(&str, u64) -> SqlStore,
}

impl Db {
    /// The server of `var` (the `kind` store: `postgres`, `mysql`).
    pub fn from_env(var: &str, kind: &str, open: fn(&str, u64) -> SqlStore) -> Db {
        let url = std::env::var(var).unwrap_or_else(|_| {
            panic!("{var} is not set: the {kind} store is tested against a real server (SNOWMINT_STORES={kind} cargo xtask test stores)")
        });
        assert!(!url.contains('?'), "{var}: no query in the URL, please");
        Db { url, open }
    }

    pub fn store(&self) -> SqlStore {
        (self.open)(&self.url, 5000)
    }

    /// The URL with other credentials.
    pub fn with_userinfo(&self, userinfo: &str) -> String {
        let (scheme, rest) = self.url.split_once("://").unwrap();
        let host = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
        format!("{scheme}://{userinfo}@{host}")
    }

    /// The URL of a server at `host_port`, with this one's credentials and
    /// database.
    pub fn at(&self, host_port: &str) -> String {
        let (scheme, rest) = self.url.split_once("://").unwrap();
        let (userinfo, hostpath) = rest.rsplit_once('@').map_or(("", rest), |(u, h)| (u, h));
        let path = hostpath.split_once('/').map_or("", |(_, p)| p);
        let at = if userinfo.is_empty() { "" } else { "@" };
        format!("{scheme}://{userinfo}{at}{host_port}/{path}")
    }
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
                    let req = ClaimRequest::new(None, 30_000, 1_000);
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
    let req = ClaimRequest::new(None, 5_000, 1_000);
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
