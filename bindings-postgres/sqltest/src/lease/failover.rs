//! A failover of the database whose generator holds `lease => 'database'`
//! (`snowmint-pg-sqltest failover DIR`, with SNOWMINT_PG_BIN and
//! SNOWMINT_PG_AS_POSTGRES): a primary and a streaming replica of the
//! test's own under DIR, the preload in the primary's postgresql.conf (so in
//! the replica's, which pg_basebackup copies). The generator mints on the
//! primary until it borrows seconds ahead of the clock; the primary is shut
//! down immediately (no checkpoint, its processes gone at once) and the
//! replica promoted (`pg_ctl promote`). On the promoted server the
//! extension's launcher starts (its workers start only once recovery has
//! finished) and the database's worker claims again: the promotion began a
//! new timeline, so the store's identity changed and the claim is fenced
//! (the space's marker names the new server, every slot's `hwm` is raised
//! to the fence); `next_id` refuses with the extension's lease errors
//! (55000) until then, and every ID after is above the fence and above
//! every ID the old primary issued. An application holds the other slot throughout, so that the
//! database can only take its own slot back (or a fenced one).
//!
//! Twice: with synchronous replication (`synchronous_standby_names`, as
//! docs/STORES.md asks where failover matters) and with asynchronous
//! replication, which the identity fence covers too (the timeline changes
//! at every promotion; docs/STORES.md, "Another server under the same
//! name").

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use postgres::Client;
use snowmint::{Layout, Options};
use snowmint_lease::LeasedGenerator;

use super::{ids_when_reserved, node, now_ms, wait_ready, SLOW};
use crate::Run;

/// One server of the pair.
struct Pg {
    bin: String,
    dir: PathBuf,
    port: u16,
    as_postgres: bool,
}

