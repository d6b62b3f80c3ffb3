//! Every interleaving of concurrent `next_id` calls with a lease's
//! reservation moving under them, explored by loom on the real
//! `Generator` (its state and limit words are loom's atomics under
//! `--cfg loom`):
//!
//! ```text
//! LOOM_MAX_PREEMPTIONS=3 RUSTFLAGS="--cfg loom" cargo test -p snowmint-loom --release --test loom
//! ```
//!
//! 1. A reservation raised while two threads issue: no ID above the highest
//!    confirmed reservation, none twice.
//! 2. `stop_issuing` (a lease's release) while two threads issue on a clock
//!    that moves: every ID returned is in a time unit at or below the unit
//!    `stop_issuing` reported, so the `hwm` a release writes is an upper
//!    bound on every ID issued. Without the check after the
//!    compare-and-swap, loom finds the interleaving that breaks this.
#![cfg(loom)]

use std::sync::atomic::{AtomicU64, Ordering};

use loom::sync::Arc;
use loom::thread;
use snowmint::{Clock, Error, Generator, Layout, Next, Options, SequenceStart};

/// Unit 1 ms, 2 sequence bits: a few calls cross time units.
fn layout() -> Layout {
    Layout::new(
        1_577_836_800_000,
        1,
        &[("timestamp", 41), ("node", 20), ("sequence", 2)],
    )
    .expect("layout")
}

const T0: u64 = 1_600_000_000_000;

/// A clock that moves 1 ms forward on every second reading (not part of the
/// model's state: loom explores the atomics of the generator).
#[derive(Default)]
struct Ticking(AtomicU64);

impl Clock for Ticking {
    fn now_ms(&self) -> u64 {
        T0 + self.0.fetch_add(1, Ordering::SeqCst) / 2
    }
}

fn generator(clock: Ticking) -> Generator<Ticking> {
    let layout = layout();
    let options = Options {
        sequence_start: SequenceStart::Zero,
        seed: 1,
        ..Options::default()
    };
    let nodes = layout.nodes_from_pairs([("node", 7)]).expect("nodes");
    Generator::with_clock(layout, nodes, options, clock).expect("generator")
}

/// Two calls of `try_next_id`: the IDs issued and how many were refused as
/// past the reservation.
fn issue_twice(g: &Generator<Ticking>) -> (Vec<u64>, usize) {
    let (mut ids, mut refused) = (Vec::new(), 0);
    for _ in 0..2 {
        match g.try_next_id() {
            Ok(Next::Id(id)) => ids.push(id.get()),
            Ok(Next::RetryAt(_)) => {}
            Err(Error::LeaseExpired { .. }) => refused += 1,
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    (ids, refused)
}

fn ms_of(id: u64) -> u64 {
    layout().decompose(id).expect("decompose").timestamp_ms()
}

#[test]
fn a_reservation_raised_concurrently_is_never_exceeded() {
    loom::model(|| {
        let g = Arc::new(generator(Ticking::default()));
        // Confirmed up to T0: the unit of T0 may be issued, T0 + 1 not.
        g.reserve_until(Some(T0));
        let raiser = {
            let g = Arc::clone(&g);
            thread::spawn(move || g.reserve_until(Some(T0 + 1)))
        };
        let other = {
            let g = Arc::clone(&g);
            thread::spawn(move || issue_twice(&g))
        };
        let (mut ids, _) = issue_twice(&g);
        raiser.join().unwrap();
        ids.extend(other.join().unwrap().0);
        for &id in &ids {
            assert!(ms_of(id) <= T0 + 1, "{id} is above the reservation");
        }
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n, "an ID was issued twice");
    });
}

#[test]
fn stop_issuing_reports_a_bound_on_every_id_issued() {
    loom::model(|| {
        let g = Arc::new(generator(Ticking::default()));
        g.reserve_until(Some(T0 + 60_000));
        let other = {
            let g = Arc::clone(&g);
            thread::spawn(move || issue_twice(&g))
        };
        let stopper = {
            let g = Arc::clone(&g);
            thread::spawn(move || g.stop_issuing())
        };
        let (mut ids, _) = issue_twice(&g);
        ids.extend(other.join().unwrap().0);
        let last = stopper.join().unwrap();
        for &id in &ids {
            let last = last.unwrap_or_else(|| {
                panic!(
                    "{id} was issued but stop_issuing saw none; ids {ids:?}, now last {:?}",
                    g.last_ms()
                )
            });
            assert!(ms_of(id) <= last, "{id} was issued above {last}");
        }
        // After the stop nothing more is issued.
        assert!(matches!(g.try_next_id(), Err(Error::LeaseExpired { .. })));
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n, "an ID was issued twice");
    });
}
