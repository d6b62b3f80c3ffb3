//! The operations (`snowmint_lease::ops`: init, list, release) on the stores
//! across machines, against real servers: `SNOWMINT_TEST_POSTGRES_URL`,
//! `SNOWMINT_TEST_MYSQL_URL`, `SNOWMINT_TEST_REDIS_URL`,
//! `SNOWMINT_TEST_ETCD_URL`, `SNOWMINT_TEST_ZOOKEEPER_URL` (`cargo xtask test stores` sets those of the stores it
//! runs; a test whose variable is missing or whose server does not answer
//! fails). Each test has namespaces of its own run. Every wait is bounded.
#![cfg(any(
    feature = "postgres",
    feature = "mysql",
    feature = "redis",
    feature = "etcd",
    feature = "zookeeper"
))]

use snowmint_lease_test_support::ops::*;

fn server(var: &str) -> String {
    std::env::var(var)
        .unwrap_or_else(|_| panic!("{var} must name a server; cargo xtask test stores sets it"))
}

/// The lease URL of a new namespace on the server of `var`.
fn url(var: &str, tag: &str) -> String {
    format!(
        "{}?namespace={}&ttl_ms=3000&renew_ms=200&window_ms=1500&timeout_ms=3000",
        server(var),
        unique_ns(tag)
    )
}

#[cfg(feature = "postgres")]
#[test]
fn postgres_operations() {
    operations(&url("SNOWMINT_TEST_POSTGRES_URL", "pg"), true);
    expired(&url("SNOWMINT_TEST_POSTGRES_URL", "pgx"), true);
    repair(&url("SNOWMINT_TEST_POSTGRES_URL", "pgr"), true);
}

#[cfg(feature = "mysql")]
#[test]
fn mysql_operations() {
    operations(&url("SNOWMINT_TEST_MYSQL_URL", "my"), true);
    expired(&url("SNOWMINT_TEST_MYSQL_URL", "myx"), true);
    repair(&url("SNOWMINT_TEST_MYSQL_URL", "myr"), true);
}

#[cfg(feature = "redis")]
#[test]
fn redis_operations() {
    operations(&url("SNOWMINT_TEST_REDIS_URL", "rd"), true);
    expired(&url("SNOWMINT_TEST_REDIS_URL", "rdx"), true);
    // The poisoning claim's window must be within the space's limit, and a
    // space first claimed with redis_max_window_ms of ten years is fenced
    // ten years ahead unless an init key records settings that large: on a
    // server of its own, vouched for as never having served a holder.
    let fresh = FreshRedis::start(TEN_YEARS_MS);
    repair(
        &format!(
            "redis://127.0.0.1:{}/0?namespace={}&ttl_ms=3000&renew_ms=200&window_ms=1500\
             &timeout_ms=3000&redis_max_window_ms={TEN_YEARS_MS}",
            fresh.port,
            unique_ns("rdr")
        ),
        true,
    );
}

/// A throwaway `redis-server` (no persistence, killed on drop), vouched for
/// as a server it just started can be (not what `lease init` does): the
/// init key with fence 0 (it never served a holder, so no fence is owed
/// whatever the settings) recording `max_window_ms`.
#[cfg(feature = "redis")]
struct FreshRedis {
    child: std::process::Child,
    port: u16,
    dir: std::path::PathBuf,
}

#[cfg(feature = "redis")]
impl FreshRedis {
    fn start(max_window_ms: u64) -> FreshRedis {
        use std::time::{Duration, Instant};
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = std::env::temp_dir().join(unique_ns("fresh-redis"));
        std::fs::create_dir_all(&dir).unwrap();
        let child = std::process::Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("redis-server must be installed (the stores part installs it)");
        let r = FreshRedis { child, port, dir };
        let client = redis::Client::open(format!("redis://127.0.0.1:{port}/0")).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut c = loop {
            if let Ok(c) = client.get_connection_with_timeout(Duration::from_secs(1)) {
                break c;
            }
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        };
        let vouch = redis::Script::new(
            "local run = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
             local repl = string.match(redis.call('INFO', 'replication'), 'master_replid:(%x+)')
             return redis.call('HSET', KEYS[1], 'server', run .. '/' .. repl, 'fence_ms', '0',
               'max_window_ms', ARGV[1], 'max_skew_ms', '5000', 'latency_ms', '0')",
        );
        let _: i64 = vouch
            .key("snowmint:lease:init")
            .arg(max_window_ms)
            .invoke(&mut c)
            .unwrap();
        r
    }
}

#[cfg(feature = "redis")]
impl Drop for FreshRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(feature = "etcd")]
#[test]
fn etcd_operations() {
    operations(&url("SNOWMINT_TEST_ETCD_URL", "et"), true);
    expired(&url("SNOWMINT_TEST_ETCD_URL", "etx"), false);
    repair(&url("SNOWMINT_TEST_ETCD_URL", "etr"), true);
}

#[cfg(feature = "zookeeper")]
#[test]
fn zookeeper_operations() {
    operations(&url("SNOWMINT_TEST_ZOOKEEPER_URL", "zk"), true);
    expired(&url("SNOWMINT_TEST_ZOOKEEPER_URL", "zkx"), true);
    repair(&url("SNOWMINT_TEST_ZOOKEEPER_URL", "zkr"), true);
}

/// A server that does not answer is `lease_unavailable`, within the timeout.
#[cfg(feature = "redis")]
#[test]
fn unreachable_store_is_lease_unavailable() {
    let started = std::time::Instant::now();
    let e = snowmint_lease::ops::list("redis://127.0.0.1:1/0?timeout_ms=1000").unwrap_err();
    assert_eq!(e.code(), "lease_unavailable", "{e}");
    assert!(e.to_string().contains("redis://127.0.0.1:1/0"), "{e}");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    let e = snowmint_lease::ops::init("postgres://postgres@127.0.0.1:1/x?timeout_ms=1000");
    if cfg!(feature = "postgres") {
        assert_eq!(e.unwrap_err().code(), "lease_unavailable");
    }
}
