//! The operations scenario every store runs (`ops.rs` for the file store,
//! `ops_stores.rs` for the stores across machines): init, list, a refused and
//! a forced release of a live holder, which then stops; `hwm` kept; a new
//! holder on the slot starts above it. Every wait is bounded.

use std::time::{Duration, Instant};

use snowmint::{ClockBackwards, Options, SystemClock};
use snowmint_lease::ops::{self, OpsError};
use snowmint_lease::{ClaimRequest, LeaseUrl, LeasedGenerator, SlotSpace, SlotState, StoreError};

pub use crate::{time_of, twitter};

/// A namespace of this run and test.
pub fn unique_ns(tag: &str) -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    format!("ops{}-{t}-{tag}", std::process::id())
}

/// Waits out a clock behind a kept `hwm` (up to 10 s) instead of failing.
pub fn patient() -> Options {
    Options {
        clock_backwards: ClockBackwards::Wait { max_units: 10_000 },
        ..Options::default()
    }
}

fn refused(e: OpsError, want: &str) -> String {
    assert_eq!(e.code(), "invalid_option", "{e}");
    let m = e.to_string();
    assert!(m.contains(want), "{m}");
    m
}

/// The whole scenario on `url` (a lease URL whose namespace is new and which
/// renews often: `renew_ms` of a few hundred ms). `expires`: the store has a
/// TTL (every store but the file store).
pub fn operations(url: &str, expires: bool) {
    let ns = LeaseUrl::parse(url).unwrap().settings.namespace.unwrap();
    // init is idempotent; a new namespace holds nothing.
    assert!(!ops::init(url).unwrap().is_empty());
    ops::init(url).unwrap();
    let l = ops::list(url).unwrap();
    assert!(l.spaces.is_empty(), "{l:?}");
    assert!(l.now_ms > 1_700_000_000_000);
    refused(
        ops::release(url, None, 0, false).unwrap_err(),
        "holds no slot space",
    );

    // A live holder.
    let a = LeasedGenerator::open(url, twitter(), &[("datacenter", 1)], patient()).unwrap();
    let a_ids: Vec<u64> = (0..200).map(|_| a.next_id().unwrap().get()).collect();
    let info = a.info();
    let slot = info.slot;
    let l = ops::list(url).unwrap();
    assert_eq!(l.spaces.len(), 1, "{l:?}");
    let space = &l.spaces[0];
    assert_eq!(space.key, info.space_key);
    assert_eq!(space.namespace.as_deref(), Some(ns.as_str()));
    assert_eq!(space.leased, "5@12");
    assert_eq!(space.slots, Some(32));
    assert!(
        space.text.contains("\nfixed_bits=0x20000\n"),
        "{}",
        space.text
    );
    let rec = space.records.iter().find(|r| r.slot == slot).unwrap();
    assert_eq!(rec.state, SlotState::Held, "{rec:?}");
    assert_eq!(rec.counter, info.counter);
    assert_eq!(rec.token.len(), 32);
    assert!(rec.hwm_ms >= time_of(*a_ids.last().unwrap()), "{rec:?}");
    if expires {
        assert!(rec.expires_ms.unwrap() > l.now_ms, "{rec:?} {}", l.now_ms);
    } else {
        assert_eq!(rec.expires_ms, None);
    }

    // Refused without force (the message says until when and what to do);
    // a slot outside the space or an unknown space is refused too.
    let m = refused(
        ops::release(url, None, slot, false).unwrap_err(),
        "pass --force if you know the holder is gone",
    );
    assert!(
        m.contains(if expires {
            "held until 20"
        } else {
            "held while its holder's process lives"
        }),
        "{m}"
    );
    refused(
        ops::release(url, None, 32, true).unwrap_err(),
        "slot 32 is outside space",
    );
    refused(
        ops::release(url, Some("v1-00000000000000000000000000000000"), slot, true).unwrap_err(),
        "no slot space v1-00000000000000000000000000000000",
    );
    // Nothing changed; the holder still issues.
    a.next_id().unwrap();
    assert_eq!(a.info().lost, None);

    // Forced: freed, hwm kept, the holder stops at its next renewal.
    let r = ops::release(url, Some(&info.space_key), slot, true).unwrap();
    let before = r.before.expect("released");
    assert_eq!(before.state, SlotState::Held);
    assert_eq!(before.counter, info.counter);
    let kept = before.hwm_ms;
    let l = ops::list(url).unwrap();
    let rec = l.spaces[0].records.iter().find(|r| r.slot == slot).unwrap();
    assert_eq!(rec.state, SlotState::Free, "{rec:?}");
    assert_eq!(rec.hwm_ms, kept, "hwm kept");
    assert_eq!(rec.counter, info.counter);
    let deadline = Instant::now() + Duration::from_secs(10);
    while a.info().lost.is_none() {
        assert!(
            Instant::now() < deadline,
            "the holder never saw the slot lost"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(a.next_id().unwrap_err().code(), "lease_expired");
    // Everything A issued is at or below the kept hwm.
    let a_max = *a_ids.iter().max().unwrap();
    assert!(time_of(a_max) <= kept);
    // The late renewal of the lost holder did not change the record.
    let l = ops::list(url).unwrap();
    let rec = l.spaces[0].records.iter().find(|r| r.slot == slot).unwrap();
    assert_eq!((rec.state, rec.hwm_ms), (SlotState::Free, kept));
    // A second release has nothing to do.
    assert_eq!(ops::release(url, None, slot, false).unwrap().before, None);

    // A new holder on the slot starts above the kept hwm.
    let b = LeasedGenerator::open_with(
        &LeaseUrl::parse(url).unwrap(),
        twitter(),
        &[("datacenter", 1)],
        patient(),
        Some(slot),
        SystemClock,
    )
    .unwrap();
    assert_eq!(b.slot(), slot);
    assert_eq!(b.info().counter, info.counter + 1);
    let b_id = b.next_id().unwrap().get();
    assert!(b_id > a_max);
    assert!(time_of(b_id) > kept, "{} <= {kept}", time_of(b_id));
    b.close().unwrap();
    let _ = a.close();
    let l = ops::list(url).unwrap();
    let rec = l.spaces[0].records.iter().find(|r| r.slot == slot).unwrap();
    assert_eq!(rec.state, SlotState::Free);
    assert!(rec.hwm_ms >= time_of(b_id));

    // Two spaces in the namespace: release needs --space.
    let c = LeasedGenerator::open(url, twitter(), &[("datacenter", 2)], patient()).unwrap();
    let m = refused(
        ops::release(url, None, c.slot(), true).unwrap_err(),
        "holds 2 slot spaces; name one with --space",
    );
    assert!(m.contains(&info.space_key), "{m}");
    c.close().unwrap();
}

/// A holder that stops renewing (a claim made directly, never renewed):
/// held, then expired by the store's clock; then released without force
/// (hwm kept), and the holder's renewal is lost. `shows_expired`: the store
/// shows the expired claim until the next claim (SQL, Redis); etcd deletes
/// the holder key itself (within about 0.5 s), and the slot is then free.
pub fn expired(url: &str, shows_expired: bool) {
    let u = LeaseUrl::parse(url).unwrap();
    let store = u.open_store().unwrap();
    let space = SlotSpace::new(
        twitter(),
        &[("datacenter", 3)],
        u.settings.namespace.as_deref(),
    )
    .unwrap();
    let c = store
        .claim(
            &space,
            // 3 s: the release below must come while the claim is held,
            // and the operations tests of every store run at once beside
            // other store suites (ZooKeeper's release once came 1 s late).
            &ClaimRequest::new(None, 3000, 500),
        )
        .unwrap();
    let slot = c.holder.slot;
    refused(
        ops::release(url, Some(space.key()), slot, false).unwrap_err(),
        "held until",
    );
    // Expired within the TTL (etcd: whole seconds) and half a second.
    let deadline = Instant::now() + Duration::from_secs(10);
    let rec = loop {
        let l = ops::list(url).unwrap();
        let rec = l.spaces[0]
            .records
            .iter()
            .find(|r| r.slot == slot)
            .unwrap()
            .clone();
        if rec.state != SlotState::Held {
            break rec;
        }
        assert!(Instant::now() < deadline, "never expired: {rec:?}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(rec.hwm_ms, c.hwm_ms);
    let r = ops::release(url, Some(space.key()), slot, false).unwrap();
    if shows_expired {
        assert_eq!(rec.state, SlotState::Expired);
        assert_eq!(r.before.unwrap().state, SlotState::Expired);
    } else if rec.state == SlotState::Expired {
        // Caught between the lease's expiry and etcd's deletion of the key.
        assert_eq!(r.before.map(|b| b.hwm_ms), Some(c.hwm_ms));
    } else {
        assert_eq!(rec.state, SlotState::Free);
        assert_eq!(r.before, None);
    }
    match store.renew(&space, &c.holder, 1000, 500) {
        Err(StoreError::Lost(_)) => {}
        other => panic!("{other:?}"),
    }
    let l = ops::list(url).unwrap();
    let rec = l.spaces[0].records.iter().find(|r| r.slot == slot).unwrap();
    assert_eq!((rec.state, rec.hwm_ms), (SlotState::Free, c.hwm_ms));
}

/// Ten years: the step of a store clock that poisons a slot in [`repair`].
pub const TEN_YEARS_MS: u64 = 10 * 365 * 86_400_000;

fn local_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// The operator's repair of a poisoned slot. The poison is a claim with a
/// window of ten years: it writes the hwm a claim on a store whose clock
/// jumped ten years ahead writes (store time + window), while the holder's
/// own limit would have stayed near its clock. The repair is refused while
/// the claim lives (there is no force for it), and for a TIME below now +
/// window_ms + max_skew_ms or more than an hour above that; once the holder
/// is gone (its TTL ran out, `expires`; the file store: its process's lock
/// went with the store) it frees the slot and sets hwm exactly; the old
/// claim is lost, and a new holder on the slot issues again within seconds,
/// above the new hwm, instead of in ten years.
pub fn repair(url: &str, expires: bool) {
    let u = LeaseUrl::parse(url).unwrap();
    let (window, skew) = (u.settings.window_ms, u.settings.max_skew_ms);
    let mut store = Some(u.open_store().unwrap());
    let fields = [("datacenter", 4)];
    let space = SlotSpace::new(twitter(), &fields, u.settings.namespace.as_deref()).unwrap();
    let key = space.key().to_string();
    let c = store
        .as_ref()
        .unwrap()
        .claim(&space, &ClaimRequest::new(None, 1000, TEN_YEARS_MS))
        .unwrap();
    let (slot, poisoned) = (c.holder.slot, c.hwm_ms);
    assert!(poisoned > local_ms() + TEN_YEARS_MS - 600_000, "{c:?}");
    let record = || {
        let l = ops::list(url).unwrap();
        let s = l.spaces.iter().find(|s| s.key == key).unwrap();
        s.records.iter().find(|r| r.slot == slot).unwrap().clone()
    };

    // Held: refused, whatever TIME; nothing written.
    let good = || local_ms() + window + skew + 500;
    let m = refused(
        ops::reset_hwm(url, Some(&key), slot, good()).unwrap_err(),
        "a reset waits until no holder lives, even with --force",
    );
    assert!(m.contains("held"), "{m}");
    let rec = record();
    assert_eq!(
        (rec.state, rec.hwm_ms),
        (SlotState::Held, poisoned),
        "{rec:?}"
    );

    // TIME out of bounds: refused before the store is asked.
    refused(
        ops::reset_hwm(url, Some(&key), slot, local_ms()).unwrap_err(),
        "is below now + window_ms + max_skew_ms",
    );
    refused(
        ops::reset_hwm(url, Some(&key), slot, good() + ops::RESET_HWM_MAX_AHEAD_MS).unwrap_err(),
        "the slot would stay unusable",
    );

    // The holder goes.
    if expires {
        let deadline = Instant::now() + Duration::from_secs(8);
        while record().state == SlotState::Held {
            assert!(Instant::now() < deadline, "never expired");
            std::thread::sleep(Duration::from_millis(100));
        }
    } else {
        store = None;
    }
    let time = good();
    let r = ops::reset_hwm(url, Some(&key), slot, time).unwrap();
    assert_eq!(r.reset_hwm_ms, Some(time));
    let before = r.before.expect("a record was written");
    assert_eq!(
        (before.counter, before.hwm_ms),
        (c.holder.counter, poisoned)
    );
    let rec = record();
    assert_eq!((rec.state, rec.hwm_ms), (SlotState::Free, time), "{rec:?}");
    // The old claim is lost (the file store's went with its process).
    if let Some(store) = &store {
        match store.renew(&space, &c.holder, 1000, window) {
            Err(StoreError::Lost(_)) => {}
            other => panic!("{other:?}"),
        }
    }

    // A new holder on the slot: above the new hwm, within seconds.
    let b = LeasedGenerator::open_with(&u, twitter(), &fields, patient(), Some(slot), SystemClock)
        .unwrap();
    assert_eq!(b.slot(), slot);
    let id = b.next_id().unwrap().get();
    assert!(time_of(id) > time, "{} <= {time}", time_of(id));
    assert!(time_of(id) < time + 60_000);
    b.close().unwrap();
}
