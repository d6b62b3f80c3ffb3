//! The Redis claim script chooses its slot inside the server (Lua), apart
//! from the Rust rule every other store calls (`snowmint_lease::slot_order`):
//! here the script's choice is compared with the rule's on records written
//! at random (held, expired, free behind or ahead of the clock, missing).

use super::*;
use snowmint_lease::{slot_order, Settings, SlotSeen};

/// The server's clock, Unix ms.
fn server_ms(c: &mut redis::Connection) -> u64 {
    let (s, us): (u64, u64) = redis::cmd("TIME").query(c).unwrap();
    s * 1000 + us / 1000
}

/// Removes the space's keys when the test ends, passed or not.
struct Cleanup(SlotSpace);

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Ok(mut c) = redis_conn() {
            let base = format!("snowmint:lease:{{{}}}", self.0.key());
            let mut keys: Vec<String> = (0..8).map(|n| slot_key(&self.0, n)).collect();
            keys.extend([format!("{base}:space"), format!("{base}:marker")]);
            let _: redis::RedisResult<()> = redis::cmd("DEL").arg(keys).query(&mut c);
        }
    }
}

#[test]
fn the_claim_script_follows_the_slot_rule() {
    ready();
    // A fence of 120 ms after the first claim (the marker is new), so that
    // the records below are counted as written.
    let settings = Settings {
        max_skew_ms: 10,
        redis_max_window_ms: 100,
        timeout_ms: 5_000,
        ..Settings::default()
    };
    let s = RedisStore::with_settings(&server_url(), &settings).unwrap();
    let ns = format!("rule{}", std::process::id());
    let space = SlotSpace::new(three_bits(), &[("datacenter", 9)], Some(&ns)).unwrap();
    let _cleanup = Cleanup(space.clone());
    let req = |prefer| ClaimRequest::new(prefer, 600_000, 50);
    let first = s.claim(&space, &req(None)).unwrap();
    s.release(&space, &first.holder, first.hwm_ms).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let mut c = redis_conn().unwrap();
    let epoch: String = redis::cmd("HGET")
        .arg(format!("snowmint:lease:{{{}}}:marker", space.key()))
        .arg("epoch")
        .query(&mut c)
        .unwrap();
    // A fixed xorshift: the same records at every run.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let mut kinds_seen = [0usize; 6];
    for trial in 0..60 {
        let now = server_ms(&mut c);
        let mut seen = Vec::new();
        for n in 0..8u64 {
            let key = slot_key(&space, n);
            // Far from the clock (a minute), so the calls' own time never
            // moves a record from behind the clock to ahead of it; ties in
            // hwm among the slots ahead.
            let behind = now - 60_000 - next(3) * 1_000;
            let ahead = now + 60_000 + next(3) * 1_000;
            let kind = next(6) as usize;
            kinds_seen[kind] += 1;
            let (token, expires, hwm) = match kind {
                0 => {
                    let _: () = redis::cmd("DEL").arg(&key).query(&mut c).unwrap();
                    continue;
                }
                1 => ("", 0, behind),
                2 => ("", 0, ahead),
                3 => (
                    "held",
                    now + 600_000,
                    if next(2) == 0 { behind } else { ahead },
                ),
                4 => ("expired", now - 1_000, behind),
                _ => ("expired", now - 1_000, ahead),
            };
            let _: () = redis::cmd("HSET")
                .arg(&key)
                .arg(&[
                    ("token", token.to_string()),
                    ("counter", "1".to_string()),
                    ("expires_ms", expires.to_string()),
                    ("hwm_ms", hwm.to_string()),
                    ("epoch", epoch.clone()),
                ])
                .query(&mut c)
                .unwrap();
            seen.push(SlotSeen {
                slot: n,
                free: kind != 3,
                hwm_ms: hwm,
            });
        }
        let prefer = match next(10) {
            8 => None,
            9 => Some(11), // outside the space: ignored
            p => Some(p),
        };
        let want = slot_order(prefer, 8, &seen, server_ms(&mut c))
            .first()
            .copied();
        let got = match s.claim(&space, &req(prefer)) {
            Ok(claim) => Some(claim.holder.slot),
            Err(StoreError::NoFreeSlot) => None,
            Err(e) => panic!("trial {trial}: {e:?}"),
        };
        assert_eq!(
            got, want,
            "trial {trial}: prefer {prefer:?}, records {seen:?}"
        );
    }
    assert!(kinds_seen.iter().all(|&k| k > 0), "{kinds_seen:?}");
}
