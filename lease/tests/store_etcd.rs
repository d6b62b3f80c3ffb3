#![cfg(feature = "etcd")]
//! The etcd store against a real etcd (`SNOWMINT_TEST_ETCD_URL`, e.g.
//! `etcd://127.0.0.1:2379`; `SNOWMINT_STORES=etcd cargo xtask test stores` starts one) and an
//! etcd with authentication (`SNOWMINT_TEST_ETCD_AUTH_URL`,
//! `etcd://root:PASSWORD@127.0.0.1:PORT`). Both must be set: a store is never
//! skipped silently. The contract and fault suites every store runs
//! (`lease/test-support`), then what only etcd has: authentication, a
//! cluster member killed, a marker of another cluster, a snapshot restored
//! into a new cluster. Every test uses
//! namespaces of its own run. Every wait is bounded.

use std::sync::Arc;
use std::time::{Duration, Instant};

use snowmint::Options;
use snowmint_lease::{ClaimRequest, LeaseUrl, LeasedGenerator, SlotSpace, StoreError};
use snowmint_lease_test_support::{contract_suite, fault_suite, now_ms, twitter, Subject};

/// The etcd of `SNOWMINT_TEST_ETCD_URL`.
struct Etcd;

impl Subject for Etcd {
    const NAME: &'static str = "etcd";
    const VAR: &'static str = "ETCD";
    const PROBE: &'static str = env!("CARGO_BIN_EXE_snowmint-lease-probe");
    // The gateway's Date headers: whole seconds.
    const CLOCK_GRAIN_MS: u64 = 1000;
    const CLOCK_SLACK_MS: u64 = 1500;
    // A 300 ms claim is an etcd lease of 1 s, which etcd raises to its
    // minimum (2 s with the default election timeout).
    const SHORT_CLAIM_LASTS: Duration = Duration::from_millis(500);
    // B claims as soon as A's etcd lease (2 s) has expired.
    const PAUSED_FREE_AFTER: Duration = Duration::from_millis(1500);
    const RESTORE_PAUSE: Duration = Duration::from_millis(1100);
    type Ns = String;

    fn ns_on(_server: &str, tag: &str) -> String {
        snowmint_lease_test_support::unique_ns(tag)
    }

    fn describe() -> String {
        format!("etcd://{}", Self::base().trim_start_matches("etcd://"))
    }

    fn at(host_port: &str) -> String {
        format!("etcd://{host_port}")
    }

    fn overwrite_space_text(space: &SlotSpace, text: &str) {
        put(&format!("snowmint/lease/{}/space", space.key()), text);
    }
}

contract_suite!(Etcd, restart, restore);
fault_suite!(Etcd);

