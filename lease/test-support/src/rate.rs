//! Leased holders at a high rate, as processes: this test binary run again
//! as a holder ([`holder_child`], selected by [`CHILD_ENV`]), because the
//! probe issues one ID per call and cannot borrow sequence units. `next_ids`
//! batches and `sequence_exhausted=borrow:N` from several holders on one
//! store, a successor after a SIGKILL; the same in a 16-bit ID space, where
//! the reservation bound and the sequence end are hit all the time; and 40
//! claimers racing for the slots of 32 killed holders. Every wait is bounded.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::process::Command;
use std::time::{Duration, Instant};

use snowmint::{ClockBackwards, Layout, Options, SequenceExhausted, SystemClock};
use snowmint_lease::{LeaseUrl, LeasedGenerator};

use crate::faults::{assert_unique, Fillers};
use crate::*;

/// Set in a holder child's environment:
/// `URL|LAYOUT|BATCH|RUN_MS|CLOCK|EXHAUSTED|PREFER|OFFSET_MS` (PREFER `-`
/// for none; OFFSET_MS moves the holder's clock).
pub const CHILD_ENV: &str = "SNOWMINT_FAULTS_HOLDER";

/// `twitter` (worker leased, datacenter 1), or `tiny:EPOCH`: 16 bits in
/// all, a 10-bit timestamp of 100 ms units from EPOCH (102 s), a 2-bit
/// worker (4 slots), a 4-bit sequence.
fn layout_of(name: &str) -> (Layout, Vec<(&'static str, u64)>) {
    match name.split_once(':') {
        Some(("tiny", epoch)) => (
            Layout::new(
                epoch.parse().unwrap(),
                100,
                &[("timestamp", 10), ("worker", 2), ("sequence", 4)],
            )
            .unwrap(),
            vec![],
        ),
        _ => (twitter(), vec![("datacenter", 1)]),
    }
}

/// The holder a child runs: `slot N`, then `id ID` lines (a batch per
/// write), the first `error CODE MESSAGE` of each run of failures, `hwm MS`
/// and `closed` at the end; stops early once lost.
pub fn holder_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let f: Vec<&str> = spec.split('|').collect();
    let (url, (layout, fixed)) = (f[0], layout_of(f[1]));
    let batch: usize = f[2].parse().unwrap();
    let run = Duration::from_millis(f[3].parse().unwrap());
    let options = Options {
        clock_backwards: ClockBackwards::parse(f[4]).unwrap(),
        sequence_exhausted: SequenceExhausted::parse(f[5]).unwrap(),
        ..Options::default()
    };
    let mut out = std::io::stdout().lock();
    // After the harness's "test NAME ... " (no newline).
    writeln!(out).unwrap();
    let prefer = f[6].parse().ok();
    let url = LeaseUrl::parse(url).unwrap();
    let offset = OffsetClock(f[7].parse().unwrap());
    let g = match LeasedGenerator::open_with(&url, layout, &fixed, options, prefer, offset) {
        Ok(g) => g,
        Err(e) => {
            writeln!(out, "error {} {e}", e.code()).unwrap();
            return;
        }
    };
    writeln!(out, "slot {}", g.slot()).unwrap();
    let until = Instant::now() + run;
    let mut buf = vec![0u64; batch];
    let mut text = String::new();
    let mut failing = false;
    let mut since_pause = 0;
    while Instant::now() < until {
        let r = if batch == 1 {
            g.next_id().map(|id| buf[0] = id.get())
        } else {
            g.next_ids(&mut buf)
        };
        match r {
            Ok(()) => {
                text.clear();
                for id in &buf {
                    text.push_str("id ");
                    text.push_str(&id.to_string());
                    text.push('\n');
                }
                out.write_all(text.as_bytes()).unwrap();
                failing = false;
                since_pause += batch;
                if since_pause >= 64 {
                    // At most about 64 IDs a ms: millions of lines would
                    // make the test slow, not the holder.
                    std::thread::sleep(Duration::from_millis(1));
                    since_pause = 0;
                }
            }
            Err(e) => {
                if !failing {
                    writeln!(out, "error {} {e}", e.code()).unwrap();
                }
                failing = true;
                if g.info().lost.is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        out.flush().unwrap();
    }
    writeln!(out, "hwm {}", g.info().hwm_ms).unwrap();
    match g.close() {
        Ok(()) => writeln!(out, "closed").unwrap(),
        Err(e) => writeln!(out, "error {} {e}", e.code()).unwrap(),
    }
}

/// A holder child of this test binary: the fields of [`CHILD_ENV`].
pub struct Child<'a> {
    /// The test that runs [`holder_child`] (it does nothing without
    /// [`CHILD_ENV`]), as the harness names it.
    pub test: &'a str,
    pub url: &'a str,
    pub layout: &'a str,
    pub batch: usize,
    pub run_ms: u64,
    pub clock: &'a str,
    pub exhausted: &'a str,
    pub prefer: Option<u64>,
    /// How far the holder's clock is ahead (ms; within the URL's
    /// `max_skew_ms`): its IDs run ahead of a successor's clock, so only the
    /// fencing keeps the successor above them.
    pub offset_ms: i64,
}

/// The system clock moved by a fixed offset (the probe's, which this child
/// replaces).
struct OffsetClock(i64);

impl snowmint::Clock for OffsetClock {
    fn now_ms(&self) -> u64 {
        SystemClock.now_ms().saturating_add_signed(self.0)
    }
    fn wait_until(&self, ms: u64) -> bool {
        SystemClock.wait_until(ms.saturating_add_signed(-self.0))
    }
}

impl Child<'_> {
    pub fn spawn(&self) -> Probe {
        let prefer = self.prefer.map_or("-".to_string(), |p| p.to_string());
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args([self.test, "--exact", "--nocapture", "--test-threads=1"])
            .env(
                CHILD_ENV,
                format!(
                    "{}|{}|{}|{}|{}|{}|{prefer}|{}",
                    self.url,
                    self.layout,
                    self.batch,
                    self.run_ms,
                    self.clock,
                    self.exhausted,
                    self.offset_ms
                ),
            );
        Probe::spawn_command(cmd)
    }
}

