//! Fault scenarios every network store shares, each built so that it fails
//! when the fencing it tests is removed: a reservation window longer than
//! the TTL (so "the successor is above" cannot hold by wall time alone), a
//! holder still issuing inside its confirmed reservation while its successor
//! runs, replies lost or held back by a [`Proxy`]. Every wait is bounded.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use snowmint_lease::{Claim, ClaimRequest, LeaseUrl, SlotSpace, Store};

use super::*;

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
        let store = LeaseUrl::parse(&format!("{base}?namespace={ns}"))
            .unwrap()
            .open_store()
            .unwrap();
        let space = SlotSpace::new(twitter(), &[("datacenter", 1)], Some(ns)).unwrap();
        let claims = (0..32)
            .filter(|&s| s != keep)
            .map(|slot| {
                let req = ClaimRequest {
                    prefer: Some(slot),
                    ttl_ms: 60_000,
                    window_ms: 1_000,
                };
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

/// A namespace on a shared Redis whose keys are deleted on drop (the
/// space's and its slots').
#[cfg(feature = "redis")]
pub struct RedisNs(pub String, String);

#[cfg(feature = "redis")]
impl RedisNs {
    pub fn new(server: &str, ns: String) -> RedisNs {
        RedisNs(ns, server.to_string())
    }
}

#[cfg(feature = "redis")]
impl Drop for RedisNs {
    fn drop(&mut self) {
        let Ok(mut c) = redis::Client::open(self.1.as_str())
            .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(5)))
        else {
            return;
        };
        let spaces: Vec<String> = redis::cmd("KEYS")
            .arg("snowmint:lease:*:space")
            .query(&mut c)
            .unwrap_or_default();
        for key in spaces {
            let text: Option<String> = redis::cmd("GET").arg(&key).query(&mut c).unwrap_or(None);
            if text.is_some_and(|t| t.contains(&format!("\nnamespace={}", self.0))) {
                let base = key.trim_end_matches(":space");
                let mut keys: Vec<String> = redis::cmd("KEYS")
                    .arg(format!("{base}:slot:*"))
                    .query(&mut c)
                    .unwrap_or_default();
                keys.push(key.clone());
                let _: redis::RedisResult<()> = redis::cmd("DEL").arg(keys).query(&mut c);
            }
        }
    }
}
