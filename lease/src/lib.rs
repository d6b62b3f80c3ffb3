//! Leases for snowmint generators: node values without hand assignment.
//!
//! A generator's node fields are fixed by the user except one, the *leased*
//! field. Its values are the **slots** of a store; a process claims a free
//! slot, issues IDs with it, and releases it on close. The store keeps, per
//! slot, a high-water mark `hwm`: an upper bound on every time unit any holder
//! of the slot has issued or may still issue. A holder issues only inside the
//! reservation the store has confirmed, and a new holder starts strictly above
//! the old `hwm`, so no two holders ever issue the same ID. The protocol and
//! its safety argument are in `docs/LEASES.md`.
//!
//! - [`LeaseUrl`]: the one option every language passes (`file:/var/lib/app/ids?namespace=orders`).
//! - [`SlotSpace`]: the slots of a layout's ID space, and the stable key a store files them under.
//! - [`Store`]: what a store does (claim, renew, release, read its clock); [`FileStore`] is the
//!   embedded one (a local directory, one advisory lock per slot).
//! - [`LeasedGenerator`]: the driver: claims, builds the `snowmint::Generator`, renews on a
//!   background thread, releases on close or drop.
//! - [`ops`]: what an operator runs on a store (`snowmint lease init|list|release`).
//! - [`AnyGenerator`]: what every binding wraps, leased or not, built from the values the
//!   binding converted; [`LeaseInfo::entries`] is what it reports, field by field.
//!
//! ```
//! use snowmint::Layout;
//! use snowmint_lease::LeasedGenerator;
//! let dir = std::env::temp_dir().join(format!("snowmint-lease-doc-{}", std::process::id()));
//! let url = format!("file:{}?namespace=doc", dir.display());
//! let layout = Layout::preset("twitter")?;
//! // datacenter is fixed, worker is leased.
//! let g = LeasedGenerator::open(&url, layout, &[("datacenter", 1)], Default::default())?;
//! let id = g.next_id()?;
//! assert_eq!(layout.decompose(id.get())?.nodes(), &[1, g.slot()]);
//! g.close()?;
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok::<(), snowmint_lease::LeaseError>(())
//! ```
#![deny(missing_docs)]

mod any;
mod driver;
mod error;
mod file;
pub mod ops;
mod slot;
mod space;
mod store;
mod stores;
mod url;

#[cfg(feature = "etcd")]
mod etcd;
#[cfg(any(feature = "etcd", feature = "zookeeper"))]
mod history;
#[cfg(feature = "redis")]
mod redis_store;
#[cfg(any(feature = "postgres", feature = "mysql"))]
mod sql;
#[cfg(feature = "zookeeper")]
mod zookeeper;

/// The protection this build removes, for the fault harness's negative
/// controls (one of the `harness-control-*` Cargo features, each UNSAFE:
/// docs/HARNESS.md), or `None`, as in every build but those.
pub const HARNESS_CONTROL: Option<&str> = if cfg!(feature = "harness-control-no-successor-fence") {
    Some("no-successor-fence")
} else if cfg!(feature = "harness-control-no-redis-fence") {
    Some("no-redis-fence")
} else if cfg!(feature = "harness-control-no-sql-fence") {
    Some("no-sql-fence")
} else if cfg!(feature = "harness-control-past-reservation") {
    Some("past-reservation")
} else if cfg!(feature = "harness-control-no-etcd-fence") {
    Some("no-etcd-fence")
} else {
    None
};

/// Why a program built on this crate must not start: it is a harness control
/// build ([`HARNESS_CONTROL`]) and `SNOWMINT_HARNESS_CONTROL` does not name
/// its control. The CLI and the server call this first, so that a control
/// build left where a normal one is expected (the harness builds them in the
/// test command's target folder) refuses to run instead of issuing IDs.
pub fn control_build_refusal() -> Option<String> {
    let control = HARNESS_CONTROL?;
    if std::env::var("SNOWMINT_HARNESS_CONTROL").as_deref() == Ok(control) {
        return None;
    }
    Some(format!(
        "this is a fault-harness control build with a protection removed ({control}): it can \
         issue duplicate IDs and runs only inside the harness (SNOWMINT_HARNESS_CONTROL={control}); \
         rebuild without the harness-control-{control} feature"
    ))
}

pub use any::{AnyGenerator, PlainGenerator};
#[doc(hidden)]
pub use driver::decide;
#[doc(hidden)]
pub use driver::step;
pub use driver::{fenced_refusal, InfoValue, LeaseInfo, LeasedGenerator};
pub use error::LeaseError;
#[cfg(feature = "etcd")]
pub use etcd::EtcdStore;
pub use file::FileStore;
#[cfg(feature = "redis")]
pub use redis_store::RedisStore;
pub use slot::{slot_order, SlotSeen, UNUSED_LISTED};
pub use space::SlotSpace;
#[cfg(any(feature = "postgres", feature = "mysql"))]
pub use sql::SqlStore;
pub use store::{
    hwm_bound, is_space_key, Claim, ClaimRequest, Holder, InitFence, Marker, MarkerState,
    RenewRequest, Renewal, SlotRecord, SlotRelease, SlotReleaseRequest, SlotState, SpaceRecord,
    Store, StoreError, LIMIT_LATENCY_MS,
};
pub use url::{LeaseUrl, Settings, StoreUrl, BUILT_STORES};
#[cfg(feature = "zookeeper")]
pub use zookeeper::ZookeeperStore;
