//! The contract every store across machines keeps ([`snowmint_lease::Store`]),
//! written once for every [`Subject`]: claims, renewals, releases and the
//! counters that make a stale holder lost; expiry; the space's text checked;
//! through the generator; racing claimers; refused and silent servers.
//! [`contract_suite!`](crate::contract_suite) runs them, with the scenarios
//! of [`crate::scenarios`], per store.

use std::collections::HashSet;
use std::net::TcpListener;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use snowmint::{Layout, Options};
use snowmint_lease::{
    ClaimRequest, LeaseError, LeaseUrl, LeasedGenerator, SlotSpace, SlotState, StoreError,
};

use crate::{now_ms, record, time_of, twitter, Subject};

/// A layout whose `worker` field has `bits` bits (`datacenter` fixed).
fn layout(bits: u32) -> Layout {
    Layout::new(
        1288834974657,
        1,
        &[
            ("timestamp", 41),
            ("datacenter", 10 - bits),
            ("worker", bits),
            ("sequence", 12),
        ],
    )
    .unwrap()
}

fn req(prefer: Option<u64>, ttl_ms: u64) -> ClaimRequest {
    ClaimRequest::new(prefer, ttl_ms, 5000)
}

fn is_lost<T: std::fmt::Debug>(r: Result<T, StoreError>) -> bool {
    matches!(r, Err(StoreError::Lost(_)))
}

