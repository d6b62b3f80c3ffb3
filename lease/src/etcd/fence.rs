//! An etcd that goes back in time: the space's marker, and the fence.
//!
//! An etcd member restarted from a copy of its data directory, or a cluster
//! made from a snapshot (`etcdctl snapshot restore`), has lost the writes
//! after the copy. Its data, the space's own keys included, is consistent
//! with the past. Two signals survive it:
//!
//! - this process's memory (`crate::history`): per space, the cluster ID and
//!   the highest revision its calls were answered at (the range reads are
//!   linearizable), and per live holder the revision of its slot's state
//!   after its last confirmed write. A claim that sees a lower revision,
//!   another cluster ID, or a holder's state older than that, fences; a
//!   renewal that sees it for its own slot fails as lost (and fences);
//! - the space's marker (`snowmint/lease/<space>/marker`, [`Marker`]): the
//!   cluster whose claims the keys record, and the largest window a claimer
//!   used. Keys restored into another
//!   cluster (a snapshot restored with a new `--initial-cluster-token`, keys
//!   copied over) still name the old one: the next claim fences.
//!
//! The fence (store time, plus the largest window any claimer of the space
//! used, plus 2 × `max_skew_ms`; and its cause) is written into the space's
//! fence key (`snowmint/lease/<space>/fence`) in the claim's transaction, so
//! every later claim of the space, from any process, starts above it; and a
//! holder whose slot state is older than the fence key fails as lost at its
//! next renewal (the restore may have revived a superseded holder).
//!
//! Not detected: a process that never talked to the store before the loss,
//! in a space whose marker names the same cluster. A member restored from a
//! copy of its own data directory keeps its cluster ID, and so does a
//! snapshot restored, or a new cluster made, with the original cluster's
//! flags (etcd derives the IDs from the member names, peer URLs and cluster
//! token). See docs/STORES.md, "etcd".

use serde_json::{json, Value};
use snowmint::FenceCause;

use super::transport::{b64, Kv};
use super::{EtcdStore, Slot};
use crate::history::{self, Fence, Seen};
use crate::space::SlotSpace;
use std::collections::HashMap;

/// How messages name etcd's position in its history.
pub(super) const UNIT: &str = "etcd revision";

/// The fault harness's control build (Cargo feature `harness-controls`, off
/// by default, UNSAFE) with `SNOWMINT_HARNESS_CONTROL=no-etcd-fence`: no loss
/// is detected and no fence is honoured, by claims and renewals alike.
pub(super) fn no_fence() -> bool {
    crate::removed(crate::Control::NoEtcdFence)
}

/// The space's marker: `cluster=<id> window=<ms>`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Marker {
    /// The cluster ID (decimal, as the headers carry it) whose claims the
    /// space's keys record.
    pub cluster: String,
    /// The largest `window_ms` a claimer of the space used: the fence's span.
    pub window_ms: u64,
}

impl Marker {
    pub(super) fn to_text(&self) -> String {
        format!("cluster={} window={}", self.cluster, self.window_ms)
    }

    pub(super) fn parse(text: &str) -> Option<Marker> {
        let (cluster, window) = text.split_once(' ')?;
        let cluster = cluster.strip_prefix("cluster=").filter(|c| !c.is_empty())?;
        Some(Marker {
            cluster: cluster.to_string(),
            window_ms: history::parse_window(window)?,
        })
    }
}

/// A space as read: its slots, its marker and fence keys, and the read's
/// header.
pub(super) struct SpaceRead {
    pub(super) header: Seen,
    pub(super) slots: HashMap<u64, Slot>,
    pub(super) marker: Option<(Marker, Kv)>,
    pub(super) fence: Option<(Fence, Kv)>,
}

/// What a claim writes besides its slot: the marker, and a new fence.
pub(super) struct MarkerPlan {
    /// The marker after the claim, and whether the claim writes it.
    pub(super) marker: Option<Marker>,
    /// The space's fence after the claim (`None`: none).
    pub(super) fence: Option<Fence>,
    /// Whether this claim detected a loss and writes a new fence.
    pub(super) fenced: bool,
}

impl MarkerPlan {
    /// Whether the claim writes a key of the space besides its slot.
    pub(super) fn writes(&self) -> bool {
        self.marker.is_some() || self.fenced
    }
}

