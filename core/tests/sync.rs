//! The thread-safe generator: threads, the registry, fork, clocks.

use std::collections::HashSet;
use std::sync::Arc;
use std::thread;

use snowmint::{Generator, Layout, ManualClock, Options, SequenceStart};

fn twitter_gen(dc: u64, worker: u64) -> Generator {
    let l = Layout::preset("twitter").unwrap();
    let n = l
        .nodes_from_pairs([("datacenter", dc), ("worker", worker)])
        .unwrap();
    Generator::new(l, n, Options::default()).unwrap()
}

/// Every thread's IDs increase, and no ID appears twice overall.
fn check_unique(per_thread: Vec<Vec<u64>>) {
    let total: usize = per_thread.iter().map(Vec::len).sum();
    let mut all = HashSet::with_capacity(total);
    for ids in &per_thread {
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "a thread saw a decrease"
        );
        for &id in ids {
            assert!(all.insert(id), "duplicate id {id}");
        }
    }
    assert_eq!(all.len(), total);
}

#[test]
fn two_threads_millions_of_ids_one_generator() {
    // Twitter layout: capped at 4096 per ms, so 4M IDs take about a second.
    check_unique(race(Arc::new(twitter_gen(2, 7)), 2, 2_000_000));
}

/// `threads` threads each take `n` IDs from one generator.
fn race(g: Arc<Generator>, threads: usize, n: usize) -> Vec<Vec<u64>> {
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let g = Arc::clone(&g);
            thread::spawn(move || (0..n).map(|_| g.next_id().unwrap().get()).collect())
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn generators_with_the_same_node_share_state_across_threads() {
    // Each thread makes its own generator ("a new generator per request").
    let handles: Vec<_> = (0..3)
        .map(|_| {
            thread::spawn(|| {
                let l = Layout::preset("mastodon").unwrap();
                let n = l.nodes_from_values(&[]).unwrap();
                let mut out = Vec::new();
                for _ in 0..10 {
                    let g = Generator::new(l, n, Options::default()).unwrap();
                    out.extend((0..100_000).map(|_| g.next_id().unwrap().get()));
                    let mut batch = vec![0u64; 50_000];
                    g.next_ids(&mut batch).unwrap();
                    out.extend(batch);
                }
                out
            })
        })
        .collect();
    check_unique(handles.into_iter().map(|h| h.join().unwrap()).collect());
}

#[test]
fn same_bits_under_different_layouts_share_state() {
    let a = twitter_gen(1, 0);
    let leaf = Layout::preset("leaf").unwrap();
    let b = Generator::new(
        leaf,
        leaf.nodes_from_values(&[32]).unwrap(),
        Options::default(),
    )
    .unwrap();
    assert!(a.shares_state_with(&b));
    let c = twitter_gen(1, 1);
    assert!(!a.shares_state_with(&c));
    let x = a.next_id().unwrap();
    let y = b.next_id().unwrap();
    assert!(y > x);
}

#[test]
fn batches_are_increasing_and_continue_the_sequence() {
    let g = twitter_gen(3, 3);
    let first = g.next_id().unwrap().get();
    let mut batch = vec![0u64; 20_000];
    g.next_ids(&mut batch).unwrap();
    assert!(batch[0] > first);
    assert!(batch.windows(2).all(|w| w[0] < w[1]));
    assert!(g.next_id().unwrap().get() > batch[19_999]);
}

#[test]
fn system_clock_timestamps_track_the_wall_clock() {
    let l = Layout::preset("twitter").unwrap();
    let g = twitter_gen(4, 4);
    for _ in 0..5 {
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        let ts = l
            .decompose(g.next_id().unwrap().get())
            .unwrap()
            .timestamp_ms();
        // The cached clock lags by about a millisecond, never leads; allow
        // for a loaded machine.
        assert!(ts <= wall + 1 && wall - ts < 250, "ts {ts} wall {wall}");
        thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn manual_clock_drives_waits_and_errors() {
    let l = Layout::from_json(
        r#"{"epoch_ms":1000,"fields":[["timestamp",20],["node",4],["sequence",2]]}"#,
    )
    .unwrap();
    let n = l.nodes_from_values(&[5]).unwrap();
    let opts = Options {
        clock_backwards: snowmint::ClockBackwards::Fail,
        sequence_start: SequenceStart::Zero,
        ..Options::default()
    };
    let clock = ManualClock::new(2000);
    let g = Generator::with_clock(l, n, opts, &clock).unwrap();
    let ids: Vec<u64> = (0..6).map(|_| g.next_id().unwrap().get()).collect();
    // Four IDs per ms: the fifth waited (the manual clock jumps) to 2001.
    assert_eq!(l.decompose(ids[3]).unwrap().timestamp_ms(), 2000);
    assert_eq!(l.decompose(ids[4]).unwrap().timestamp_ms(), 2001);
    assert!(matches!(g.try_next_id(), Ok(snowmint::Next::Id(_))));
    assert!(matches!(g.try_next_id(), Ok(snowmint::Next::Id(_))));
    assert!(matches!(g.try_next_id(), Ok(snowmint::Next::RetryAt(2002))));
    clock.set(1500);
    assert_eq!(g.next_id().unwrap_err().code(), "clock_moved_backwards");
    clock.set(500);
    assert_eq!(g.next_id().unwrap_err().code(), "time_before_epoch");
}

/// A clock that stands still like `Date.now()` within a Cloudflare Worker's
/// request: waiting on it is the core's default (spinning) wait, and only the
/// test moves it.
struct FrozenClock(std::sync::atomic::AtomicU64);

impl snowmint::Clock for FrozenClock {
    fn now_ms(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// The twitter layout (4096 IDs per ms) on a frozen clock, with node values
/// no other test uses (generators of one layout and node values share state).
fn frozen_twitter<'c>(
    clock: &'c FrozenClock,
    worker: u64,
    exhausted: &str,
) -> Generator<&'c FrozenClock> {
    let l = Layout::preset("twitter").unwrap();
    let n = l
        .nodes_from_pairs([("datacenter", 29), ("worker", worker)])
        .unwrap();
    let mut opts = Options::from_policies(None, Some(exhausted), Some("zero")).unwrap();
    opts.seed = 1;
    Generator::with_clock(l, n, opts, clock).unwrap()
}

/// A frozen clock: once the time unit's sequence is used up, the generator
/// fails with `clock_stalled` within a bounded number of readings instead of
/// spinning forever; the IDs a failed batch claimed are skipped, never
/// reissued. (With the bound removed from the default wait, this test never
/// ends.)
#[test]
fn a_frozen_clock_fails_with_clock_stalled_not_a_hang() {
    const T: u64 = 1_700_000_000_000;
    let clock = FrozenClock(T.into());
    let g = frozen_twitter(&clock, 30, "wait");
    let first = g.next_id().unwrap().get();
    let started = std::time::Instant::now();
    let mut out = vec![0; 5000];
    let err = g.next_ids(&mut out).unwrap_err();
    // About 1 million readings of an atomic: milliseconds, even unoptimised.
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(err.code(), "clock_stalled");
    assert_eq!(
        err,
        snowmint::Error::ClockStalled {
            now_ms: T,
            until_ms: T + 1
        }
    );
    let text = err.to_string();
    assert!(
        text.contains(&format!("not advanced past {T} ms")),
        "{text}"
    );
    assert!(text.contains("borrow:N") && text.ends_with("[clock_stalled]"));
    // One at a time too, and the unit's IDs stay used up.
    assert_eq!(g.next_id().unwrap_err().code(), "clock_stalled");
    assert!(matches!(g.try_next_id(), Ok(snowmint::Next::RetryAt(at)) if at == T + 1));
    // Once the clock moves, IDs continue in the next unit: the 4095 IDs the
    // failed batch claimed were skipped, not handed out again.
    clock.0.store(T + 1, std::sync::atomic::Ordering::SeqCst);
    let next = g.next_id().unwrap().get();
    let l = Layout::preset("twitter").unwrap();
    assert_eq!(l.decompose(first).unwrap().timestamp_ms(), T);
    assert_eq!(l.decompose(next).unwrap().timestamp_ms(), T + 1);
    assert_eq!(l.decompose(next).unwrap().sequence(), 0);
}

/// `sequence_exhausted=borrow:N` is the documented way to issue more IDs in
/// a frozen millisecond: N more units' worth, then `clock_stalled`.
#[test]
fn borrow_issues_more_ids_on_a_frozen_clock() {
    const T: u64 = 1_700_000_000_000;
    let clock = FrozenClock(T.into());
    let g = frozen_twitter(&clock, 31, "borrow:2");
    let mut out = vec![0; 5000];
    g.next_ids(&mut out).unwrap();
    let mut more = vec![0; 3 * 4096 - 5000];
    g.next_ids(&mut more).unwrap();
    out.extend(more);
    check_unique(vec![out.clone()]);
    let l = Layout::preset("twitter").unwrap();
    let last = l.decompose(*out.last().unwrap()).unwrap();
    assert_eq!(last.timestamp_ms(), T + 2);
    // Three units (the clock's and two borrowed) are all there is.
    assert_eq!(g.next_id().unwrap_err().code(), "clock_stalled");
}

#[test]
fn refuses_a_future_epoch_and_an_expired_layout() {
    let future = Layout::from_json(
        r#"{"epoch_ms":4000000000000,"fields":[["timestamp",41],["sequence",12]]}"#,
    )
    .unwrap();
    let n = future.nodes_from_values(&[]).unwrap();
    assert_eq!(
        Generator::new(future, n, Options::default())
            .unwrap_err()
            .code(),
        "invalid_layout"
    );
    let baidu = Layout::preset("baidu").unwrap();
    let g = Generator::new(
        baidu,
        baidu.nodes_from_values(&[1]).unwrap(),
        Options::default(),
    )
    .unwrap();
    assert_eq!(g.next_id().unwrap_err().code(), "time_overflow");
    let mut out = [0u64; 4];
    assert_eq!(g.next_ids(&mut out).unwrap_err().code(), "time_overflow");
}

#[test]
fn resume_after_continues_above_the_previous_run() {
    let l = Layout::preset("tsid").unwrap();
    let n = l.nodes_from_values(&[77]).unwrap();
    let g = Generator::new(l, n, Options::default()).unwrap();
    // Pretend a previous run got this far ahead (say, its clock ran fast).
    let last = l.compose(l.time_end_ms() - 1000, 5, &n).unwrap();
    drop(g);
    // A later run told where the last one stopped continues above it (by
    // borrowing, since its clock is far behind that ID).
    let opts = Options {
        resume_after: Some(last),
        clock_backwards: snowmint::ClockBackwards::Borrow {
            max_units: u64::MAX / 2,
        },
        ..Options::default()
    };
    let g = Generator::new(l, n, opts).unwrap();
    assert!(g.next_id().unwrap() > last);
}

#[cfg(unix)]
#[test]
fn a_generator_inherited_across_fork_refuses_to_run() {
    let g = twitter_gen(9, 9);
    let before = g.next_id().unwrap();
    // SAFETY: the child only calls into snowmint and then `_exit`s.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        let inherited = g.next_id().map_err(|e| e.code());
        let l = Layout::preset("twitter").unwrap();
        let fresh = Generator::new(
            l,
            l.nodes_from_values(&[9, 10]).unwrap(),
            Options::default(),
        )
        .and_then(|f| f.next_id());
        let ok = inherited == Err("process_forked") && fresh.is_ok();
        // SAFETY: ends the child without running the parent's test harness
        // (no destructors, no atexit handlers: nothing of the parent's state).
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let mut status = 0;
    // SAFETY: `pid` is this process's child; `status` is a live `c_int`.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child status {status}"
    );
    // The parent goes on.
    assert!(g.next_id().unwrap() > before);
}

#[test]
fn batch_sizes_above_the_maximum_are_refused() {
    let max = Generator::<snowmint::SystemClock>::MAX_BATCH;
    assert_eq!(Generator::<snowmint::SystemClock>::check_batch(0), Ok(0));
    assert_eq!(
        Generator::<snowmint::SystemClock>::check_batch(1000),
        Ok(1000)
    );
    for n in [max + 1, u64::MAX] {
        let e = Generator::<snowmint::SystemClock>::check_batch(n).unwrap_err();
        assert_eq!(e.code(), "invalid_option");
    }
}

#[test]
fn two_threads_contending_on_a_wide_sequence_never_repeat() {
    // About a million IDs per ms: the threads really race for the state, so
    // compare-and-swaps are lost (and retried after a backoff) all the time.
    let l = Layout::parse(
        r#"{"epoch_ms":1288834974657,"fields":[["timestamp",41],["node",2],["sequence",20]]}"#,
    )
    .unwrap();
    let n = l.nodes_from_pairs([("node", 1)]).unwrap();
    let g = Arc::new(Generator::new(l, n, Options::default()).unwrap());
    check_unique(race(g, 2, 2_000_000));
}
