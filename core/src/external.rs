//! Generation on a state word the caller keeps: for generators whose state
//! must be shared by several processes (the PostgreSQL extension keeps one
//! word per generator in the server's shared memory, for every backend).
//!
//! The semantics are [`Config`]'s step, exactly as [`Generator`](crate::Generator)
//! runs it: one compare-and-swap per ID on the word, a batch's run of
//! sequence values claimed with one swap. What this file does not do is
//! everything a process-local generator adds around it: the registry that
//! makes generators with the same node values share one word (the caller
//! keeps one word per [`StateKey`](crate::StateKey)), fork detection (the
//! word lives in memory every process sees), and waiting (the caller waits
//! until the time returned, as its host allows: interruptibly, in
//! PostgreSQL). A caller with a lease passes its confirmed reservation as
//! the step's limit ([`Config::limit_before`]): past it the step refuses
//! with `lease_expired`, as a leased generator's does.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::clock::Clock;
use crate::error::Result;
use crate::generator::{Config, Next, Step, FRESH, NO_LIMIT};
use crate::id::Id;

impl Config {
    /// The value a new state word starts with: nothing issued, or the
    /// options' `resume_after`. A word already in use is raised to it
    /// with [`join_state`](Self::join_state) instead.
    pub fn start_state(&self) -> u64 {
        self.initial_state()
    }

    /// The value a new state word starts with when an earlier word of the
    /// same node configuration may have issued up to Unix ms `now_ms` and
    /// been lost since (the shared memory of a server that restarted, or
    /// was reinitialized after a backend crashed, in the middle of a call):
    /// as if the time unit of `now_ms` and the units this configuration may
    /// borrow ahead of it were used up, so that every ID taken from the word
    /// is above every ID the lost word could have issued, returned or not,
    /// by a clock that read at most `now_ms` and borrowed at most as far
    /// ahead. Never below [`start_state`](Self::start_state) (`resume_after`).
    /// The first ID then waits for the next time unit (at most one unit).
    pub fn start_state_after(&self, now_ms: u64) -> u64 {
        let start = self.initial_state();
        let Ok(now) = self.layout().tick_of(now_ms) else {
            return start;
        };
        let top = now.saturating_add(self.lead_units());
        if top > self.layout().timestamp().max() {
            return start;
        }
        let floor = self.pack_state(top, self.layout().sequence().max());
        if floor == FRESH || (start != FRESH && start >= floor) {
            start
        } else {
            floor
        }
    }

    /// Raises an existing state word to this configuration's start (its
    /// `resume_after`), as a process-local generator joining a shared state
    /// does; a word already above it is left alone.
    pub fn join_state(&self, word: &AtomicU64) {
        let floor = self.initial_state();
        if floor == FRESH {
            return;
        }
        let mut cur = word.load(Ordering::Acquire);
        while cur == FRESH || cur < floor {
            match word.compare_exchange(cur, floor, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return,
                Err(seen) => cur = seen,
            }
        }
    }

    /// The step's limit for a reservation that ends before Unix ms `end_ms`
    /// (the first millisecond that may not be issued): the first time unit
    /// not wholly before it, 0 (nothing may be issued) when `end_ms` is at or
    /// before the epoch. `None`: no reservation, no limit.
    pub fn limit_before(&self, end_ms: Option<u64>) -> u64 {
        match end_ms {
            None => NO_LIMIT,
            Some(end) if end <= self.layout().epoch_ms() => 0,
            // The unit holding `end - 1` is the last one wholly allowed.
            Some(end) => self.limit_of(Some(end - 1)),
        }
    }

    /// The next ID from the state word `word`, or when to ask again (the
    /// caller waits until then and calls again). Lock-free: retries its
    /// compare-and-swap when another thread or process got there first.
    pub fn try_next_on(&self, word: &AtomicU64, clock: &impl Clock) -> Result<Next> {
        self.try_next_on_within(word, clock, NO_LIMIT)
    }

