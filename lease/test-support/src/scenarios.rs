//! The scenarios every store runs as processes (probes), each given the
//! store's URL without a query (`base`) and a namespace of the test's own:
//! 40 holders on 32 slots, a killed holder replaced after its TTL, a clock
//! skew refused, the server cut off and back, a holder cut off past its
//! TTL, a paused holder replaced, a far-future `hwm` refused, the `hwm` kept
//! across a restart. The file store runs some of them too
//! (`lease/tests/processes.rs`). Every wait is bounded.

use std::collections::HashSet;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use snowmint_lease::{ClaimRequest, LeaseUrl, RenewRequest, SlotSpace, Store};

use crate::{errors, ids, record, temp_dir, time_of, twitter, value, Probe, Proxy};

/// Every store's many-holders test: 40 probes claim from one 5-bit field of
/// `url` at once and hold until all have answered. Exactly 32 hold distinct
/// slots (exit 0, 50 IDs each with their node values, released); the other
/// 8 exit with status 2 and `lease_unavailable` ("all 32 slots are held");
/// every ID is distinct. While the 32 are held, a probe on a second
/// namespace (the URL's with `-second` appended) gets a slot at once.
/// `name` names the scratch directory.
pub fn forty_processes_thirty_two_slots(url: &str, name: &str) {
    let dir = temp_dir(name);
    let go = dir.join("go");
    let go_arg = go.display().to_string();
    let mut probes: Vec<Probe> = (0..40)
        .map(|_| {
            Probe::spawn(
                url,
                &[
                    "--fixed",
                    "datacenter=1",
                    "--count",
                    "50",
                    "--hold-until-file",
                    &go_arg,
                ],
            )
        })
        .collect();
    // Every probe either holds a slot with its IDs issued, or has given up.
    for p in &mut probes {
        p.wait_for(40, |l| l.iter().any(|x| x.starts_with("hwm ")));
    }
    // All 32 are held now: a second namespace on the same store is
    // independent of the first, and gets a slot at once.
    let other = with_namespace_suffix(url, "-second");
    let (code, out) =
        Probe::spawn(&other, &["--fixed", "datacenter=1", "--count", "5"]).finish_status(20);
    assert_eq!(code, Some(0), "second namespace: {out:?}");
    assert!(value(&out, "slot").is_some_and(|s| s < 32), "{out:?}");
    assert_eq!(ids(&out).len(), 5, "{out:?}");
    assert!(out.iter().any(|l| l == "closed"), "{out:?}");
    std::fs::write(&go, "").unwrap();
    let outputs: Vec<(Option<i32>, Vec<String>)> =
        probes.into_iter().map(|p| p.finish_status(30)).collect();
    let mut slots = HashSet::new();
    let mut all = HashSet::new();
    let mut refused = 0;
    for (code, out) in &outputs {
        match value(out, "slot") {
            Some(slot) => {
                assert_eq!(*code, Some(0), "{out:?}");
                assert!(slots.insert(slot), "slot {slot} given twice");
                let got = ids(out);
                assert_eq!(got.len(), 50, "{out:?}");
                for id in got {
                    assert_eq!(twitter().decompose(id).unwrap().nodes(), &[1, slot]);
                    assert!(all.insert(id), "duplicate ID {id}");
                }
                assert!(out.iter().any(|l| l == "closed"), "{out:?}");
            }
            None => {
                assert_eq!(*code, Some(2), "{out:?}");
                let e = errors(out);
                assert_eq!(e.len(), 1, "{out:?}");
                assert!(e[0].starts_with("lease_unavailable "), "{e:?}");
                assert!(e[0].contains("all 32 slots are held"), "{e:?}");
                refused += 1;
            }
        }
    }
    assert_eq!(slots, (0..32).collect::<HashSet<u64>>());
    assert_eq!(refused, 8);
    assert_eq!(all.len(), 32 * 50);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `url` with its `namespace=` value followed by `suffix`.
pub fn with_namespace_suffix(url: &str, suffix: &str) -> String {
    let at = url.find("namespace=").expect("a namespace in the URL") + "namespace=".len();
    let end = url[at..].find('&').map_or(url.len(), |i| at + i);
    format!("{}{suffix}{}", &url[..end], &url[end..])
}

/// The local clock, Unix ms.
pub fn now_ms() -> u64 {
    snowmint::SystemClock.precise_ms()
}

/// Every store's skew test: a holder whose clock is 10 s behind or ahead of
/// the store's (`max_skew_ms=2000`) is refused at claim with
/// `lease_unavailable` naming both numbers, before taking a slot; one 1 s
/// off is accepted. `base` is the store URL without a query; `ns` a
/// namespace of this test's own.
pub fn clock_skew(base: &str, ns: &str) {
    let url = format!("{base}?namespace={ns}&max_skew_ms=2000");
    for offset in ["-10000", "10000"] {
        let (code, out) = Probe::spawn(
            &url,
            &["--fixed", "datacenter=1", "--clock-offset-ms", offset],
        )
        .finish_status(20);
        assert_eq!(code, Some(2), "{out:?}");
        let e = errors(&out);
        assert_eq!(e.len(), 1, "{out:?}");
        assert!(e[0].starts_with("lease_unavailable "), "{e:?}");
        let skew: u64 = e[0]
            .split_once("clocks differ by ")
            .and_then(|(_, rest)| rest.split(' ').next()?.parse().ok())
            .unwrap_or_else(|| panic!("no skew in {e:?}"));
        assert!((9_000..=11_000).contains(&skew), "{e:?}");
        assert!(e[0].contains("(at most 2000 ms)"), "{e:?}");
        assert!(value(&out, "slot").is_none(), "{out:?}");
    }
    let (code, out) = Probe::spawn(
        &url,
        &[
            "--fixed",
            "datacenter=1",
            "--clock-offset-ms",
            "1000",
            "--count",
            "5",
        ],
    )
    .finish_status(20);
    assert_eq!(code, Some(0), "{out:?}");
    assert!(errors(&out).is_empty(), "{out:?}");
    assert_eq!(ids(&out).len(), 5, "{out:?}");
    assert!(out.iter().any(|l| l == "closed"), "{out:?}");
}

/// The window of [`crash`]: a killed holder's `hwm` is at least this far
/// past its last renewal.
const CRASH_WINDOW_MS: u64 = 4000;
const CRASH_RENEW_MS: u64 = 300;

/// Every store's crash test: holder A issues, renews, and is killed with
/// SIGKILL (no release). For a store with a TTL (`ttl`), its slot stays held
/// (a claimer preferring it gets another one) until the TTL has passed; the
/// file store frees it at once. `between` runs after the kill (a server
/// restart). Once the slot is free, a claim in this process reads the `hwm`
/// the store kept, which must reach A's last ID + the window (4 s) less a
/// renewal interval (and some slack), and puts it back; then C, a process
/// preferring A's slot, gets it and issues only IDs above that `hwm`.
/// `base` is the store URL without a query; `ns` a namespace of this test's
/// own.
pub fn crash(base: &str, ns: &str, ttl: bool, between: &dyn Fn()) {
    let url = format!(
        "{base}?namespace={ns}&ttl_ms=1500&renew_ms={CRASH_RENEW_MS}&window_ms={CRASH_WINDOW_MS}&timeout_ms=2000"
    );
    let mut a = Probe::holder(&url);
    a.wait_for(20, |l| ids(l).len() >= 400);
    let a_out = a.kill();
    let killed = Instant::now();
    let slot = value(&a_out, "slot").expect("A held a slot");
    let a_ids = ids(&a_out);
    assert!(a_ids.len() >= 400, "{a_out:?}");
    assert!(errors(&a_out).is_empty(), "{a_out:?}");
    let a_max = *a_ids.iter().max().unwrap();
    let prefer = slot.to_string();

    // Right after the kill: held until the TTL (stores with one), or free.
    let (code, b_out) = Probe::spawn(
        &url,
        &[
            "--fixed",
            "datacenter=1",
            "--prefer",
            &prefer,
            "--count",
            "1",
        ],
    )
    .finish_status(20);
    assert_eq!(code, Some(0), "{b_out:?}");
    let b_slot = value(&b_out, "slot").unwrap();
    // A's claim lasts until its last renewal (at most renew_ms before the
    // kill) plus the TTL: only a B that was done before that could not have
    // had A's slot. A B slower than that (a machine under load) proves
    // nothing either way here; what follows still checks it.
    let b_within_ttl = killed.elapsed() < Duration::from_millis(1500 - CRASH_RENEW_MS);
    if ttl && b_within_ttl {
        assert_ne!(b_slot, slot, "A's slot was free right after the kill");
    } else if ttl {
        eprintln!(
            "B finished {:?} after the kill, past A's TTL: not checked whether A's slot was still held",
            killed.elapsed()
        );
    } else {
        assert_eq!(
            b_slot, slot,
            "the file store frees a dead holder's slot at once"
        );
    }
    let b_ids = ids(&b_out);
    between();

    // What the store kept for A's slot: the hwm a claim finds once the slot
    // is free (bounded), read in this process and put back by the release.
    let store = LeaseUrl::parse(&url).unwrap().open_store().unwrap();
    let space = SlotSpace::new(twitter(), &[("datacenter", 1)], Some(ns)).unwrap();
    let req = ClaimRequest::new(Some(slot), 5000, 1);
    let kept = loop {
        let c = store
            .claim(&space, &req)
            .unwrap_or_else(|e| panic!("claim: {e:?}"));
        store.release(&space, &c.holder, c.prev_hwm_ms).unwrap();
        if c.holder.slot == slot {
            break c.prev_hwm_ms;
        }
        assert!(
            killed.elapsed() < Duration::from_secs(30),
            "A's slot never came free"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    if ttl {
        // A's claim expires a TTL after its last renewal (1500 - 300 ms).
        assert!(
            killed.elapsed() >= Duration::from_millis(1100),
            "A's slot came free {:?} after the kill, before its TTL",
            killed.elapsed()
        );
    }
    // A's hwm is its last renewal's time + the window, and A renewed every
    // 300 ms until it was killed (1 s of slack for a slow renewal): a store
    // that lost or lowered it fails here.
    let a_last = time_of(a_max);
    assert!(
        kept + CRASH_RENEW_MS + 1000 >= a_last + CRASH_WINDOW_MS,
        "A's slot kept hwm {kept} ms; A issued until {a_last} ms with a {CRASH_WINDOW_MS} ms window"
    );

    // C, a process preferring A's slot, gets it and starts above that hwm.
    let c_out = Probe::spawn(
        &url,
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
    assert_eq!(value(&c_out, "slot"), Some(slot), "{c_out:?}");
    let c_ids = ids(&c_out);
    assert_eq!(c_ids.len(), 100, "{c_out:?}");
    let c_min = *c_ids.iter().min().unwrap();
    assert!(c_min > a_max, "C issued {c_min} <= A's {a_max}");
    assert!(
        time_of(c_min) > kept,
        "C started at {} ms, inside the kept hwm {kept} ms",
        time_of(c_min)
    );
    let mut all = HashSet::new();
    for id in a_ids.iter().chain(&b_ids).chain(&c_ids) {
        assert!(all.insert(*id), "duplicate ID {id}");
    }
}

/// Runs `cmd` with `bash -c` (a server restart), at most `secs`; it must
/// succeed.
pub fn run_bounded(cmd: &str, secs: u64) {
    let mut child = Command::new("bash")
        .args(["-c", cmd])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn bash");
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{cmd}: {status}");
            return;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd}: did not finish in {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The restart test of a store that keeps its data (PostgreSQL, MySQL,
/// etcd): the crash test with the server restarted (`restart_cmd`, run by
/// bash, at most 60 s) between the kill and the next claim. The `hwm` the
/// killed holder's renewals wrote survives the restart.
pub fn restart_keeps_hwm(base: &str, ns: &str, restart_cmd: &str) {
    crash(base, ns, true, &|| run_bounded(restart_cmd, 60));
}

/// Every network store's outage test: two holders issue through a [`Proxy`]
/// (`ttl_ms=4000`, `window_ms=1000`, `renew_ms=200`); the proxy cuts the
/// server off. Each holder goes on issuing up to the reservation the store
/// last confirmed (the probe's `error_hwm`), never past it, then fails with `lease_expired`; when the proxy is
/// restored (within the TTL) a renewal succeeds and the same holder issues
/// again, as the driver documents. After they close, a new holder claims
/// the first one's slot through the proxy and issues above it. No ID twice.
pub fn store_down(base: &str, ns: &str) {
    let (proxy, purl) = Proxy::for_url(base);
    let url =
        format!("{purl}?namespace={ns}&ttl_ms=4000&renew_ms=200&window_ms=1000&timeout_ms=500");
    let args = [
        "--fixed",
        "datacenter=1",
        "--run-ms",
        "6000",
        "--interval-ms",
        "1",
    ];
    let mut holders: Vec<Probe> = (0..2).map(|_| Probe::spawn(&url, &args)).collect();
    for h in &mut holders {
        h.wait_for(20, |l| ids(l).len() >= 100);
        assert!(errors(&h.lines()).is_empty(), "{:?}", h.lines());
    }
    let cut_at = now_ms();
    proxy.cut();
    for h in &mut holders {
        h.wait_for(5, |l| {
            l.iter().any(|x| x.starts_with("error_reserved_end "))
        });
        assert!(
            value(&h.lines(), "error_reserved_end").is_some(),
            "{:?}",
            h.tail()
        );
    }
    std::thread::sleep(Duration::from_millis(300));
    let restored_at = now_ms();
    proxy.restore();
    let outs: Vec<Vec<String>> = holders.into_iter().map(|h| h.finish(20)).collect();

    let mut all = HashSet::new();
    for out in &outs {
        let e = errors(out);
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].starts_with("lease_expired "), "{e:?}");
        let at = out.iter().position(|l| l.starts_with("error ")).unwrap();
        let end = value(out, "error_reserved_end").unwrap();
        let before: Vec<u64> = ids(&out[..at]).into_iter().map(time_of).collect();
        let after: Vec<u64> = ids(&out[at..]).into_iter().map(time_of).collect();
        let hwm = value(out, "error_hwm").unwrap();
        let last = *before.iter().max().unwrap();
        // The generator's bound is the store's last confirmed hwm, no more.
        assert_eq!(end, hwm + 1, "reservation end {end}, confirmed hwm {hwm}");
        assert!(
            last <= hwm,
            "issued at {last} ms, past the confirmed hwm {hwm}"
        );
        assert!(last >= cut_at, "no ID after the cut: the test cut too late");
        assert!(
            last + 300 >= end,
            "stopped early: last {last} ms, end {end}"
        );
        assert!(!after.is_empty(), "never issued again after the restore");
        assert!(
            after[0] >= restored_at,
            "issued at {} ms while cut off (restored at {restored_at})",
            after[0]
        );
        assert!(
            out.iter().any(|l| l == "closed"),
            "{:?}",
            &out[out.len() - 3..]
        );
        for id in ids(out) {
            assert!(all.insert(id), "duplicate ID {id}");
        }
    }
    let slot = value(&outs[0], "slot").unwrap();
    let a_max = *ids(&outs[0]).iter().max().unwrap();
    let prefer = slot.to_string();
    let b_out = Probe::spawn(
        &url,
        &[
            "--fixed",
            "datacenter=1",
            "--prefer",
            &prefer,
            "--count",
            "50",
        ],
    )
    .finish(20);
    assert!(errors(&b_out).is_empty(), "{b_out:?}");
    assert_eq!(value(&b_out, "slot"), Some(slot), "{b_out:?}");
    let b_ids = ids(&b_out);
    assert_eq!(b_ids.len(), 50);
    assert!(b_ids.iter().all(|&id| id > a_max));
    for id in b_ids {
        assert!(all.insert(id), "duplicate ID {id}");
    }
}

/// A probe that got a slot: spawned again every 200 ms while the store says
/// all 32 are held (a claim not yet expired), until `since` is `bound` old.
pub fn spawn_once_a_slot_is_free(
    url: &str,
    args: &[&str],
    since: Instant,
    bound: Duration,
) -> Probe {
    loop {
        let mut p = Probe::spawn(url, args);
        p.wait_for(20, |l| l.iter().any(|x| x.starts_with("hwm ")));
        if value(&p.lines(), "slot").is_some() {
            return p;
        }
        let out = p.finish(10);
        assert!(errors(&out)[0].contains("all 32 slots are held"), "{out:?}");
        assert!(since.elapsed() < bound, "the held slot never came free");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A holder cut off from the store for longer than its TTL, while the store
/// itself stays up for others: A (through a TCP proxy) holds slot 7, the only
/// free one; the proxy cuts A off; A stops at the end of its reservation (its
/// last confirmed hwm); once A's claim has expired, B (connected directly)
/// claims slot 7 and issues; then A's route comes back. A must learn that the
/// slot is gone and issue nothing more, and every ID of B is above every ID
/// of A.
pub fn cut_off_past_ttl(base: &str, ns: &str) {
    const TTL_MS: u64 = 1500;
    // Every slot but 7 is held by this test, for longer than it runs.
    let fillers = crate::faults::Fillers::all_but(base, ns, 7);
    let (proxy, purl) = Proxy::for_url(base);
    let params =
        format!("namespace={ns}&ttl_ms={TTL_MS}&renew_ms=200&window_ms=500&timeout_ms=300");
    let mut a = Probe::spawn(
        &format!("{purl}?{params}"),
        &[
            "--fixed",
            "datacenter=1",
            "--run-ms",
            "9000",
            "--interval-ms",
            "1",
        ],
    );
    a.wait_for(20, |l| ids(l).len() >= 100);
    assert_eq!(value(&a.lines(), "slot"), Some(7), "{:?}", a.tail());
    // Lines from here on are A's after the cut (an earlier run of errors, a
    // renewal late on a loaded machine that A got over, is allowed).
    let at_cut = a.lines().len();
    let cut = Instant::now();
    proxy.cut();
    a.wait_for(10, |l| {
        l[at_cut..]
            .iter()
            .any(|x| x.starts_with("error_reserved_end "))
    });
    // Past A's TTL, counted from the cut (A's last renewal was before it).
    let expired = Duration::from_millis(TTL_MS + 700);
    std::thread::sleep(expired.saturating_sub(cut.elapsed()));

    let dir = temp_dir(&format!("cut-ttl-{}", std::process::id()));
    let go = dir.join("go");
    let go_arg = go.display().to_string();
    // B asks again while A's claim is still live: etcd grants whole seconds
    // (2 s here), the other stores expire at the TTL.
    // B's reservation is long enough for its 100 IDs without a renewal (a
    // late renewal on a loaded machine would stop it early, rightly).
    let b_params =
        format!("namespace={ns}&ttl_ms=3000&renew_ms=300&window_ms=3000&timeout_ms=1000");
    let b = spawn_once_a_slot_is_free(
        &format!("{base}?{b_params}"),
        &[
            "--fixed",
            "datacenter=1",
            "--count",
            "100",
            "--interval-ms",
            "1",
            "--hold-until-file",
            &go_arg,
        ],
        cut,
        Duration::from_secs(6),
    );
    assert_eq!(value(&b.lines(), "slot"), Some(7), "{:?}", b.lines());
    assert!(
        cut.elapsed() < Duration::from_millis(7500),
        "B took {:?} after the cut: A's run (9 s) ends before the restore",
        cut.elapsed()
    );

    // A's route comes back while B holds the slot; A runs on to its end.
    proxy.restore();
    let a_out = a.finish(20);
    std::fs::write(&go, "").unwrap();
    let b_out = b.finish(20);

    let a_ids = ids(&a_out);
    // A's first error after the cut: its reservation ran out. Nothing after
    // it: cut off, then lost.
    let first_error = at_cut
        + a_out[at_cut..]
            .iter()
            .position(|l| l.starts_with("error "))
            .unwrap();
    let stopped = &a_out[first_error..];
    assert!(
        stopped[0].starts_with("error lease_expired "),
        "{stopped:?}"
    );
    assert!(
        ids(stopped).is_empty(),
        "A issued again after its reservation ran out: {stopped:?}"
    );
    let a_hwm = value(stopped, "error_hwm").unwrap();
    let a_max = *a_ids.iter().max().unwrap();
    assert!(
        time_of(a_max) <= a_hwm,
        "A issued at {} ms, above its confirmed hwm {a_hwm}",
        time_of(a_max)
    );
    // A knows it lost the slot: its reservation ends at the epoch or before
    // (nothing can be issued), not at the last hwm it had.
    let a_end = value(&a_out, "reserved_end").unwrap();
    assert!(
        a_end <= twitter().epoch_ms(),
        "A's reservation still ends at {a_end} after the restore: {stopped:?}"
    );
    assert!(errors(&b_out).is_empty(), "{b_out:?}");
    let b_ids = ids(&b_out);
    assert_eq!(b_ids.len(), 100);
    let b_min = *b_ids.iter().min().unwrap();
    assert!(b_min > a_max, "B issued {b_min} <= A's {a_max}");
    let all: HashSet<u64> = a_ids.iter().chain(&b_ids).copied().collect();
    assert_eq!(all.len(), a_ids.len() + b_ids.len());
    fillers.release();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every store's far-future refusal ([`snowmint_lease::ClaimRequest::max_hwm_ms`],
/// [`snowmint_lease::RenewRequest::max_hwm_ms`]): a claim or renewal whose store time + window is above the
/// caller's bound is refused (`Refused`, "hwm_too_far", naming the hwm, the
/// store time and the bound) and writes nothing: the slot's record (counter,
/// `hwm`) is as before. The bound is set a minute below the store's clock,
/// as a holder's bound is when the store's clock has been stepped a minute
/// ahead of it. A bound from this host's clock is accepted. `base` is the
/// store URL without a query; `ns` a namespace of this test's own.
pub fn hwm_too_far_is_refused(base: &str, ns: &str) {
    use snowmint_lease::{hwm_bound, SlotState, StoreError};
    let url = format!("{base}?namespace={ns}");
    let store = LeaseUrl::parse(&url).unwrap().open_store().unwrap();
    let space = SlotSpace::new(twitter(), &[("datacenter", 1)], Some(ns)).unwrap();
    let req = ClaimRequest::new(Some(3), 10_000, 2000);
    let record = |slot: u64| record(&*store, &space, slot);
    let refused = |e: StoreError, store_ms: u64| {
        let StoreError::Refused(m) = e else {
            panic!("not refused: {e:?}")
        };
        assert!(m.starts_with("hwm_too_far: "), "{m}");
        assert!(
            m.contains("store time") && m.contains("above the bound"),
            "{m}"
        );
        let stated: u64 = m
            .split_once("(store time ")
            .and_then(|(_, r)| r.split(' ').next()?.parse().ok())
            .unwrap_or_else(|| panic!("no store time in {m}"));
        // Within the call's span (etcd: its Date headers, whole seconds).
        assert!(
            stated + 2000 >= store_ms && stated <= now_ms() + 2000,
            "{m}"
        );
        m
    };

    // A claim: refused, no record written.
    let store_ms = store.now_ms().unwrap();
    let e = store
        .claim(&space, &req.within(store_ms - 60_000))
        .expect_err("a claim above the bound");
    let m = refused(e, store_ms);
    assert!(
        record(3).is_none(),
        "the refused claim wrote {:?}",
        record(3)
    );
    eprintln!("refused claim: {m}");

    // A claim under this host's bound works.
    let c = store
        .claim(
            &space,
            &req.within(hwm_bound(now_ms(), 5000, 5000, req.window_ms)),
        )
        .unwrap();
    assert_eq!(c.holder.slot, 3);
    let before = record(3).unwrap();
    assert_eq!(before.hwm_ms, c.hwm_ms);

    // A renewal: refused, the record unchanged; then one under the bound.
    let store_ms = store.now_ms().unwrap();
    let renew = |max_hwm_ms| RenewRequest {
        holder: &c.holder,
        ttl_ms: 10_000,
        window_ms: 3000,
        max_hwm_ms,
    };
    let e = store
        .renew_within(&space, &renew(store_ms))
        .expect_err("a renewal above the bound");
    refused(e, store_ms);
    let after = record(3).unwrap();
    assert_eq!(after.state, SlotState::Held);
    assert_eq!(
        (after.hwm_ms, after.counter),
        (before.hwm_ms, before.counter)
    );
    let r = store
        .renew_within(&space, &renew(hwm_bound(now_ms(), 5000, 5000, 3000)))
        .unwrap();
    assert!(r.hwm_ms >= before.hwm_ms);
    store.release(&space, &c.holder, c.prev_hwm_ms).unwrap();
}

/// Holder A (a probe on `url`: ttl_ms=1500, renew_ms=300, window_ms=1000)
/// pauses (SIGSTOP) past its TTL on the only slot `s` leaves free; B takes
/// that slot (its counter now 2) no earlier than `free_after` after the
/// stop; A resumes and never issues above its last confirmed reservation
/// (which ends within a window and a renewal of the stop, give or take
/// `grain_ms`, how coarse the store's clock is), and stops; B's IDs are
/// unique and above A's, without an error. `tag` names the temporary folder.
pub fn paused_holder_is_replaced(
    s: &dyn Store,
    url: &str,
    ns: &str,
    tag: &str,
    free_after: Duration,
    grain_ms: u64,
) {
    let space = SlotSpace::new(twitter(), &[("datacenter", 1)], Some(ns)).unwrap();
    let hold = ClaimRequest::new(None, 60_000, 5000);
    // Every slot but one held by this process (long TTL).
    let fill: Vec<_> = (0..31).map(|_| s.claim(&space, &hold).unwrap()).collect();
    let args = [
        "--fixed",
        "datacenter=1",
        "--until-error",
        "--interval-ms",
        "5",
    ];
    let mut a = Probe::spawn(url, &args);
    a.wait_for(20, |l| ids(l).len() >= 50);
    let slot = value(&a.lines(), "slot").expect("A holds a slot");
    assert!(!fill.iter().any(|c| c.holder.slot == slot));
    let pid = a.child.id() as libc::pid_t;
    // SAFETY: signals to our own child.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    let stopped = Instant::now();
    let stopped_at = now_ms();

    // B claims as soon as A's claim (1.5 s) has expired by the store's clock.
    let dir = temp_dir(&format!("{tag}-paused"));
    let go = dir.join("go");
    let go_arg = go.display().to_string();
    let b = spawn_once_a_slot_is_free(
        url,
        &[
            "--fixed",
            "datacenter=1",
            "--count",
            "200",
            "--hold-until-file",
            &go_arg,
        ],
        stopped,
        Duration::from_secs(15),
    );
    assert!(
        stopped.elapsed() >= free_after,
        "B got A's slot {:?} after A stopped",
        stopped.elapsed()
    );
    assert_eq!(value(&b.lines(), "slot"), Some(slot), "{:?}", b.lines());
    assert_eq!(record(s, &space, slot).unwrap().counter, 2);

    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
    let a_out = a.finish(20);
    std::fs::write(&go, "").unwrap();
    let b_out = b.finish(20);

    let e = errors(&a_out);
    assert!(
        !e.is_empty() && e[0].starts_with("lease_expired "),
        "{a_out:?}"
    );
    let a_ids = ids(&a_out);
    let a_hwm = value(&a_out, "hwm").unwrap();
    assert!(
        a_ids.iter().all(|&id| time_of(id) <= a_hwm),
        "A issued above its confirmed reservation {a_hwm}"
    );
    assert!(
        a_hwm < stopped_at + 1500 + grain_ms,
        "A's reservation: {a_hwm}, stopped at {stopped_at}"
    );
    assert!(errors(&b_out).is_empty(), "{b_out:?}");
    let b_ids = ids(&b_out);
    assert_eq!(b_ids.len(), 200, "{b_out:?}");
    let mut all: HashSet<u64> = a_ids.iter().copied().collect();
    assert!(b_ids.iter().all(|id| all.insert(*id)), "duplicate IDs");
    let a_max = *a_ids.iter().max().unwrap();
    assert!(b_ids.iter().all(|&id| id > a_max));
    assert!(b_out.iter().any(|l| l == "closed"), "{b_out:?}");
    for c in &fill {
        s.release(&space, &c.holder, c.prev_hwm_ms).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
