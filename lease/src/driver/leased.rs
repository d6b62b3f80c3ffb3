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

use snowmint::{Config, LeaseProblem};

use crate::error::LeaseError;

/// What makes two generators' IDs collide (as the core's shared-state key):
/// the time encoding, where the sequence sits, and the node bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    epoch_ms: u64,
    unit_ms: u64,
    total_bits: u32,
    time_bits: u32,
    seq_bits: u32,
    seq_shift: u32,
    node_bits: u64,
}

impl Entry {
    fn of(cfg: &Config) -> Entry {
        let l = cfg.layout();
        Entry {
            epoch_ms: l.epoch_ms(),
            unit_ms: l.time_unit_ms(),
            total_bits: l.total_bits(),
            time_bits: l.timestamp().bits(),
            seq_bits: l.sequence().bits(),
            seq_shift: l.sequence().shift(),
            node_bits: cfg.nodes().bits(),
        }
    }
}

/// One entry per live leased generator (a multiset: two stores may lease the
/// same bits to one process).
static LEASED: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// Records a leased generator's node values until [`unregister`].
pub(crate) fn register(cfg: &Config) -> Entry {
    let e = Entry::of(cfg);
    LEASED.lock().unwrap_or_else(|p| p.into_inner()).push(e);
    e
}

/// Forgets one registration (the leased generator stopped issuing).
pub(crate) fn unregister(e: Entry) {
    let mut all = LEASED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(i) = all.iter().position(|x| *x == e) {
        all.swap_remove(i);
    }
}

/// `lease_unavailable` (`NodesLeased`) if a leased generator of this process
/// holds the ID bits of `cfg`.
pub(crate) fn refuse_if_leased(cfg: &Config) -> Result<(), LeaseError> {
    let e = Entry::of(cfg);
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
