//! Data loss: the store fails closed when Redis forgets. Each test runs its
//! own throwaway redis-server (never the shared one: these flush, kill and
//! reconfigure it). In the `store_redis` test binary, beside the suites.

use super::*;

/// A throwaway `redis-server` on a free port, no persistence unless `args`
/// asks, killed on drop; `restart` starts it again on the same port and dir.
pub(crate) struct Scratch {
    pub(crate) child: Option<Child>,
    pub(crate) port: u16,
    pub(crate) dir: std::path::PathBuf,
    pub(crate) args: Vec<String>,
}

impl Scratch {
    pub(crate) fn start(name: &str, args: &[&str]) -> Scratch {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut s = Scratch {
            child: None,
            port,
            dir: temp_dir(name),
            args: args.iter().map(|a| a.to_string()).collect(),
        };
        s.spawn();
        s
    }

    pub(crate) fn spawn(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .args(&self.args)
            .arg("--dir")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server must be installed for the data-loss tests");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while self
            .conn()
            .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c))
            .is_err()
        {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL (nothing saved on the way out) and wait.
    pub(crate) fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub(crate) fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    pub(crate) fn conn(&self) -> redis::RedisResult<redis::Connection> {
        redis::Client::open(format!("redis://127.0.0.1:{}/0", self.port))?
            .get_connection_with_timeout(Duration::from_secs(2))
    }

    pub(crate) fn cmd(&self, args: &[&str]) -> redis::Value {
        let mut c = redis::cmd(args[0]);
        for a in &args[1..] {
            c.arg(*a);
        }
        c.query(&mut self.conn().unwrap()).unwrap()
    }

    pub(crate) fn url(&self, opts: &str) -> String {
        format!("redis://127.0.0.1:{}/0?{opts}", self.port)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The data-loss tests' settings: reservations of 1.5 s renewed every
/// second, and a fence of redis_max_window_ms + 2 * max_skew_ms = 3 s.
pub(crate) const LOSS: &str = "namespace=loss&ttl_ms=4000&renew_ms=1000&window_ms=1500\
                    &redis_max_window_ms=2000&max_skew_ms=500&timeout_ms=1000";

/// Issues IDs from `g` on a thread until its lease is lost (bounded).
pub(crate) fn issue_until_lost(
    g: Arc<LeasedGenerator>,
) -> std::thread::JoinHandle<(Vec<u64>, Option<String>)> {
    // The first claim on a server no `lease init` vouched for is fenced:
    // nothing until the clock passed the fence.
    let mut ids = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while ids.len() < 10 {
        assert!(
            Instant::now() < deadline,
            "A issued nothing: {:?}",
            g.info()
        );
        match g.next_id() {
            Ok(id) => ids.push(id.get()),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Some(lost) = g.info().lost {
                return (ids, Some(lost));
            }
            match g.next_id() {
                Ok(id) => ids.push(id.get()),
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
            if ids.len() % 64 == 0 {
                // Many IDs a millisecond, not every core of a shared machine.
                std::thread::sleep(Duration::from_micros(200));
            }
        }
        (ids, None)
    })
}

/// Holder A (in this process, through a proxy) issues on slot 0; right after
/// one of its renewals the proxy is cut and `lose` makes the server forget,
/// so A keeps issuing inside its confirmed reservation (1.5 s) while B (a
/// probe process, straight to the server) claims and issues for 4.5 s. B
/// must get A's slot and issue only above the fence, A must be lost at its
/// first renewal once the proxy is back, and no ID may be issued twice.
pub(crate) fn holders_across_a_loss(server: &mut Scratch, lose: &dyn Fn(&mut Scratch) -> u16) {
    use_probe(Redis::PROBE);
    let url = server.url(LOSS);
    let (proxy, a_url) = Proxy::for_url(&url);
    let a = Arc::new(
        LeasedGenerator::open(&a_url, twitter(), &[("datacenter", 5)], Options::default()).unwrap(),
    );
    assert_eq!(a.slot(), 0, "{:?}", a.info());
    let a_thread = issue_until_lost(Arc::clone(&a));
    // Right after a renewal: the loss and B's claim fall inside A's
    // confirmed reservation, before A's next renewal.
    let r = a.info().renewals;
    let deadline = Instant::now() + Duration::from_secs(10);
    while a.info().renewals == r {
        assert!(Instant::now() < deadline, "no renewal: {:?}", a.info());
        std::thread::sleep(Duration::from_millis(2));
    }
    proxy.cut();
    let lost_at = local_ms();
    // The server B claims from: the same, or a promoted replica.
    let b_port = lose(server);
    let url = url.replace(&format!(":{}/", server.port), &format!(":{b_port}/"));
    let b = Probe::spawn(
        &url,
        &[
            "--fixed",
            "datacenter=5",
            "--run-ms",
            "4500",
            "--interval-ms",
            "1",
        ],
    );
    let b_out = b.finish(30);
    assert_eq!(
        value(&b_out, "slot"),
        Some(0),
        "B takes A's slot: {b_out:?}"
    );
    let fence: u64 = redis::cmd("HGET")
        .arg(format!(
            "snowmint:lease:{{{}}}:marker",
            SlotSpace::new(twitter(), &[("datacenter", 5)], Some("loss"))
                .unwrap()
                .key()
        ))
        .arg("fence_ms")
        .query(
            &mut redis::Client::open(url.as_str())
                .unwrap()
                .get_connection()
                .unwrap(),
        )
        .unwrap();
    assert!(fence >= lost_at + 2_000, "fence {fence}, loss at {lost_at}");
    // B's only failures: its clock behind the fence at first.
    for e in errors(&b_out) {
        assert!(e.starts_with("lease_fenced "), "{e}");
    }
    let b_ids = ids(&b_out);
    assert!(b_ids.len() >= 100, "B issued {}: {b_out:?}", b_ids.len());
    proxy.restore();
    let (a_ids, lost) = a_thread.join().unwrap();
    assert!(lost.is_some(), "A was never lost: {:?}", a.info());
    let a_max = *a_ids.iter().max().unwrap();
    let b_min = *b_ids.iter().min().unwrap();
    eprintln!(
        "A issued {} IDs (last at {} ms), B {} (first at {} ms), fence {fence}, A lost: {lost:?}",
        a_ids.len(),
        time_of(a_max),
        b_ids.len(),
        time_of(b_min),
    );
    let a_set: HashSet<u64> = a_ids.iter().copied().collect();
    let twice = b_ids.iter().filter(|id| a_set.contains(id)).count();
    assert_eq!(twice, 0, "{twice} of B's IDs were issued by A too");
    assert!(
        time_of(b_min) > fence,
        "B's first ID is not above the fence"
    );
    assert!(b_min > a_max, "B's first ID is not above A's last");
    assert_eq!(a_set.len(), a_ids.len());
}

#[test]
fn flushall_while_holders_run() {
    let mut server = Scratch::start("redis-flush", &[]);
    holders_across_a_loss(&mut server, &|s| {
        s.cmd(&["FLUSHALL"]);
        s.port
    });
}

#[test]
fn restart_without_persistence_while_holders_run() {
    let mut server = Scratch::start("redis-restart", &[]);
    holders_across_a_loss(&mut server, &|s| {
        s.restart();
        s.port
    });
}

/// The server restarts from an RDB snapshot taken before A's claim: slot 0
/// comes back free with an older `hwm`, and the marker names the old server.
#[test]
fn restart_from_an_old_snapshot_while_holders_run() {
    let mut server = Scratch::start("redis-rdb", &["--dbfilename", "dump.rdb"]);
    // An earlier holder of slot 0, released; then the snapshot.
    earlier_holder(&server);
    server.cmd(&["SAVE"]);
    holders_across_a_loss(&mut server, &|s| {
        s.restart();
        s.port
    });
}

/// An earlier holder of slot 0 on `server`, which issues and releases it
/// (the space, its marker and slot 0's record exist from then on).
pub(crate) fn earlier_holder(server: &Scratch) {
    let x = LeasedGenerator::open(
        &server.url(LOSS),
        twitter(),
        &[("datacenter", 5)],
        Options::default(),
    )
    .unwrap();
    // The first claim on a server no `lease init` vouched for is fenced.
    let deadline = Instant::now() + Duration::from_secs(10);
    while x.next_id().is_err() {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(20));
    }
    x.close().unwrap();
}

/// A replica of `primary` that holds its data as of now, then is detached
/// (promoted: `REPLICAOF NO ONE`), so it misses every later write.
pub(crate) fn stale_replica(primary: &Scratch, name: &str) -> Scratch {
    let replica = Scratch::start(
        name,
        &[
            "--replicaof",
            "127.0.0.1",
            &primary.port.to_string(),
            "--repl-diskless-sync-delay",
            "0",
        ],
    );
    wait_for_link(&replica);
    replica.cmd(&["REPLICAOF", "NO", "ONE"]);
    replica
}

/// Waits until the replica `s` has loaded its primary's data.
pub(crate) fn wait_for_link(s: &Scratch) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let info: String = redis::cmd("INFO")
            .arg("replication")
            .query(&mut s.conn().unwrap())
            .unwrap();
        if info.contains("master_link_status:up") && info.contains("master_sync_in_progress:0") {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the replica did not sync: {info}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A failover to a replica that missed A's claim: B claims on the promoted
/// replica, whose marker names the old primary. The old primary becomes its
/// replica (as Sentinel reconfigures it; writable, so that A's renewals,
/// still routed there, read the new primary's records as they would after
/// following the failover).
#[test]
fn failover_to_a_replica_that_missed_writes() {
    let mut server = Scratch::start("redis-failover", &["--repl-diskless-sync-delay", "0"]);
    earlier_holder(&server);
    let replica = stale_replica(&server, "redis-failover-replica");
    holders_across_a_loss(&mut server, &|s| {
        s.cmd(&["CONFIG", "SET", "replica-read-only", "no"]);
        s.cmd(&["REPLICAOF", "127.0.0.1", &replica.port.to_string()]);
        wait_for_link(s);
        replica.port
    });
}

/// The same server (same `run_id`) loses writes: it becomes a replica of a
/// stale copy (a full resync replaces its data) and is promoted again, as in
/// a failover and back. Only its `master_replid` tells.
#[test]
fn resync_from_a_stale_copy_keeps_the_run_id_but_not_the_replid() {
    let mut server = Scratch::start("redis-resync", &["--repl-diskless-sync-delay", "0"]);
    earlier_holder(&server);
    let copy = stale_replica(&server, "redis-resync-copy");
    let run_id = |s: &Scratch| -> String {
        let info: String = redis::cmd("INFO")
            .arg("server")
            .query(&mut s.conn().unwrap())
            .unwrap();
        info.lines()
            .find_map(|l| l.strip_prefix("run_id:"))
            .unwrap()
            .trim()
            .to_string()
    };
    let before = run_id(&server);
    holders_across_a_loss(&mut server, &|s| {
        s.cmd(&["REPLICAOF", "127.0.0.1", &copy.port.to_string()]);
        wait_for_link(s);
        s.cmd(&["REPLICAOF", "NO", "ONE"]);
        s.port
    });
    assert_eq!(run_id(&server), before);
}

#[test]
fn evicting_servers_are_refused_unless_allowed() {
    let server = Scratch::start(
        "redis-evict",
        &["--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"],
    );
    let open = |opts: &str| {
        LeasedGenerator::open(
            &server.url(&format!("namespace=evict&{opts}")),
            three_bits(),
            &[("datacenter", 5)],
            Options::default(),
        )
    };
    let e = open("").unwrap_err();
    assert_eq!(e.code(), "lease_unavailable", "{e}");
    let m = e.to_string();
    assert!(m.contains("maxmemory-policy is allkeys-lru"), "{m}");
    assert!(m.contains("redis_allow_eviction=true"), "{m}");
    // A refusal names the configuration, not a store that did not answer.
    assert!(m.contains("cannot keep leases safe as configured"), "{m}");
    assert!(!m.contains("did not answer"), "{m}");
    let e = open("redis_allow_eviction=maybe").unwrap_err();
    assert_eq!(e.code(), "invalid_option", "{e}");
    let e = snowmint_lease::ops::init(&server.url("")).unwrap_err();
    assert!(e.to_string().contains("allkeys-lru"), "{e}");

    // Opted out: served, and a slot without a record (maybe evicted) is
    // fenced anew on every claim.
    let settings =
        snowmint_lease::LeaseUrl::parse(&server.url(
            "namespace=evict&redis_allow_eviction=true&redis_max_window_ms=2000&max_skew_ms=500",
        ))
        .unwrap()
        .settings;
    let s = RedisStore::with_settings(&format!("redis://127.0.0.1:{}/0", server.port), &settings)
        .unwrap();
    snowmint_lease::ops::init(&server.url("redis_allow_eviction=true")).unwrap();
    let space = SlotSpace::new(three_bits(), &[("datacenter", 5)], Some("evict")).unwrap();
    let before = s.now_ms().unwrap();
    let first = s.claim(&space, &req(60_000, 1_000)).unwrap();
    assert!(first.prev_hwm_ms >= before + 3_000, "{first:?}");
    // Once the clock passed that fence, the next slot without a record is
    // fenced again: it may have been evicted while held.
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.now_ms().unwrap() <= first.prev_hwm_ms {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(50));
    }
    let before = s.now_ms().unwrap();
    let second = s.claim(&space, &req(60_000, 1_000)).unwrap();
    assert_ne!(second.holder.slot, first.holder.slot);
    assert!(second.prev_hwm_ms >= before + 3_000, "{second:?}");
    // Every holder of a space must use the same redis_max_window_ms and
    // max_skew_ms (lease/tests/store_redis/fence.rs).
    let e = open("redis_allow_eviction=true").unwrap_err();
    assert!(e.to_string().contains("redis_max_window_ms=2000"), "{e}");
    let small = "redis_max_window_ms=2000&max_skew_ms=500&window_ms=1000&renew_ms=300";
    open(&format!("redis_allow_eviction=true&{small}"))
        .unwrap()
        .close()
        .unwrap();

    // A policy that never evicts keys without a TTL is served.
    server.cmd(&["CONFIG", "SET", "maxmemory-policy", "volatile-lru"]);
    open(small).unwrap().close().unwrap();
}

/// A layout whose `worker` field has `bits` bits.
pub(crate) fn wide(bits: u32) -> Layout {
    Layout::new(
        1288834974657,
        1,
        &[
            ("timestamp", 41),
            ("datacenter", 1),
            ("worker", bits),
            ("sequence", 4),
        ],
    )
    .unwrap()
}

#[test]
fn wide_spaces_are_capped_and_the_widest_claim_is_quick() {
    let server = Scratch::start("redis-wide", &[]);
    let s = RedisStore::new(&format!("redis://127.0.0.1:{}/0", server.port), 5_000).unwrap();
    let space = SlotSpace::new(wide(15), &[("datacenter", 1)], Some("wide")).unwrap();
    match s.claim(&space, &req(60_000, 1_000)) {
        Err(StoreError::Refused(m)) => {
            assert!(m.contains("32768 values"), "{m}");
            assert!(m.contains("at most 16384"), "{m}");
        }
        other => panic!("{other:?}"),
    }
    // 14 bits: the first claim is fenced (no `lease init`), so every slot is
    // ahead of the clock and the script reads all 16,384: the worst case.
    let space = SlotSpace::new(wide(14), &[("datacenter", 1)], Some("wide")).unwrap();
    let mut worst = Duration::ZERO;
    for _ in 0..3 {
        let start = Instant::now();
        s.claim(&space, &req(60_000, 1_000)).unwrap();
        worst = worst.max(start.elapsed());
    }
    eprintln!("a claim reading 16,384 slots took at most {worst:?}");
    assert!(worst < Duration::from_millis(1_000), "{worst:?}");
}

/// `lease init` on a server: new spaces claimed within its own fence wait
/// for it (a wipe just before may have left live holders), later ones start
/// at once; a space that has records but no marker (written before markers
/// existed, or its marker lost) is fenced; a window above
/// redis_max_window_ms is refused.
#[test]
fn init_vouches_for_new_spaces_after_its_fence() {
    let server = Scratch::start("redis-init", &[]);
    let opts = "redis_max_window_ms=2000&max_skew_ms=500";
    let s = RedisStore::with_settings(
        &format!("redis://127.0.0.1:{}/0", server.port),
        &snowmint_lease::LeaseUrl::parse(&server.url(opts))
            .unwrap()
            .settings,
    )
    .unwrap();
    let before = s.now_ms().unwrap();
    s.init().unwrap();
    let space = |ns: &str| SlotSpace::new(three_bits(), &[("datacenter", 5)], Some(ns)).unwrap();
    let early = s.claim(&space("early"), &req(60_000, 1_000)).unwrap();
    assert!(early.prev_hwm_ms >= before + 3_000, "{early:?}");
    // Idempotent: a second init keeps the fence.
    s.init().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.now_ms().unwrap() <= early.prev_hwm_ms {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(50));
    }
    let late = s.claim(&space("late"), &req(60_000, 1_000)).unwrap();
    assert_eq!(late.prev_hwm_ms, 0, "{late:?}");

    // The marker gone, the records kept: fenced, though init vouched.
    server.cmd(&[
        "DEL",
        &format!("snowmint:lease:{{{}}}:marker", space("late").key()),
    ]);
    let before = s.now_ms().unwrap();
    let again = s.claim(&space("late"), &req(60_000, 1_000)).unwrap();
    assert!(again.prev_hwm_ms >= before + 3_000, "{again:?}");

    match s.claim(&space("late"), &req(60_000, 2_001)) {
        Err(StoreError::Refused(m)) => {
            assert!(m.contains("above redis_max_window_ms (2000)"), "{m}")
        }
        other => panic!("{other:?}"),
    }
}

