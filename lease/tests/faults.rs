//! Fault tests of the lease fencing on each network store, against the real
//! servers `scripts/test-stores` names (`SNOWMINT_TEST_<STORE>_URL`): the
//! scenarios are in `tests/common/faults.rs`, each built to fail when the
//! fencing it tests is removed. Every test uses namespaces of its own run;
//! `scripts/test-stores` runs each store's module with that store's suite.
#![cfg(any(
    feature = "postgres",
    feature = "mysql",
    feature = "redis",
    feature = "etcd",
    feature = "zookeeper"
))]

mod common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The server URL in `var`; the store is tested against a real server.
fn server(var: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| panic!("{var} is not set: run scripts/test-stores"))
}

/// A namespace no other run or test shares (the counter: tests of several
/// stores start in the same ms, and the scenarios name scratch directories
/// after the namespace).
fn ns(tag: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    format!("f{}-{}-{n}-{tag}", std::process::id(), t % 1_000_000_000)
}

/// The scenarios of `tests/common/faults.rs` on the server in `$var`;
/// `$scope` wraps a namespace for the test's duration (Redis deletes its
/// keys; the SQL tables and etcd keep rows of unique namespaces, as their
/// other tests do).
macro_rules! scenarios {
    ($var:literal, $scope:expr, one_round_trip: $one:expr) => {
        use super::*;
        use common::faults;

        fn url() -> String {
            server($var)
        }

        #[test]
        fn live_overlap() {
            let ns = $scope(ns("overlap"));
            faults::live_overlap(&url(), &ns);
        }

        #[test]
        fn one_way_partition() {
            let ns = $scope(ns("oneway"));
            faults::one_way_partition(&url(), &ns, $one);
        }

        #[test]
        fn high_rate_with_a_successor() {
            let ns = $scope(ns("rate"));
            common::rate::high_rate(&url(), &ns, &child());
        }

        #[test]
        fn sixteen_bit_space() {
            let ns = $scope(ns("tiny"));
            common::rate::tiny_space(&url(), &ns, &child());
        }

        #[test]
        fn forty_race_for_expired_slots() {
            let ns = $scope(ns("race"));
            common::rate::forty_race_for_expired(&url(), &ns);
        }

        /// This module's holder child (see `holder_child`).
        fn child() -> String {
            format!(
                "{}::holder_child",
                module_path!().split_once("::").unwrap().1
            )
        }

        /// Does nothing, except in a child this binary starts as a holder.
        #[test]
        fn holder_child() {
            common::rate::holder_child();
        }

        #[test]
        fn reply_delayed_past_the_ttl() {
            let ns = $scope(ns("delayed"));
            faults::reply_delayed_past_ttl(&url(), &ns);
        }
    };
}

#[cfg(feature = "postgres")]
mod postgres {
    scenarios!("SNOWMINT_TEST_POSTGRES_URL", |n: String| n, one_round_trip: false);

    /// The store clock steps, on a throwaway server under libfaketime
    /// (`scripts/stores/faketime.sh`; Redis's twin is in `mod redis`).
    #[test]
    fn store_clock_steps() {
        faults::store_clock_steps(
            &server("SNOWMINT_TEST_POSTGRES_FAKETIME_URL"),
            &ns("clock"),
            &server("SNOWMINT_TEST_POSTGRES_FAKETIME_FILE"),
        );
    }

    /// The store's clock a minute ahead: renewals refused, no far-future
    /// `hwm` written.
    #[test]
    fn store_clock_far_ahead() {
        faults::store_clock_far_ahead(
            &server("SNOWMINT_TEST_POSTGRES_FAKETIME_URL"),
            &ns("far"),
            &server("SNOWMINT_TEST_POSTGRES_FAKETIME_FILE"),
        );
    }
}

#[cfg(feature = "mysql")]
mod mysql {
    scenarios!("SNOWMINT_TEST_MYSQL_URL", |n: String| n, one_round_trip: false);
}

#[cfg(feature = "redis")]
mod redis {
    scenarios!("SNOWMINT_TEST_REDIS_URL", |n: String| {
        common::faults::RedisNs::new(&url(), n)
    }, one_round_trip: true);

    /// The store clock steps, on a throwaway redis-server under
    /// `scripts/stores/clockshift.c` (Redis 7.0 does not start under
    /// Debian's libfaketime 0.9.10: `scripts/stores/faketime.sh`).
    #[test]
    fn store_clock_steps() {
        let url = server("SNOWMINT_TEST_REDIS_CLOCK_URL");
        let ns = common::faults::RedisNs::new(&url, ns("clock"));
        faults::store_clock_steps(&url, &ns, &server("SNOWMINT_TEST_REDIS_CLOCK_FILE"));
    }

    /// The store's clock a minute ahead: renewals refused, no far-future
    /// `hwm` written (the CLAIM and RENEW scripts' `too_far`).
    #[test]
    fn store_clock_far_ahead() {
        let url = server("SNOWMINT_TEST_REDIS_CLOCK_URL");
        let ns = common::faults::RedisNs::new(&url, ns("far"));
        faults::store_clock_far_ahead(&url, &ns, &server("SNOWMINT_TEST_REDIS_CLOCK_FILE"));
    }
}

#[cfg(feature = "etcd")]
mod etcd {
    scenarios!("SNOWMINT_TEST_ETCD_URL", |n: String| n, one_round_trip: false);
}

#[cfg(feature = "zookeeper")]
mod zookeeper {
    scenarios!("SNOWMINT_TEST_ZOOKEEPER_URL", |n: String| n, one_round_trip: false);
}