/// Claims fill the space with distinct slots (counter 1, `hwm` a window past
/// the store's clock, a 32-character token), then `NoFreeSlot`, even for a
/// preferred held slot; renewals raise `hwm` and the expiry and never lower
/// `hwm`; a release writes the last issued ms (below `hwm`) and frees the
/// slot; a stale holder, a wrong token and a right token with an old counter
/// are lost and change nothing; `prefer` is honoured when free; another
/// namespace is another space, starting at its lowest slot.
pub fn contract<S: Subject>() {
    let ns1 = S::ns("contract");
    let s = S::store(&ns1);
    assert_eq!(s.describe(), S::describe());
    // The store's clock is near the local one.
    let local = now_ms();
    let now = s.now_ms().unwrap();
    assert!(
        now.abs_diff(local) < S::CLOCK_SLACK_MS,
        "store {now}, local {local}"
    );

    let space = SlotSpace::new(twitter(), &[("datacenter", 1)], Some(&ns1)).unwrap();
    let mut claims = Vec::new();
    for _ in 0..32 {
        let (local, before) = (now_ms(), s.now_ms().unwrap());
        let c = s.claim(&space, &req(None, 30_000)).unwrap();
        assert_eq!(c.holder.counter, 1, "{c:?}");
        assert_eq!(c.prev_hwm_ms, 0, "{c:?}");
        assert_eq!(c.holder.token.len(), 32, "{c:?}");
        // A calibrated store clock (etcd's, from whole-second `Date`
        // headers) is refined by every answer: a later reading may be up
        // to its grain below an earlier one.
        assert!(
            c.hwm_ms + S::CLOCK_GRAIN_MS >= before + 5000,
            "{c:?} store {before}"
        );
        assert!(c.hwm_ms + S::CLOCK_SLACK_MS >= local + 5000, "{c:?}");
        let exp = c.expires_ms.unwrap();
        assert!(
            exp + S::CLOCK_GRAIN_MS >= before + 30_000,
            "{c:?} store {before}"
        );
        assert!(exp + S::CLOCK_SLACK_MS >= local + 30_000, "{c:?}");
        assert!(
            exp <= before + 32_000 + S::CLOCK_GRAIN_MS,
            "{c:?} store {before}"
        );
        claims.push(c);
    }
    let slots: HashSet<u64> = claims.iter().map(|c| c.holder.slot).collect();
    assert_eq!(slots, (0..32).collect());
    assert_eq!(
        s.claim(&space, &req(None, 30_000)),
        Err(StoreError::NoFreeSlot)
    );
    // prefer is not honoured when the slot is held.
    assert_eq!(
        s.claim(&space, &req(Some(3), 30_000)),
        Err(StoreError::NoFreeSlot)
    );

    // Renew raises hwm and the expiry (a second later: etcd's clock reads
    // whole seconds), and the record; a shorter window never lowers hwm.
    let c0 = &claims[0];
    std::thread::sleep(Duration::from_millis(1100));
    let r = s.renew(&space, &c0.holder, 30_000, 8000).unwrap();
    assert!(r.hwm_ms > c0.hwm_ms, "{r:?} {c0:?}");
    assert!(
        r.expires_ms.unwrap() > c0.expires_ms.unwrap(),
        "{r:?} {c0:?}"
    );
    assert_eq!(record(&*s, &space, 0).unwrap().hwm_ms, r.hwm_ms);
    let r2 = s.renew(&space, &c0.holder, 30_000, 10).unwrap();
    assert_eq!(r2.hwm_ms, r.hwm_ms);

    // Release writes last_ms (lower than hwm) and frees the slot.
    let c3 = &claims[3];
    let last = c3.hwm_ms - 4000;
    s.release(&space, &c3.holder, last).unwrap();
    let freed = record(&*s, &space, 3).unwrap();
    assert_eq!((freed.state, freed.hwm_ms), (SlotState::Free, last));
    // The stale holder is lost, for renew and release alike.
    assert!(is_lost(s.renew(&space, &c3.holder, 30_000, 5000)));
    assert!(is_lost(s.release(&space, &c3.holder, last)));
    // A wrong token is lost too, and changes nothing.
    let mut forged = claims[2].holder.clone();
    forged.token = "0".repeat(32);
    assert!(is_lost(s.release(&space, &forged, 0)));
    s.renew(&space, &claims[2].holder, 30_000, 5000).unwrap();
    // Two slots free: prefer is honoured (7, not the lower 3).
    s.release(&space, &claims[7].holder, 1).unwrap();
    let p = s.claim(&space, &req(Some(7), 30_000)).unwrap();
    assert_eq!((p.holder.slot, p.holder.counter, p.prev_hwm_ms), (7, 2, 1));
    let again = s.claim(&space, &req(Some(9), 30_000)).unwrap();
    assert_eq!(
        (again.holder.slot, again.holder.counter, again.prev_hwm_ms),
        (3, 2, last),
        "slot 9 is held: the free one"
    );
    assert!(again.hwm_ms > last);
    assert_ne!(again.holder.token, c3.holder.token);
    // The first holder of slot 3 stays lost against the new one.
    assert!(is_lost(s.renew(&space, &c3.holder, 30_000, 5000)));
    // A holder with the right token but another counter is lost too.
    let mut old_counter = again.holder.clone();
    old_counter.counter = 1;
    match s.renew(&space, &old_counter, 30_000, 5000) {
        Err(StoreError::Lost(m)) => assert!(m.contains("another holder"), "{m}"),
        other => panic!("{other:?}"),
    }

    // Another namespace is another space: prefer works for a slot never
    // used, and a claim without one gets the lowest slot never used.
    let ns2 = S::ns("contract2");
    let s2 = S::store(&ns2);
    let space2 = SlotSpace::new(twitter(), &[("datacenter", 1)], Some(&ns2)).unwrap();
    let other = s2.claim(&space2, &req(Some(17), 30_000)).unwrap();
    assert_eq!(
        (other.holder.slot, other.holder.counter, other.prev_hwm_ms),
        (17, 1, 0)
    );
    let other2 = s2.claim(&space2, &req(None, 30_000)).unwrap();
    assert_eq!(
        (
            other2.holder.slot,
            other2.holder.counter,
            other2.prev_hwm_ms
        ),
        (0, 1, 0),
        "the lowest slot never used"
    );

    for c in claims
        .iter()
        .filter(|c| ![3, 7].contains(&c.holder.slot))
        .chain([&p, &again])
    {
        s.release(&space, &c.holder, c.prev_hwm_ms).unwrap();
    }
    for c in [&other, &other2] {
        s2.release(&space2, &c.holder, c.prev_hwm_ms).unwrap();
    }
}

