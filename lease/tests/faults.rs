//! Fault tests of the lease fencing on each network store, against the real
//! servers `scripts/test-stores` names (`SNOWMINT_TEST_<STORE>_URL`): the
//! scenarios are in `tests/common/faults.rs`, each built to fail when the
//! fencing it tests is removed. Every test uses namespaces of its own run.
#![cfg(any(
    feature = "postgres",
    feature = "mysql",
    feature = "redis",
    feature = "etcd"
))]

mod common;

use std::time::{SystemTime, UNIX_EPOCH};

/// The server URL in `var`; the store is tested against a real server.
fn server(var: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| panic!("{var} is not set: run scripts/test-stores"))
}

/// A namespace no other run or test shares.
fn ns(tag: &str) -> String {
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis();
    format!("f{}-{}-{tag}", std::process::id(), t % 1_000_000_000)
}

#[cfg(feature = "postgres")]
mod postgres {
    use super::*;

    fn url() -> String {
        server("SNOWMINT_TEST_POSTGRES_URL")
    }

    #[test]
    fn live_overlap() {
        common::faults::live_overlap(&url(), &ns("overlap"));
    }
}

#[cfg(feature = "mysql")]
mod mysql {
    use super::*;

    fn url() -> String {
        server("SNOWMINT_TEST_MYSQL_URL")
    }

    #[test]
    fn live_overlap() {
        common::faults::live_overlap(&url(), &ns("overlap"));
    }
}

#[cfg(feature = "redis")]
mod redis {
    use super::*;

    fn url() -> String {
        server("SNOWMINT_TEST_REDIS_URL")
    }

    #[test]
    fn live_overlap() {
        let ns = common::faults::RedisNs::new(&url(), ns("overlap"));
        common::faults::live_overlap(&url(), &ns.0);
    }
}

#[cfg(feature = "etcd")]
mod etcd {
    use super::*;

    fn url() -> String {
        server("SNOWMINT_TEST_ETCD_URL")
    }

    #[test]
    fn live_overlap() {
        common::faults::live_overlap(&url(), &ns("overlap"));
    }
}
