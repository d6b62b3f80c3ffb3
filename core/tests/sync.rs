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
