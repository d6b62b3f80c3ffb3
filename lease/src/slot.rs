//! What every store shares: the slot-choice rule ([`slot_order`]), claim
//! tokens, the local clock, and the text of a slot's state (the file store's
//! state file and the etcd store's state key).
//!
//! Every store decides which slot a claim takes by the same rule; the Redis
//! store, whose choice is made inside the server by a Lua script, is tested
//! against [`slot_order`] on a real server (lease/tests/store_redis.rs).

use std::time::{SystemTime, UNIX_EPOCH};

/// What a claim read of one slot that has a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotSeen {
    /// The slot.
    pub slot: u64,
    /// Nobody holds it (never held, released, or its claim expired).
    pub free: bool,
    /// Its recorded `hwm` (Unix ms): a new holder starts above it.
    pub hwm_ms: u64,
}

/// How many never-used slots a claim lists, lowest first: enough that racing
/// claimers do not all fight over one, few enough for a space of millions.
pub const UNUSED_LISTED: usize = 64;

/// The slots a claim tries, best first, in a space of `slots` slots of which
/// `seen` are the ones with a record (any order; records outside the space
/// are ignored), at the store's clock `now_ms`:
///
/// 1. `prefer` (the slot the holder had before), if it is in the space and
///    free, whatever its `hwm`;
/// 2. the free slots whose `hwm` is not ahead of the clock, and the first
///    [`UNUSED_LISTED`] slots never used (`hwm` 0), lowest slot first: a new
///    holder there issues at once;
/// 3. the other free slots, lowest `hwm` first (then lowest slot): a new
///    holder there waits the least for its clock to pass the `hwm`.
///
/// Held slots are never listed. An empty list: every slot is held.
pub fn slot_order(prefer: Option<u64>, slots: u64, seen: &[SlotSeen], now_ms: u64) -> Vec<u64> {
    let mut known: Vec<&SlotSeen> = seen.iter().filter(|s| s.slot < slots).collect();
    known.sort_unstable_by_key(|s| s.slot);
    known.dedup_by_key(|s| s.slot);
    let record = |n: u64| {
        known
            .binary_search_by_key(&n, |s| s.slot)
            .ok()
            .map(|i| known[i])
    };
    let prefer = prefer.filter(|&p| p < slots && record(p).is_none_or(|s| s.free));
    let mut behind: Vec<u64> = known
        .iter()
        .filter(|s| s.free && s.hwm_ms <= now_ms)
        .map(|s| s.slot)
        .collect();
    let mut unused = Vec::with_capacity(UNUSED_LISTED);
    let mut next = known.iter().map(|s| s.slot).peekable();
    for n in 0..slots {
        if unused.len() == UNUSED_LISTED {
            break;
        }
        while next.next_if(|&k| k < n).is_some() {}
        if next.next_if_eq(&n).is_none() {
            unused.push(n);
        }
    }
    behind.extend(unused);
    behind.sort_unstable();
    let mut ahead: Vec<(u64, u64)> = known
        .iter()
        .filter(|s| s.free && s.hwm_ms > now_ms)
        .map(|s| (s.hwm_ms, s.slot))
        .collect();
    ahead.sort_unstable();
    prefer
        .into_iter()
        .chain(behind.into_iter().filter(|&n| Some(n) != prefer))
        .chain(
            ahead
                .into_iter()
                .map(|(_, n)| n)
                .filter(|&n| Some(n) != prefer),
        )
        .collect()
}

/// A slot's state: the file store's state file, and the etcd store's state
/// key (the same text).
// Without the file store and the network stores (Windows, no features),
// nothing uses these.
#[cfg_attr(not(unix), allow(dead_code))]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct State {
    pub(crate) hwm_ms: u64,
    pub(crate) counter: u64,
    pub(crate) token: String,
}

#[cfg_attr(not(unix), allow(dead_code))]
impl State {
    const HEADER: &'static str = "snowmint lease slot v1";

