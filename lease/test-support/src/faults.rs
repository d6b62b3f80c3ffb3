//! Fault scenarios every network store shares, each built so that it fails
//! when the fencing it tests is removed: a reservation window longer than
//! the TTL (so "the successor is above" cannot hold by wall time alone), a
//! holder still issuing inside its confirmed reservation while its successor
//! runs, replies lost or held back by a [`Proxy`]. Every wait is bounded.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use snowmint::{Options, SystemClock};
use snowmint_lease::{
    Claim, ClaimRequest, LeaseInfo, LeaseUrl, LeasedGenerator, SlotSpace, Store, StoreError,
};

use crate::*;

/// Every slot of the twitter layout's `worker` field (datacenter 1) but
/// `keep`, claimed for a minute by this process and released on drop: a
/// holder and its successor then meet on `keep`.
pub struct Fillers {
    store: Arc<dyn Store>,
    space: SlotSpace,
    claims: Vec<Claim>,
}

impl Fillers {
    pub fn all_but(base: &str, ns: &str, keep: u64) -> Fillers {
        Self::all_but_set(base, ns, &[keep])
    }

    /// As [`all_but`](Self::all_but), leaving every slot of `keep` free.
    pub fn all_but_set(base: &str, ns: &str, keep: &[u64]) -> Fillers {
        let store = LeaseUrl::parse(&format!("{base}?namespace={ns}"))
            .unwrap()
            .open_store()
            .unwrap();
        let space = SlotSpace::new(twitter(), &[("datacenter", 1)], Some(ns)).unwrap();
        let claims = (0..32)
            .filter(|s| !keep.contains(s))
            .map(|slot| {
                let req = ClaimRequest::new(Some(slot), 60_000, 1_000);
                let c = store
                    .claim(&space, &req)
                    .unwrap_or_else(|e| panic!("filler claim: {e:?}"));
                assert_eq!(c.holder.slot, slot);
                c
            })
            .collect();
        Fillers {
            store,
            space,
            claims,
        }
    }
}

impl Fillers {
    /// Releases every filler claim now, each release asserted (drop ignores
    /// errors).
    pub fn release(mut self) {
        for c in std::mem::take(&mut self.claims) {
            self.store.release(&self.space, &c.holder, 0).unwrap();
        }
    }
}

impl Drop for Fillers {
    fn drop(&mut self) {
        for c in &self.claims {
            let _ = self.store.release(&self.space, &c.holder, 0);
        }
    }
}

