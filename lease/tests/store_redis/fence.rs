//! The settings the fence after a data loss relies on: recorded in the
//! space's marker and the init key, and a claim or renewal that counts with
//! others refused; the claim's lower bound on the store's clock. Each test
//! runs its own throwaway redis-server (`Scratch`).

use super::loss::*;
use super::*;
use snowmint_lease::{Claim, ClaimRequest, Holder, LeaseUrl, RenewRequest, Renewal, Settings};

/// The data-loss tests' settings (`LOSS`: redis_max_window_ms 2,000,
/// max_skew_ms 500) with `from` replaced by `to`.
fn loss_with(from: &str, to: &str) -> String {
    assert!(LOSS.contains(from), "{from}");
    LOSS.replace(from, to)
}

/// The store at `server` with `opts` (a lease URL's query).
fn store_with(server: &Scratch, opts: &str) -> RedisStore {
    RedisStore::with_settings(
        &format!("redis://127.0.0.1:{}/0", server.port),
        &settings_of(server, opts),
    )
    .unwrap()
}

fn settings_of(server: &Scratch, opts: &str) -> Settings {
    LeaseUrl::parse(&server.url(opts)).unwrap().settings
}

#[track_caller]
fn refused<T: std::fmt::Debug>(r: Result<T, StoreError>) -> String {
    match r {
        Err(StoreError::Refused(m)) => m,
        other => panic!("expected Refused, got {other:?}"),
    }
}

fn marker_field(server: &Scratch, space: &SlotSpace, name: &str) -> Option<String> {
    redis::cmd("HGET")
        .arg(format!("snowmint:lease:{{{}}}:marker", space.key()))
        .arg(name)
        .query(&mut server.conn().unwrap())
        .unwrap()
}

/// The marker records redis_max_window_ms, max_skew_ms and the latency
/// allowance; a claim or a renewal whose max_skew_ms or
/// redis_max_window_ms differs is refused, naming both values (through the
/// driver: `lease_unavailable`).
#[test]
fn differing_fence_settings_are_refused() {
    let server = Scratch::start("redis-settings", &[]);
    let s = loss_store(&server);
    let space = SlotSpace::new(three_bits(), &[("datacenter", 5)], Some("loss")).unwrap();
    let h = s.claim(&space, &req(60_000, 1_000)).unwrap();
    assert_eq!(
        marker_field(&server, &space, "max_window_ms").unwrap(),
        "2000"
    );
    assert_eq!(marker_field(&server, &space, "max_skew_ms").unwrap(), "500");
    assert_eq!(marker_field(&server, &space, "latency_ms").unwrap(), "0");

    // Another max_skew_ms: its fence after a loss would not cover ours.
    let skew_opts = loss_with("max_skew_ms=500", "max_skew_ms=600");
    let skew = store_with(&server, &skew_opts);
    let m = refused(skew.claim(&space, &req(60_000, 1_000)));
    assert!(
        m.contains("max_skew_ms=500") && m.contains("max_skew_ms=600"),
        "{m}"
    );
    // A renewal counting another skew is refused too (nothing written).
    let m = refused(skew.renew(&space, &h.holder, 60_000, 1_000));
    assert!(
        m.contains("max_skew_ms=500") && m.contains("max_skew_ms=600"),
        "{m}"
    );
    // Another redis_max_window_ms.
    let wide = store_with(
        &server,
        &loss_with("redis_max_window_ms=2000", "redis_max_window_ms=2500"),
    );
    let m = refused(wide.claim(&space, &req(60_000, 1_000)));
    assert!(
        m.contains("redis_max_window_ms=2000") && m.contains("redis_max_window_ms=2500"),
        "{m}"
    );
    let m = refused(wide.renew(&space, &h.holder, 60_000, 1_000));
    assert!(m.contains("redis_max_window_ms=2500"), "{m}");
    // Through the driver: lease_unavailable, naming the settings.
    let e = LeasedGenerator::open(
        &server.url(&skew_opts),
        three_bits(),
        &[("datacenter", 5)],
        Options::default(),
    )
    .unwrap_err();
    assert_eq!(e.code(), "lease_unavailable", "{e}");
    assert!(e.to_string().contains("max_skew_ms=600"), "{e}");
    // The same settings still claim and renew.
    s.renew(&space, &h.holder, 60_000, 1_000).unwrap();
    s.claim(&space, &req(60_000, 1_000)).unwrap();
}

/// A marker written before it recorded the settings (an older version,
/// here: the fields deleted) cannot tell what its holders counted: the
/// next claim fences the space anew and starts an epoch, so those holders
/// are lost; the new marker records the settings.
#[test]
fn markers_without_the_settings_are_fenced_anew() {
    let server = Scratch::start("redis-oldmarker", &[]);
    let s = loss_store(&server);
    let space = SlotSpace::new(three_bits(), &[("datacenter", 5)], Some("loss")).unwrap();
    let old = s.claim(&space, &req(60_000, 1_000)).unwrap();
    let marker = format!("snowmint:lease:{{{}}}:marker", space.key());
    server.cmd(&["HDEL", &marker, "max_skew_ms", "latency_ms"]);
    let before = s.now_ms().unwrap();
    let new = s.claim(&space, &req(60_000, 1_000)).unwrap();
    // redis_max_window_ms 2,000 + 2 * max_skew_ms 500 + latency 0.
    assert!(new.prev_hwm_ms >= before + 3_000, "{new:?}");
    assert_eq!(
        new.fence,
        Some(snowmint::FenceCause::StoreForgot),
        "{new:?}"
    );
    assert_eq!(marker_field(&server, &space, "max_skew_ms").unwrap(), "500");
    is_lost(s.renew(&space, &old.holder, 60_000, 1_000));
    s.renew(&space, &new.holder, 60_000, 1_000).unwrap();
}

