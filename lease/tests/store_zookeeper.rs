#![cfg(feature = "zookeeper")]
//! The ZooKeeper store against a real ZooKeeper (`SNOWMINT_TEST_ZOOKEEPER_URL`,
//! e.g. `zookeeper://127.0.0.1:2181`; `SNOWMINT_STORES=zookeeper cargo xtask test stores` starts a
//! throwaway one). It must be set: a store is never skipped silently. The
//! contract and fault suites every store runs (`lease/test-support`), then
//! what only ZooKeeper has. Every test uses namespaces of its own run. Every
//! wait is bounded.

use std::time::Duration;

use snowmint_lease::SlotSpace;
use snowmint_lease_test_support::{contract_suite, fault_suite, Subject};

/// The ZooKeeper of `SNOWMINT_TEST_ZOOKEEPER_URL`.
struct ZooKeeper;

impl Subject for ZooKeeper {
    const NAME: &'static str = "zookeeper";
    const VAR: &'static str = "ZOOKEEPER";
    const PROBE: &'static str = env!("CARGO_BIN_EXE_snowmint-lease-probe");
    // The store's clock is the clock znode's mtime.
    const CLOCK_SLACK_MS: u64 = 1500;
    // "no server accepted a connection (refused or unreachable)".
    const REFUSED_SAYS: &'static str = "refused";
    type Ns = String;

    fn ns_on(_server: &str, tag: &str) -> String {
        snowmint_lease_test_support::unique_ns(tag)
    }

    fn describe() -> String {
        Self::base()
    }

    fn at(host_port: &str) -> String {
        format!("zookeeper://{host_port}")
    }

    fn overwrite_space_text(space: &SlotSpace, text: &str) {
        let hosts = Self::base().trim_start_matches("zookeeper://").to_string();
        let path = format!("/snowmint/lease/{}", space.key());
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(async {
            tokio::time::timeout(Duration::from_secs(10), async {
                let c = zookeeper_client::Client::connect(&hosts).await.unwrap();
                c.set_data(&path, text.as_bytes(), None).await.unwrap();
            })
            .await
            .expect("ZooKeeper answered within 10 s")
        });
    }
}

contract_suite!(ZooKeeper, restart, restore);
fault_suite!(ZooKeeper);

/// A store used, then dropped on an async runtime's thread (as a server may
/// drop a generator): its own runtime shuts down without blocking, no panic.
#[test]
fn dropped_on_an_async_runtime() {
    let s = ZooKeeper::store(&ZooKeeper::ns("drop"));
    s.now_ms().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async move { drop(s) });
}
