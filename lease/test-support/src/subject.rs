//! A store under test: what the suites need to know of it. Each store's test
//! file (`lease/tests/store_NAME.rs`) implements [`Subject`] once; what
//! differs between stores (the server's variables, how its clock reads, how
//! its records are overwritten behind its back) is a constant or a method
//! here, never a copy of a test.

use std::ops::Deref;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use snowmint_lease::{LeaseUrl, SlotRecord, SlotSpace, Store};

/// A store under test, against a real server that `SNOWMINT_STORES=NAME cargo xtask test stores`
/// starts or finds (`SNOWMINT_TEST_<VAR>_URL` and the other variables it
/// sets). A variable that is missing fails the test: a store is never
/// skipped silently.
pub trait Subject {
    /// The store's name in `SNOWMINT_STORES=NAME cargo xtask test stores`, messages and scratch
    /// folders (`etcd`).
    const NAME: &'static str;
    /// The store's part of its variables' names (`ETCD`:
    /// `SNOWMINT_TEST_ETCD_URL`, `SNOWMINT_TEST_ETCD_RESTART_CMD`, ...).
    const VAR: &'static str;
    /// The probe binary: `env!("CARGO_BIN_EXE_snowmint-lease-probe")`, known
    /// only to the lease crate's own tests.
    const PROBE: &'static str;
    /// How coarse the store's clock is: its readings may be this far behind
    /// (etcd: the gateway's `Date` headers, whole seconds).
    const CLOCK_GRAIN_MS: u64 = 0;
    /// How far the store's clock may be from this host's in the contract.
    const CLOCK_SLACK_MS: u64 = 1000;
    /// How long a 300 ms claim at least lasts once the claims after it are
    /// made (etcd grants at least its minimum lease, 2 s by default).
    const SHORT_CLAIM_LASTS: Duration = Duration::ZERO;
    /// How long after a holder (renewing every 300 ms, TTL 1.5 s) stopped its
    /// slot may first be taken (etcd: its 2 s lease).
    const PAUSED_FREE_AFTER: Duration = Duration::from_millis(1000);
    /// The fault tests' one-way partition: whether a renewal is one round
    /// trip (Redis: one script), so that losing its reply loses the renewal.
    const ONE_ROUND_TRIP: bool = false;
    /// What a refused connection says (lower case).
    const REFUSED_SAYS: &'static str = "connection refused";
    /// What a call to a server that never answers fails with, given
    /// `timeout_ms=1000` (the driver's bound, or the store's own).
    const TIMEOUT_SAYS: &'static [&'static str] = &["no answer within 1000 ms"];
    /// The variables of the server whose clock the fault tests step
    /// (`SNOWMINT_TEST_<VAR>_<CLOCK_SERVER>_URL` and `..._FILE`).
    const CLOCK_SERVER: &'static str = "CLOCK";
    /// The restore test: how long the server's clock must move on between
    /// the backup and the writes it loses (etcd: the `Date` headers' second).
    const RESTORE_PAUSE: Duration = Duration::ZERO;

    /// A namespace of this test's own on `server` (the URL of the store's
    /// server or of another server of that store), held for the test's
    /// duration (Redis deletes its keys on drop).
    type Ns: Deref<Target = str>;
    fn ns_on(server: &str, tag: &str) -> Self::Ns;

    /// What the store's `describe()` says of [`base`](Self::base).
    fn describe() -> String;
    /// The store's URL for a server at `host_port` (no query), with the
    /// shared server's credentials if it has any.
    fn at(host_port: &str) -> String;
    /// Writes `text` as the stored text of `space` (whose record exists),
    /// behind the store's back.
    fn overwrite_space_text(space: &SlotSpace, text: &str);

    /// The variable `SNOWMINT_TEST_<VAR>_<suffix>`.
    fn env(suffix: &str) -> String {
        let name = format!("SNOWMINT_TEST_{}_{suffix}", Self::VAR);
        std::env::var(&name).unwrap_or_else(|_| {
            panic!(
                "{name} is not set: the {} store is tested against a real server (SNOWMINT_STORES={} cargo xtask test stores)",
                Self::NAME,
                Self::NAME
            )
        })
    }
    /// The shared server's URL, without a query.
    fn base() -> String {
        Self::env("URL")
    }
    /// A namespace of this test's own on the shared server.
    fn ns(tag: &str) -> Self::Ns {
        Self::ns_on(&Self::base(), tag)
    }
    /// The lease URL of namespace `ns` on the shared server, with `query`.
    fn url(ns: &str, query: &str) -> String {
        format!("{}?namespace={ns}&{query}", Self::base())
    }
    /// The store of namespace `ns` on the shared server.
    fn store(ns: &str) -> Arc<dyn Store> {
        LeaseUrl::parse(&Self::url(ns, ""))
            .unwrap()
            .open_store()
            .unwrap()
    }
}

/// A namespace no other run, store or test shares: this process, the time
/// and a counter (tests start in the same ms, and the scenarios name
/// scratch folders after the namespace). It starts with a letter and holds
/// only letters, digits and `-`, so that with `-` as `_` it names an SQL
/// schema or database.
pub fn unique_ns(tag: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    format!("t{}-{}-{n}-{tag}", std::process::id(), t % 1_000_000_000)
}

/// The record of `slot` of `space` as the store lists it.
pub fn record(store: &dyn Store, space: &SlotSpace, slot: u64) -> Option<SlotRecord> {
    let (_, spaces) = store.list().unwrap();
    spaces
        .into_iter()
        .filter(|s| s.key == space.key())
        .flat_map(|s| s.slots)
        .find(|r| r.slot == slot)
}