/// The store at `server` with the data-loss tests' settings (`LOSS`).
pub(crate) fn loss_store(server: &Scratch) -> RedisStore {
    let settings = snowmint_lease::LeaseUrl::parse(&server.url(LOSS))
        .unwrap()
        .settings;
    RedisStore::with_settings(&format!("redis://127.0.0.1:{}/0", server.port), &settings).unwrap()
}

#[track_caller]
pub(crate) fn is_lost<T: std::fmt::Debug>(r: Result<T, StoreError>) -> String {
    match r {
        Err(StoreError::Lost(m)) => m,
        other => panic!("expected Lost, got {other:?}"),
    }
}

/// A rollback brings back a replaced holder's record: H1 claims slot 0, the
/// server saves, H1 expires and H2 claims slot 0, then the server is killed
/// and restarts from the old dump, so H1's record (token and counter
/// included) is back and H2's is gone. H1 must be lost, before a new claim
/// (the marker names the old server) and after it (the record carries the
/// old epoch), and the new claim starts above the fence, above H2's `hwm`.
#[test]
fn a_holder_brought_back_by_a_rollback_is_lost() {
    let mut server = Scratch::start("redis-rollback", &["--dbfilename", "dump.rdb"]);
    let s = loss_store(&server);
    let space = SlotSpace::new(three_bits(), &[("datacenter", 5)], Some("loss")).unwrap();
    let at_zero = |ttl_ms| ClaimRequest::new(Some(0), ttl_ms, 1_000);
    let h1 = s.claim(&space, &at_zero(300)).unwrap();
    assert_eq!(h1.holder.slot, 0);
    server.cmd(&["SAVE"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.now_ms().unwrap() <= h1.expires_ms.unwrap() {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(20));
    }
    let h2 = s.claim(&space, &at_zero(60_000)).unwrap();
    assert_eq!(h2.holder.slot, 0, "{h2:?}");
    let h2_hwm = s.renew(&space, &h2.holder, 60_000, 1_000).unwrap().hwm_ms;

    server.restart();
    // A new connection (the old one died with the server).
    let s = loss_store(&server);
    assert_eq!(field_at(&server, &space, "token"), h1.holder.token);
    // Before any new claim: the marker names the old server.
    let m = is_lost(s.renew(&space, &h1.holder, 60_000, 1_000));
    assert!(m.contains("lost data"), "{m}");
    is_lost(s.release(&space, &h1.holder, 0));

    // A new claim (of slot 1: H1's record stays in slot 0) is fenced:
    // redis_max_window_ms 2,000 + 2 * max_skew_ms 500, above H2's hwm.
    let before = s.now_ms().unwrap();
    let h3 = s
        .claim(
            &space,
            &ClaimRequest {
                prefer: Some(1),
                ..at_zero(60_000)
            },
        )
        .unwrap();
    assert_eq!(h3.holder.slot, 1, "{h3:?}");
    assert!(h3.prev_hwm_ms >= before + 3_000, "{h3:?}");
    assert!(h3.prev_hwm_ms > h2_hwm, "{h3:?}, H2's hwm {h2_hwm}");
    // The marker names this server now, with the new epoch; H1's record
    // (token and counter still matching) carries the old one.
    assert_eq!(field_at(&server, &space, "token"), h1.holder.token);
    let m = is_lost(s.renew(&space, &h1.holder, 60_000, 1_000));
    assert!(m.contains("lost data"), "{m}");
    is_lost(s.release(&space, &h1.holder, 0));
    // H3, claimed under the new epoch, renews and releases.
    s.renew(&space, &h3.holder, 60_000, 1_000).unwrap();
    s.release(&space, &h3.holder, h3.hwm_ms).unwrap();
}

/// Slot 0's field `name` on `server`.
pub(crate) fn field_at(server: &Scratch, space: &SlotSpace, name: &str) -> String {
    redis::cmd("HGET")
        .arg(slot_key(space, 0))
        .arg(name)
        .query(&mut server.conn().unwrap())
        .unwrap()
}

/// The fence after a wipe is at least store time + redis_max_window_ms + 2 *
/// max_skew_ms: a reservation confirmed while the store clock was max_skew_ms
/// ahead must stay below it after a step back of 2 * max_skew_ms.
#[test]
fn the_fence_after_a_wipe_spans_two_skews() {
    let server = Scratch::start("redis-fence", &[]);
    let opts = "namespace=fence&redis_max_window_ms=2000&max_skew_ms=4000";
    let settings = snowmint_lease::LeaseUrl::parse(&server.url(opts))
        .unwrap()
        .settings;
    let s = RedisStore::with_settings(&format!("redis://127.0.0.1:{}/0", server.port), &settings)
        .unwrap();
    let space = SlotSpace::new(three_bits(), &[("datacenter", 5)], Some("fence")).unwrap();
    s.claim(&space, &req(60_000, 1_000)).unwrap();
    server.cmd(&["FLUSHALL"]);
    let before = s.now_ms().unwrap();
    let c = s.claim(&space, &req(60_000, 1_000)).unwrap();
    assert!(
        c.prev_hwm_ms >= before + 2_000 + 2 * 4_000,
        "fence {} is below now {before} + 10,000",
        c.prev_hwm_ms
    );
    // `lease init` fences new spaces by the same span.
    server.cmd(&["FLUSHALL"]);
    let before = s.now_ms().unwrap();
    s.init().unwrap();
    let init_fence: u64 = redis::cmd("HGET")
        .arg("snowmint:lease:init")
        .arg("fence_ms")
        .query(&mut server.conn().unwrap())
        .unwrap();
    assert!(
        init_fence >= before + 10_000,
        "init fence {init_fence}, now {before}"
    );
}

/// A marker and records written before epochs existed (no `epoch` field):
/// the holder is lost, and the next claim is fenced and starts an epoch.
#[test]
fn records_without_an_epoch_are_fenced_and_lost() {
    let server = Scratch::start("redis-noepoch", &[]);
    let s = loss_store(&server);
    let space = SlotSpace::new(three_bits(), &[("datacenter", 5)], Some("loss")).unwrap();
    let old = s.claim(&space, &req(60_000, 1_000)).unwrap();
    let marker = format!("snowmint:lease:{{{}}}:marker", space.key());
    server.cmd(&["HDEL", &marker, "epoch"]);
    server.cmd(&["HDEL", &slot_key(&space, old.holder.slot), "epoch"]);
    is_lost(s.renew(&space, &old.holder, 60_000, 1_000));
    is_lost(s.release(&space, &old.holder, 0));
    let before = s.now_ms().unwrap();
    let new = s.claim(&space, &req(60_000, 1_000)).unwrap();
    assert!(new.prev_hwm_ms >= before + 3_000, "{new:?}");
    s.renew(&space, &new.holder, 60_000, 1_000).unwrap();
    // The old holder's record, still without an epoch, stays lost.
    is_lost(s.renew(&space, &old.holder, 60_000, 1_000));
}
