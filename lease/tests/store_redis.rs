#![cfg(feature = "redis")]
//! The Redis store against a real server: `SNOWMINT_TEST_REDIS_URL`
//! (`SNOWMINT_STORES=redis cargo xtask test stores` sets it; the tests fail without it). The
//! contract and fault suites every store runs (`lease/test-support`), then
//! what only Redis has: expiry and foreign records as Redis keeps them,
//! authentication, and data loss, failover and the fence on throwaway
//! servers. Every test uses namespaces of its own run (pid and time) and
//! deletes their keys at the end. Every wait is bounded.

use std::collections::HashSet;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use snowmint::{Layout, Options, SystemClock};
use snowmint_lease::{ClaimRequest, LeasedGenerator, RedisStore, SlotSpace, Store, StoreError};
use snowmint_lease_test_support::*;

#[path = "store_redis/fence.rs"]
mod fence;
#[path = "store_redis/loss.rs"]
mod loss;
#[path = "store_redis/slot_rule.rs"]
mod slot_rule;

/// The Redis of `SNOWMINT_TEST_REDIS_URL`.
struct Redis;

impl Subject for Redis {
    const NAME: &'static str = "redis";
    const VAR: &'static str = "REDIS";
    const PROBE: &'static str = env!("CARGO_BIN_EXE_snowmint-lease-probe");
    // A renewal is one script: losing its reply loses the renewal.
    const ONE_ROUND_TRIP: bool = true;
    // The client's own timeout may answer before the driver's.
    const TIMEOUT_SAYS: &'static [&'static str] =
        &["no answer within 1000 ms", "timed out after 1000 ms"];
    type Ns = Ns;

    fn ns_on(server: &str, tag: &str) -> Ns {
        Ns::on(server, tag)
    }

    fn describe() -> String {
        Self::base()
    }

    fn at(host_port: &str) -> String {
        format!("redis://{host_port}/0")
    }

    fn url(ns: &str, query: &str) -> String {
        format!("{}?namespace={ns}&timeout_ms=2000&{query}", Self::base())
    }

    fn overwrite_space_text(space: &SlotSpace, text: &str) {
        let _: () = redis::cmd("SET")
            .arg(format!("snowmint:lease:{{{}}}:space", space.key()))
            .arg(text)
            .query(&mut redis_conn().unwrap())
            .unwrap();
    }
}

contract_suite!(Redis);
fault_suite!(Redis, clock);

fn server_url() -> String {
    Redis::base()
}

/// A namespace of this run and test on a server; its keys are deleted on
/// drop.
struct Ns(String, String);

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
    /// On the shared server (`lease init`'s fence passed).
    fn new(test: &str) -> Ns {
        Ns::on(&server_url(), test)
    }

    fn on(server: &str, test: &str) -> Ns {
        if server == server_url() {
            ready();
        }
        Ns(unique_ns(test), server.to_string())
    }
}

impl std::ops::Deref for Ns {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl Drop for Ns {
    /// Deletes the keys of every space whose namespace starts with ours.
    fn drop(&mut self) {
        let Ok(mut c) = redis::Client::open(self.1.as_str())
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

fn store() -> RedisStore {
    RedisStore::new(&server_url(), 2000).unwrap()
}

fn local_ms() -> u64 {
    SystemClock.precise_ms()
}

fn req(ttl_ms: u64, window_ms: u64) -> ClaimRequest {
    ClaimRequest::new(None, ttl_ms, window_ms)
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