    /// [`try_next_on`](Self::try_next_on) under the limit `limit` (from
    /// [`limit_before`](Self::limit_before)): `lease_expired`, nothing
    /// taken, when the next ID's time unit is not below it.
    pub fn try_next_on_within(
        &self,
        word: &AtomicU64,
        clock: &impl Clock,
        limit: u64,
    ) -> Result<Next> {
        // The state before the clock, as `Generator::try_next_id` (a reading
        // taken first could be older than an ID issued in between).
        let mut state = word.load(Ordering::Acquire);
        loop {
            match self.step(state, clock.now_ms(), limit)? {
                Step::Issue { state: new, id } => {
                    match word.compare_exchange(state, new, Ordering::AcqRel, Ordering::Acquire) {
                        Ok(_) => return Ok(Next::Id(Id::new(id))),
                        Err(seen) => {
                            state = seen;
                            core::hint::spin_loop();
                        }
                    }
                }
                Step::RetryAt(at) => return Ok(Next::RetryAt(at)),
            }
        }
    }

    /// Fills as much of `out` as can be issued now from `word`, each time
    /// unit's run with one compare-and-swap. Returns how many IDs were
    /// written and, when fewer than `out.len()`, the Unix millisecond to
    /// call again at (with the rest of `out`). On error, IDs already claimed
    /// are skipped (never reissued), as in `Generator::next_ids`.
    pub fn try_fill_on(
        &self,
        word: &AtomicU64,
        clock: &impl Clock,
        out: &mut [u64],
    ) -> Result<(usize, Option<u64>)> {
        self.try_fill_on_within(word, clock, NO_LIMIT, out)
    }

