//! Clocks for the thread-safe `Generator` (`std`).

/// A source of time for the thread-safe `Generator` (`std`).
///
/// Readings must never decrease as seen by any thread that has observed an ID
/// issued after a reading (the generator loads its state before reading the
/// clock, so a clock that is monotonic across threads satisfies this).
pub trait Clock {
    /// The current time, Unix milliseconds.
    fn now_ms(&self) -> u64;

    /// Blocks until `now_ms() >= ms`. The default spins, which suits clocks
    /// that have no way to sleep (a browser's `Date.now()`).
    fn wait_until(&self, ms: u64) {
        while self.now_ms() < ms {
            core::hint::spin_loop();
        }
    }
}

// Only the Unix fork handlers call it (no other target has `fork()`).
#[cfg(all(feature = "std", unix))]
pub(crate) use self::system::after_fork_in_child;
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use self::system::SystemClock;

#[cfg(feature = "std")]
mod system {
    use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
    use std::sync::OnceLock;
    use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

    use super::Clock;

    /// The system clock: the wall time read once per process, then advanced by
    /// the monotonic clock, so a step of the wall clock (NTP, an operator)
    /// while the process runs can never move the generator backwards.
    ///
    /// Reading a precise clock costs 30-60 ns on the virtual machines snowmint
    /// is benchmarked on, more than the rest of a generator call. So readings
    /// come from a process-wide cache that a background thread refreshes
    /// every half millisecond while IDs are being made (the thread stops itself
    /// after 200 ms without a reading and restarts on the next one). A cached
    /// reading lags the true time by about a millisecond at most, and is never
    /// ahead of it: IDs stay unique and ordered, their timestamps are at most
    /// that much early. When the generator has to wait (sequence exhausted,
    /// clock behind) it reads the precise clock and pushes the cache forward.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct SystemClock;

    struct Anchor {
        wall_ms: u64,
        mono: Instant,
    }

    static ANCHOR: OnceLock<Anchor> = OnceLock::new();
    /// The latest reading, Unix ms; only ever increases (fetch_max).
    static CACHE: AtomicU64 = AtomicU64::new(0);
    const STOPPED: u8 = 0;
    const RUNNING: u8 = 1;
    static TICKER: AtomicU8 = AtomicU8::new(STOPPED);
    static USED: AtomicBool = AtomicBool::new(false);

    /// How long the ticker runs on without readings before it stops.
    const IDLE_TICKS: u32 = 400;

    fn anchor() -> &'static Anchor {
        ANCHOR.get_or_init(|| Anchor {
            wall_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                // A wall clock before 1970 reads as the epoch; generation then
                // fails with `time_before_epoch` for every real layout.
                .unwrap_or(0),
            mono: Instant::now(),
        })
    }

    /// The precise reading, pushed into the cache; returns the (monotonic)
    /// maximum of the two.
    fn precise_ms() -> u64 {
        let a = anchor();
        let now = a.wall_ms + a.mono.elapsed().as_millis() as u64;
        let prev = CACHE.fetch_max(now, Ordering::AcqRel);
        prev.max(now)
    }

    fn start_ticker() {
        if TICKER
            .compare_exchange(STOPPED, RUNNING, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return;
        }
        let spawned = std::thread::Builder::new()
            .name("snowmint-clock".into())
            .spawn(|| {
                let mut idle = 0;
                loop {
                    std::thread::sleep(Duration::from_micros(500));
                    precise_ms();
                    if USED.swap(false, Ordering::Relaxed) {
                        idle = 0;
                    } else {
                        idle += 1;
                        if idle >= IDLE_TICKS {
                            TICKER.store(STOPPED, Ordering::Release);
                            return;
                        }
                    }
                }
            });
        if spawned.is_err() {
            // No threads here (or none left): every reading stays precise.
            TICKER.store(STOPPED, Ordering::Release);
        }
    }

    /// Called in the child after `fork()`: the ticker thread did not survive.
    #[cfg(unix)]
    pub(crate) fn after_fork_in_child() {
        TICKER.store(STOPPED, Ordering::Relaxed);
    }

    impl SystemClock {
        /// A precise reading (also refreshes the cache).
        pub fn precise_ms(&self) -> u64 {
            precise_ms()
        }
    }

    impl Clock for SystemClock {
        #[inline]
        fn now_ms(&self) -> u64 {
            if TICKER.load(Ordering::Acquire) == RUNNING {
                if !USED.load(Ordering::Relaxed) {
                    USED.store(true, Ordering::Relaxed);
                }
                return CACHE.load(Ordering::Acquire);
            }
            let now = precise_ms();
            start_ticker();
            now
        }

        fn wait_until(&self, ms: u64) {
            loop {
                let now = precise_ms();
                if now >= ms {
                    return;
                }
                let left = ms - now;
                if left > 2 {
                    // Sleep most of a long wait; spin the last millisecond or
                    // two, where a sleep's wake-up latency would cost capacity.
                    std::thread::sleep(Duration::from_millis(left - 2));
                } else {
                    std::thread::yield_now();
                }
            }
        }
    }
}
