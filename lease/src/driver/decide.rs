//! The driver's decisions as pure functions of what the store answered and
//! what the local clock read. The real driver ([`LeasedGenerator`]) and the
//! deterministic simulation (`lease/tests/sim.rs`) both call these, so the
//! simulation exercises the code that runs in production.
//!
//! Not a stable API: public only for that simulation.
//!
//! [`LeasedGenerator`]: crate::LeasedGenerator

use snowmint::{Id, LeaseProblem, Nodes, Options};

use crate::error::LeaseError;
use crate::space::SlotSpace;
use crate::store::{Claim, Renewal, StoreError};
use crate::url::Settings;

/// The skew check before a claim: the local clock read `local_before` and
/// `local_after` around the store's answer `store_ms`. Returns the skew
/// (local minus store, ms), or `clock_skew` past `max_skew_ms`: a holder
/// refuses a store whose clock it cannot trust before it takes a slot.
pub fn claim_skew(
    name: &str,
    local_before: u64,
    store_ms: u64,
    local_after: u64,
    settings: &Settings,
) -> Result<i64, LeaseError> {
    let local = local_before / 2 + local_after / 2;
    let skew = local.abs_diff(store_ms);
    if skew > settings.max_skew_ms {
        return Err(LeaseError::unavailable(
            LeaseProblem::ClockSkew {
                skew_ms: skew,
                max_ms: settings.max_skew_ms,
            },
            format!("{name}: local clock {local} ms, store clock {store_ms} ms"),
        ));
    }
    Ok(local as i64 - store_ms as i64)
}

/// Where a new holder starts after a claim.
#[derive(Clone, Debug)]
pub struct Start {
    /// The node values: the fixed ones and the slot.
    pub nodes: Nodes,
    /// The options, with `resume_after` raised strictly above the unit of
    /// the claim's `prev_hwm_ms` (or the user's, if later).
    pub options: Options,
    /// The first issuing limit (see [`limit`]), Unix ms, inclusive.
    pub limit_ms: u64,
}

/// The generator a claim allows: strictly above every time unit an earlier
/// holder may have issued (`prev_hwm_ms`), bounded by the confirmed `hwm`.
/// `name` is the store as messages name it; `sent_ms` the local clock when
/// the claim was sent (see [`limit`]). On error the caller releases the
/// claim.
pub fn start(
    name: &str,
    space: &SlotSpace,
    claim: &Claim,
    mut options: Options,
    sent_ms: u64,
    settings: &Settings,
) -> Result<Start, LeaseError> {
    let layout = *space.layout();
    let nodes = space.nodes(claim.holder.slot)?;
    // The harness's control build (Cargo feature, off by default) drops the
    // successor fence to prove its checker finds the duplicates that follow.
    let fenced = !crate::removed(crate::Control::NoSuccessorFence);
    if fenced && claim.prev_hwm_ms >= layout.epoch_ms() {
        let seq_max = layout.sequence().max();
        let above = layout
            .compose(claim.prev_hwm_ms, seq_max, &nodes)
            .map_err(|_| {
                LeaseError::unavailable(
                    LeaseProblem::BadRecord,
                    format!(
                        "{name}: hwm {} ms is outside the layout's time range",
                        claim.prev_hwm_ms
                    ),
                )
            })?;
        let key = |id: Id| layout.decompose(id).map(|p| (p.tick(), p.sequence()));
        options.resume_after = Some(match options.resume_after {
            Some(user) if key(user)? > key(above)? => user,
            _ => above,
        });
    }
    Ok(Start {
        nodes,
        options,
        limit_ms: limit(claim.hwm_ms, sent_ms, settings),
    })
}

