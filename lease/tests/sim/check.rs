//! The checker: what a violation is, classified, so that each negative
//! control can assert the one it exists for.
//!
//! Every claim of a slot starts a *tenure*. A tenure's floor is the lowest
//! time unit its generator may issue (strictly above the claim's
//! `prev_hwm_ms` with `resume_after`, else its clock at the claim); its
//! ceiling is the highest unit it may still issue: while it runs, the
//! larger of the bound its generator was given (`reserve_until`) and the
//! last unit it issued; once it stopped (crash, lost, closed), the last unit
//! it issued.

use std::collections::HashSet;

/// What went wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A claim started a tenure whose floor is at or below a unit an earlier
    /// tenure of the same slot issued or may still issue (fact 3 of the
    /// safety argument: docs/LEASES.md). Found at the claim, before any ID.
    SuccessorBelowPredecessor,
    /// One ID issued twice. The claim check above finds every overlap that
    /// exists when a successor starts; this finds what happens after it (a
    /// superseded holder whose reservation grows again).
    DuplicateId,
    /// A holder issued an ID outside what the store confirmed to it: above
    /// its largest confirmed `hwm`, or at or below its claim's `prev_hwm_ms`
    /// (fact 1).
    ReservationOverrun,
    /// Liveness, not uniqueness: a store wrote a slot's `hwm` from its own
    /// clock further ahead of true time than any holder's clock justifies
    /// (`timeout_ms + max_skew_ms + window_ms` past it, plus the holders'
    /// clock error), leaving the slot unusable until real time catches up.
    PoisonedHwm,
    /// A holder whose clock is further than its `max_skew_ms` from every
    /// store clock it can see took a slot: the skew check exists to refuse
    /// it.
    FarClockClaimed,
}

#[derive(Clone, Debug)]
pub struct Violation {
    pub kind: Kind,
    pub detail: String,
}

#[derive(Clone, Debug)]
pub struct Tenure {
    pub slot: u64,
    pub proc: usize,
    pub floor: u64,
    pub limit: u64,
    pub max_issued: Option<u64>,
    pub live: bool,
}

impl Tenure {
    /// The highest unit it issued or may still issue (`None`: none).
    pub fn ceiling(&self) -> Option<u64> {
        if self.live {
            Some(self.max_issued.map_or(self.limit, |m| m.max(self.limit)))
        } else {
            self.max_issued
        }
    }
}

#[derive(Default)]
pub struct Checker {
    pub tenures: Vec<Tenure>,
    issued: HashSet<u64>,
    /// Every violation of the schedule so far, in order.
    pub found: Vec<Violation>,
}

impl Checker {
    pub fn report(&mut self, kind: Kind, detail: String) {
        self.found.push(Violation { kind, detail });
    }

    /// A new tenure; checks it against every earlier one of its slot.
    pub fn start(&mut self, t: Tenure, t0: u64) -> usize {
        for (i, e) in self.tenures.iter().enumerate() {
            if e.slot != t.slot {
                continue;
            }
            if let Some(c) = e.ceiling() {
                if c >= t.floor {
                    let detail = format!(
                        "p{} claimed slot {} and may issue from {} ms, but tenure #{i} (p{}, {}) issued or may issue up to {} ms",
                        t.proc,
                        t.slot,
                        t.floor as i64 - t0 as i64,
                        e.proc,
                        if e.live { "running" } else { "stopped" },
                        c as i64 - t0 as i64
                    );
                    self.report(Kind::SuccessorBelowPredecessor, detail);
                    break;
                }
            }
        }
        self.tenures.push(t);
        self.tenures.len() - 1
    }

    /// An ID issued by tenure `t`; `false` if it was issued before.
    pub fn issued(&mut self, t: usize, id: u64, ms: u64) -> bool {
        let e = &mut self.tenures[t];
        e.max_issued = Some(e.max_issued.map_or(ms, |m| m.max(ms)));
        self.issued.insert(id)
    }

    pub fn kinds(&self) -> Vec<Kind> {
        self.found.iter().map(|v| v.kind).collect()
    }
}
