//! Workloads shared by the criterion benches (`cargo bench -p snowmint-bench`)
//! and the `report` binary (`cargo run --release -p snowmint-bench --bin
//! report`), so both measure exactly the same code.
//!
//! Three ways of measuring appear here, because the generators under test are
//! capped by their sequence (4,096 IDs per millisecond for the Twitter layout,
//! which `snowflaked` and `rs-snowflake` hard-code):
//!
//! - [`timed_bursts`]: the per-call cost when the sequence is *not* the limit.
//!   Calls come in bursts of [`BURST`] IDs, far under the per-millisecond cap,
//!   each starting after the wall clock has moved past the millisecond in
//!   which the previous burst ended; only the bursts are timed. A plain loop
//!   would instead measure the cap (244 ns per ID), not the generator.
//! - [`rate`]: IDs per second over a fixed wall-clock duration, from one or
//!   more threads sharing one generator. This is the sustained rate, which for
//!   a capped layout should approach the cap.
//! - plain loops for uncapped layouts (the `mastodon` preset has a 16-bit
//!   sequence: 65,536 IDs per millisecond, more than one thread can take).

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use snowmint::{Clock, Generator, Layout, Options, SystemClock};

/// IDs per burst in [`timed_bursts`]. Small enough that even three bursts in
/// one (cached) millisecond stay under the 4,096 cap of the Twitter layout
/// with its default `random:16` sequence start, so no burst ever waits.
pub const BURST: u64 = 1000;

/// The physical cap of a 12-bit sequence in millisecond units, IDs/s.
pub const TWITTER_CAP_PER_S: f64 = 4_096_000.0;

/// The wall clock in Unix milliseconds, read precisely (what the peers read).
pub fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Times `total` IDs made by `make(n)` in bursts of at most [`BURST`], each
/// burst starting in a later wall-clock millisecond than the previous one
/// ended in. Returns the time spent inside the bursts only (the shape
/// criterion's `iter_custom` wants).
pub fn timed_bursts(total: u64, mut make: impl FnMut(u64)) -> Duration {
    let mut spent = Duration::ZERO;
    let mut left = total;
    let mut last_ms = 0;
    while left > 0 {
        while wall_ms() <= last_ms {
            std::hint::spin_loop();
        }
        let n = left.min(BURST);
        let start = Instant::now();
        make(n);
        spent += start.elapsed();
        last_ms = wall_ms();
        left -= n;
    }
    spent
}

/// Nanoseconds per ID of `make` over `bursts` bursts of [`BURST`] IDs.
pub fn burst_ns_per_id(bursts: u64, make: impl FnMut(u64)) -> f64 {
    let total = bursts * BURST;
    timed_bursts(total, make).as_nanos() as f64 / total as f64
}

/// Nanoseconds per ID of a plain loop of `n` calls of `make_one` (for
/// generators that are not capped at this rate).
pub fn loop_ns_per_id(n: u64, mut make_one: impl FnMut() -> u64) -> f64 {
    let start = Instant::now();
    for _ in 0..n {
        black_box(make_one());
    }
    start.elapsed().as_nanos() as f64 / n as f64
}

/// IDs per second made by `threads` threads calling `make_one` on one shared
/// generator for `duration` (wall clock). Threads start together (a barrier)
/// and check a stop flag every 256 IDs; the rate divides all IDs by the time
/// from the start to the last thread seeing the flag.
pub fn rate(threads: usize, duration: Duration, make_one: impl Fn() -> u64 + Sync) -> f64 {
    let stop = AtomicBool::new(false);
    let barrier = Barrier::new(threads + 1);
    let (total, elapsed) = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    let mut n = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..256 {
                            black_box(make_one());
                        }
                        n += 256;
                    }
                    (n, Instant::now())
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        std::thread::sleep(duration);
        stop.store(true, Ordering::Relaxed);
        let mut total = 0;
        let mut end = start;
        for w in workers {
            let (n, t) = w.join().expect("benchmark thread panicked");
            total += n;
            end = end.max(t);
        }
        (total, end - start)
    });
    total as f64 / elapsed.as_secs_f64()
}

/// A clock that reads the system clock precisely on every call, the way the
/// peer crates do: snowmint's generator on this clock shows what the cached
/// [`SystemClock`] saves.
#[derive(Clone, Copy, Debug, Default)]
pub struct PreciseClock;

impl Clock for PreciseClock {
    fn now_ms(&self) -> u64 {
        SystemClock.precise_ms()
    }
    fn wait_until(&self, ms: u64) -> bool {
        SystemClock.wait_until(ms)
    }
}

/// A snowmint generator on a preset with the given node values and policy
/// strings (`None` keeps a default). Benchmarks give each configuration its
/// own node values: generators with equal values share one state by design,
/// and two clocks on one state would disturb each other.
pub fn snowmint_with<C: Clock>(
    preset: &str,
    nodes: &[u64],
    sequence_exhausted: Option<&str>,
    sequence_start: Option<&str>,
    clock: C,
) -> Generator<C> {
    let layout = Layout::preset(preset).expect("a known preset");
    let nodes = layout.nodes_from_values(nodes).expect("valid node values");
    let options =
        Options::from_policies(None, sequence_exhausted, sequence_start).expect("valid policies");
    Generator::with_clock(layout, nodes, options, clock).expect("a generator")
}

