//! What a store does. One trait for the embedded file store and the stores
//! across machines (SQL, Redis, etcd): each call is one atomic operation on
//! one slot record, decided by the store's own clock.

use crate::space::SlotSpace;

/// What a claim asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClaimRequest {
    /// The slot this holder had before (a restart), tried first.
    pub prefer: Option<u64>,
    /// How long the claim holds without a renewal (stores with expiry).
    pub ttl_ms: u64,
    /// The first reservation: `hwm` becomes at least store time + `window_ms`.
    pub window_ms: u64,
}

/// A claimed slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    /// Who holds it: the slot, this holder's random token, the claim counter.
    pub holder: Holder,
    /// `hwm` before this claim, Unix ms (0 for a slot never used): the
    /// generator starts strictly above its time unit.
    pub prev_hwm_ms: u64,
    /// `hwm` after this claim: the confirmed reservation, Unix ms
    /// (`max(prev_hwm_ms, store time + window_ms)`).
    pub hwm_ms: u64,
    /// When the claim expires without a renewal, store time (`None`: never
    /// while the holder lives, as the file store's lock).
    pub expires_ms: Option<u64>,
}

/// The identity of a claim, which renewals and the release are conditional on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    /// The slot: the value of the leased node field.
    pub slot: u64,
    /// This holder's random token (32 hex digits).
    pub token: String,
    /// The slot's claim counter after this claim (incremented by every claim).
    pub counter: u64,
}

/// A confirmed renewal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Renewal {
    /// The new `hwm` (never lower than before), Unix ms: the reservation.
    pub hwm_ms: u64,
    /// The new expiry, store time (`None` as in [`Claim::expires_ms`]).
    pub expires_ms: Option<u64>,
}

/// Why a store call failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreError {
    /// The store did not answer, refused, or failed to write (with the cause).
    /// Nothing is known about the slot; a holder keeps its reservation and
    /// tries again.
    Unreachable(String),
    /// Every slot is held.
    NoFreeSlot,
    /// The slot has another holder now (token or claim counter differ): stop
    /// issuing at once.
    Lost(String),
    /// The store holds something this version cannot read.
    BadRecord(String),
}

/// A lease store. Every method is one atomic step on the store; the driver
/// runs each under a timeout (`timeout_ms`), so an implementation may block.
///
/// Invariants every implementation keeps:
/// - `hwm` of a slot is never lowered, except by [`release`](Store::release)
///   (the holder has stopped issuing) to the last time unit it issued;
/// - a claim succeeds only on a free or expired slot (by the store's clock),
///   increments the claim counter and writes a fresh token in the same step;
/// - [`renew`](Store::renew) and [`release`](Store::release) change the slot
///   only if its token and claim counter are still the holder's;
/// - a returned `hwm` is durable (the write is confirmed) before the call returns.
pub trait Store: Send + Sync {
    /// How messages name the store (`file:/var/lib/app/ids`).
    fn describe(&self) -> String;

    /// The store's clock, Unix ms.
    fn now_ms(&self) -> Result<u64, StoreError>;

    /// Atomically claims a free or expired slot of `space`: `req.prefer` if it
    /// is free, else preferably one whose `hwm` is behind the store's clock.
    fn claim(&self, space: &SlotSpace, req: &ClaimRequest) -> Result<Claim, StoreError>;

    /// Extends the claim by `ttl_ms` and raises `hwm` to at least store time
    /// + `window_ms`, if `holder` still holds the slot.
    fn renew(
        &self,
        space: &SlotSpace,
        holder: &Holder,
        ttl_ms: u64,
        window_ms: u64,
    ) -> Result<Renewal, StoreError>;

    /// Sets `hwm` to `last_ms` (the start of the last time unit issued, or the
    /// claim's `prev_hwm_ms` if none was) and frees the slot, if `holder`
    /// still holds it.
    fn release(&self, space: &SlotSpace, holder: &Holder, last_ms: u64) -> Result<(), StoreError>;
}