/// The issuing limit (inclusive, Unix ms): the confirmed `hwm`, but never
/// past what the local clock and the skew bound justify,
/// `sent_ms + window_ms + max_skew_ms`, `sent_ms` being the local clock when
/// the call that confirmed it was SENT (not when its reply arrived).
///
/// The store wrote `hwm = max(old hwm, store time + window_ms)` after the
/// call was sent; while the skew is within `max_skew_ms`, a healthy store's
/// time then was about `sent_ms` + the call's latency. The cap cuts that
/// latency off, and it bites when the store's clock ran ahead (a step forward
/// poisons `hwm`): the holder then still issues only near its own clock and
/// reports the skew, rather than spend time units a clock it does not trust
/// handed out. A successor on the same records starts above the recorded
/// `hwm` whatever it is; but after a data loss (a Redis failover) the fence
/// a successor starts above is counted from the new server's clock, and
/// covers this cap only: `sent_ms` is before the loss, and the fence is
/// `store time + redis_max_window_ms + 2 × max_skew_ms` +
/// [`LIMIT_LATENCY_MS`](crate::LIMIT_LATENCY_MS) (0). Counted from the
/// reply's arrival, a slow reply from a primary whose clock ran ahead would
/// reach past that fence by up to the latency (`timeout_ms`).
pub fn limit(confirmed_hwm_ms: u64, sent_ms: u64, settings: &Settings) -> u64 {
    confirmed_hwm_ms.min(
        sent_ms
            .saturating_add(settings.window_ms)
            .saturating_add(settings.max_skew_ms),
    )
}

/// The limit the generator is given for the confirmed reservation
/// `limit_ms` (the last Unix ms it covers): `limit_ms` itself. The harness's
/// control build (Cargo feature `harness-controls`, off by default, UNSAFE)
/// lets it issue one millisecond more when `SNOWMINT_HARNESS_CONTROL` is
/// `past-reservation`, to prove the harness's checker finds IDs past the
/// confirmed reservation.
pub fn issue_until(limit_ms: u64) -> u64 {
    if crate::removed(crate::Control::PastReservation) {
        limit_ms.saturating_add(1)
    } else {
        limit_ms
    }
}

/// The reservation's end a lease reports for the generator's end `end_ms`:
/// `end_ms`, less the control build's extra millisecond ([`issue_until`]),
/// so that its reports show what the store confirmed (`epoch_ms`: ends at or
/// before it, a lost or closed lease's, are left alone).
pub fn reported_end(end_ms: u64, epoch_ms: u64) -> u64 {
    if crate::removed(crate::Control::PastReservation) && end_ms > epoch_ms {
        end_ms - 1
    } else {
        end_ms
    }
}

/// What a renewal's answer means for the holder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Renewed {
    /// Confirmed: raise the limit to `limit_ms`.
    Confirmed {
        /// The confirmed `hwm`, Unix ms.
        hwm_ms: u64,
        /// The new expiry, store time.
        expires_ms: Option<u64>,
        /// The new issuing limit (see [`limit`]).
        limit_ms: u64,
        /// Local minus store clock, ms, when this renewal measured it.
        skew_ms: Option<i64>,
        /// Why this confirmed renewal is still a problem (skew past
        /// `max_skew_ms`, or no progress: the reservation runs dry).
        warning: Option<String>,
    },
    /// Another holder has the slot: stop at once, even inside the reservation.
    Lost(String),
    /// Nothing is known: keep the confirmed reservation, try again soon.
    Failed(String),
}

