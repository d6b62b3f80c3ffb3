//! The node values this process's generators hold, leased or not, so that a
//! leased and a plain generator (no lease) never share ID bits, in either
//! order of creation. They would draw from one shared state while the lease
//! lives, and the plain one would keep issuing with those bits after the lease
//! ends, when another process may hold the slot.
//!
//! A plain generator is registered by [`AnyGenerator`](crate::AnyGenerator)'s
//! plain constructor, the one every binding goes through, until it is
//! dropped; a leased one by the driver, from its claim until `close`. A Rust
//! program that builds a `snowmint::Generator` itself is not checked: the
//! core knows nothing of leases.

use std::sync::Mutex;

use snowmint::{Config, LeaseProblem, StateKey};

use crate::error::LeaseError;

/// Both lists under one lock, so that a check and the registration it allows
/// are one step: a plain and a leased generator created at once on two
/// threads cannot both pass.
struct InUse {
    /// One entry per live leased generator (a multiset: two stores may lease
    /// the same bits to one process).
    leased: Vec<StateKey>,
    /// One entry per live plain generator, with its node values as messages
    /// name them.
    plain: Vec<(StateKey, String)>,
}

static IN_USE: Mutex<InUse> = Mutex::new(InUse {
    leased: Vec::new(),
    plain: Vec::new(),
});

fn in_use() -> std::sync::MutexGuard<'static, InUse> {
    IN_USE.lock().unwrap_or_else(|p| p.into_inner())
}

/// `datacenter=1, worker=0`.
fn describe_nodes(cfg: &Config) -> String {
    let layout = cfg.layout();
    let values = cfg.nodes().values();
    layout
        .nodes()
        .zip(values)
        .map(|(f, v)| format!("{}={v}", f.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Records a leased generator's node values until [`unregister`];
/// `lease_unavailable` (`NodesLeased`) if a plain generator of this process
/// holds them (the claimed slot is then released by the caller).
pub(crate) fn register(cfg: &Config, field: &str, slot: u64) -> Result<StateKey, LeaseError> {
    let e = cfg.state_key();
    let mut all = in_use();
    if let Some((_, nodes)) = all.plain.iter().find(|(k, _)| *k == e) {
        return Err(LeaseError::unavailable(
            LeaseProblem::NodesLeased,
            format!(
                "the lease claimed {field} {slot}, but a generator without a lease in this \
                 process holds the same ID bits ({nodes}): drop it or lease it too; the slot is \
                 released"
            ),
        ));
    }
    all.leased.push(e);
    Ok(e)
}

/// Forgets one registration (the leased generator stopped issuing).
pub(crate) fn unregister(e: StateKey) {
    let mut all = in_use();
    if let Some(i) = all.leased.iter().position(|x| *x == e) {
        all.leased.swap_remove(i);
    }
}

/// Records a plain generator's node values until [`unregister_plain`];
/// `lease_unavailable` (`NodesLeased`) if a leased generator of this process
/// holds them.
pub(crate) fn register_plain(cfg: &Config) -> Result<StateKey, LeaseError> {
    let e = cfg.state_key();
    let mut all = in_use();
    if all.leased.contains(&e) {
        return Err(LeaseError::unavailable(
            LeaseProblem::NodesLeased,
            format!("node values {} without a lease", describe_nodes(cfg)),
        ));
    }
    all.plain.push((e, describe_nodes(cfg)));
    Ok(e)
}

/// Forgets one plain registration (the plain generator was dropped).
pub(crate) fn unregister_plain(e: StateKey) {
    let mut all = in_use();
    if let Some(i) = all.plain.iter().position(|(x, _)| *x == e) {
        all.plain.swap_remove(i);
    }
}