/// [`snowmint_with`] on the (cached) system clock.
pub fn snowmint(
    preset: &str,
    nodes: &[u64],
    sequence_exhausted: Option<&str>,
    sequence_start: Option<&str>,
) -> Generator {
    snowmint_with(
        preset,
        nodes,
        sequence_exhausted,
        sequence_start,
        SystemClock,
    )
}

/// One snowmint ID as a `u64` (errors are impossible in these configurations;
/// a zero would show up in the uniqueness tests).
#[inline]
pub fn snowmint_next<C: Clock>(g: &Generator<C>) -> u64 {
    g.next_id().map(|id| id.get()).unwrap_or(0)
}

/// `snowflaked`'s thread-safe generator (Twitter layout, UNIX epoch).
pub fn snowflaked_sync(instance: u16) -> snowflaked::sync::Generator {
    snowflaked::sync::Generator::new(instance)
}

/// `rs-snowflake`'s generator (Twitter layout; `&mut self`, so not
/// thread-safe by itself).
pub fn rs_snowflake(machine: i32, node: i32) -> snowflake::SnowflakeIdGenerator {
    snowflake::SnowflakeIdGenerator::new(machine, node)
}

/// `rs-snowflake` made shareable the usual way, behind a `Mutex`.
pub fn rs_snowflake_mutex(machine: i32, node: i32) -> Mutex<snowflake::SnowflakeIdGenerator> {
    Mutex::new(rs_snowflake(machine, node))
}

/// One ID from `rs-snowflake` behind a mutex, reading the clock per call
/// (`real_time_generate`, the variant comparable to the other generators;
/// its `generate` reads the clock only every 4,096 IDs).
#[inline]
pub fn rs_snowflake_mutex_next(g: &Mutex<snowflake::SnowflakeIdGenerator>) -> u64 {
    match g.lock() {
        Ok(mut g) => g.real_time_generate() as u64,
        Err(_) => 0,
    }
}

/// `n` IDs of the Twitter layout for the decode benchmarks (real IDs from a
/// snowmint generator, node values 31/31).
pub fn twitter_ids(n: usize) -> Vec<u64> {
    let g = snowmint("twitter", &[31, 31], None, None);
    let mut out = vec![0; n];
    g.next_ids(&mut out).expect("a batch");
    out
}

/// Sum of the decoded fields, so decoding cannot be optimized away.
#[inline]
pub fn snowmint_decode(layout: &Layout, id: u64) -> u64 {
    match layout.decompose(id) {
        Ok(p) => p.timestamp_ms() ^ p.sequence() ^ p.nodes().iter().fold(0, |a, b| a ^ b),
        Err(_) => 0,
    }
}

/// `snowflaked`'s decode of a `u64` (fixed shifts and masks).
#[inline]
pub fn snowflaked_decode(id: u64) -> u64 {
    use snowflaked::Snowflake;
    id.timestamp() ^ id.sequence() ^ id.instance()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strictly_increasing(ids: &[u64]) -> bool {
        ids.windows(2).all(|w| w[0] < w[1])
    }

    #[test]
    fn every_workload_makes_increasing_ids() {
        let g = snowmint("twitter", &[1, 1], None, None);
        let p = snowmint_with("twitter", &[1, 2], None, None, PreciseClock);
        let m = snowmint("mastodon", &[], None, None);
        let f = snowflaked_sync(1);
        let mut r = rs_snowflake(1, 1);
        let rm = rs_snowflake_mutex(1, 2);
        let runs: Vec<Vec<u64>> = vec![
            (0..5000).map(|_| snowmint_next(&g)).collect(),
            (0..5000).map(|_| snowmint_next(&p)).collect(),
            (0..5000).map(|_| snowmint_next(&m)).collect(),
            (0..5000).map(|_| f.generate::<u64>()).collect(),
            (0..5000).map(|_| r.real_time_generate() as u64).collect(),
            (0..5000).map(|_| rs_snowflake_mutex_next(&rm)).collect(),
        ];
        for (i, ids) in runs.iter().enumerate() {
            assert!(strictly_increasing(ids), "workload {i}");
        }
    }

    #[test]
    fn decoders_agree_on_the_twitter_layout() {
        // snowflaked's 10-bit instance is snowmint's datacenter and worker.
        use snowflaked::Snowflake;
        let layout = Layout::preset("twitter").unwrap();
        for id in twitter_ids(100) {
            let p = layout.decompose(id).unwrap();
            assert_eq!(p.sequence(), id.sequence());
            assert_eq!((p.nodes()[0] << 5) | p.nodes()[1], id.instance());
            assert_eq!(p.nodes(), &[31, 31]);
        }
    }

    #[test]
    fn bursts_and_rates_count_what_they_make() {
        let g = snowmint("twitter", &[2, 2], None, None);
        let mut made = 0;
        let t = timed_bursts(2500, |n| {
            for _ in 0..n {
                black_box(snowmint_next(&g));
            }
            made += n;
        });
        assert_eq!(made, 2500);
        assert!(t > Duration::ZERO);
        let r = rate(2, Duration::from_millis(50), || snowmint_next(&g));
        // A short run may start on a millisecond already partly used (and the
        // cached clock lags by up to one), so allow a little over the cap.
        assert!(r > 0.0 && r <= TWITTER_CAP_PER_S * 1.1, "{r}");
    }
}
