//! More interleavings loom explores on the real `Generator` under a lease's
//! bound (see `loom.rs` for the setup and the command; cargo xtask test core runs
//! both files):
//!
//! 1. `next_ids` (one compare-and-swap per run of a time unit) while another
//!    thread issues and the reservation is raised: no ID above the highest
//!    confirmed reservation, none twice, each batch increasing.
//! 2. The lost path: the renewal thread sets the bound to nothing
//!    (`reserve_until(Some(0))`) and then signals; a call that starts after
//!    it saw the signal never issues, even inside the old reservation.
//! 3. Two generators sharing one state word with different bounds.
#![cfg(loom)]

use std::sync::atomic::{AtomicU64, Ordering};

use loom::sync::atomic::AtomicBool;
use loom::sync::Arc;
use loom::thread;
use snowmint::{Clock, Error, Generator, Layout, Next, Options, SequenceStart};

const T0: u64 = 1_600_000_000_000;

/// Unit 1 ms, 2 sequence bits: a few calls cross time units.
fn layout() -> Layout {
    Layout::new(
        1_577_836_800_000,
        1,
        &[("timestamp", 41), ("node", 20), ("sequence", 2)],
    )
    .expect("layout")
}

/// A clock that moves 1 ms forward on every second reading.
#[derive(Default)]
struct Ticking(AtomicU64);

impl Clock for Ticking {
    fn now_ms(&self) -> u64 {
        T0 + self.0.fetch_add(1, Ordering::SeqCst) / 2
    }
}

fn generator() -> Generator<Ticking> {
    let layout = layout();
    let options = Options {
        sequence_start: SequenceStart::Zero,
        seed: 1,
        ..Options::default()
    };
    let nodes = layout.nodes_from_pairs([("node", 9)]).expect("nodes");
    Generator::with_clock(layout, nodes, options, Ticking::default()).expect("generator")
}

fn ms_of(id: u64) -> u64 {
    layout().decompose(id).expect("decompose").timestamp_ms()
}

#[test]
fn next_ids_never_passes_the_highest_confirmed_reservation() {
    loom::model(|| {
        let g = Arc::new(generator());
        // Nothing confirmed yet; then the unit of T0 (4 sequence values for
        // the 4 IDs asked: the clock's move to T0 + 1 must stop them).
        g.reserve_until(Some(T0 - 1));
        let raiser = {
            let g = Arc::clone(&g);
            thread::spawn(move || g.reserve_until(Some(T0)))
        };
        let batcher = {
            let g = Arc::clone(&g);
            thread::spawn(move || {
                let mut out = [0u64; 3];
                match g.next_ids(&mut out) {
                    Ok(()) => out.to_vec(),
                    Err(Error::LeaseExpired { .. }) => Vec::new(),
                    Err(e) => panic!("unexpected error {e}"),
                }
            })
        };
        let mut ids = Vec::new();
        match g.try_next_id() {
            Ok(Next::Id(id)) => ids.push(id.get()),
            Ok(Next::RetryAt(_)) | Err(Error::LeaseExpired { .. }) => {}
            Err(e) => panic!("unexpected error {e}"),
        }
        raiser.join().unwrap();
        let batch = batcher.join().unwrap();
        assert!(batch.windows(2).all(|w| w[0] < w[1]), "{batch:?}");
        ids.extend(batch);
        for &id in &ids {
            assert!(ms_of(id) <= T0, "{id} is above the reservation");
        }
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n, "an ID was issued twice");
    });
}

#[test]
fn a_call_after_the_lost_signal_never_issues() {
    loom::model(|| {
        let g = Arc::new(generator());
        g.reserve_until(Some(T0 + 60_000));
        let lost = Arc::new(AtomicBool::new(false));
        let renewer = {
            let (g, lost) = (Arc::clone(&g), Arc::clone(&lost));
            thread::spawn(move || {
                g.reserve_until(Some(0));
                lost.store(true, Ordering::Release);
            })
        };
        for _ in 0..2 {
            let seen = lost.load(Ordering::Acquire);
            let r = g.try_next_id();
            if seen {
                assert!(
                    matches!(r, Err(Error::LeaseExpired { .. })),
                    "issued after the lost signal: {r:?}"
                );
            }
        }
        renewer.join().unwrap();
        assert!(matches!(g.try_next_id(), Err(Error::LeaseExpired { .. })));
    });
}

/// 3. Two generators with the same ID bits share one state word but have
///    different bounds (a leased one and another on the same node values,
///    which the lease crate refuses for bindings but Rust can still build):
///    each issues only inside its own bound, and no ID is issued twice.
#[test]
fn two_generators_on_one_state_keep_their_own_bounds() {
    loom::model(|| {
        let a = Arc::new(generator());
        let b = generator();
        assert!(a.shares_state_with(&b));
        a.reserve_until(Some(T0));
        b.reserve_until(Some(T0 + 1));
        let other = {
            let a = Arc::clone(&a);
            thread::spawn(move || {
                let mut ids = Vec::new();
                for _ in 0..3 {
                    match a.try_next_id() {
                        Ok(Next::Id(id)) => ids.push(id.get()),
                        Ok(Next::RetryAt(_)) | Err(Error::LeaseExpired { .. }) => {}
                        Err(e) => panic!("unexpected error {e}"),
                    }
                }
                ids
            })
        };
        let mut from_b = Vec::new();
        for _ in 0..3 {
            match b.try_next_id() {
                Ok(Next::Id(id)) => from_b.push(id.get()),
                Ok(Next::RetryAt(_)) | Err(Error::LeaseExpired { .. }) => {}
                Err(e) => panic!("unexpected error {e}"),
            }
        }
        let from_a = other.join().unwrap();
        for &id in &from_a {
            assert!(ms_of(id) <= T0, "a issued {id} above its bound");
        }
        for &id in &from_b {
            assert!(ms_of(id) <= T0 + 1, "b issued {id} above its bound");
        }
        let mut ids = [from_a, from_b].concat();
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n, "an ID was issued twice");
    });
}