    /// [`try_fill_on`](Self::try_fill_on) under the limit `limit`: stops
    /// with `lease_expired` at the first ID not below it.
    pub fn try_fill_on_within(
        &self,
        word: &AtomicU64,
        clock: &impl Clock,
        limit: u64,
        out: &mut [u64],
    ) -> Result<(usize, Option<u64>)> {
        let mut done = 0;
        while done < out.len() {
            let state = word.load(Ordering::Acquire);
            let (new, n, stop) = self.fill(state, clock.now_ms(), limit, &mut out[done..]);
            if n > 0 {
                if word
                    .compare_exchange(state, new, Ordering::AcqRel, Ordering::Acquire)
                    .is_err()
                {
                    continue;
                }
                done += n;
            }
            match stop {
                None => {}
                Some(Ok(at)) => return Ok((done, Some(at))),
                Some(Err(e)) => return Err(e),
            }
        }
        Ok((done, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Layout, ManualClock, Options, SequenceStart};

    fn config() -> Config {
        let layout = Layout::preset("twitter").unwrap();
        let nodes = layout
            .nodes_from_pairs([("datacenter", 1), ("worker", 2)])
            .unwrap();
        let options = Options {
            sequence_start: SequenceStart::Zero,
            ..Options::default()
        };
        Config::new(layout, nodes, options).unwrap()
    }

    #[test]
    fn word_issues_increasing_ids_and_batches_continue_them() {
        let cfg = config();
        let word = AtomicU64::new(cfg.start_state());
        let clock = ManualClock::new(1_700_000_000_000);
        let Next::Id(a) = cfg.try_next_on(&word, &clock).unwrap() else {
            panic!("no id")
        };
        let mut out = [0u64; 5000];
        let (n, retry) = cfg.try_fill_on(&word, &clock, &mut out).unwrap();
        // 4096 sequence values per ms, one used: the rest, then a retry time.
        assert_eq!(n, 4095);
        assert_eq!(retry, Some(1_700_000_000_001));
        assert_eq!(out[0], a.get() + 1);
        assert!(out[..n].windows(2).all(|w| w[0] < w[1]));
        clock.set(1_700_000_000_001);
        let (m, retry) = cfg.try_fill_on(&word, &clock, &mut out[n..]).unwrap();
        assert_eq!((m, retry), (5000 - 4095, None));
        assert!(out.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn limit_refuses_past_the_reservation_and_takes_nothing() {
        let cfg = config();
        let word = AtomicU64::new(cfg.start_state());
        let clock = ManualClock::new(1_700_000_000_000);
        // Reserved up to (not including) the next millisecond: this one only.
        let limit = cfg.limit_before(Some(1_700_000_000_001));
        assert!(matches!(
            cfg.try_next_on_within(&word, &clock, limit),
            Ok(Next::Id(_))
        ));
        let before = word.load(Ordering::Acquire);
        clock.set(1_700_000_000_001);
        let e = cfg.try_next_on_within(&word, &clock, limit).unwrap_err();
        assert_eq!(e.code(), "lease_expired");
        let mut out = [0u64; 3];
        let e = cfg
            .try_fill_on_within(&word, &clock, limit, &mut out)
            .unwrap_err();
        assert_eq!(e.code(), "lease_expired");
        assert_eq!(word.load(Ordering::Acquire), before);
        // Nothing reserved (an end at or before the epoch): nothing issued.
        let none = cfg.limit_before(Some(cfg.layout().epoch_ms()));
        assert_eq!(none, 0);
        assert!(cfg.try_next_on_within(&word, &clock, none).is_err());
        assert_eq!(cfg.limit_before(None), NO_LIMIT);
    }

    #[test]
    fn start_after_is_above_everything_a_lost_word_issued() {
        let layout = Layout::preset("twitter").unwrap();
        let nodes = layout
            .nodes_from_pairs([("datacenter", 1), ("worker", 2)])
            .unwrap();
        let borrowing = Options {
            sequence_exhausted: crate::SequenceExhausted::Borrow { max_units: 50 },
            ..Options::default()
        };
        let t = 1_700_000_000_000;
        for options in [Options::default(), borrowing] {
            let cfg = Config::new(layout, nodes, options).unwrap();
            // The lost word: everything up to the clock (and its borrowing).
            let lost = AtomicU64::new(cfg.start_state());
            let clock = ManualClock::new(t);
            let mut out = vec![0u64; 4096 * 60];
            let (n, _) = cfg.try_fill_on(&lost, &clock, &mut out).unwrap();
            let top = out[..n].iter().copied().max().unwrap();
            // A new word started after it at the same clock reading.
            let word = AtomicU64::new(cfg.start_state_after(t));
            assert!(matches!(
                cfg.try_next_on(&word, &clock).unwrap(),
                Next::RetryAt(at) if at == t + 1
            ));
            clock.set(t + 1);
            let Next::Id(id) = cfg.try_next_on(&word, &clock).unwrap() else {
                panic!("no id")
            };
            assert!(id.get() > top, "{} <= {top}", id.get());
            // Without the floor the new word reissues the lost one's IDs.
            let bare = AtomicU64::new(cfg.start_state());
            let Next::Id(low) = cfg.try_next_on(&bare, &clock).unwrap() else {
                panic!("no id")
            };
            assert_eq!(
                low.get() < top,
                options.sequence_exhausted != Options::default().sequence_exhausted
            );
        }
        // resume_after above the floor wins; before the epoch: the start.
        let last = layout.compose(t + 10_000, 7, &nodes).unwrap();
        let resumed = Options {
            resume_after: Some(last),
            ..Options::default()
        };
        let cfg = Config::new(layout, nodes, resumed).unwrap();
        assert_eq!(cfg.start_state_after(t), cfg.start_state());
        assert_eq!(cfg.start_state_after(0), cfg.start_state());
    }

    #[test]
    fn join_raises_to_resume_after_only() {
        let layout = Layout::preset("twitter").unwrap();
        let nodes = layout
            .nodes_from_pairs([("datacenter", 1), ("worker", 2)])
            .unwrap();
        let last = layout.compose(1_800_000_000_000, 7, &nodes).unwrap();
        let resumed = Options {
            resume_after: Some(last),
            ..Options::default()
        };
        let cfg = Config::new(layout, nodes, resumed).unwrap();
        let word = AtomicU64::new(FRESH);
        cfg.join_state(&word);
        let clock = ManualClock::new(1_800_000_000_000);
        let Next::Id(id) = cfg.try_next_on(&word, &clock).unwrap() else {
            panic!("no id")
        };
        assert!(id > last);
        let above = word.load(Ordering::Acquire);
        cfg.join_state(&word);
        assert_eq!(word.load(Ordering::Acquire), above);
    }
}
