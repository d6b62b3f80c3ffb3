//! A throwaway server for the restore tests (etcd, ZooKeeper): the restart
//! command that xtask/src/stores/NAME.rs wrote in its folder, which also holds
//! its `pid` and its `data` directory. A cold backup stops it, copies the
//! data directory and starts it again; a restore stops it and starts it from
//! the copy.

use std::time::{Duration, Instant};

use snowmint::FenceCause;
use snowmint_lease::{ClaimRequest, LeaseUrl, SlotSpace, StoreError};

pub struct Server {
    dir: std::path::PathBuf,
    cmd: String,
}

impl Server {
    /// The server whose restart command the variable `var` names.
    pub fn new(var: &str) -> Server {
        let cmd = std::env::var(var)
            .unwrap_or_else(|_| panic!("{var} is not set: run cargo xtask test stores"));
        let dir = std::path::Path::new(&cmd).parent().unwrap().to_path_buf();
        Server { dir, cmd }
    }

    /// Stops the server (SIGTERM, then SIGKILL after 10 s) and blanks its pid
    /// file, so that the restart command kills nothing else.
    fn stop(&self) {
        let pid_file = self.dir.join("pid");
        let pid: libc::pid_t = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // SAFETY: kill(2) on the server the stores part started for this
        // test (its pid file); no memory is involved.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let t = Instant::now();
        // SAFETY: as above; signal 0 only checks that the process exists.
        while unsafe { libc::kill(pid, 0) } == 0 {
            if t.elapsed() > Duration::from_secs(10) {
                // SAFETY: as above.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "server {pid} does not stop"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        std::fs::write(&pid_file, "").unwrap();
    }

    fn start(&self) {
        let st = std::process::Command::new(&self.cmd).status().unwrap();
        assert!(st.success(), "{} failed: {st}", self.cmd);
    }

    fn copy(&self, from: &str, to: &str) {
        let to = self.dir.join(to);
        let _ = std::fs::remove_dir_all(&to);
        let st = std::process::Command::new("cp")
            .arg("-a")
            .arg(self.dir.join(from))
            .arg(&to)
            .status()
            .unwrap();
        assert!(st.success());
    }

    /// A cold backup: stop, copy the data directory, start again.
    pub fn backup(&self) {
        self.stop();
        self.copy("data", "backup");
        self.start();
    }

    /// Restarts the server from the backup: what it confirmed since is lost.
    pub fn restore(&self) {
        self.stop();
        self.copy("backup", "data");
        self.start();
    }
}

/// The first calls after a restart may fail while the client reconnects
/// (ZooKeeper's session, which saw a higher zxid than the restored server
/// has, is refused and a new one made): tries `f` for at most 20 s while
/// the store is unreachable.
pub fn after_restart<T>(mut f: impl FnMut() -> Result<T, StoreError>) -> Result<T, StoreError> {
    let t = Instant::now();
    loop {
        match f() {
            Err(StoreError::Unreachable(m)) if t.elapsed() < Duration::from_secs(20) => {
                eprintln!("after the restart: {m}");
                std::thread::sleep(Duration::from_millis(200));
            }
            r => return r,
        }
    }
}

/// The restore scenario every store that remembers what it was answered at
/// runs (etcd, ZooKeeper), on `server` through `url` (a store URL with its
/// namespace and `max_skew_ms=100`). A and E claim; a cold backup; after
/// `pause` (a store whose clock counts whole seconds needs one), A renews, B
/// claims, E releases and F claims E's slot; a restore from the backup loses
/// all four. This process remembers them: its next claim C, which takes B's
/// slot (free in the backup), is fenced above B's confirmed reservation; A's
/// renewal fails as lost (its slot's record is older than its last confirmed
/// write); E's revived claim (E released, so this process no longer
/// remembers it) fails as lost at its renewal, being older than the fence;
/// F is lost; and a later claim D, which this process's memory no longer
/// flags, starts above the fence the store keeps for the space.
pub fn restored_backup_fences_claims_and_fails_the_holder(
    server: &Server,
    url: &str,
    ns: &str,
    pause: Duration,
) {
    let req = |prefer: Option<u64>| ClaimRequest::new(prefer, 60_000, 5000);
    let s = LeaseUrl::parse(url).unwrap().open_store().unwrap();
    let space = SlotSpace::new(crate::twitter(), &[("datacenter", 1)], Some(ns)).unwrap();
    let a = s.claim(&space, &req(None)).unwrap();
    let e = s.claim(&space, &req(None)).unwrap();
    server.backup();
    // Confirmed after the backup: A's renewal, B's claim, E's release and
    // F's claim of E's slot.
    std::thread::sleep(pause);
    let renewed = after_restart(|| s.renew(&space, &a.holder, 60_000, 5000)).unwrap();
    let b = s.claim(&space, &req(None)).unwrap();
    s.release(&space, &e.holder, e.prev_hwm_ms).unwrap();
    let f = s.claim(&space, &req(Some(e.holder.slot))).unwrap();
    assert_eq!(f.holder.slot, e.holder.slot);
    server.restore();

    let before = snowmint::SystemClock.precise_ms();
    let c = after_restart(|| s.claim(&space, &req(None))).unwrap();
    eprintln!("A {a:?} renewed to {renewed:?}; B {b:?}; after the restore C {c:?}");
    assert_eq!(
        c.holder.slot, b.holder.slot,
        "B's slot is free in the backup"
    );
    assert_eq!(c.fence, Some(FenceCause::StoreForgot), "{c:?}");
    assert!(
        c.prev_hwm_ms >= b.hwm_ms,
        "C {c:?} below B's reservation {b:?}"
    );
    // The fence: store time + the largest window (5000) + 2 x max_skew_ms.
    assert!(c.prev_hwm_ms + 1500 >= before + 5200, "{c:?}");

    match s.renew(&space, &a.holder, 60_000, 5000) {
        Err(StoreError::Lost(m)) => assert!(m.contains("restored"), "{m}"),
        other => panic!("A's renewal after the restore: {other:?}"),
    }
    match s.renew(&space, &e.holder, 60_000, 5000) {
        Err(StoreError::Lost(m)) => assert!(m.contains("fenced"), "{m}"),
        other => panic!("revived E's renewal after the restore: {other:?}"),
    }
    assert!(matches!(
        s.renew(&space, &f.holder, 60_000, 5000),
        Err(StoreError::Lost(_))
    ));

    // The store's fence, not this process's memory, fences the next claim.
    let d = s.claim(&space, &req(None)).unwrap();
    assert_eq!(d.fence, Some(FenceCause::StoreForgot), "{d:?}");
    assert!(
        d.prev_hwm_ms >= b.hwm_ms,
        "D {d:?} below B's reservation {b:?}"
    );
    for claim in [&c, &d] {
        s.release(&space, &claim.holder, claim.prev_hwm_ms).unwrap();
    }
}