    /// A free slot's state: no token, `hwm_ms` and the claim counter kept.
    pub(crate) fn freed(hwm_ms: u64, counter: u64) -> State {
        let token = String::new();
        State {
            hwm_ms,
            counter,
            token,
        }
    }

    pub(crate) fn to_text(&self) -> String {
        format!(
            "{}\nhwm_ms={}\ncounter={}\ntoken={}\n",
            Self::HEADER,
            self.hwm_ms,
            self.counter,
            self.token
        )
    }

    pub(crate) fn parse(text: &str) -> Option<State> {
        let mut lines = text.lines();
        if lines.next()? != Self::HEADER {
            return None;
        }
        let mut field = |name: &str| lines.next()?.strip_prefix(name)?.strip_prefix('=');
        let hwm_ms = field("hwm_ms")?.parse().ok()?;
        let counter = field("counter")?.parse().ok()?;
        let token = field("token")?.to_string();
        Some(State {
            hwm_ms,
            counter,
            token,
        })
    }
}

/// A random token: std's OS-seeded hash keys over the time and a counter.
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) fn new_token() -> String {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let word = || {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        h.write_u128(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        h.write_u32(std::process::id());
        h.finish()
    };
    format!("{:016x}{:016x}", word(), word())
}

/// The local clock, Unix ms (0 before 1970).
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) fn system_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(slot: u64, free: bool, hwm_ms: u64) -> SlotSeen {
        SlotSeen { slot, free, hwm_ms }
    }

    #[test]
    fn state_text_round_trips() {
        let s = State {
            hwm_ms: 1_700_000_000_123,
            counter: 7,
            token: "ab".into(),
        };
        assert_eq!(State::parse(&s.to_text()), Some(s));
        assert_eq!(State::parse("junk"), None);
        assert_eq!(State::parse("snowmint lease slot v1\nhwm_ms=x\n"), None);
    }

    #[test]
    fn order_behind_and_unused_by_slot_then_ahead_by_hwm() {
        // 0 held; 1 free, behind; 2 free, ahead; 4 free, behind; 3, 5, 6 never used.
        let m = [
            seen(0, false, 10),
            seen(4, true, 90),
            seen(2, true, 500),
            seen(1, true, 50),
        ];
        assert_eq!(slot_order(None, 7, &m, 100), [1, 3, 4, 5, 6, 2]);
        // A free preference comes first, whatever its hwm, and only once.
        assert_eq!(slot_order(Some(2), 7, &m, 100), [2, 1, 3, 4, 5, 6]);
        assert_eq!(slot_order(Some(5), 7, &m, 100), [5, 1, 3, 4, 6, 2]);
        // A held preference is not tried; one outside the space is ignored.
        assert_eq!(slot_order(Some(0), 7, &m, 100), [1, 3, 4, 5, 6, 2]);
        assert_eq!(slot_order(Some(9), 7, &m, 100), [1, 3, 4, 5, 6, 2]);
        // hwm equal to the clock is behind it.
        assert_eq!(slot_order(None, 3, &m, 500), [1, 2]);
    }

    #[test]
    fn order_ahead_ties_and_records_outside_the_space() {
        let m = [
            seen(3, true, 700),
            seen(1, true, 700),
            seen(2, true, 600),
            seen(0, false, 0),
            seen(9, true, 0),
        ];
        assert_eq!(slot_order(None, 4, &m, 100), [2, 1, 3]);
        // Every slot held: nothing to try.
        let held = [seen(0, false, 0), seen(1, false, 0)];
        assert!(slot_order(Some(1), 2, &held, 100).is_empty());
    }

    #[test]
    fn order_lists_at_most_the_first_unused_slots() {
        let m = [seen(0, false, 0), seen(2, true, 10)];
        let order = slot_order(None, 1 << 22, &m, 100);
        assert_eq!(order.len(), 1 + UNUSED_LISTED);
        assert_eq!(order[..4], [1, 2, 3, 4]);
        assert_eq!(order[UNUSED_LISTED], UNUSED_LISTED as u64 + 1);
    }
}
