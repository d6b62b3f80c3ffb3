//! Claims a lost lease again, in the background, so that a server whose slot
//! was taken (it was paused past its TTL, or cut off from the store while
//! another holder took the slot) serves again once a slot is free, without a
//! restart.
//!
//! The lease crate stops a lost lease for good: its generator refuses every
//! ID (`reserve_until(0)`) and its renewal thread ends. Here a thread of its
//! own (store calls block, and the SQL stores' clients drive a runtime that
//! must not run inside tokio's) watches every leased generator; for a lost
//! one it closes the old generator (a lost slot is not released: it is no
//! longer this process's), then opens a new lease with the same arguments,
//! which is a successor's claim like a restarted server's: the store's
//! recorded `hwm` (never below what the old lease had reserved, which the
//! store confirmed before it was used) is where the new generator resumes.
//! If the new claim gets the same node value, the core's process-wide
//! registry gives the new generator the old one's state (`core/src/sync.rs`),
//! which only moves forward, so the new generator also continues above every
//! ID the old one issued; the old one issues nothing more (its limit is 0).
//! Failed attempts are retried with a doubling wait (from [`FIRST_WAIT`] to
//! [`MAX_WAIT`]), each drawn between half and all of it, so that servers
//! that lost their slots at once do not all ask at once.
//!
//! A lease that only expired (the renewals failed, nobody took the slot) is
//! not touched: its own renewal thread keeps trying, and the first confirmed
//! renewal makes it issue again.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value as Json;
use snowmint_lease::AnyGenerator;

use crate::log::Log;
use crate::metrics::GenLabel;
use crate::state::{AppState, Gen};

/// How often the leases are looked at.
const POLL: Duration = Duration::from_millis(200);
/// The wait after the first failed claim.
pub const FIRST_WAIT: Duration = Duration::from_millis(250);
/// The longest wait between two claims.
pub const MAX_WAIT: Duration = Duration::from_secs(5);

/// The background thread; [`Healer::stop`] ends it.
pub(crate) struct Healer {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Healer {
    /// Starts watching `state`'s leased generators.
    pub(crate) fn start(state: Arc<AppState>, log: Log) -> Healer {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let s = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("snowmint-reclaim".into())
            .spawn(move || run(&state, log, &s))
            .map_err(|e| {
                log.event(
                    "error",
                    "reclaim_thread_failed",
                    &[("message", e.to_string().into())],
                )
            })
            .ok();
        Healer { stop, thread }
    }

    /// Ends the thread (after a claim in progress, bounded by its store's
    /// `timeout_ms`): nothing replaces a generator afterwards.
    pub(crate) fn stop(mut self) {
        {
            let (lock, wake) = &*self.stop;
            *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
            wake.notify_all();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One generator's attempts since its lease was lost.
#[derive(Clone, Copy)]
struct Attempts {
    since: Instant,
    tries: u32,
    wait: Duration,
    next: Instant,
}

fn run(state: &AppState, log: Log, stop: &(Mutex<bool>, Condvar)) {
    let mut lost: Vec<Option<Attempts>> = vec![None; state.gens.len()];
    loop {
        {
            let (lock, wake) = stop;
            let guard = lock.lock().unwrap_or_else(|e| e.into_inner());
            let (guard, _) = wake
                .wait_timeout_while(guard, POLL, |stopped| !*stopped)
                .unwrap_or_else(|e| e.into_inner());
            if *guard {
                return;
            }
        }
        for (g, attempts) in state.gens.iter().zip(lost.iter_mut()) {
            if state.shutting_down.load(Ordering::SeqCst) {
                return;
            }
            step(state, g, attempts, log);
        }
    }
}

/// Looks at `g` once: notes a lost lease, claims again when its wait is over.
fn step(state: &AppState, g: &Gen, attempts: &mut Option<Attempts>, log: Log) {
    let Some((layout, nodes, options)) = g.reclaim_args() else {
        return;
    };
    let now = Instant::now();
    let a = match attempts {
        Some(a) => a,
        None => {
            let old = g.gen();
            if old.lease().is_none_or(|info| info.lost.is_none()) {
                return;
            }
            // Stopped for good; a lost slot is not released (close does not
            // write to the store), and the old generator leaves the lease
            // crate's list of leased node values before the new claim.
            let _ = old.close();
            attempts.insert(Attempts {
                since: now,
                tries: 0,
                wait: FIRST_WAIT,
                next: now,
            })
        }
    };
    if now < a.next {
        return;
    }
    a.tries += 1;
    match AnyGenerator::from_values(*layout, nodes, options) {
        Ok(new) => {
            let info = new.lease();
            let old = g.replace(new);
            // Closed above; dropping it here (not on a runtime thread) is a no-op.
            drop(old);
            g.reclaims.fetch_add(1, Ordering::Relaxed);
            state
                .metrics
                .reclaims
                .get_or_create(&GenLabel {
                    generator: g.name.clone(),
                })
                .inc();
            let mut fields: Vec<(&str, Json)> = vec![
                ("generator", g.name.clone().into()),
                ("attempts", a.tries.into()),
                ("lost_ms", (a.since.elapsed().as_millis() as u64).into()),
            ];
            if let Some(info) = info {
                // The store as it describes itself: password masked.
                fields.push(("store", info.store.into()));
                fields.push(("field", info.field.into()));
                fields.push(("slot", info.slot.into()));
            }
            log.event("info", "lease_reclaimed", &fields);
            *attempts = None;
        }
        Err(e) => {
            let wait = jittered(a.wait);
            log.event(
                "error",
                "lease_reclaim_failed",
                &[
                    ("generator", g.name.clone().into()),
                    ("attempts", a.tries.into()),
                    ("code", e.code().into()),
                    // The lease crate's messages name the store without its password.
                    ("message", e.to_string().into()),
                    ("retry_ms", (wait.as_millis() as u64).into()),
                ],
            );
            a.next = Instant::now() + wait;
            a.wait = (a.wait * 2).min(MAX_WAIT);
        }
    }
}

/// A wait drawn between half of `wait` and all of it.
fn jittered(wait: Duration) -> Duration {
    let r = RandomState::new().hash_one(std::thread::current().id());
    let half = wait / 2;
    half + Duration::from_nanos(r % (half.as_nanos() as u64 + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jittered_waits_stay_between_half_and_all() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..200 {
            let w = jittered(MAX_WAIT);
            assert!(w >= MAX_WAIT / 2 && w <= MAX_WAIT, "{w:?}");
            seen.insert(w);
        }
        assert!(
            seen.len() > 100,
            "not spread: {} distinct waits",
            seen.len()
        );
    }
}