/// A claim whose TTL has passed is taken by the next claimer, with the
/// next counter and above its `hwm`; its holder is lost; not before the TTL.
pub fn expired_claim_is_taken_by_the_next_claimer<S: Subject>() {
    let n = S::ns("expiry");
    let s = S::store(&n);
    let space = SlotSpace::new(layout(1), &[("datacenter", 5)], Some(&n)).unwrap();
    // Expiry is the record's expiry against the store's clock (etcd: a
    // lease of 1 s, which etcd raises to its minimum). Timed from before the
    // short claim was written: the claim of `long` may take most of the
    // 300 ms on a loaded machine.
    let before_short = Instant::now();
    let short = s.claim(&space, &req(None, 300)).unwrap();
    let long = s.claim(&space, &req(None, 60_000)).unwrap();
    let after_claims = Instant::now();
    assert_ne!(short.holder.slot, long.holder.slot);
    // Both held: a third claim gets nothing (unless the machine took so
    // long that the short claim may have expired: then it is the taker).
    let third = s.claim(&space, &req(None, 60_000));
    let quick = before_short.elapsed() < Duration::from_millis(250);
    let start = Instant::now();
    let taken = match third {
        Err(StoreError::NoFreeSlot) => loop {
            match s.claim(&space, &req(None, 60_000)) {
                Ok(c) => break c,
                Err(StoreError::NoFreeSlot) => {}
                Err(e) => panic!("{e:?}"),
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "the short claim never expired"
            );
            std::thread::sleep(Duration::from_millis(100));
        },
        Ok(c) => {
            assert!(!quick, "a held slot was given: {c:?}");
            c
        }
        Err(e) => panic!("{e:?}"),
    };
    // Not taken before the TTL (100 ms for the store clock's granularity).
    assert!(
        before_short.elapsed() >= Duration::from_millis(200),
        "the 300 ms claim was taken {:?} after it was made",
        before_short.elapsed()
    );
    assert!(
        after_claims.elapsed() >= S::SHORT_CLAIM_LASTS,
        "{:?}",
        after_claims.elapsed()
    );
    assert_eq!(taken.holder.slot, short.holder.slot);
    assert_eq!(taken.holder.counter, short.holder.counter + 1);
    assert!(taken.prev_hwm_ms >= short.hwm_ms, "{taken:?} {short:?}");
    assert!(taken.hwm_ms >= taken.prev_hwm_ms);
    assert!(is_lost(s.renew(&space, &short.holder, 300, 5000)));
    assert!(is_lost(s.release(&space, &short.holder, 1)));
    s.release(&space, &taken.holder, taken.prev_hwm_ms).unwrap();
    s.release(&space, &long.holder, long.prev_hwm_ms).unwrap();
}

/// Another text under a space's key, written behind the store's back: a
/// claim is a bad record naming the key, never a claim.
pub fn space_text_is_checked<S: Subject>() {
    let n = S::ns("badtext");
    let s = S::store(&n);
    let space = SlotSpace::new(twitter(), &[("datacenter", 2)], Some(&n)).unwrap();
    let c = s.claim(&space, &req(None, 5000)).unwrap();
    s.release(&space, &c.holder, 0).unwrap();
    S::overwrite_space_text(&space, "something else\n");
    match s.claim(&space, &req(None, 30_000)) {
        Err(StoreError::BadRecord(m)) => assert!(
            m.contains("another slot space") && m.contains(space.key()),
            "{m}"
        ),
        other => panic!("{other:?}"),
    }
}

