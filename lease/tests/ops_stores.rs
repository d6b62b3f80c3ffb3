//! The operations (`snowmint_lease::ops`: init, list, release) on the stores
//! across machines, against real servers: `SNOWMINT_TEST_POSTGRES_URL`,
//! `SNOWMINT_TEST_MYSQL_URL`, `SNOWMINT_TEST_REDIS_URL`,
//! `SNOWMINT_TEST_ETCD_URL`, `SNOWMINT_TEST_ZOOKEEPER_URL` (`scripts/test-stores` sets those of the stores it
//! runs; a test whose variable is missing or whose server does not answer
//! fails). Each test has namespaces of its own run. Every wait is bounded.
#![cfg(any(
    feature = "postgres",
    feature = "mysql",
    feature = "redis",
    feature = "etcd",
    feature = "zookeeper"
))]

mod ops_common;
use ops_common::*;

fn server(var: &str) -> String {
    std::env::var(var)
        .unwrap_or_else(|_| panic!("{var} must name a server; scripts/test-stores sets it"))
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
    // The poisoning claim's window must be within the space's limit.
    repair(
        &format!(
            "{}&redis_max_window_ms={TEN_YEARS_MS}",
            url("SNOWMINT_TEST_REDIS_URL", "rdr")
        ),
        true,
    );
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
