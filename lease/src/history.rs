//! What this process remembers of a store that may go back in time (etcd,
//! ZooKeeper): a store restored from a backup or snapshot has lost the
//! writes after the copy, claims, renewals and releases it had confirmed, and
//! its data, consistent with the past, cannot show it. This process can:
//!
//! - per space, the store's identity (etcd's cluster ID; ZooKeeper has none)
//!   and the highest position in its history it answered at (etcd's
//!   revision, ZooKeeper's zxid). A store that keeps its data answers a
//!   call at a position at least as high as every write confirmed before the
//!   call was sent: a lower one, or another identity, means it lost writes;
//! - per live holder, its slot and the position of its last confirmed write
//!   of the slot's record. Only the holder writes its record, so a record
//!   older than that is a lost write, even after the store's position has
//!   caught up with the mark again (more writes since the restore, or
//!   ZooKeeper's new epoch after a restart).
//!
//! What each store does with a detection (a fence for the next claims, the
//! renewal failing as lost), and what no process can detect: the stores'
//! modules and docs/STORES.md.

use std::collections::HashMap;
use std::sync::Mutex;

use snowmint::FenceCause;

/// Where a store answered: its identity and its position in its history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Seen {
    /// The store's identity (etcd's `cluster_id`; empty for ZooKeeper).
    pub cluster: String,
    /// Its position: etcd's revision, ZooKeeper's zxid.
    pub revision: i64,
}

/// One space's memory: the space's highest revision, and each live
/// holder's slot and last confirmed write (the revision of its slot's state)
/// with the space's fence count then. A fence accounts for every write
/// confirmed before it: claims check only the holders recorded since.
#[derive(Default)]
struct Space {
    seen: Option<Seen>,
    fences: u64,
    holders: HashMap<String, (u64, Seen, u64)>,
}

/// Keyed by the store's name (the URL without password) and the space key.
static MEMORY: Mutex<Option<HashMap<(String, String), Space>>> = Mutex::new(None);

fn with<T>(store: &str, space: &str, f: impl FnOnce(&mut Space) -> T) -> T {
    let mut guard = MEMORY.lock().unwrap_or_else(|e| e.into_inner());
    let map = guard.get_or_insert_with(HashMap::new);
    f(map
        .entry((store.to_string(), space.to_string()))
        .or_default())
}

/// What the process saw of the space before a call (take it before sending).
pub(crate) fn space_seen(store: &str, space: &str) -> Option<Seen> {
    with(store, space, |s| s.seen.clone())
}

/// What holder `token` was last confirmed at (its claim or last renewal).
pub(crate) fn holder_seen(store: &str, space: &str, token: &str) -> Option<Seen> {
    with(store, space, |s| {
        s.holders.get(token).map(|(_, seen, _)| seen.clone())
    })
}

/// Whether this process fenced the space since holder `token`'s last
/// confirmed write: that fence already covers the writes the holder lost.
pub(crate) fn fenced_since(store: &str, space: &str, token: &str) -> bool {
    with(store, space, |s| {
        s.holders
            .get(token)
            .is_some_and(|(_, _, fences)| *fences < s.fences)
    })
}

/// This process's live holders of the space confirmed since its last
/// fence: slot, last confirmed write.
pub(crate) fn holders(store: &str, space: &str) -> Vec<(u64, Seen)> {
    with(store, space, |s| {
        s.holders
            .values()
            .filter(|(_, _, fences)| *fences == s.fences)
            .map(|(n, seen, _)| (*n, seen.clone()))
            .collect()
    })
}

/// Records an answer of the space. `rebase`: a fence was just written at
/// `h`, which becomes the space's mark even if it is lower or from another
/// cluster; else the mark only rises.
pub(crate) fn record_space(store: &str, space: &str, h: &Seen, rebase: bool) {
    with(store, space, |s| {
        if rebase {
            s.fences += 1;
        }
        match &mut s.seen {
            Some(seen) if !rebase => {
                if seen.cluster == h.cluster {
                    seen.revision = seen.revision.max(h.revision);
                }
            }
            slot => *slot = Some(h.clone()),
        }
    });
}

/// Records holder `token`'s confirmed write of slot `slot`'s state at `h`.
pub(crate) fn record_holder(store: &str, space: &str, token: &str, slot: u64, h: &Seen) {
    with(store, space, |s| {
        let fences = s.fences;
        s.holders
            .insert(token.to_string(), (slot, h.clone(), fences));
    });
}

/// Forgets holder `token` (released, lost).
pub(crate) fn forget_holder(store: &str, space: &str, token: &str) {
    with(store, space, |s| {
        s.holders.remove(token);
    });
}

/// Whether an answer at `now` shows that the store lost writes confirmed
/// at `before`: another identity, or a lower position. `unit` names the
/// position in messages ("etcd revision", "ZooKeeper zxid"). The cause and
/// why.
pub(crate) fn went_back(
    before: Option<&Seen>,
    now: &Seen,
    unit: &str,
) -> Option<(FenceCause, String)> {
    let before = before?;
    if before.cluster != now.cluster {
        Some((
            FenceCause::StoreChanged,
            format!(
                "the store answers as cluster {} where this process saw cluster {}",
                now.cluster, before.cluster
            ),
        ))
    } else if now.revision < before.revision {
        Some((
            FenceCause::StoreForgot,
            format!(
                "the {unit} went back from {} to {} (restored from a backup or snapshot?): \
                 writes it confirmed are lost",
                before.revision, now.revision
            ),
        ))
    } else {
        None
    }
}