impl EtcdStore {
    /// The compare that the space's key `name` (`marker`, `fence`) is as
    /// read (absent, or unchanged).
    pub(super) fn unchanged(space: &SlotSpace, name: &str, kv: Option<&Kv>) -> Value {
        let key = b64(&format!("{}{name}", Self::space_prefix(space)));
        match kv {
            Some(kv) => json!({"key": key, "result": "EQUAL", "target": "MOD",
                               "mod_revision": kv.mod_revision.to_string()}),
            None => json!({"key": key, "result": "EQUAL", "target": "CREATE",
                           "create_revision": "0"}),
        }
    }

    /// What a claim of the space writes besides its slot, as read in
    /// `read`: a fence if this process saw the store at a higher revision or
    /// as another cluster (`before`), or one of its holders (`holders`, both
    /// taken before the read was sent) confirmed newer than the store's
    /// state of its slot, or if the marker names another cluster; the marker
    /// where it is missing, names another cluster, or has a smaller window
    /// than `window_ms`.
    pub(super) fn plan_marker(
        &self,
        read: &SpaceRead,
        (before, holders): (Option<&Seen>, &[(u64, Seen)]),
        now: u64,
        window_ms: u64,
    ) -> MarkerPlan {
        let old = read.marker.as_ref().map(|(m, _)| m);
        // This process's live holders (as confirmed before the read): their
        // slots' states must be at least as new as their last confirmed writes.
        let held_went_back = || {
            holders.iter().find_map(|(n, seen)| {
                let rev = read
                    .slots
                    .get(n)
                    .and_then(|s| s.state.as_ref())
                    .map(|(_, kv)| kv.mod_revision);
                history::record_went_back(Some(seen), &read.header, *n, rev, UNIT)
            })
        };
        let detected = history::went_back(before, &read.header, UNIT)
            .or_else(held_went_back)
            .or_else(|| {
                old.filter(|m| m.cluster != read.header.cluster).map(|m| {
                    (
                        FenceCause::StoreChanged,
                        format!(
                            "the space's marker names etcd cluster {} but cluster {} answers",
                            m.cluster, read.header.cluster
                        ),
                    )
                })
            });
        let new = Marker {
            cluster: read.header.cluster.clone(),
            window_ms: old.map_or(0, |m| m.window_ms).max(window_ms),
        };
        // The harness's control build (Cargo feature, off by default):
        // neither detects that the store went back nor starts above the
        // space's fence, to prove its checker finds the duplicates that a
        // cluster restored from an older snapshot then causes.
        let detected = detected.filter(|_| !no_fence());
        let fence = match &detected {
            Some((cause, _)) => Some(Fence::after(now, new.window_ms, self.skew_ms, *cause)),
            None => read.fence.as_ref().map(|(f, _)| *f).filter(|_| !no_fence()),
        };
        MarkerPlan {
            marker: (old != Some(&new)).then_some(new),
            fence,
            fenced: detected.is_some(),
        }
    }

    /// Writes a fence into the space's fence key after a renewal found that
    /// the store went back (best effort: the caller fails as lost anyway).
    pub(super) fn fence_space(&self, space: &SlotSpace, cause: FenceCause, window_ms: u64) {
        for _ in 0..4 {
            let Ok(read) = self.read_space(space) else {
                return;
            };
            let Ok(now) = self.client.store_ms() else {
                return;
            };
            let window = read.marker.as_ref().map_or(0, |(m, _)| m.window_ms);
            let fence = Fence::after(now, window.max(window_ms), self.skew_ms, cause);
            let key = b64(&format!("{}fence", Self::space_prefix(space)));
            let answer = self.client.call(
                "kv/txn",
                &json!({
                    "compare": [Self::unchanged(space, "fence", read.fence.as_ref().map(|(_, kv)| kv))],
                    "success": [{"request_put": {"key": key, "value": b64(&fence.to_text())}}],
                }),
            );
            if let Ok(answer) = answer {
                if answer["succeeded"].as_bool() == Some(true) {
                    if let Ok(h) = super::transport::header_of(&answer) {
                        history::record_space(&self.client.name, space.key(), &h, true);
                    }
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_text_round_trips() {
        let m = Marker {
            cluster: "14841639068965178418".into(),
            window_ms: 20_000,
        };
        assert_eq!(Marker::parse(&m.to_text()), Some(m));
        assert_eq!(Marker::parse("cluster=1"), None);
        assert_eq!(Marker::parse("cluster= window=2"), None);
        assert_eq!(Marker::parse("cluster=1 window=x"), None);
    }
}