/// Two generators get distinct slots and distinct IDs; the background
/// renewals reach the store; the release writes the last issued ms, and the
/// next holder of the slot, preferring it, starts above it.
pub fn through_the_generator<S: Subject>() {
    let n = S::ns("gen");
    let u = S::url(&n, "ttl_ms=3000&renew_ms=200&window_ms=2000");
    let open = || LeasedGenerator::open(&u, twitter(), &[("datacenter", 1)], Options::default());
    let g = open().unwrap();
    let info = g.info();
    assert_eq!(info.store, S::describe());
    assert_eq!(info.field, "worker");
    assert_eq!((info.slot, info.counter), (0, 1));
    let exp = info.expires_ms.unwrap();
    let local = now_ms();
    assert!(
        exp + S::CLOCK_GRAIN_MS > local + 2000 && exp < local + 4000,
        "{info:?}"
    );
    let h = open().unwrap();
    assert_ne!(g.slot(), h.slot());
    let mut ids = HashSet::new();
    for _ in 0..100 {
        assert!(ids.insert(g.next_id().unwrap().get()));
        assert!(ids.insert(h.next_id().unwrap().get()));
    }
    let id = g.next_id().unwrap();
    assert_eq!(
        twitter().decompose(id.get()).unwrap().nodes(),
        &[1, g.slot()]
    );
    // The background renewals reach the store.
    let deadline = Instant::now() + Duration::from_secs(10);
    while g.info().renewals < 2 {
        assert!(Instant::now() < deadline, "{:?}", g.info());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(g.info().hwm_ms > info.hwm_ms);
    assert_eq!(g.info().last_error, None);
    let last_id = g.next_id().unwrap();
    let last = time_of(last_id.get());
    let slot = g.slot();
    g.close().unwrap();
    // The release wrote the last issued unit: the next claim of the slot
    // starts right above it.
    let s = S::store(&n);
    let space = SlotSpace::new(twitter(), &[("datacenter", 1)], Some(&n)).unwrap();
    let freed = record(&*s, &space, slot).unwrap();
    assert_eq!((freed.state, freed.hwm_ms), (SlotState::Free, last));
    let c = s.claim(&space, &req(Some(slot), 30_000)).unwrap();
    assert_eq!((c.holder.slot, c.holder.counter), (slot, 2));
    assert_eq!(c.prev_hwm_ms, last);
    s.release(&space, &c.holder, c.prev_hwm_ms).unwrap();
    // A generator preferring the slot gets it and issues above.
    let next = LeasedGenerator::open_with(
        &LeaseUrl::parse(&u).unwrap(),
        twitter(),
        &[("datacenter", 1)],
        Options::default(),
        Some(slot),
        snowmint::SystemClock,
    )
    .unwrap();
    assert_eq!(next.slot(), slot);
    assert!(next.next_id().unwrap() > last_id);
    next.close().unwrap();
    h.close().unwrap();
}

/// Eight claimers at once on eight slots get them all, once each (counter
/// 1), then `NoFreeSlot`: threads sharing one store, then (in other
/// namespaces) threads with a store (a connection) each, preferring no slot
/// and all preferring slot 0. Each connects before the start.
pub fn racing_claimers_get_distinct_slots<S: Subject>() {
    let race = |tag: &str, shared: bool, prefer: Option<u64>| {
        let n = S::ns(tag);
        let space = Arc::new(SlotSpace::new(layout(3), &[("datacenter", 9)], Some(&n)).unwrap());
        let one = S::store(&n);
        let barrier = Arc::new(Barrier::new(8));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let s = if shared {
                    Arc::clone(&one)
                } else {
                    S::store(&n)
                };
                let (space, barrier) = (Arc::clone(&space), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    s.now_ms().unwrap();
                    barrier.wait();
                    s.claim(&space, &req(prefer, 30_000))
                })
            })
            .collect();
        let claims: Vec<_> = threads
            .into_iter()
            .map(|t| t.join().unwrap().unwrap())
            .collect();
        let slots: HashSet<u64> = claims.iter().map(|c| c.holder.slot).collect();
        assert_eq!(slots, (0..8).collect());
        assert!(claims.iter().all(|c| c.holder.counter == 1), "{claims:?}");
        assert_eq!(
            one.claim(&space, &req(None, 30_000)),
            Err(StoreError::NoFreeSlot)
        );
        for c in &claims {
            one.release(&space, &c.holder, c.prev_hwm_ms).unwrap();
        }
    };
    race("race", true, None);
    race("race2", false, None);
    race("race3", false, Some(0));
}

fn open_error(u: &str) -> (LeaseError, Duration) {
    let start = Instant::now();
    let e =
        LeasedGenerator::open(u, twitter(), &[("datacenter", 1)], Options::default()).unwrap_err();
    (e, start.elapsed())
}

/// A refused port and a port that accepts and never answers:
/// `lease_unavailable` naming the server, within the URL's `timeout_ms`.
pub fn refused_and_silent_servers<S: Subject>() {
    let closed = S::at("127.0.0.1:1");
    let (e, took) = open_error(&format!("{closed}?timeout_ms=2000"));
    assert_eq!(e.code(), "lease_unavailable", "{e}");
    let m = e.to_string();
    assert!(m.contains(&closed), "{m}");
    assert!(m.to_lowercase().contains(S::REFUSED_SAYS), "{m}");
    assert!(took < Duration::from_millis(2500), "{took:?}");

    // A server that accepts and never answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let hung = S::at(&format!("127.0.0.1:{port}"));
    let (e, took) = open_error(&format!("{hung}?timeout_ms=1000"));
    assert_eq!(e.code(), "lease_unavailable", "{e}");
    let m = e.to_string();
    assert!(m.contains(&hung), "{m}");
    assert!(S::TIMEOUT_SAYS.iter().any(|t| m.contains(t)), "{m}");
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_millis(2000),
        "{took:?}"
    );
    drop(silent);
}
