//! `snowmint lease init|list|release` on the stores across machines, against
//! real servers (`SNOWMINT_TEST_<STORE>_URL`, set by `scripts/test-stores`;
//! a missing variable or a server that does not answer fails). Built only
//! with the `store-tests` feature and a store's feature
//! (`cargo test -p snowmint-cli --no-default-features --features redis,store-tests`).

mod lease_cli;
use lease_cli::*;

fn url(var: &str, tag: &str) -> String {
    let server = std::env::var(var)
        .unwrap_or_else(|_| panic!("{var} must name a server; scripts/test-stores sets it"));
    format!(
        "{server}?namespace={}&ttl_ms=3000&renew_ms=200&window_ms=1500&timeout_ms=3000",
        unique_ns(tag)
    )
}

#[cfg(feature = "postgres")]
#[test]
fn postgres() {
    scenario(&url("SNOWMINT_TEST_POSTGRES_URL", "pg"), true);
}

#[cfg(feature = "mysql")]
#[test]
fn mysql() {
    scenario(&url("SNOWMINT_TEST_MYSQL_URL", "my"), true);
}

#[cfg(feature = "redis")]
#[test]
fn redis() {
    scenario(&url("SNOWMINT_TEST_REDIS_URL", "rd"), true);
    // A server that does not answer.
    fails(
        &[
            "lease",
            "list",
            "--store",
            "redis://127.0.0.1:1/0?timeout_ms=1000",
        ],
        "lease_unavailable",
    );
}

#[cfg(feature = "etcd")]
#[test]
fn etcd() {
    scenario(&url("SNOWMINT_TEST_ETCD_URL", "et"), true);
}