/// The node value of the leased field of `id` in `layout`.
fn slot_of(layout: &Layout, id: u64) -> u64 {
    *layout.decompose(id).unwrap().nodes().last().unwrap()
}

/// Several holders at a high rate on one store, a successor after a kill:
/// four children on slots 0-3 (the rest held), two with `next_ids` batches
/// of 128 and two with single IDs (about 64 IDs a ms each at most), all with `sequence_exhausted=borrow:20`,
/// window 3 s past a TTL of 1 s; child 0's clock is 2 s ahead (within
/// `max_skew_ms`), so its IDs run past its successor's clock and only the
/// fencing keeps the successor above them. Child 0 is killed (SIGKILL) after 1 s; its
/// successor takes slot 0 once the TTL has passed, with `clock_backwards=
/// borrow:5000`: it borrows units above the killed holder's `hwm` instead of
/// waiting, and must stay inside its own reservation. Every ID once, the
/// successor's above the killed holder's, each holder's IDs in its slot and
/// at or below its confirmed `hwm`.
pub fn high_rate(base: &str, ns: &str, child_test: &str) {
    let _fillers = Fillers::all_but_set(base, ns, &[0, 1, 2, 3]);
    let url =
        format!("{base}?namespace={ns}&ttl_ms=1000&renew_ms=200&window_ms=3000&timeout_ms=1000");
    let n = kill_and_succeed(child_test, &url, "twitter", &[128, 128, 1, 1], 1000, 2000);
    eprintln!("high rate: {n}");
}

/// A 16-bit ID space (`tiny`: 4 slots of 16 IDs per 100 ms unit): four
/// children hold every slot with `next_ids` batches of 8 and
/// `sequence_exhausted=borrow:3`, window 1.5 s past a TTL of 1 s, so the
/// sequence end and the reservation bound are hit all the time; child 0
/// (its clock 1 s ahead) is killed and succeeded as in [`high_rate`]. Every
/// 16-bit ID once.
pub fn tiny_space(base: &str, ns: &str, child_test: &str) {
    let epoch = (now_ms() - 5_000) / 100 * 100;
    let url =
        format!("{base}?namespace={ns}&ttl_ms=1000&renew_ms=200&window_ms=1500&timeout_ms=1000");
    let n = kill_and_succeed(
        child_test,
        &url,
        &format!("tiny:{epoch}"),
        &[8, 8, 8, 8],
        800,
        1000,
    );
    eprintln!("16-bit space: {n}");
}

