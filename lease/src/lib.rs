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

/// A protection the fault harness's negative controls remove, one per run
/// (docs/HARNESS.md). Only a control build (Cargo feature `harness-controls`,
/// UNSAFE, never shipped) can remove one, and only the one
/// `SNOWMINT_HARNESS_CONTROL` names; in every other build [`removed`] is
/// `false`, a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Control {
    /// A new holder ignores the slot's `hwm` (`driver/decide.rs`).
    NoSuccessorFence,
    /// Redis claims ignore the failover fence (`redis_store`).
    NoRedisFence,
    /// The SQL stores read a constant server identity (`sql/guard.rs`).
    NoSqlFence,
    /// The generator issues one millisecond past the confirmed reservation.
    PastReservation,
    /// etcd detects no loss and honours no fence (`etcd/fence.rs`).
    NoEtcdFence,
}

impl Control {
    /// Every control, by the name `SNOWMINT_HARNESS_CONTROL` gives it.
    pub(crate) const ALL: [(Control, &'static str); 5] = [
        (Control::NoSuccessorFence, "no-successor-fence"),
        (Control::NoRedisFence, "no-redis-fence"),
        (Control::NoSqlFence, "no-sql-fence"),
        (Control::PastReservation, "past-reservation"),
        (Control::NoEtcdFence, "no-etcd-fence"),
    ];
}

/// Whether this is a control build (Cargo feature `harness-controls`).
pub const HARNESS_CONTROLS: bool = cfg!(feature = "harness-controls");

/// The control `SNOWMINT_HARNESS_CONTROL` names, read once; `None` in every
/// build but a control build.
fn selected_control() -> Option<Control> {
    if !HARNESS_CONTROLS {
        return None;
    }
    static SELECTED: std::sync::OnceLock<Option<Control>> = std::sync::OnceLock::new();
    *SELECTED.get_or_init(|| {
        let named = std::env::var("SNOWMINT_HARNESS_CONTROL").ok()?;
        Control::ALL
            .iter()
            .find(|(_, name)| *name == named)
            .map(|(c, _)| *c)
    })
}

/// Whether this process runs without the protection `control`: a control
/// build whose `SNOWMINT_HARNESS_CONTROL` names it. `false` in every other
/// build, where the compiler removes the branch.
pub(crate) fn removed(control: Control) -> bool {
    HARNESS_CONTROLS && selected_control() == Some(control)
}

/// Why a program built on this crate must not start: it is a harness control
/// build ([`HARNESS_CONTROLS`]) and `SNOWMINT_HARNESS_CONTROL` does not name
/// one of its controls. The CLI and the server call this first, so that a
/// control build left where a normal one is expected refuses to run instead
/// of issuing IDs.
pub fn control_build_refusal() -> Option<String> {
    if !HARNESS_CONTROLS || selected_control().is_some() {
        return None;
    }
    let names: Vec<&str> = Control::ALL.iter().map(|(_, name)| *name).collect();
    Some(format!(
        "this is a fault-harness control build, which removes a protection and can issue \
         duplicate IDs: it runs only inside the harness, with SNOWMINT_HARNESS_CONTROL naming \
         the protection removed ({}); rebuild without the harness-controls feature",
        names.join(", ")
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