/// [`went_back`], or a slot's record older than the write this process had
/// confirmed for it at `before` (`record_at`: the record's position, its
/// `mod_revision` or `mzxid`; `None` if it is missing).
pub(crate) fn record_went_back(
    before: Option<&Seen>,
    now: &Seen,
    slot: u64,
    record_at: Option<i64>,
    unit: &str,
) -> Option<(FenceCause, String)> {
    let seen = before?;
    went_back(before, now, unit).or_else(|| {
        let at = record_at.unwrap_or(0);
        (at < seen.revision).then(|| {
            (
                FenceCause::StoreForgot,
                format!(
                    "slot {slot}'s record was confirmed at {unit} {} but the store holds it \
                     at {at} (restored from a backup or snapshot?): writes it confirmed are lost",
                    seen.revision
                ),
            )
        })
    })
}

/// A space's fence record (etcd's `<space>/fence` key, ZooKeeper's
/// `<space>/fence` znode): `fence=<ms> cause=<forgot|changed>`. Written only
/// when a loss is detected, so its position (`mod_revision`, `mzxid`) is the
/// fence's: a slot record older than that was last confirmed before the
/// loss was detected, and its holder's renewal fails as lost (a restore may
/// have revived a holder that another had superseded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fence {
    /// The fence, Unix ms by the store's clock.
    pub fence_ms: u64,
    /// Why it was written.
    pub cause: FenceCause,
}

impl Fence {
    /// The fence after a loss detected at store time `now`: `now` + the
    /// largest window any claimer of the space recorded + 2 × `skew_ms`.
    pub(crate) fn after(now: u64, window_ms: u64, skew_ms: u64, cause: FenceCause) -> Fence {
        Fence {
            fence_ms: now
                .saturating_add(window_ms)
                .saturating_add(skew_ms.saturating_mul(2)),
            cause,
        }
    }

    pub(crate) fn to_text(self) -> String {
        let cause = match self.cause {
            FenceCause::StoreChanged => "changed",
            _ => "forgot",
        };
        format!("fence={} cause={cause}", self.fence_ms)
    }

    pub(crate) fn parse(text: &str) -> Option<Fence> {
        let (fence, cause) = text.split_once(' ')?;
        Some(Fence {
            fence_ms: fence.strip_prefix("fence=")?.parse().ok()?,
            cause: match cause.strip_prefix("cause=")? {
                "changed" => FenceCause::StoreChanged,
                "forgot" => FenceCause::StoreForgot,
                _ => return None,
            },
        })
    }
}

/// `window=<ms>`: the largest `window_ms` a claimer of a space recorded.
pub(crate) fn parse_window(text: &str) -> Option<u64> {
    text.strip_prefix("window=")?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(cluster: &str, revision: i64) -> Seen {
        Seen {
            cluster: cluster.into(),
            revision,
        }
    }

    #[test]
    fn lower_position_or_other_identity_went_back() {
        let seen = h("7", 10);
        let back = |now: Seen| went_back(Some(&seen), &now, "revision").map(|c| c.0);
        assert_eq!(went_back(None, &h("7", 1), "revision"), None);
        assert_eq!(back(h("7", 10)), None);
        assert_eq!(back(h("7", 11)), None);
        assert_eq!(back(h("7", 9)), Some(FenceCause::StoreForgot));
        assert_eq!(back(h("8", 99)), Some(FenceCause::StoreChanged));
        // The store's position caught up; the slot's record did not.
        let rec = |at| record_went_back(Some(&seen), &h("7", 12), 3, at, "revision").map(|c| c.0);
        assert_eq!(rec(Some(10)), None);
        assert_eq!(rec(Some(9)), Some(FenceCause::StoreForgot));
        assert_eq!(rec(None), Some(FenceCause::StoreForgot));
    }

    #[test]
    fn fence_text_round_trips() {
        let f = Fence::after(1000, 20_000, 5, FenceCause::StoreChanged);
        assert_eq!(f.fence_ms, 21_010);
        assert_eq!(Fence::parse(&f.to_text()), Some(f));
        assert_eq!(Fence::parse("fence=1"), None);
        assert_eq!(Fence::parse("fence=1 cause=none"), None);
        assert_eq!(parse_window("window=7"), Some(7));
        assert_eq!(parse_window("window="), None);
    }

    #[test]
    fn the_mark_rises_unless_rebased() {
        let (st, sp) = ("test://mark", "space");
        record_space(st, sp, &h("7", 10), false);
        record_space(st, sp, &h("7", 4), false);
        assert_eq!(space_seen(st, sp), Some(h("7", 10)));
        record_holder(st, sp, "a", 2, &h("7", 10));
        assert_eq!(holders(st, sp), vec![(2, h("7", 10))]);
        record_space(st, sp, &h("7", 4), true);
        assert_eq!(space_seen(st, sp), Some(h("7", 4)));
        // The fence accounts for holder a's writes at claims; its own
        // renewal still checks them.
        assert_eq!(holders(st, sp), vec![]);
        assert!(fenced_since(st, sp, "a"));
        assert_eq!(holder_seen(st, sp, "a"), Some(h("7", 10)));
    }
}
