//! The lease layer's causes in the core's errors: why no lease could be had
//! ([`LeaseProblem`], `lease_unavailable`), why a reservation ended
//! ([`LeaseEnd`], `lease_expired`) and why a slot is fenced ([`FenceCause`],
//! `lease_fenced`). Here so that every language reports them alike.

#[cfg(doc)]
use crate::error::Error;
use crate::text::Hole::{self, N};

/// Why no lease could be had.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeaseProblem {
    /// The store did not answer in time, or refused the connection.
    Unreachable,
    /// Every slot is held by another live holder.
    NoFreeSlot {
        /// How many slots there are.
        slots: u64,
    },
    /// The local clock and the store's clock differ by more than allowed.
    ClockSkew {
        /// The difference, milliseconds.
        skew_ms: u64,
        /// The largest difference allowed, milliseconds.
        max_ms: u64,
    },
    /// The store answered with something this version cannot read.
    BadRecord,
    /// A generator without a lease asked for node values that a leased
    /// generator of this process holds: it would keep issuing with them
    /// after the lease ends, when another process may hold the slot.
    NodesLeased,
    /// The store, as configured, cannot keep the leases' guarantees (an
    /// evicting Redis, a network filesystem, a directory other users may
    /// write...): refused before anything was claimed. The detail names the
    /// setting to change; retrying does not help.
    Refused,
}

/// Why a lease's reservation ended (the end of a [`Error::LeaseExpired`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeaseEnd {
    /// Past the reservation it was given (`reserve_until`); no more is known.
    Reservation,
    /// No renewal has been confirmed since `since_ms` (Unix ms, local
    /// clock): the store did not answer, or refused (the lease's
    /// `last_error` says why). IDs resume once a renewal is confirmed.
    RenewalsFailing {
        /// When the first failing renewal was sent, Unix milliseconds.
        since_ms: u64,
    },
    /// Another holder has the slot (the lease went unrenewed past its TTL,
    /// or an operator released it): this generator issues no more IDs.
    Lost,
    /// The generator was closed: it issues no more IDs.
    Closed,
}

/// Why a lease's slot is fenced (see [`Error::LeaseFenced`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FenceCause {
    /// The store holds no record of the space's last claims: a new, restarted
    /// or emptied server may have forgotten reservations it confirmed.
    StoreForgot,
    /// The store's identity changed (a failover, or another server at its
    /// address): its records may be older than what holders were confirmed.
    StoreChanged,
    /// The slot's previous holder issued or reserved IDs up to then (a
    /// reservation it did not release: it crashed or lost its lease; or its
    /// clock was ahead of this one).
    Predecessor,
}

impl FenceCause {
    /// The cause as messages say it.
    pub const fn describe(&self) -> &'static str {
        match self {
            FenceCause::StoreForgot => {
                "the store may have forgotten earlier claims (a new, restarted or emptied server)"
            }
            FenceCause::StoreChanged => {
                "the store's identity changed (a failover, or another server at its address)"
            }
            FenceCause::Predecessor => {
                "the slot's previous holder issued or reserved IDs up to then (a reservation \
                 it did not release, or its clock ahead of this one)"
            }
        }
    }
}

impl LeaseProblem {
    /// The message's template and holes (see [`fill`]).
    pub(crate) fn message(&self) -> (&'static str, [Hole<'static>; 3]) {
        match self {
            LeaseProblem::Unreachable => ("the store did not answer in time", [N(0); 3]),
            LeaseProblem::NoFreeSlot { slots } => (
                "all {} slots are held by live holders",
                [N(*slots), N(0), N(0)],
            ),
            LeaseProblem::ClockSkew { skew_ms, max_ms } => (
                "the local and store clocks differ by {} ms (at most {} ms)",
                [N(*skew_ms), N(*max_ms), N(0)],
            ),
            LeaseProblem::BadRecord => (
                "the store holds a record this version cannot read",
                [N(0); 3],
            ),
            LeaseProblem::NodesLeased => (
                "these node values are leased by a generator of this process",
                [N(0); 3],
            ),
            LeaseProblem::Refused => ("the store cannot keep leases safe as configured", [N(0); 3]),
        }
    }
}