/// A probe that holds a slot (its `slot` line printed; its IDs may still be
/// to come): spawned again every 200 ms while the store says all 32 slots
/// are held, until `since` is `bound` old.
pub fn spawn_holding(url: &str, args: &[&str], since: Instant, bound: Duration) -> Probe {
    loop {
        let mut p = Probe::spawn(url, args);
        p.wait_for(20, |l| {
            l.iter()
                .any(|x| x.starts_with("slot ") || x.starts_with("error "))
        });
        if value(&p.lines(), "slot").is_some() {
            return p;
        }
        let out = p.finish(10);
        assert!(errors(&out)[0].contains("all 32 slots are held"), "{out:?}");
        assert!(since.elapsed() < bound, "the held slot never came free");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Every ID once, over all `sets`; else how many were issued twice.
pub fn assert_unique(what: &str, sets: &[&[u64]]) {
    let mut seen = HashSet::new();
    let mut twice = Vec::new();
    for id in sets.iter().flat_map(|s| s.iter()) {
        if !seen.insert(*id) {
            twice.push(*id);
        }
    }
    assert!(
        twice.is_empty(),
        "{what}: {} IDs issued twice, first {:?}",
        twice.len(),
        &twice[..twice.len().min(5)]
    );
}

/// The live overlap: holder A (through a [`Proxy`]) has a reservation window
/// of 6 s and a TTL of 1.5 s. A is stopped (SIGSTOP) past its TTL; B claims
/// the same slot (all others are held) and issues; A is continued while B
/// runs. A's confirmed reservation reaches 5.5 s or more past its pause, so
/// A is entitled to issue on resuming, and must (asserted), until its next
/// renewal tells it the slot is gone. The replies to A are held back 500 ms
/// from its resumption on, so that renewal cannot win the race against A's
/// first IDs on an idle machine either. B is safe only by starting above the
/// `hwm` it read with its claim (`resume_after`): its own clock is still
/// inside A's reservation, and without the fencing B's IDs collide with
/// A's.
pub fn live_overlap(base: &str, ns: &str) {
    const TTL_MS: u64 = 1500;
    const WINDOW_MS: u64 = 6000;
    let _fillers = Fillers::all_but(base, ns, 7);
    let (proxy, purl) = Proxy::for_url(base);
    let mut a = Probe::spawn(
        &format!(
            "{purl}?namespace={ns}&ttl_ms={TTL_MS}&renew_ms=300&window_ms={WINDOW_MS}&timeout_ms=3000"
        ),
        &[
            "--fixed",
            "datacenter=1",
            "--until-error",
            "--interval-ms",
            "1",
        ],
    );
    a.wait_for(20, |l| ids(l).len() >= 100);
    assert_eq!(value(&a.lines(), "slot"), Some(7), "{:?}", a.tail());
    let pid = a.child.id() as libc::pid_t;
    // SAFETY: signals to our own child.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    let stopped = Instant::now();
    std::thread::sleep(Duration::from_millis(TTL_MS + 200));

    let dir = temp_dir(&format!("overlap-{ns}"));
    let go = dir.join("go");
    let go_arg = go.display().to_string();
    // B waits (up to 10 s) for its clock to pass A's reservation.
    let b = spawn_holding(
        &format!(
            "{base}?namespace={ns}&ttl_ms=4000&renew_ms=300&window_ms={WINDOW_MS}&timeout_ms=1500"
        ),
        &[
            "--fixed",
            "datacenter=1",
            "--count",
            "200",
            "--interval-ms",
            "1",
            "--clock-backwards",
            "wait:10000",
            "--hold-until-file",
            &go_arg,
        ],
        stopped,
        Duration::from_secs(8),
    );
    assert_eq!(value(&b.lines(), "slot"), Some(7), "{:?}", b.lines());
    let a_paused = a.lines().len();
    let a_pre = ids(&a.lines());
    proxy.set(Dir::Down, Flow::Delay(500));
    let resumed = now_ms();
    // SAFETY: kill(2) on the pid of a child this test spawned and still owns.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
    let paused_for = stopped.elapsed();
    // Only the first round trip is held back: a SQL renewal takes several.
    std::thread::sleep(Duration::from_millis(500));
    proxy.set(Dir::Down, Flow::Pass);
    let a_out = a.finish(20);
    std::fs::write(&go, "").unwrap();
    let b_out = b.finish(20);

    let a_ids = ids(&a_out);
    // IDs of A's resumed clock (the first lines after the pause may be an
    // ID taken just before SIGSTOP and printed after SIGCONT).
    let after: Vec<u64> = ids(&a_out[a_paused..])
        .into_iter()
        .filter(|&id| time_of(id) >= resumed)
        .collect();
    let a_hwm = value(&a_out, "hwm").unwrap();
    assert!(
        !after.is_empty(),
        "A issued nothing after resuming ({paused_for:?} after its pause, its hwm {a_hwm} ms, \
         now {resumed} ms): the overlap was not exercised: {:?}",
        &a_out[a_paused..]
    );
    // Everything A issued is inside what the store confirmed to it.
    let a_max = *a_ids.iter().max().unwrap();
    assert!(
        time_of(a_max) <= a_hwm,
        "A issued at {} ms, above its confirmed hwm {a_hwm}",
        time_of(a_max)
    );
    // Then lost: its next renewal stopped it for good.
    let e = errors(&a_out[a_paused..]);
    assert!(
        e.len() == 1 && e[0].starts_with("lease_expired "),
        "{:?}",
        &a_out[a_out.len().saturating_sub(5)..]
    );
    let a_end = value(&a_out, "reserved_end").unwrap();
    assert!(
        a_end <= twitter().epoch_ms(),
        "A's reservation still ends at {a_end}: it was not told it lost the slot"
    );
    assert!(errors(&b_out).is_empty(), "{b_out:?}");
    let b_ids = ids(&b_out);
    assert_eq!(b_ids.len(), 200, "{b_out:?}");
    assert_unique("A and B", &[&a_ids, &b_ids]);
    let b_min = *b_ids.iter().min().unwrap();
    assert!(
        b_min > a_max,
        "B issued {b_min} (at {} ms) <= A's {a_max} (at {} ms)",
        time_of(b_min),
        time_of(a_max)
    );
    assert!(time_of(b_min) > a_hwm, "B started inside A's reservation");
    eprintln!(
        "live overlap: A paused {paused_for:?}, issued {} IDs after resuming ({} before)",
        after.len(),
        a_pre.len()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A leased generator in this process, issuing on a thread every ms until
/// stopped; each ID is recorded with the `hwm` the holder had seen confirmed
/// right after it (`LeaseInfo::hwm_ms`), each run of failures once, with
/// the holder's `last_error` at that moment.
pub struct Issuer {
    pub gen: Arc<LeasedGenerator>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<Issued>>,
}

/// What an [`Issuer`] issued.
#[derive(Default)]
pub struct Issued {
    /// (ID, confirmed `hwm` right after).
    pub ids: Vec<(u64, u64)>,
    /// (local ms, error code, the holder's `last_error` then).
    pub errors: Vec<(u64, String, Option<String>)>,
}

impl Issuer {
    pub fn open(url: &str, prefer: Option<u64>) -> Issuer {
        let gen = LeasedGenerator::open_with(
            &LeaseUrl::parse(url).unwrap(),
            twitter(),
            &[("datacenter", 1)],
            Options::default(),
            prefer,
            SystemClock,
        )
        .unwrap_or_else(|e| panic!("open {url}: {e}"));
        let gen = Arc::new(gen);
        let stop = Arc::new(AtomicBool::new(false));
        let (g, s) = (Arc::clone(&gen), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            let mut out = Issued::default();
            let mut failing = false;
            while !s.load(Ordering::SeqCst) {
                match g.next_id() {
                    Ok(id) => {
                        out.ids.push((id.get(), g.info().hwm_ms));
                        failing = false;
                    }
                    Err(e) => {
                        if !failing {
                            out.errors
                                .push((now_ms(), e.code().to_string(), g.info().last_error));
                        }
                        failing = true;
                    }
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            out
        });
        Issuer {
            gen,
            stop,
            thread: Some(thread),
        }
    }

    /// Stops issuing; what was issued.
    pub fn stop(mut self) -> Issued {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.take().unwrap().join().unwrap()
    }

    /// Waits (at most `secs`) until `cond` holds for the holder's info.
    pub fn wait_info(&self, secs: u64, what: &str, cond: impl Fn(&LeaseInfo) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        while !cond(&self.gen.info()) {
            assert!(
                Instant::now() < deadline,
                "{what}: not within {secs} s: {:?}",
                self.gen.info()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Successor S: a probe (another process: in this one, S would share the
/// holder's state word and never collide) on slot 7 (all others held),
/// retried until the slot is free (at most 10 s after `since`); it waits
/// for its clock to pass the `hwm` it claimed above, and issues 100 IDs.
pub fn successor(base: &str, ns: &str, since: Instant) -> Probe {
    let s = spawn_holding(
        &format!("{base}?namespace={ns}&ttl_ms=4000&renew_ms=300&window_ms=4000&timeout_ms=1500"),
        &[
            "--fixed",
            "datacenter=1",
            "--count",
            "100",
            "--interval-ms",
            "1",
            "--clock-backwards",
            "wait:10000",
        ],
        since,
        Duration::from_secs(10),
    );
    assert_eq!(value(&s.lines(), "slot"), Some(7), "{:?}", s.lines());
    s
}

/// A leased generator on slot `slot` of `url`, opened again every 100 ms
/// while all 32 slots are held, until `since` is `bound` old.
pub fn open_once_free(
    url: &str,
    options: Options,
    since: Instant,
    bound: Duration,
) -> LeasedGenerator {
    loop {
        match LeasedGenerator::open(url, twitter(), &[("datacenter", 1)], options) {
            Ok(g) => return g,
            Err(e) if e.to_string().contains("all 32 slots are held") => {
                assert!(since.elapsed() < bound, "the held slot never came free");
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => panic!("{e}"),
        }
    }
}

/// What a holder issued, checked against what it saw confirmed: every ID's
/// unit is at or below the `hwm` confirmed right after it.
pub fn assert_within_confirmed(what: &str, issued: &Issued) {
    for &(id, hwm) in &issued.ids {
        assert!(
            time_of(id) <= hwm,
            "{what} issued at {} ms, past its confirmed hwm {hwm}",
            time_of(id)
        );
    }
}

/// A one-way partition: holder G's requests reach the store, its replies
/// are lost. The store applies G's renewals (`one_round_trip`: a renewal is
/// one request, as Redis' script; a SQL transaction or etcd's keepalive and
/// transaction stop at the first lost reply), G never hears of them: G goes
/// on to the end of the reservation it saw confirmed, no further, and its
/// info names the failure. A claim after G is cut off entirely (past the
/// TTL) finds the `hwm` of the renewals G never heard of, above everything
/// G saw; successor S issues above G's IDs; once the network heals, G
/// learns it lost the slot.
pub fn one_way_partition(base: &str, ns: &str, one_round_trip: bool) {
    const TTL_MS: u64 = 1500;
    let _fillers = Fillers::all_but(base, ns, 7);
    let (proxy, purl) = Proxy::for_url(base);
    let g = Issuer::open(
        &format!(
            "{purl}?namespace={ns}&ttl_ms={TTL_MS}&renew_ms=200&window_ms=1000&timeout_ms=500"
        ),
        None,
    );
    assert_eq!(g.gen.slot(), 7);
    g.wait_info(10, "two renewals", |i| i.renewals >= 2);
    assert_eq!(g.gen.info().last_error, None);
    proxy.set(Dir::Down, Flow::Drop);
    let dropped = g.gen.info();
    // G runs dry at its confirmed reservation, having heard nothing since.
    g.wait_info(10, "a failed renewal", |i| i.last_error.is_some());
    let deadline = Instant::now() + Duration::from_secs(10);
    while g.gen.next_id().is_ok() {
        assert!(
            Instant::now() < deadline,
            "G never ran dry: {:?}",
            g.gen.info()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let dry = g.gen.info();
    assert!(dry.renewals <= dropped.renewals + 1, "{dropped:?} {dry:?}");
    assert_eq!(dry.reserved_end_ms, Some(dry.hwm_ms + 1), "{dry:?}");
    let e = dry.last_error.clone().unwrap();
    // The driver's deadline and the client's own socket timeout are both
    // timeout_ms: either may fire first, and each says so.
    assert!(
        e.contains("no answer within 500 ms") || e.contains("timed out after 500 ms"),
        "{e}"
    );
    assert!(dry.lost.is_none(), "{dry:?}");

    // Cut off entirely: the claim expires. What the store kept is the hwm
    // of renewals G never heard of (read by a claim, put back by release).
    proxy.cut();
    let cut = Instant::now();
    let store = LeaseUrl::parse(&format!("{base}?namespace={ns}"))
        .unwrap()
        .open_store()
        .unwrap();
    let space = SlotSpace::new(twitter(), &[("datacenter", 1)], Some(ns)).unwrap();
    let req = ClaimRequest::new(Some(7), 5000, 1);
    let kept = loop {
        match store.claim(&space, &req) {
            Ok(c) => {
                assert_eq!(c.holder.slot, 7);
                store.release(&space, &c.holder, c.prev_hwm_ms).unwrap();
                break c.prev_hwm_ms;
            }
            Err(StoreError::NoFreeSlot) => {}
            Err(e) => panic!("{e:?}"),
        }
        assert!(
            cut.elapsed() < Duration::from_secs(8),
            "G's claim never expired"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        kept >= dry.hwm_ms,
        "the store kept hwm {kept}, G saw {}",
        dry.hwm_ms
    );
    if one_round_trip {
        assert!(
            kept > dry.hwm_ms,
            "the store kept hwm {kept}, G saw {}: its lost replies were not of applied renewals",
            dry.hwm_ms
        );
    }
    let s = successor(base, ns, cut);
    let s_ids = ids(&s.finish(20));
    assert_eq!(s_ids.len(), 100);
    proxy.heal();
    g.wait_info(10, "G told it lost", |i| i.lost.is_some());
    assert!(g.gen.next_id().is_err());
    let issued = g.stop();
    assert_within_confirmed("G", &issued);
    let g_ids: Vec<u64> = issued.ids.iter().map(|p| p.0).collect();
    let (_, code, last_error) = &issued.errors[0];
    assert_eq!(code, "lease_expired");
    assert!(
        last_error.is_some(),
        "G's info had no error when it ran dry"
    );
    assert_unique("G and S", &[&g_ids, &s_ids]);
    let g_max = *g_ids.iter().max().unwrap();
    assert!(*s_ids.iter().min().unwrap() > g_max);
    assert!(time_of(s_ids[0]) > kept, "S started inside the kept hwm");
    eprintln!(
        "one-way partition: the store kept hwm {} ms above what G heard",
        kept - dry.hwm_ms
    );
}

/// A reply held back past the TTL: every reply to holder G arrives 2.5 s
/// late (G's timeout is longer, so it accepts them), TTL 1.5 s, window 4 s.
/// Between G's renewals its claim expires in the store; successor S takes
/// the slot while G is still issuing, and then G hears a renewal confirmed
/// before S's claim and raises its bound to it. G never issues above what
/// it heard confirmed, S only above the `hwm` it read with its claim (which
/// covers that late renewal); G learns it lost the slot at its next
/// renewal's (late) reply.
pub fn reply_delayed_past_ttl(base: &str, ns: &str) {
    let _fillers = Fillers::all_but(base, ns, 7);
    let (proxy, purl) = Proxy::for_url(base);
    let g = Issuer::open(
        &format!("{purl}?namespace={ns}&ttl_ms=1500&renew_ms=300&window_ms=4000&timeout_ms=4000"),
        None,
    );
    g.wait_info(10, "a renewal", |i| i.renewals >= 1);
    proxy.set(Dir::Down, Flow::Delay(2500));
    let delayed = Instant::now();
    let s = successor(base, ns, delayed);
    let s_claimed = now_ms();
    // Replies in flight keep their delay; later ones pass (a SQL renewal
    // takes several round trips, each would be held back).
    proxy.set(Dir::Down, Flow::Pass);
    let s_ids = ids(&s.finish(20));
    assert_eq!(s_ids.len(), 100);
    g.wait_info(15, "G told it lost", |i| i.lost.is_some());
    let issued = g.stop();
    assert_within_confirmed("G", &issued);
    let g_ids: Vec<u64> = issued.ids.iter().map(|p| p.0).collect();
    let overlap = g_ids.iter().filter(|&&id| time_of(id) >= s_claimed).count();
    assert!(
        overlap > 0,
        "G issued nothing while S held the slot (from {s_claimed} ms): G's last ID at {} ms, \
         its errors {:?}",
        time_of(issued.ids.last().unwrap().0),
        issued.errors
    );
    assert_unique("G and S", &[&g_ids, &s_ids]);
    let g_max = *g_ids.iter().max().unwrap();
    let s_min = *s_ids.iter().min().unwrap();
    assert!(s_min > g_max, "S issued {s_min} <= G's {g_max}");
    eprintln!(
        "reply delayed: S claimed {:?} after the delay began; G issued {overlap} IDs while S held the slot",
        delayed.elapsed()
    );
    drop(proxy);
}

/// Store clock steps: the store (a throwaway server under libfaketime,
/// `offset_file` its clock offset in seconds) steps its wall clock 3 s
/// forward, then to 2 s behind, while holder A (in this process, for its
/// info) and B (a probe) issue; then back to 0 and successor C (a probe)
/// takes A's slot. Every ID once; each holder's IDs at or below the `hwm` it
/// saw confirmed; C above A. What A reports after each step is printed: today
/// a store clock behind leaves A dry with renewals counting up and no
/// `last_error`. Once `LeaseInfo` tracks the skew (`skew_ms`), assert here
/// that it reads about +3000 and -2000 ms after the steps and that
/// `last_error` names it while A is dry.
pub fn store_clock_steps(base: &str, ns: &str, offset_file: &str) {
    let step = |s: &str| std::fs::write(offset_file, format!("{s}\n")).unwrap();
    step("+0");
    let params = format!("namespace={ns}&ttl_ms=1500&renew_ms=200&window_ms=1000&timeout_ms=1000");
    let a = Issuer::open(&format!("{base}?{params}"), None);
    let mut b = Probe::spawn(
        &format!("{base}?{params}"),
        &[
            "--fixed",
            "datacenter=1",
            "--run-ms",
            "6000",
            "--interval-ms",
            "1",
        ],
    );
    b.wait_for(20, |l| ids(l).len() >= 100);
    a.wait_info(10, "a renewal", |i| i.renewals >= 1);
    let before = (a.gen.info(), now_ms());

    step("+3");
    let r = a.gen.info().renewals;
    a.wait_info(10, "a renewal after the step forward", |i| {
        i.renewals >= r + 2
    });
    let forward = (a.gen.info(), now_ms());
    step("-2");
    let r = a.gen.info().renewals;
    a.wait_info(10, "renewals after the step back", |i| i.renewals >= r + 2);
    let back = (a.gen.info(), now_ms());
    // The hwm does not move back: A runs dry once its clock passes it.
    a.wait_info(8, "A dry", |i| i.reserved_end_ms.unwrap() <= now_ms());
    let dry = (a.gen.info(), now_ms());
    step("+0");
    let a_slot = a.gen.slot();
    let a_gen = Arc::clone(&a.gen);
    let issued = a.stop();
    let Ok(a_gen) = Arc::try_unwrap(a_gen) else {
        panic!("A's generator is still shared")
    };
    a_gen.close().unwrap();
    let b_out = b.finish(20);
    let show = |(i, at): &(LeaseInfo, u64)| {
        format!(
            "hwm {:+} ms from the local clock, renewals {}, last_error {:?}",
            i.hwm_ms as i64 - *at as i64,
            i.renewals,
            i.last_error
        )
    };
    eprintln!(
        "store clock steps: before: {}; 3 s forward: {}; 2 s behind: {}; dry: {}; A's errors {:?}",
        show(&before),
        show(&forward),
        show(&back),
        show(&dry),
        issued.errors
    );
    let (before, forward, back) = (before.0, forward.0, back.0);
    assert!(forward.hwm_ms > before.hwm_ms);
    assert!(back.hwm_ms >= forward.hwm_ms, "a confirmed hwm went down");
    assert_within_confirmed("A", &issued);
    let b_ids = ids(&b_out);
    let b_hwm = value(&b_out, "hwm").unwrap();
    assert!(b_ids.iter().all(|&id| time_of(id) <= b_hwm));
    let a_ids: Vec<u64> = issued.ids.iter().map(|p| p.0).collect();

    // C on A's slot, above everything A issued.
    let prefer = a_slot.to_string();
    let c_out = Probe::spawn(
        &format!("{base}?namespace={ns}&ttl_ms=3000&renew_ms=300&window_ms=3000&timeout_ms=1000"),
        &[
            "--fixed",
            "datacenter=1",
            "--prefer",
            &prefer,
            "--count",
            "100",
            "--clock-backwards",
            "wait:10000",
        ],
    )
    .finish(30);
    assert!(errors(&c_out).is_empty(), "{c_out:?}");
    assert_eq!(value(&c_out, "slot"), Some(a_slot));
    let c_ids = ids(&c_out);
    assert_eq!(c_ids.len(), 100);
    assert!(*c_ids.iter().min().unwrap() > *a_ids.iter().max().unwrap());
    assert_unique("A, B and C", &[&a_ids, &b_ids, &c_ids]);
}

/// The store's clock stepped a minute ahead while holder A runs (on a
/// throwaway server under libfaketime): A's renewals are refused
/// (`hwm_too_far` in its `last_error`, the store's answer), the slot's `hwm`
/// in the store stays near real time (a store that wrote store time + window
/// would put it a minute ahead, and the slot would give no ID for a minute
/// after A), A issues only inside its confirmed reservation, and once the
/// clock is back its renewals are confirmed again.
pub fn store_clock_far_ahead(base: &str, ns: &str, offset_file: &str) {
    let step = |s: &str| std::fs::write(offset_file, format!("{s}\n")).unwrap();
    step("+0");
    let url =
        format!("{base}?namespace={ns}&ttl_ms=5000&renew_ms=200&window_ms=1000&timeout_ms=1000");
    let a = Issuer::open(&url, None);
    a.wait_info(10, "a renewal", |i| i.renewals >= 1);
    step("+60");
    a.wait_info(10, "a refused renewal", |i| {
        i.last_error
            .as_deref()
            .is_some_and(|e| e.contains("hwm_too_far"))
    });
    std::thread::sleep(Duration::from_millis(600));
    let refused = a.gen.info();
    let store = LeaseUrl::parse(&url).unwrap().open_store().unwrap();
    let space = SlotSpace::new(twitter(), &[("datacenter", 1)], Some(ns)).unwrap();
    let kept = store
        .list()
        .unwrap()
        .1
        .into_iter()
        .filter(|s| s.key == space.key())
        .flat_map(|s| s.slots)
        .find(|r| r.slot == a.gen.slot())
        .unwrap();
    let at = now_ms();
    step("+0");
    let r = a.gen.info().renewals;
    a.wait_info(10, "renewals once the clock is back", |i| {
        i.renewals >= r + 2 && i.last_error.is_none()
    });
    let a_gen = Arc::clone(&a.gen);
    let issued = a.stop();
    let Ok(a_gen) = Arc::try_unwrap(a_gen) else {
        panic!("A's generator is still shared")
    };
    a_gen.close().unwrap();
    eprintln!(
        "store clock 60 s ahead: the store's hwm {:+} ms from the local clock; A's last_error {:?}",
        kept.hwm_ms as i64 - at as i64,
        refused.last_error
    );
    // Without the store's check it would be about 61 s ahead.
    assert!(
        kept.hwm_ms <= at + 1000 + 1000 + 5000,
        "the store wrote a far-future hwm: {} ms ahead",
        kept.hwm_ms - at
    );
    assert!(refused.hwm_ms <= at + 7000, "{refused:?}");
    assert_within_confirmed("A", &issued);
    assert!(!issued.ids.is_empty());
}