/// The init key records the settings its fence was counted with; a claim
/// trusts it only if they cover its own (else it fences the space itself),
/// and `lease init` with larger settings rewrites it with the larger of
/// each and a fence counted with them.
#[test]
fn the_init_key_records_its_settings() {
    let server = Scratch::start("redis-initsettings", &[]);
    let s = loss_store(&server);
    let space = |ns: &str| SlotSpace::new(three_bits(), &[("datacenter", 5)], Some(ns)).unwrap();
    let init_field = |name: &str| -> u64 {
        redis::cmd("HGET")
            .arg("snowmint:lease:init")
            .arg(name)
            .query(&mut server.conn().unwrap())
            .unwrap()
    };
    let wait_past = |ms: u64| {
        let deadline = Instant::now() + Duration::from_secs(10);
        while s.now_ms().unwrap() <= ms {
            assert!(Instant::now() < deadline);
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    s.init().unwrap();
    assert_eq!(init_field("max_window_ms"), 2000);
    assert_eq!(init_field("max_skew_ms"), 500);
    assert_eq!(init_field("latency_ms"), 0);
    wait_past(init_field("fence_ms"));
    assert_eq!(
        s.claim(&space("a"), &req(60_000, 1_000))
            .unwrap()
            .prev_hwm_ms,
        0
    );

    // A larger max_skew_ms than the init key's: not vouched for.
    let big = store_with(&server, &loss_with("max_skew_ms=500", "max_skew_ms=600"));
    let before = big.now_ms().unwrap();
    let c = big.claim(&space("b"), &req(60_000, 1_000)).unwrap();
    assert!(c.prev_hwm_ms >= before + 2_000 + 1_200, "{c:?}");
    // `lease init` with it: rewritten, the larger of each, a new fence.
    let before = big.now_ms().unwrap();
    big.init().unwrap();
    assert_eq!(init_field("max_skew_ms"), 600);
    let fence = init_field("fence_ms");
    assert!(fence >= before + 3_200, "fence {fence}, now {before}");
    wait_past(fence);
    assert_eq!(
        big.claim(&space("c"), &req(60_000, 1_000))
            .unwrap()
            .prev_hwm_ms,
        0
    );
    // The smaller settings are covered: kept.
    s.init().unwrap();
    assert_eq!(init_field("max_skew_ms"), 600);
    assert_eq!(init_field("fence_ms"), fence);
}

/// The claim script refuses a server whose `TIME` is below the claim's
/// lower bound, before writing anything.
#[test]
fn a_claim_below_its_lower_bound_is_refused() {
    let server = Scratch::start("redis-lowbound", &[]);
    let s = loss_store(&server);
    let space = SlotSpace::new(three_bits(), &[("datacenter", 5)], Some("loss")).unwrap();
    let now = s.now_ms().unwrap();
    let low = |min_store_ms| ClaimRequest {
        min_store_ms,
        ..req(60_000, 1_000)
    };
    let m = refused(s.claim(&space, &low(now + 60_000)));
    assert!(m.contains("below this claim's lower bound"), "{m}");
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("snowmint:lease:*")
        .query(&mut server.conn().unwrap())
        .unwrap();
    assert!(keys.is_empty(), "written: {keys:?}");
    s.claim(&space, &low(now)).unwrap();
}

/// The system clock moved by a fixed offset.
struct Ahead(u64);

impl snowmint::Clock for Ahead {
    fn now_ms(&self) -> u64 {
        SystemClock.now_ms() + self.0
    }
    fn wait_until(&self, ms: u64) -> bool {
        SystemClock.wait_until(ms.saturating_sub(self.0))
    }
}

/// A name that moves between the skew check and the claim: the skew check
/// reads a server whose clock agrees with the claimer's, the claim runs on
/// one 10 s behind (the real `Scratch`, the claimer's clock 10 s ahead).
struct Moved(RedisStore);

impl Store for Moved {
    fn describe(&self) -> String {
        self.0.describe()
    }
    fn now_ms(&self) -> Result<u64, StoreError> {
        Ok(self.0.now_ms()? + 10_000)
    }
    fn claim(&self, space: &SlotSpace, req: &ClaimRequest) -> Result<Claim, StoreError> {
        self.0.claim(space, req)
    }
    fn renew_within(&self, space: &SlotSpace, r: &RenewRequest<'_>) -> Result<Renewal, StoreError> {
        self.0.renew_within(space, r)
    }
    fn release(&self, space: &SlotSpace, h: &Holder, last_ms: u64) -> Result<(), StoreError> {
        self.0.release(space, h, last_ms)
    }
}

/// The driver passes its clock at the claim's send time minus max_skew_ms
/// as the lower bound: a claim that reaches a server 10 s behind the one
/// its skew check read is refused (its fence after a loss would be counted
/// 10 s too low), and nothing is written.
#[test]
fn a_claim_on_a_server_behind_the_skew_check_is_refused() {
    let server = Scratch::start("redis-moved", &[]);
    let g = LeasedGenerator::with_store(
        Arc::new(Moved(loss_store(&server))),
        settings_of(&server, LOSS),
        three_bits(),
        &[("datacenter", 5)],
        Options::default(),
        None,
        Ahead(10_000),
    );
    let e = g.expect_err("claimed on a server 10 s behind");
    assert_eq!(e.code(), "lease_unavailable", "{e}");
    assert!(e.to_string().contains("lower bound"), "{e}");
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("snowmint:lease:*")
        .query(&mut server.conn().unwrap())
        .unwrap();
    assert!(keys.is_empty(), "written: {keys:?}");
}
