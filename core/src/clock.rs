//! Clocks for the thread-safe `Generator` (`std`).

/// A source of time for the thread-safe `Generator` (`std`).
///
/// Readings must never decrease as seen by any thread that has observed an ID
/// issued after a reading (the generator loads its state before reading the
/// clock, so a clock that is monotonic across threads satisfies this).
pub trait Clock {
    /// The current time, Unix milliseconds.
    fn now_ms(&self) -> u64;

    /// Blocks until `now_ms() >= ms` and returns `true`; returns `false` if
    /// the clock stands still instead (the generator then fails with
    /// `clock_stalled` rather than wait forever).
    ///
    /// The default spins, which suits clocks that have no way to sleep (a
    /// browser's `Date.now()`), and gives up after [`STALL_READS`]
    /// consecutive readings that are all the same: a clock that does not
    /// advance at all, such as `Date.now()` inside a Cloudflare Worker's
    /// request, which stands still until the request does I/O.
    fn wait_until(&self, ms: u64) -> bool {
        spin_until(self, ms)
    }
}

/// How many consecutive identical readings the default
/// [`Clock::wait_until`] takes before it decides the clock stands still.
///
/// Node 20 on the 2-core virtual machine snowmint is tested on reads
/// `Date.now()` at most about 31,000 times within one millisecond (28,000
/// median, measured with a loop that counts reads until the value changes),
/// so a millisecond clock that works changes its reading long before this
/// many reads (over 30x that). A clock that never changes is given up on
/// after 1 million reads: 12 ms of CPU measured in Node through the
/// WebAssembly binding with `Date.now` pinned to one value, 17 ms for the
/// whole request in workerd; at most about 35 ms at the cost of a real
/// `Date.now()` read (1 ms / 28,000).
pub const STALL_READS: u32 = 1_000_000;

/// Spins until `clock` reads at least `ms` (`true`), or until it has read
/// the same value [`STALL_READS`] times in a row (`false`): the default
/// [`Clock::wait_until`].
fn spin_until<C: Clock + ?Sized>(clock: &C, ms: u64) -> bool {
    let mut last = clock.now_ms();
    let mut same: u32 = 0;
    while last < ms {
        core::hint::spin_loop();
        let now = clock.now_ms();
        if now == last {
            same += 1;
            if same >= STALL_READS {
                return false;
            }
        } else {
            same = 0;
            last = now;
        }
    }
    true
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
    /// On Linux and Android the monotonic clock is `CLOCK_BOOTTIME`, which
    /// keeps counting while the machine (or its virtual machine) is
    /// suspended: `CLOCK_MONOTONIC` (std's `Instant`) stops then, and after a
    /// resume every reading would lag wall time by the time suspended (old
    /// timestamps in new IDs, a lease's renewals refused as too far ahead).
    /// Elsewhere it is std's `Instant`.
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
        /// The elapsed-time source's reading at `wall_ms`, ns.
        base_ns: u64,
    }

    /// The clock the system clock advances by on Linux and Android: it
    /// counts the time suspended (see [`SystemClock`]).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub(super) const ELAPSED_CLOCK: libc::clockid_t = libc::CLOCK_BOOTTIME;

    /// The elapsed-time source, ns since an arbitrary start: `ELAPSED_CLOCK`
    /// on Linux and Android (present since Linux 2.6.39; without it, the
    /// first reading decides for the whole process: `Instant`).
    fn elapsed_ns() -> u64 {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            static BOOTTIME: OnceLock<bool> = OnceLock::new();
            if *BOOTTIME.get_or_init(|| boottime_ns().is_some()) {
                if let Some(ns) = boottime_ns() {
                    return ns;
                }
            }
        }
        static START: OnceLock<Instant> = OnceLock::new();
        START.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn boottime_ns() -> Option<u64> {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec.
        let r = unsafe { libc::clock_gettime(ELAPSED_CLOCK, &mut ts) };
        (r == 0).then(|| (ts.tv_sec as u64) * 1_000_000_000 + ts.tv_nsec as u64)
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
            base_ns: elapsed_ns(),
        })
    }

    /// The precise reading, pushed into the cache; returns the (monotonic)
    /// maximum of the two.
    fn precise_ms() -> u64 {
        let a = anchor();
        let now = a.wall_ms + elapsed_ns().saturating_sub(a.base_ns) / 1_000_000;
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

        /// Sleeps (then spins the last millisecond or two): the system
        /// clock always advances, so this always returns `true`.
        fn wait_until(&self, ms: u64) -> bool {
            loop {
                let now = precise_ms();
                if now >= ms {
                    return true;
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

#[cfg(all(test, feature = "std", any(target_os = "linux", target_os = "android")))]
mod tests {
    use super::system::ELAPSED_CLOCK;
    use super::{Clock, SystemClock};

    /// A suspended machine: `CLOCK_MONOTONIC` stops, `CLOCK_BOOTTIME` goes on.
    /// The system clock must advance by the second, or after a resume its
    /// time lags the wall clock by the time suspended.
    #[test]
    fn system_clock_counts_time_suspended() {
        assert_eq!(ELAPSED_CLOCK, libc::CLOCK_BOOTTIME);
        // And it reads that clock: its advance over a sleep matches
        // BOOTTIME's (either clock would here; the constant above is what
        // tells them apart on a machine that never suspends).
        let boot = || {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: a valid, writable timespec.
            assert_eq!(unsafe { libc::clock_gettime(ELAPSED_CLOCK, &mut ts) }, 0);
            ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
        };
        let (c0, b0) = (SystemClock.precise_ms(), boot());
        std::thread::sleep(std::time::Duration::from_millis(20));
        let (b1, c1) = (boot(), SystemClock.precise_ms());
        assert!(c1 - c0 <= b1 - b0 + 1, "{c0} {c1} {b0} {b1}");
        assert!(c1 >= c0 + 20 && SystemClock.now_ms() >= c1);
    }
}