impl Pg {
    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn command(&self, program: &str) -> Command {
        let exe = format!("{}/{program}", self.bin);
        let mut c = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--", &exe]);
            c
        } else {
            Command::new(&exe)
        };
        c.stdout(Stdio::null());
        c
    }

    /// Runs `c`; its failure ends the test with the server log's end.
    fn run(&self, what: &str, c: &mut Command) {
        if c.status().is_ok_and(|s| s.success()) {
            return;
        }
        let log = std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(20).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        panic!(
            "{what} failed ({}):\n{}",
            self.dir.display(),
            tail.join("\n")
        );
    }

    /// Its folder, owned by the user the servers run as.
    fn make_dir(&self) {
        std::fs::create_dir_all(&self.dir).unwrap();
        if self.as_postgres {
            self.run(
                "chown",
                Command::new("chown")
                    .arg("postgres:postgres")
                    .arg(&self.dir),
            );
        }
    }

    fn start(&self, extra: &str) {
        let opts = format!("-k {} -p {}{extra}", self.dir.display(), self.port);
        self.run(
            "pg_ctl start",
            self.command("pg_ctl")
                .arg("-D")
                .arg(self.data())
                .arg("-l")
                .arg(self.dir.join("server.log"))
                .args(["-w", "-t", "60", "-o", &opts, "start"]),
        );
    }

    fn stop(&self, mode: &str) {
        let _ = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .args(["-m", mode, "-w", "-t", "60", "stop"])
            .stderr(Stdio::null())
            .status();
    }

    fn conninfo(&self) -> String {
        format!(
            "host=127.0.0.1 port={} user=postgres dbname=postgres",
            self.port
        )
    }

    fn connect(&self) -> Client {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let mut config: postgres::Config = self.conninfo().parse().unwrap();
            config.connect_timeout(Duration::from_secs(5));
            if let Ok(mut c) = config.connect(postgres::NoTls) {
                c.batch_execute("SET statement_timeout = '60s'").unwrap();
                return c;
            }
            assert!(Instant::now() < deadline, "cannot connect to {}", self.port);
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// Both servers stopped however the round ends.
struct Pair(Pg, Pg);

impl Drop for Pair {
    fn drop(&mut self) {
        self.0.stop("immediate");
        self.1.stop("immediate");
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A primary with the extension preloaded and a streaming replica of it
/// (`pg_basebackup -R`), `sync`: the replica a synchronous standby.
fn pair(bin: &str, dir: &Path, as_postgres: bool, sync: bool) -> Pair {
    let pg = |name: &str| Pg {
        bin: bin.to_string(),
        dir: dir.join(name),
        port: free_port(),
        as_postgres,
    };
    let (primary, replica) = (pg("primary"), pg("replica"));
    primary.make_dir();
    primary.run(
        "initdb",
        primary
            .command("initdb")
            .arg("-D")
            .arg(primary.data())
            .args(["--auth=trust", "-U", "postgres", "-E", "UTF8", "--no-sync"]),
    );
    // In the configuration file, which the replica copies: its launcher and
    // workers start there once promoted. fsync stays on (the lease store
    // refuses a server without it).
    let mut conf = std::fs::OpenOptions::new()
        .append(true)
        .open(primary.data().join("postgresql.conf"))
        .unwrap();
    std::io::Write::write_all(
        &mut conf,
        b"\nlisten_addresses = '127.0.0.1'\nshared_preload_libraries = 'snowmint'\n\
          max_worker_processes = 16\nwal_level = replica\nhot_standby = on\n",
    )
    .unwrap();
    // On the primary's command line only: a promoted server with it and no
    // standby of its own would wait for ever at every commit.
    primary.start(if sync {
        " -c synchronous_standby_names=walreceiver"
    } else {
        ""
    });
    let both = Pair(primary, replica);
    both.1.make_dir();
    both.1.run(
        "pg_basebackup",
        both.1
            .command("pg_basebackup")
            .args(["-h", "127.0.0.1", "-U", "postgres", "-X", "stream", "-R"])
            .arg("-p")
            .arg(both.0.port.to_string())
            .arg("-D")
            .arg(both.1.data()),
    );
    both.1.start("");
    // Streaming, in the mode asked for.
    let want = if sync { "sync" } else { "async" };
    let mut c = both.0.connect();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let states: Vec<String> = c
            .query(
                "SELECT sync_state FROM pg_stat_replication WHERE state = 'streaming'",
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        if states == [want] {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the replica is not streaming ({want}): {states:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    both
}

fn round(run: &mut Run, bin: &str, dir: &Path, as_postgres: bool, sync: bool) {
    let what = if sync {
        "failover to a synchronous replica"
    } else {
        "failover to an asynchronous replica"
    };
    let servers = pair(bin, dir, as_postgres, sync);
    let (primary, replica) = (&servers.0, &servers.1);
    let layout = Layout::parse(SLOW).unwrap();
    let mut c = primary.connect();
    c.batch_execute("CREATE EXTENSION snowmint").unwrap();
    // The application holds the other of the two slots for a minute (the
    // fence frees it): the database can only take its own back.
    let app_url = format!(
        "postgres://postgres@127.0.0.1:{}/postgres?namespace=failover&ttl_ms=60000\
         &renew_ms=300&window_ms=5000&max_skew_ms=1000&timeout_ms=1500",
        primary.port
    );
    let app = LeasedGenerator::open(&app_url, layout, &[], Options::default())
        .expect("the application's lease");
    c.execute(
        "SELECT snowmint.create_generator('failover', $1, \
         options => '{\"sequence_exhausted\": \"borrow:200\"}', lease => $2)",
        &[
            &SLOW,
            &"database?namespace=failover&ttl_ms=2000&renew_ms=300&window_ms=5000\
              &max_skew_ms=1000&timeout_ms=1500",
        ],
    )
    .unwrap();
    if let Err(e) = wait_ready(&mut c, "failover", Duration::from_secs(30)) {
        run.check(false, || format!("{what}: on the primary: {e}"));
        return;
    }
    // Batches until the last ID is 2.5 s ahead of the clock (borrowed
    // ahead, inside the reservation the replica has too when synchronous).
    let ahead = |id: i64| layout.decompose(id as u64).unwrap().timestamp_ms() as i64 - now_ms();
    let mut before: Vec<i64> = Vec::new();
    while before.len() < 400 {
        match ids_when_reserved(&mut c, "failover", 8) {
            Ok(v) => {
                let last = *v.last().unwrap();
                before.extend(v);
                if ahead(last) >= 2_500 {
                    break;
                }
            }
            Err(e) => {
                run.check(false, || format!("{what}: on the primary: {e:?}"));
                return;
            }
        }
    }
    let top = before.iter().copied().max().unwrap();
    let top_ahead = ahead(top);
    drop(c);
    // The primary gone at once; the replica promoted.
    let t = Instant::now();
    primary.stop("immediate");
    replica.run(
        "pg_ctl promote",
        replica
            .command("pg_ctl")
            .arg("-D")
            .arg(replica.data())
            .args(["-w", "-t", "60", "promote"]),
    );
    let mut c = replica.connect();
    let timeline: String = c
        .query_one(
            "SELECT substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8)",
            &[],
        )
        .unwrap()
        .get(0);
    let waited = wait_ready(&mut c, "failover", Duration::from_secs(60));
    let mut after = Vec::new();
    if waited.is_ok() {
        for _ in 0..3 {
            match ids_when_reserved(&mut c, "failover", 8) {
                Ok(v) => after.extend(v),
                Err(e) => run.check(false, || format!("{what}: a batch after: {e:?}")),
            }
        }
    }
    let low = after.iter().copied().min().unwrap_or(0);
    run.check(waited.is_ok() && !after.is_empty() && low > top, || {
        format!(
            "{what}: lowest ID after {low} (unit at {:?} ms), highest before {top} (at {:?} \
             ms), {} IDs after; {waited:?}",
            layout.decompose(low as u64).map(|p| p.timestamp_ms()),
            layout.decompose(top as u64).map(|p| p.timestamp_ms()),
            after.len()
        )
    });
    // Refused until then only with the extension's lease errors.
    let seen = waited.clone().unwrap_or_default();
    let known = [
        "55000 lease_unavailable",
        "55000 lease_fenced",
        "55000 lease_expired",
    ];
    run.check(seen.iter().all(|e| known.contains(&e.as_str())), || {
        format!("{what}: refused with {seen:?}, want only 55000 lease_* codes")
    });
    // And fenced: the promotion's new timeline is a new store identity, so
    // the worker's claim rewrote the space's marker and raised every slot's
    // hwm to the fence, under which no ID after may be.
    let marker = c
        .query_one(
            "SELECT m.server::text, m.fence_ms::bigint, m.cause::text \
             FROM snowmint_lease_marker m JOIN snowmint_lease_space s USING (space_key) \
             WHERE s.space_text LIKE '%namespace=failover%'",
            &[],
        )
        .map(|r| {
            (
                r.get::<_, String>(0),
                r.get::<_, i64>(1),
                r.get::<_, String>(2),
            )
        });
    let low_ms = layout
        .decompose(low as u64)
        .map_or(0, |p| p.timestamp_ms() as i64);
    run.check(
        matches!(&marker, Ok((server, fence_ms, cause))
            if cause == "changed"
                && server.split('/').nth(1) == Some(timeline.as_str())
                && *fence_ms > 0
                && low_ms >= *fence_ms),
        || {
            format!(
                "{what}: not fenced after the promotion (timeline {timeline}; the space's marker \
                 {marker:?}; the lowest ID after at {low_ms} ms)"
            )
        },
    );
    let unique: HashSet<i64> = before.iter().chain(&after).copied().collect();
    run.check(unique.len() == before.len() + after.len(), || {
        format!(
            "{what}: {} IDs repeated",
            before.len() + after.len() - unique.len()
        )
    });
    let slots: HashSet<u64> = after.iter().map(|&id| node(&layout, id)).collect();
    println!(
        "lease: {what} (timeline {timeline}): {} IDs on the primary, the last {top_ahead} ms \
         ahead of the clock; on the promoted server the marker {marker:?}, refused with \
         {seen:?}, then {} IDs on slot {slots:?}, {}; back in {:?}",
        before.len(),
        after.len(),
        if low > top {
            "all above"
        } else {
            "NOT all above"
        },
        t.elapsed()
    );
    drop(app);
}

pub(crate) fn run_all(run: &mut Run, dir: &str) {
    let var = |k: &str| std::env::var(k).unwrap_or_else(|_| panic!("{k} is not set"));
    let bin = var("SNOWMINT_PG_BIN");
    let as_postgres = var("SNOWMINT_PG_AS_POSTGRES") == "1";
    for sync in [true, false] {
        let dir = Path::new(dir).join(if sync { "sync" } else { "async" });
        round(run, &bin, &dir, as_postgres, sync);
    }
}