/// Children with `batches` on `url` (one each), child 0 killed after
/// `kill_after_ms`, its successor once its slot is free; the checks of
/// [`high_rate`]. Returns the counts, for the report.
fn kill_and_succeed(
    child_test: &str,
    url: &str,
    layout_name: &str,
    batches: &[usize],
    kill_after_ms: u64,
    ahead_ms: i64,
) -> String {
    let (layout, _) = layout_of(layout_name);
    let exhausted = if layout_name == "twitter" {
        "borrow:20"
    } else {
        "borrow:3"
    };
    let started = Instant::now();
    let mut holders: Vec<Probe> = batches
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            Child {
                test: child_test,
                url,
                layout: layout_name,
                batch: b,
                run_ms: 3000,
                clock: "wait:10000",
                exhausted,
                prefer: None,
                offset_ms: if i == 0 { ahead_ms } else { 0 },
            }
            .spawn()
        })
        .collect();
    for h in &mut holders {
        h.wait_for(20, |l| {
            l.iter()
                .any(|x| x.starts_with("id ") || x.starts_with("error "))
        });
        assert!(value(&h.lines(), "slot").is_some(), "{:?}", h.tail());
    }
    std::thread::sleep(Duration::from_millis(kill_after_ms));
    let mut killed = holders.remove(0).kill();
    // Killed in the middle of a write, perhaps: its last line may be cut.
    killed.pop();
    let k_slot = value(&killed, "slot").unwrap();
    let killed_at = Instant::now();
    let mut others = Vec::new();
    let succ = loop {
        let mut p = Child {
            test: child_test,
            url,
            layout: layout_name,
            batch: batches[0],
            run_ms: 1000,
            clock: "borrow:5000",
            exhausted,
            prefer: Some(k_slot),
            offset_ms: 0,
        }
        .spawn();
        p.wait_for(20, |l| {
            l.iter()
                .any(|x| x.starts_with("slot ") || x.starts_with("error "))
        });
        match value(&p.lines(), "slot") {
            Some(slot) if slot == k_slot => break p,
            // A survivor's slot, freed at the end of its run while the
            // killed holder's was still held (etcd's whole seconds):
            // another holder, checked with the rest.
            Some(_) => others.push(p),
            None => {
                let out = p.finish(10);
                assert!(errors(&out)[0].contains("slots are held"), "{out:?}");
            }
        }
        assert!(
            killed_at.elapsed() < Duration::from_secs(10),
            "the killed holder's slot never came free"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let s_out = succ.finish(30);
    let mut all: Vec<Vec<String>> = holders
        .into_iter()
        .chain(others)
        .map(|h| h.finish(30))
        .collect();
    all.push(killed);
    all.push(s_out);
    let id_sets: Vec<Vec<u64>> = all.iter().map(|o| ids(o)).collect();
    let refs: Vec<&[u64]> = id_sets.iter().map(|v| v.as_slice()).collect();
    assert_unique(layout_name, &refs);
    let time = |id: u64| layout.decompose(id).unwrap().timestamp_ms();
    for (out, got) in all.iter().zip(&id_sets) {
        let slot = value(out, "slot").unwrap();
        assert!(!got.is_empty(), "{:?}", &out[..out.len().min(5)]);
        if let Some(id) = got.iter().find(|&&id| slot_of(&layout, id) != slot) {
            panic!(
                "{id} is of slot {}, its holder's is {slot} ({} IDs)",
                slot_of(&layout, *id),
                got.len()
            );
        }
        assert!(got.iter().all(|&id| id <= layout.max_id().get()));
        if let Some(hwm) = value(out, "hwm") {
            let max = *got.iter().max().unwrap();
            assert!(
                time(max) <= hwm,
                "issued at {} ms past its hwm {hwm}",
                time(max)
            );
        }
    }
    let (k_ids, s_ids) = (&id_sets[id_sets.len() - 2], &id_sets[id_sets.len() - 1]);
    assert_eq!(value(&all[all.len() - 1], "slot"), Some(k_slot));
    let k_max = *k_ids.iter().max().unwrap();
    let s_min = *s_ids.iter().min().unwrap();
    assert!(
        s_min > k_max,
        "the successor issued {s_min} <= the killed holder's {k_max}"
    );
    let bound_hits: usize = all.iter().map(|o| errors(o).len()).sum();
    let counts: Vec<usize> = id_sets.iter().map(|v| v.len()).collect();
    let total: usize = counts.iter().sum();
    format!(
        "{total} IDs in {:?} (survivors, killed, successor: {counts:?}; {bound_hits} runs of errors)",
        started.elapsed()
    )
}

/// 40 claimers racing for the expired slots of 32 killed holders: 32
/// probes, their clocks 4 s ahead, hold every slot (window 6 s past a TTL
/// of 1.5 s) and are killed together; past the TTL, 40 probes claim at once. 32 get a slot and issue
/// above the killed holder of their slot, 8 are refused with
/// `lease_unavailable`; every ID once.
pub fn forty_race_for_expired(base: &str, ns: &str) {
    // One store's race at a time on this machine: the stores part
    // (xtask/src/part_stores.rs) runs the stores' suites side by side, in the same test order, and two or
    // three stores' 72 probes at once on 2 cores made a racer's claim miss
    // its 2 s timeout (PostgreSQL's beside Redis's; etcd's beside Redis's
    // and PostgreSQL's). The lock is the machine's (a file in /tmp), held to
    // the end of the test.
    let race_lock = std::fs::File::create("/tmp/snowmint-forty-race.lock").unwrap();
    race_lock.lock().unwrap();
    // The killed holders' clocks are 4 s ahead, within max_skew_ms (8 s
    // here: etcd's clock comes from whole-second Date headers, and with the
    // 5 s default a holder on a loaded machine was now and then refused at
    // claim): their IDs run past the racers' clocks, and only the fencing
    // keeps the racers above them.
    // Redis keeps the default 5 s (its clock is read to the ms): the test
    // servers' init key records the default settings (`snowmint lease
    // init`: xtask/src/stores/redis.rs),
    // and a claim counting a larger max_skew_ms than the init key's is not
    // vouched for, so the first would pay a fence of its own.
    let skew_ms = if base.starts_with("redis") {
        5000
    } else {
        8000
    };
    let url = format!(
        "{base}?namespace={ns}&ttl_ms=1500&renew_ms=300&window_ms=6000&timeout_ms=2000&max_skew_ms={skew_ms}"
    );
    // The first holders claim one after another (each waits for the one
    // before to hold its slot): 32 claims at once made a single etcd member
    // miss their 2 s timeout on a loaded machine. Only the racers below race.
    let mut first: Vec<Probe> = Vec::new();
    for _ in 0..32 {
        let mut p = Probe::spawn(
            &url,
            &[
                "--fixed",
                "datacenter=1",
                "--until-error",
                "--interval-ms",
                "2",
                "--clock-offset-ms",
                "4000",
            ],
        );
        p.wait_for(40, |l| {
            l.iter()
                .any(|x| x.starts_with("slot ") || x.starts_with("error "))
        });
        first.push(p);
    }
    for p in &mut first {
        p.wait_for(40, |l| ids(l).len() >= 20);
        if let Some(status) = p.child.try_wait().unwrap() {
            panic!(
                "a first holder ended ({status}) before its 20th ID: {:?}",
                p.tail()
            );
        }
    }
    // Killed in the middle of a write, perhaps: the last line may be cut.
    let killed: Vec<Vec<String>> = first
        .into_iter()
        .map(|p| {
            let mut out = p.kill();
            out.pop();
            out
        })
        .collect();
    // Past the TTL (etcd grants whole seconds, at least 2).
    std::thread::sleep(Duration::from_millis(2700));
    let dir = temp_dir(&format!("race-{ns}"));
    let go = dir.join("go");
    let go_arg = go.display().to_string();
    // The racers' calls may wait the default 5 s: 40 processes claiming at
    // once on two cores, beside another store's suite, made one etcd claim
    // miss 2 s (what is checked here is which slots they get, not how fast).
    let race_url = url.replace("timeout_ms=2000", "timeout_ms=5000");
    let mut racers: Vec<Probe> = (0..40)
        .map(|_| {
            Probe::spawn(
                &race_url,
                &[
                    "--fixed",
                    "datacenter=1",
                    "--count",
                    "20",
                    "--interval-ms",
                    "1",
                    "--clock-backwards",
                    "wait:10000",
                    "--hold-until-file",
                    &go_arg,
                ],
            )
        })
        .collect();
    for p in &mut racers {
        p.wait_for(40, |l| l.iter().any(|x| x.starts_with("hwm ")));
    }
    std::fs::write(&go, "").unwrap();
    let outs: Vec<(Option<i32>, Vec<String>)> =
        racers.into_iter().map(|p| p.finish_status(30)).collect();
    let mut killed_max: HashMap<u64, u64> = HashMap::new();
    for out in &killed {
        let slot = value(out, "slot").unwrap_or_else(|| panic!("{:?}", &out[..out.len().min(5)]));
        let max = *ids(out)
            .iter()
            .max()
            .unwrap_or_else(|| panic!("{:?}", &out[..out.len().min(5)]));
        assert!(killed_max.insert(slot, max).is_none());
    }
    let mut slots = HashSet::new();
    let mut refused = 0;
    for (code, out) in &outs {
        match value(out, "slot") {
            Some(slot) => {
                assert_eq!(*code, Some(0), "{out:?}");
                assert!(slots.insert(slot), "slot {slot} given twice");
                let got = ids(out);
                assert_eq!(got.len(), 20, "{out:?}");
                assert!(
                    *got.iter().min().unwrap() > killed_max[&slot],
                    "slot {slot}: below its killed holder"
                );
            }
            None => {
                assert_eq!(*code, Some(2), "{out:?}");
                assert!(errors(out)[0].contains("all 32 slots are held"), "{out:?}");
                refused += 1;
            }
        }
    }
    assert_eq!((slots.len(), refused), (32, 8));
    let sets: Vec<Vec<u64>> = killed
        .iter()
        .chain(outs.iter().map(|(_, o)| o))
        .map(|o| ids(o))
        .collect();
    let refs: Vec<&[u64]> = sets.iter().map(|v| v.as_slice()).collect();
    assert_unique("killed holders and racers", &refs);
    std::fs::remove_dir_all(&dir).unwrap();
}
