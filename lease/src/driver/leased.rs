//! The node values leased generators of this process hold, so that a plain
//! generator (no lease) with the same ID bits is refused: it would draw from
//! the same shared state while the lease lives, and keep issuing with those
//! bits after the lease ends, when another process may hold the slot.
//!
//! Checked by [`AnyGenerator`](crate::AnyGenerator)'s plain constructor, the
//! one every binding goes through. A Rust program that builds a
//! `snowmint::Generator` itself is not checked: the core knows nothing of
//! leases.

use std::sync::Mutex;

use snowmint::{Config, LeaseProblem, StateKey};

use crate::error::LeaseError;

/// One entry per live leased generator (a multiset: two stores may lease the
/// same bits to one process).
static LEASED: Mutex<Vec<StateKey>> = Mutex::new(Vec::new());

/// Records a leased generator's node values until [`unregister`].
pub(crate) fn register(cfg: &Config) -> StateKey {
    let e = cfg.state_key();
    LEASED.lock().unwrap_or_else(|p| p.into_inner()).push(e);
    e
}

/// Forgets one registration (the leased generator stopped issuing).
pub(crate) fn unregister(e: StateKey) {
    let mut all = LEASED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(i) = all.iter().position(|x| *x == e) {
        all.swap_remove(i);
    }
}

/// `lease_unavailable` (`NodesLeased`) if a leased generator of this process
/// holds the ID bits of `cfg`.
pub(crate) fn refuse_if_leased(cfg: &Config) -> Result<(), LeaseError> {
    let e = cfg.state_key();
    if LEASED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .contains(&e)
    {
        return Err(LeaseError::unavailable(
            LeaseProblem::NodesLeased,
            format!("node values {:?} without a lease", cfg.nodes().values()),
        ));
    }
    Ok(())
}