/// Decides on a renewal's answer. `prev_hwm_ms` is the last confirmed `hwm`;
/// `sent_ms`/`got_ms` the local clock before the call and after its answer.
///
/// The store's time comes from the answer itself: every store writes
/// `hwm = max(old hwm, store time + window_ms)` (a [`Store::renew`]
/// contract), so an `hwm` that moved gives store time exactly. An `hwm` that
/// did not move means store time + `window_ms` was at most the old `hwm`:
/// either a predecessor reserved further ahead (benign), or the store's clock
/// stepped back, and the reservation runs dry at the old `hwm` unless it
/// catches up. The second is reported once the store's clock is provably
/// more than `max_skew_ms` behind, never shown as a healthy renewal.
///
/// [`Store::renew`]: crate::Store::renew
pub fn after_renewal(
    result: Result<Renewal, StoreError>,
    prev_hwm_ms: u64,
    sent_ms: u64,
    got_ms: u64,
    settings: &Settings,
) -> Renewed {
    let r = match result {
        Ok(r) => r,
        Err(StoreError::Lost(why)) => return Renewed::Lost(why),
        Err(e) => return Renewed::Failed(describe(&e)),
    };
    let (skew_ms, warning) = if r.hwm_ms > prev_hwm_ms {
        let store_ms = r.hwm_ms.saturating_sub(settings.window_ms);
        let local_ms = sent_ms / 2 + got_ms / 2;
        let skew = local_ms as i64 - store_ms as i64;
        // The store read its clock somewhere inside the round trip.
        let margin = got_ms.saturating_sub(sent_ms) / 2;
        let warning =
            (skew.unsigned_abs() > settings.max_skew_ms.saturating_add(margin)).then(|| {
                format!(
                    "store clock skew {} ms ({}) exceeds max_skew_ms {}",
                    skew.unsigned_abs(),
                    if skew > 0 {
                        "store behind"
                    } else {
                        "store ahead"
                    },
                    settings.max_skew_ms
                )
            });
        (Some(skew), warning)
    } else {
        // No progress: store time + window was at most the old hwm. Benign
        // while the old hwm is still ahead of what this renewal would have
        // reserved (a predecessor reserved further ahead). The store read its
        // clock after `sent_ms`, so it is behind the local one by at least
        // `sent_ms + window - old hwm`: past `max_skew_ms`, that is a store
        // clock stepped back, and the reservation runs dry.
        let behind = sent_ms
            .saturating_add(settings.window_ms)
            .saturating_sub(prev_hwm_ms);
        let warning = (behind > settings.max_skew_ms).then(|| {
            format!(
                "renewal confirmed no progress: hwm stays at {prev_hwm_ms} ms, so the store clock is at least {behind} ms behind (max_skew_ms {}); IDs run dry at {prev_hwm_ms} ms unless it catches up",
                settings.max_skew_ms
            )
        });
        (None, warning)
    };
    Renewed::Confirmed {
        hwm_ms: r.hwm_ms,
        expires_ms: r.expires_ms,
        limit_ms: limit(r.hwm_ms, sent_ms, settings),
        skew_ms,
        warning,
    }
}

/// What a release writes into `hwm`: the start of the last time unit issued,
/// or the claim's `prev_hwm_ms` if none was.
pub fn release_hwm(last_issued_ms: Option<u64>, prev_hwm_ms: u64) -> u64 {
    last_issued_ms.unwrap_or(prev_hwm_ms)
}

/// What releasing a claim that answered after its deadline writes into
/// `hwm`: the claim's own `hwm`. Nothing was issued under it, but nobody can
/// know that from the store, and keeping the reservation costs only time
/// units.
pub fn late_claim_hwm(claim: &Claim) -> u64 {
    claim.hwm_ms
}

/// A store error as `last_error` shows it.
pub fn describe(e: &StoreError) -> String {
    match e {
        StoreError::Unreachable(d)
        | StoreError::Lost(d)
        | StoreError::BadRecord(d)
        | StoreError::Refused(d) => d.clone(),
        StoreError::NoFreeSlot => "no free slot".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A renewal sent at 1,000,000 whose reply came 5 s later, from a store
    /// whose clock ran 4 s ahead (hwm 1,004,000 + window): the limit counts
    /// from the send time, not the reply's arrival. The fence after a loss
    /// covers `sent + window_ms + max_skew_ms` only.
    #[test]
    fn the_limit_counts_from_the_send_time() {
        let settings = Settings {
            window_ms: 1_000,
            max_skew_ms: 500,
            ..Settings::default()
        };
        let (sent, got) = (1_000_000, 1_005_000);
        let renewal = Renewal {
            hwm_ms: 1_005_000,
            expires_ms: None,
        };
        match after_renewal(Ok(renewal), 0, sent, got, &settings) {
            Renewed::Confirmed { limit_ms, .. } => {
                assert_eq!(
                    limit_ms,
                    sent + 1_000 + 500,
                    "limit from the reply's arrival"
                )
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(limit(1_005_000, sent, &settings), sent + 1_500);
        assert_eq!(limit(1_001_000, sent, &settings), 1_001_000);
    }
}
