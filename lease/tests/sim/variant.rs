//! What a schedule varies (the negative controls turn one protection off)
//! and what it counts.

use crate::model::{Flavor, Protections};

/// What a run varies; the negative controls turn one protection off.
#[derive(Clone, Copy, Debug)]
pub struct Variant {
    pub store: Protections,
    /// The successor starts above `prev_hwm_ms` (the driver's `resume_after`).
    pub resume_after: bool,
    /// A holder's clock counts the time its machine was suspended
    /// (`CLOCK_BOOTTIME`); off: it stops (`CLOCK_MONOTONIC`), and lags after.
    pub suspend_safe: bool,
    /// Holders use different `max_skew_ms` (a misconfiguration).
    pub mixed_skews: bool,
    /// SQL stores may also lose writes without a new identity (an
    /// asynchronous replica promoted): a loss no store can detect.
    pub undetectable: bool,
    /// Only this store flavor (`None`: the seed picks).
    pub flavor: Option<Flavor>,
    /// A claim may act on a store clock no skew check saw: the clock may be
    /// stepped between the driver's skew check and its claim (two calls),
    /// and a claim may be applied past its deadline (its check long past).
    pub unchecked_claims: bool,
    /// How far each holder's clock may be from true time, ms: its offset
    /// and every step of its machine's wall clock stay within this.
    pub holder_error: u64,
    /// On a renewal without an answer, the holder raises its bound anyway
    /// (to what the renewal asked for): a driver that does not wait for the
    /// store's confirmation.
    pub unconfirmed_bound: bool,
    /// Losses never take the marker (no wipes; the marker was written long
    /// before the writes lost).
    pub marker_survives: bool,
    /// Every loss wipes the store (the marker with the records): Redis
    /// only, restarted without persistence or `FLUSHALL`ed.
    pub wipes_only: bool,
    /// Each holder's clock keeps an offset of its own from true time, within
    /// its `max_skew_ms`; the store's clock stays within `max_skew_ms` of every
    /// such holder's (its steps, a replica's clock); and one more holder's
    /// clock is further from every store clock than its `max_skew_ms`: its
    /// claims must all be refused.
    pub own_clocks: bool,
    /// The driver's skew check before a claim (off: a negative control).
    pub skew_check: bool,
}

pub const SAFE: Variant = Variant {
    store: Protections {
        fence: true,
        fence_skews: 2,
        epoch_check: true,
        settings_check: true,
        sql_identity: true,
        hwm_bound: true,
        min_store: true,
        keep_old_fence: false,
    },
    resume_after: true,
    suspend_safe: true,
    mixed_skews: false,
    undetectable: false,
    flavor: None,
    unchecked_claims: false,
    holder_error: 0,
    unconfirmed_bound: false,
    marker_survives: false,
    wipes_only: false,
    own_clocks: false,
    skew_check: true,
};

#[derive(Default, Debug)]
pub struct Counts {
    pub schedules: u64,
    pub steps: u64,
    pub ids: u64,
    pub batches: u64,
    pub claims: u64,
    pub renewals: u64,
    pub releases: u64,
    pub lost: u64,
    pub drop_reply: u64,
    pub lost_request: u64,
    pub twice: u64,
    pub delayed: u64,
    /// Answers that came after their deadline, handed to the driver's
    /// `late` handler (a late claim is released).
    pub late_answers: u64,
    pub store_clock_steps: u64,
    pub store_clock_far_ahead: u64,
    pub holder_clock_steps: u64,
    pub suspends: u64,
    pub losses: u64,
    pub undetectable_losses: u64,
    pub fenced_claims: u64,
    pub crashes: u64,
    pub skew_refusals: u64,
    pub refused: u64,
    /// Claims of the holder whose clock is beyond its `max_skew_ms`
    /// (`Variant::own_clocks`) refused by the skew check or the store.
    pub far_clock_refusals: u64,
}