/// Writes `key` behind the store's back (the gateway's `/v3/kv/put`).
fn put(key: &str, value: &str) {
    use base64::Engine as _;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let http = Etcd::base().replace("etcd://", "http://");
    let body = format!(r#"{{"key":"{}","value":"{}"}}"#, b64(key), b64(value));
    ureq::post(format!("{http}/v3/kv/put"))
        .send(body)
        .expect("put");
}

fn open_error(u: &str) -> snowmint_lease::LeaseError {
    LeasedGenerator::open(u, twitter(), &[("datacenter", 1)], Options::default()).unwrap_err()
}

fn req() -> ClaimRequest {
    ClaimRequest::new(None, 30_000, 5000)
}

#[test]
fn authentication() {
    let good = Etcd::env("AUTH_URL");
    let (userinfo, host) = good
        .trim_start_matches("etcd://")
        .rsplit_once('@')
        .expect("etcd://user:password@host:port");
    let (user, password) = userinfo.split_once(':').unwrap();
    let n = Etcd::ns("auth");

    let bad = format!("etcd://{user}:wrong-{password}@{host}?namespace={n}&timeout_ms=2000");
    let e = open_error(&bad);
    assert_eq!(e.code(), "lease_unavailable", "{e}");
    let m = e.to_string();
    assert!(
        m.contains(&format!("authentication as '{user}' failed")),
        "{m}"
    );
    assert!(!m.contains(password), "the password leaked: {m}");
    assert!(m.contains(&format!("etcd://{user}:***@{host}")), "{m}");

    // No credentials on a server that requires them.
    let e = open_error(&format!("etcd://{host}?namespace={n}&timeout_ms=2000"));
    assert_eq!(e.code(), "lease_unavailable", "{e}");
    assert!(e.to_string().contains("authentication failed"), "{e}");

    let g = LeasedGenerator::open(
        &format!("{good}?namespace={n}&ttl_ms=3000&renew_ms=200&window_ms=2000"),
        twitter(),
        &[("datacenter", 1)],
        Options::default(),
    )
    .unwrap();
    assert!(!g.info().store.contains(password));
    g.next_id().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while g.info().renewals < 1 {
        assert!(Instant::now() < deadline, "{:?}", g.info());
        std::thread::sleep(Duration::from_millis(50));
    }
    g.close().unwrap();
}

/// A 3-member cluster (`SNOWMINT_TEST_ETCD_CLUSTER_URL` lists the three):
/// holder A issues while the member it talks to (the first listed) is killed
/// with SIGKILL. A's renewals go on through another member (or it runs dry
/// and fails with `lease_expired` meanwhile: closed, never past its confirmed
/// reservation), it never loses its slot, and B, claiming after the kill,
/// gets another slot through the majority. Every ID is unique and inside its
/// holder's confirmed reservation.
#[test]
fn cluster_member_killed_while_a_holder_issues() {
    use snowmint_lease_test_support::faults::{
        assert_unique, assert_within_confirmed, Issued, Issuer,
    };
    let cluster = Etcd::env("CLUSTER_URL");
    let pid_file = Etcd::env("CLUSTER_FIRST_PID_FILE");
    let url = format!(
        "{cluster}?namespace={}&ttl_ms=5000&renew_ms=200&window_ms=1000&timeout_ms=1500",
        Etcd::ns("cluster")
    );
    let a = Issuer::open(&url, None);
    a.wait_info(10, "A's renewals", |i| i.renewals >= 2);
    let pid: libc::pid_t = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: kill(2) on the member xtask/src/stores/etcd.rs started for this
    // test (its pid file); no memory is involved.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let killed = Instant::now();
    let r = a.gen.info().renewals;
    a.wait_info(15, "A's renewals through another member", |i| {
        i.renewals >= r + 3
    });
    let renewed_after = killed.elapsed();
    let b = Issuer::open(&url, None);
    b.wait_info(10, "B's renewal", |i| i.renewals >= 1);
    assert_ne!(a.gen.slot(), b.gen.slot());
    assert!(a.gen.info().lost.is_none(), "{:?}", a.gen.info());
    let (a_gen, b_gen) = (Arc::clone(&a.gen), Arc::clone(&b.gen));
    let (a_out, b_out) = (a.stop(), b.stop());
    for g in [a_gen, b_gen] {
        let Ok(g) = Arc::try_unwrap(g) else {
            panic!("a generator is still shared")
        };
        g.close().unwrap();
    }
    eprintln!(
        "etcd cluster: A renewed 3 times within {renewed_after:?} of the kill; A issued {} IDs \
         (errors {:?}), B {}",
        a_out.ids.len(),
        a_out.errors,
        b_out.ids.len()
    );
    assert_within_confirmed("A", &a_out);
    assert_within_confirmed("B", &b_out);
    let ids = |o: &Issued| o.ids.iter().map(|p| p.0).collect::<Vec<u64>>();
    assert!(!b_out.ids.is_empty());
    assert_unique("A and B", &[&ids(&a_out), &ids(&b_out)]);
}

/// The space's marker names the cluster whose claims the keys record. Keys
/// that came from another cluster (a snapshot restored into a new cluster,
/// keys copied over), written here behind the store's back, fence the next
/// claim even in a process that never saw the store before; a claim older
/// than the fence fails as lost at its renewal.
#[test]
fn marker_of_another_cluster_fences_the_next_claim() {
    use snowmint::FenceCause;
    let n = Etcd::ns("othercluster");
    let s = LeaseUrl::parse(&Etcd::url(&n, "max_skew_ms=100"))
        .unwrap()
        .open_store()
        .unwrap();
    let space = SlotSpace::new(twitter(), &[("datacenter", 3)], Some(&n)).unwrap();
    let a = s.claim(&space, &req()).unwrap();
    assert_eq!(a.fence, None, "{a:?}");
    put(
        &format!("snowmint/lease/{}/marker", space.key()),
        "cluster=12345 window=5000",
    );
    let before = now_ms();
    let b = s.claim(&space, &req()).unwrap();
    assert_eq!(b.fence, Some(FenceCause::StoreChanged), "{b:?}");
    assert!(b.prev_hwm_ms + 1500 >= before + 5200, "{b:?}");
    // The marker now names this cluster: the next claim starts above the
    // same fence, and writes no new one.
    let c = s.claim(&space, &req()).unwrap();
    assert_eq!(c.prev_hwm_ms, b.prev_hwm_ms, "{c:?} {b:?}");
    // A's claim predates the fence: its renewal fails as lost.
    match s.renew(&space, &a.holder, 30_000, 5000) {
        Err(StoreError::Lost(m)) => assert!(m.contains("fenced"), "{m}"),
        other => panic!("A's renewal after the fence: {other:?}"),
    }
    for claim in [&b, &c] {
        s.release(&space, &claim.holder, claim.prev_hwm_ms).unwrap();
    }
}

/// Runs the snapshot member's command (`SNOWMINT_TEST_ETCD_SNAPSHOT_CMD`,
/// written by xtask/src/stores/etcd.rs) with `what`: `save` (`etcdctl
/// snapshot save`), or `restore` (the member stopped, `etcdctl snapshot
/// restore` into a new data directory with another cluster token, the
/// member started there and healthy). The script bounds its own waits.
fn snapshot(what: &str) {
    let cmd = Etcd::env("SNAPSHOT_CMD");
    let out = std::process::Command::new(&cmd).arg(what).output().unwrap();
    assert!(
        out.status.success(),
        "{cmd} {what}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The cluster ID and revision the member at `etcd://HOST:PORT` answers with
/// (the gateway's `/v3/kv/range`, at most 5 s).
fn cluster_and_revision(server: &str) -> (String, u64) {
    let http = server.replace("etcd://", "http://");
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(5)))
        .build()
        .into();
    let body = agent
        .post(format!("{http}/v3/kv/range"))
        .send(r#"{"key":"c25vd21pbnQ="}"#)
        .expect("range")
        .body_mut()
        .read_to_string()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let h = &v["header"];
    (
        h["cluster_id"].as_str().unwrap().to_string(),
        h["revision"].as_str().unwrap().parse().unwrap(),
    )
}

/// A member replaced by one restored from an `etcdctl snapshot save` with
/// `etcdctl snapshot restore` (the member of
/// `SNOWMINT_TEST_ETCD_SNAPSHOT_URL`): a new cluster ID, a lower revision,
/// the writes after the snapshot lost. A claims; a snapshot is saved; then
/// A renews and B claims and renews (both reservations above what the
/// snapshot holds). After the restore the next claim C takes B's slot (free
/// in the snapshot): it is fenced (`StoreChanged`) above B's reservation;
/// A's renewal (its holder key revived by the restore) fails as lost; and a
/// later claim starts above the same fence.
#[test]
fn snapshot_restored_into_a_new_cluster_fences_claims_and_fails_the_holder() {
    use snowmint::FenceCause;
    use snowmint_lease_test_support::restore::after_restart;
    let server = Etcd::env("SNAPSHOT_URL");
    let n = Etcd::ns_on(&server, "snapshot");
    let s = LeaseUrl::parse(&format!("{server}?namespace={n}&max_skew_ms=100"))
        .unwrap()
        .open_store()
        .unwrap();
    let space = SlotSpace::new(twitter(), &[("datacenter", 4)], Some(&n)).unwrap();
    let a = s.claim(&space, &req()).unwrap();
    snapshot("save");
    // The gateway's clock counts whole seconds: past the next one, so that
    // the renewals below reach further than the snapshot's records.
    std::thread::sleep(Etcd::RESTORE_PAUSE);
    let renewed = s.renew(&space, &a.holder, 30_000, 5000).unwrap();
    assert!(renewed.hwm_ms > a.hwm_ms, "{renewed:?} {a:?}");
    let b = s.claim(&space, &req()).unwrap();
    assert_ne!(b.holder.slot, a.holder.slot);
    std::thread::sleep(Etcd::RESTORE_PAUSE);
    let b_renewed = s.renew(&space, &b.holder, 30_000, 5000).unwrap();
    assert!(b_renewed.hwm_ms > b.hwm_ms, "{b_renewed:?} {b:?}");
    let (cluster, revision) = cluster_and_revision(&server);
    snapshot("restore");
    let (new_cluster, new_revision) = cluster_and_revision(&server);
    assert_ne!(new_cluster, cluster);
    assert!(new_revision < revision, "{new_revision} {revision}");

    let before = now_ms();
    let c = after_restart(|| s.claim(&space, &req())).unwrap();
    eprintln!("A {a:?} renewed to {renewed:?}; B {b:?} renewed to {b_renewed:?}; after the restore C {c:?}");
    assert_eq!(
        c.holder.slot, b.holder.slot,
        "B's slot is free in the snapshot"
    );
    assert!(
        c.prev_hwm_ms >= b_renewed.hwm_ms,
        "C {c:?} starts below B's confirmed reservation {b_renewed:?}"
    );
    assert_eq!(c.fence, Some(FenceCause::StoreChanged), "{c:?}");
    // The fence: store time + the largest window (5000) + 2 x max_skew_ms.
    assert!(c.prev_hwm_ms + 1500 >= before + 5200, "{c:?}");
    match s.renew(&space, &a.holder, 30_000, 5000) {
        Err(StoreError::Lost(m)) => {
            assert!(m.contains("cluster") || m.contains("fenced"), "{m}")
        }
        other => panic!("A's renewal after the restore: {other:?}"),
    }
    let d = s.claim(&space, &req()).unwrap();
    assert!(d.prev_hwm_ms >= c.prev_hwm_ms, "{d:?} {c:?}");
    for claim in [&c, &d] {
        s.release(&space, &claim.holder, claim.prev_hwm_ms).unwrap();
    }
}
