//! Leased generators against a cluster of their own, which these tests
//! restart and kill (`snowmint-pg-sqltest lease CONNINFO PORT`, with
//! SNOWMINT_PG_BIN, SNOWMINT_PG_DATA, SNOWMINT_PG_LOG, SNOWMINT_PG_OPTS and
//! SNOWMINT_PG_AS_POSTGRES naming the cluster):
//! - an application holder (the lease crate's own `postgres://` driver)
//!   beside the database's generator in the same namespace: different node
//!   values, no ID twice; the same with the `snowmint` CLI as a process of
//!   its own (cli.rs, the CLI's path in SNOWMINT_CLI);
//! - the reservation: `next_ids` past what the store confirmed is refused
//!   with `lease_expired`, never an ID past it;
//! - `pg_ctl restart` and SIGKILL of the postmaster between batches: every
//!   ID after is above every ID before (the new claim starts above the
//!   slot's reserved `hwm`);
//! - a slot stolen (its row forced to another token): `next_id` refuses,
//!   then recovers on another slot;
//! - a backend SIGKILLed inside `next_ids` (fixed node values and leased):
//!   every ID after the crash restart above every ID before, also the ones
//!   the killed calls took and never returned;
//! - leased generators in two databases: each database's worker claims in
//!   that database's lease tables (an application holder there gets another
//!   node value), both mint; in a ninth database beyond the 8 a server
//!   serves, `next_id` refuses at once and clearly (databases.rs);
//! - the launcher terminated (started again, no second worker), then the
//!   database's worker (started again by the new launcher, claims again);
//! - leased generators on MySQL/MariaDB, Redis, etcd and ZooKeeper
//!   (stores.rs).
//!
//! And, on a primary and a streaming replica of its own, a failover of the
//! database that holds the lease (`snowmint-pg-sqltest failover DIR`,
//! failover.rs).

use std::collections::HashSet;
use std::process::Command;
use std::time::{Duration, Instant};

use postgres::Client;
use snowmint::{Layout, Options};
use snowmint_lease::LeasedGenerator;

use crate::{call, connect, Out, Run};

mod cli;
mod databases;
pub(crate) mod failover;
mod killed;
mod stores;

/// The cluster, as the test runner started it.
struct Server {
    conninfo: String,
    port: u16,
    bin: String,
    data: String,
    log: String,
    opts: String,
    as_postgres: bool,
}

impl Server {
    fn from_env(conninfo: &str, port: u16) -> Server {
        let var = |k: &str| std::env::var(k).unwrap_or_else(|_| panic!("{k} is not set"));
        Server {
            conninfo: conninfo.to_string(),
            port,
            bin: var("SNOWMINT_PG_BIN"),
            data: var("SNOWMINT_PG_DATA"),
            log: var("SNOWMINT_PG_LOG"),
            opts: var("SNOWMINT_PG_OPTS"),
            as_postgres: var("SNOWMINT_PG_AS_POSTGRES") == "1",
        }
    }

    fn pg_ctl(&self, args: &[&str]) -> bool {
        let exe = format!("{}/pg_ctl", self.bin);
        let mut c = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--", &exe]);
            c
        } else {
            Command::new(&exe)
        };
        c.args([
            "-D", &self.data, "-l", &self.log, "-w", "-t", "60", "-o", &self.opts,
        ]);
        c.args(args);
        c.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    fn restart(&self) {
        assert!(self.pg_ctl(&["-m", "fast", "restart"]), "pg_ctl restart");
    }

    /// SIGKILL of the postmaster, then a start (tried until the killed
    /// server's processes have gone).
    fn kill_and_start(&self) {
        let pid = std::fs::read_to_string(format!("{}/postmaster.pid", self.data))
            .expect("postmaster.pid");
        let pid: i32 = pid.lines().next().unwrap().trim().parse().unwrap();
        // SAFETY: a plain signal to the server's postmaster.
        assert_eq!(unsafe { libc_kill(pid, 9) }, 0, "kill -9 {pid}");
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.pg_ctl(&["start"]) {
            assert!(
                Instant::now() < deadline,
                "the killed server did not start again"
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    /// SIGKILL of a backend (busy in `pg_sleep`): the postmaster ends
    /// every other process and starts again with fresh shared memory.
    fn kill_backend(&self) {
        let mut c = reconnect(self);
        // Another connection, which the crash recovery ends: the sign that
        // the server has restarted (a connection made before that would
        // reach the old shared memory, then be closed).
        let mut sentinel = reconnect(self);
        let pid: i32 = c.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);
        let busy = std::thread::spawn(move || {
            let _ = c.batch_execute("SELECT pg_sleep(30)");
        });
        std::thread::sleep(Duration::from_millis(200));
        // SAFETY: a plain signal to one backend of the test server.
        assert_eq!(unsafe { libc_kill(pid, 9) }, 0, "kill -9 {pid}");
        let _ = busy.join();
        let deadline = Instant::now() + Duration::from_secs(30);
        while sentinel.batch_execute("SELECT 1").is_ok() {
            assert!(
                Instant::now() < deadline,
                "the server did not restart after a backend was killed"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn url(&self, query: &str) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{}/postgres?{query}",
            self.port
        )
    }
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

/// A connection, retried while the server starts (or, after a crash,
/// restarts: a connection made just before its crash recovery ends it is
/// closed under the first statement, and is tried again).
fn reconnect(s: &Server) -> Client {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut config: postgres::Config = s.conninfo.parse().unwrap();
        config.connect_timeout(Duration::from_secs(5));
        if let Ok(mut c) = config.connect(postgres::NoTls) {
            if c.batch_execute("SET statement_timeout = '60s'").is_ok() {
                return c;
            }
        }
        assert!(Instant::now() < deadline, "cannot connect again");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Waits until `next_id(name)` answers (the worker has claimed), returning
/// the errors seen before.
fn wait_ready(c: &mut Client, name: &str, within: Duration) -> Result<Vec<String>, String> {
    let deadline = Instant::now() + within;
    let mut seen = Vec::new();
    loop {
        match call::<i64>(c, "SELECT snowmint.next_id($1)", &[&name]) {
            Out::Ok(_) => return Ok(seen),
            Out::Err { sqlstate, code } => {
                let e = format!("{sqlstate} {code}");
                if !seen.contains(&e) {
                    seen.push(e);
                }
            }
        }
        if Instant::now() > deadline {
            return Err(format!(
                "{name}: no ID within {within:?} (errors: {seen:?})"
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn ids(c: &mut Client, name: &str, n: i32) -> Result<Vec<i64>, (String, String)> {
    match c.query("SELECT snowmint.next_ids($1, $2)", &[&name, &n]) {
        Ok(rows) => Ok(rows.iter().map(|r| r.get(0)).collect()),
        Err(e) => {
            let db = e.as_db_error().expect("a server error");
            Err((
                db.code().code().to_string(),
                db.detail().unwrap_or("").to_string(),
            ))
        }
    }
}

/// [`ids`], tried again for 20 s while refused with `lease_expired`: a
/// generator that resumed above the slot's `hwm` is as far ahead of the
/// clock as its reservation, and issues as the renewals move it.
fn ids_when_reserved(c: &mut Client, name: &str, n: i32) -> Result<Vec<i64>, (String, String)> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match ids(c, name, n) {
            Err((_, d)) if d == "code: lease_expired" && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(200));
            }
            other => return other,
        }
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn node(layout: &Layout, id: i64) -> u64 {
    layout.decompose(id as u64).unwrap().nodes()[0]
}

const WIDE: &str = r#"{"epoch_ms":1288834974657,"time_unit_ms":1,"fields":[["timestamp",41],["worker",4],["sequence",12]]}"#;
/// 100 ms units, 4 IDs a unit, two slots: a batch runs seconds ahead of the
/// clock (borrowing), so a successor that did not start above the slot's
/// reserved hwm would issue below it.
const SLOW: &str = r#"{"epoch_ms":1700000000000,"time_unit_ms":100,"fields":[["timestamp",40],["worker",1],["sequence",2]]}"#;
const FAST: &str = "ttl_ms=2000&renew_ms=300&timeout_ms=1500";

fn app_beside_database(run: &mut Run, s: &Server, c: &mut Client) {
    let layout = Layout::parse(WIDE).unwrap();
    let q = format!("namespace=shared&{FAST}&window_ms=5000");
    // The application first: the store would hand an idle database generator
    // its slot otherwise... it must not.
    let app = LeasedGenerator::open(&s.url(&q), layout, &[], Options::default())
        .expect("the application's lease");
    for name in ["shared_a", "shared_b"] {
        c.execute(
            "SELECT snowmint.create_generator($1, $2, lease => $3)",
            &[&name, &WIDE, &format!("database?{q}")],
        )
        .unwrap();
    }
    let mut all: Vec<(u64, i64)> = Vec::new();
    for name in ["shared_a", "shared_b"] {
        if let Err(e) = wait_ready(c, name, Duration::from_secs(20)) {
            run.check(false, || e);
            return;
        }
    }
    let mut buf = vec![0u64; 20_000];
    for round in 0..3 {
        app.next_ids(&mut buf).unwrap();
        all.extend(buf.iter().map(|&id| (app.slot(), id as i64)));
        for name in ["shared_a", "shared_b"] {
            match ids(c, name, 20_000) {
                Ok(v) => all.extend(v.iter().map(|&id| (node(&layout, id), id))),
                Err(e) => run.check(false, || format!("{name} round {round}: {e:?}")),
            }
        }
    }
    // snowmint.leases() shows the slot the IDs carry.
    let last_a = ids(c, "shared_a", 1).unwrap()[0];
    let listed: Option<i64> = c
        .query_one(
            "SELECT slot FROM snowmint.leases() WHERE generator = 'shared_a'",
            &[],
        )
        .unwrap()
        .get(0);
    run.check(listed == Some(node(&layout, last_a) as i64), || {
        format!(
            "snowmint.leases(): slot {listed:?}, the IDs carry {}",
            node(&layout, last_a)
        )
    });
    let nodes: HashSet<u64> = all.iter().map(|(_, id)| node(&layout, *id)).collect();
    let unique: HashSet<i64> = all.iter().map(|(_, id)| *id).collect();
    run.check(nodes.len() == 3, || {
        format!("app beside database: node values {nodes:?}, want three different")
    });
    run.check(unique.len() == all.len(), || {
        format!(
            "app beside database: {} IDs repeated",
            all.len() - unique.len()
        )
    });
    println!(
        "lease: an application holder and two database generators in one namespace: node values {nodes:?}, {} IDs unique",
        unique.len()
    );
    app.close().unwrap();
}

fn reservation(run: &mut Run, c: &mut Client) {
    // Borrowing ahead of the clock without bound, a 2 s window: a batch of
    // 400 (100 units, 10 s) must stop at the reservation.
    let q = format!("database?namespace=limit&{FAST}&window_ms=2000");
    c.execute(
        "SELECT snowmint.create_generator('limit', $1, options => '{\"sequence_exhausted\": \"borrow:100000\"}', lease => $2)",
        &[&SLOW, &q],
    )
    .unwrap();
    if let Err(e) = wait_ready(c, "limit", Duration::from_secs(20)) {
        run.check(false, || e);
        return;
    }
    let layout = Layout::parse(SLOW).unwrap();
    let mut last = 0i64;
    let mut refused = None;
    for _ in 0..400 {
        match call::<i64>(c, "SELECT snowmint.next_id('limit')", &[]) {
            Out::Ok(id) => last = id,
            Out::Err { sqlstate, code } => {
                refused = Some((sqlstate, code));
                break;
            }
        }
    }
    let ahead_ms = layout.decompose(last as u64).unwrap().timestamp_ms() as i64
        - std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
    run.check(
        refused == Some(("55000".into(), "lease_expired".into())),
        || format!("reservation: next_id 10 s ahead gave {refused:?}, want 55000 lease_expired"),
    );
    // window 2 s + max_skew 5 s at most, whatever the renewals did.
    run.check(ahead_ms < 7_500, || {
        format!("reservation: an ID {ahead_ms} ms ahead of the clock")
    });
    let batch = ids(c, "limit", 400);
    run.check(
        matches!(&batch, Err((s, d)) if s == "55000" && d == "code: lease_expired"),
        || {
            format!(
                "reservation: next_ids past it gave {:?}",
                batch.as_ref().map(Vec::len)
            )
        },
    );
    println!("lease: next_id stopped {ahead_ms} ms ahead of the clock with {refused:?}");
}

/// What a restart round is called, its batch before, and the restart.
type Round<'a> = (&'a str, i32, &'a dyn Fn(&Server));

fn restarts(run: &mut Run, s: &Server, c: &mut Client) -> Client {
    let layout = Layout::parse(SLOW).unwrap();
    let q = format!("namespace=restart&{FAST}&window_ms=10000");
    // The application holds one of the two slots throughout: the database
    // generator can only ever have the other. Its lease is on the server the
    // tests kill, so its TTL outlasts the downtime (with a short one the
    // worker may take its slot, which is safe: it then stops issuing).
    let app_q = "namespace=restart&ttl_ms=60000&renew_ms=300&window_ms=10000&timeout_ms=1500";
    let app = LeasedGenerator::open(&s.url(app_q), layout, &[], Options::default())
        .expect("the application's lease");
    c.execute(
        "SELECT snowmint.create_generator('restart', $1, options => '{\"sequence_exhausted\": \"borrow:200\"}', lease => $2)",
        &[&SLOW, &format!("database?{q}")],
    )
    .unwrap();
    let mut c = reconnect(s);
    if let Err(e) = wait_ready(&mut c, "restart", Duration::from_secs(20)) {
        run.check(false, || e);
        return c;
    }
    let mut before: Vec<i64> = Vec::new();
    let rounds: [Round<'_>; 3] = [
        ("pg_ctl restart", 8, &|s: &Server| s.restart()),
        ("SIGKILL of the postmaster", 8, &|s: &Server| {
            s.kill_and_start()
        }),
        ("SIGKILL of a backend", 8, &|s: &Server| s.kill_backend()),
    ];
    for (what, batch, restart) in rounds {
        // Batches of 8 until the last ID is 3 s ahead of the clock (the
        // generator borrows ahead; after a restart it is there already).
        let layout_ahead =
            |id: i64| layout.decompose(id as u64).unwrap().timestamp_ms() as i64 - now_ms();
        let mut minted = 0;
        loop {
            match ids_when_reserved(&mut c, "restart", batch) {
                Ok(v) => {
                    minted += v.len();
                    let last = *v.last().unwrap();
                    before.extend(v);
                    if layout_ahead(last) >= 3_000 || minted >= 400 {
                        break;
                    }
                }
                Err(e) => {
                    run.check(false, || format!("{what}: the batch before: {e:?}"));
                    return c;
                }
            }
        }
        drop(c);
        let t = Instant::now();
        restart(s);
        c = reconnect(s);
        let waited = wait_ready(&mut c, "restart", Duration::from_secs(30));
        let mut after = Vec::new();
        for _ in 0..3 {
            match ids_when_reserved(&mut c, "restart", 8) {
                Ok(v) => after.extend(v),
                Err(e) => run.check(false, || format!("{what}: a batch after: {e:?}")),
            }
        }
        let top = before.iter().copied().max().unwrap_or(0);
        let low = after.iter().copied().min().unwrap_or(0);
        run.check(waited.is_ok() && !after.is_empty() && low > top, || {
            format!(
                "{what}: lowest ID after {low} ({:?}), highest before {top} ({:?}), {waited:?}",
                layout.decompose(low as u64).map(|p| p.timestamp_ms()),
                layout.decompose(top as u64).map(|p| p.timestamp_ms())
            )
        });
        let slots: HashSet<u64> = before
            .iter()
            .chain(&after)
            .map(|&id| node(&layout, id))
            .collect();
        run.check(!slots.contains(&app.slot()), || {
            format!("{what}: the database used the application's slot")
        });
        println!(
            "lease: {what}: {} IDs before, {} after, {}; back in {:?} ({:?} while the slot expired)",
            before.len(),
            after.len(),
            if low > top { "all above" } else { "NOT all above" },
            t.elapsed(),
            waited.unwrap_or_default()
        );
        before.extend(after);
    }
    drop(app);
    c
}

fn stolen(run: &mut Run, c: &mut Client) {
    let layout = Layout::parse(WIDE).unwrap();
    c.execute(
        "SELECT snowmint.create_generator('stolen', $1, lease => $2)",
        &[
            &WIDE,
            &format!("database?namespace=stolen&{FAST}&window_ms=3000"),
        ],
    )
    .unwrap();
    if let Err(e) = wait_ready(c, "stolen", Duration::from_secs(20)) {
        run.check(false, || e);
        return;
    }
    let before = ids(c, "stolen", 1000).unwrap();
    let slot = node(&layout, before[0]) as i64;
    // Another holder forced onto the slot: a new token, held for a minute.
    let n = c
        .execute(
            "UPDATE snowmint_lease_slot SET token = 'feedfacefeedfacefeedfacefeedface', \
             counter = counter + 1, \
             expires_ms = (extract(epoch from clock_timestamp()) * 1000)::bigint + 60000 \
             WHERE slot = $1 AND token <> '' AND space_key IN \
             (SELECT space_key FROM snowmint_lease_space WHERE space_text LIKE '%namespace=stolen%')",
            &[&slot],
        )
        .unwrap();
    run.check(n == 1, || format!("stolen: {n} rows forced"));
    // The next renewal (300 ms) finds it lost; the worker publishes within
    // 100 ms more. Until then IDs are inside the old reservation (safe).
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut refusal = None;
    while Instant::now() < deadline {
        if let Out::Err { sqlstate, code } =
            call::<i64>(c, "SELECT snowmint.next_id('stolen')", &[])
        {
            refusal = Some((sqlstate, code));
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    run.check(
        matches!(&refusal, Some((s, k)) if s == "55000" && (k == "lease_unavailable" || k == "lease_expired")),
        || format!("stolen: next_id did not refuse: {refusal:?}"),
    );
    let recovered = wait_ready(c, "stolen", Duration::from_secs(20));
    run.check(recovered.is_ok(), || format!("stolen: {recovered:?}"));
    if recovered.is_ok() {
        let after = ids(c, "stolen", 1000).unwrap();
        let new_slot = node(&layout, after[0]) as i64;
        let all: HashSet<i64> = before.iter().chain(&after).copied().collect();
        run.check(new_slot != slot && all.len() == 2000, || {
            format!(
                "stolen: slot {slot} then {new_slot}, {} unique of 2000",
                all.len()
            )
        });
        println!(
            "lease: slot {slot} stolen: next_id refused with {refusal:?}, then resumed on slot {new_slot}"
        );
    }
}

/// A claim fenced by its slot's previous holder: the slot forced over to
/// another holder whose reservation (`hwm_ms`) runs 4 s ahead and which
/// has already expired, so the worker claims it again at once, above that
/// `hwm`. Until the clock passes it, `next_id` refuses as an application's
/// generator does, with `lease_fenced` (55000), not `clock_moved_backwards`:
/// the clock is fine, the slot is fenced; then IDs resume above the fence.
fn fenced(run: &mut Run, c: &mut Client) {
    let layout = Layout::parse(WIDE).unwrap();
    c.execute(
        "SELECT snowmint.create_generator('fenced', $1, lease => $2)",
        &[&WIDE, &format!("database?namespace=fenced&{FAST}")],
    )
    .unwrap();
    if let Err(e) = wait_ready(c, "fenced", Duration::from_secs(20)) {
        run.check(false, || e);
        return;
    }
    let slot = node(&layout, ids(c, "fenced", 10).unwrap()[0]) as i64;
    let fence_ms: i64 = c
        .query_one(
            "UPDATE snowmint_lease_slot SET token = 'feedfacefeedfacefeedfacefeedface', \
             counter = counter + 1, \
             expires_ms = (extract(epoch from clock_timestamp()) * 1000)::bigint - 1, \
             hwm_ms = (extract(epoch from clock_timestamp()) * 1000)::bigint + 4000 \
             WHERE slot = $1 AND token <> '' AND space_key IN \
             (SELECT space_key FROM snowmint_lease_space WHERE space_text LIKE '%namespace=fenced%') \
             RETURNING hwm_ms",
            &[&slot],
        )
        .unwrap()
        .get(0);
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut seen: Vec<String> = Vec::new();
    let first = loop {
        match call::<i64>(c, "SELECT snowmint.next_id('fenced')", &[]) {
            Out::Ok(id) if seen.is_empty() => {
                // Still the old reservation, before the renewal found the
                // slot taken.
                let _ = id;
            }
            Out::Ok(id) => break Some(id),
            Out::Err { sqlstate, code } => {
                let e = format!("{sqlstate} {code}");
                if !seen.contains(&e) {
                    seen.push(e);
                }
            }
        }
        if Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    run.check(seen.iter().any(|e| e == "55000 lease_fenced"), || {
        format!("fenced: no lease_fenced refusal while the fence was ahead (refusals: {seen:?})")
    });
    run.check(seen.iter().all(|e| e.starts_with("55000 lease_")), || {
        format!("fenced: refusals other than the lease's: {seen:?}")
    });
    let unit_ms = first.map(|id| layout.decompose(id as u64).unwrap().timestamp_ms() as i64);
    run.check(unit_ms.is_some_and(|ms| ms > fence_ms), || {
        format!("fenced: the first ID after the fence at {fence_ms} ms is at {unit_ms:?} ms")
    });
    println!("lease: slot {slot} fenced 4 s ahead: refusals {seen:?}, then IDs from {unit_ms:?} ms (fence {fence_ms} ms)");
}

pub(crate) fn run_all(run: &mut Run, conninfo: &str, port: u16) {
    let s = Server::from_env(conninfo, port);
    let mut c = connect(conninfo);
    c.batch_execute("DROP EXTENSION IF EXISTS snowmint CASCADE; CREATE EXTENSION snowmint;")
        .unwrap();
    // Before any claim: a clear refusal, not a hang.
    c.execute(
        "SELECT snowmint.create_generator('early', $1, lease => 'database?namespace=early')",
        &[&WIDE],
    )
    .unwrap();
    let out: Out<i64> = call(&mut c, "SELECT snowmint.next_id('early')", &[]);
    run.check(
        matches!(&out, Out::Err { sqlstate, code } if sqlstate == "55000" && code == "lease_unavailable")
            || matches!(out, Out::Ok(_)),
        || format!("before the claim: {out:?}"),
    );
    // A store snowmint does not have, a bad setting: refused when declared.
    for (url, what) in [
        (
            "memcached://127.0.0.1:11211?namespace=x",
            "a store snowmint does not have",
        ),
        ("database?ttl_ms=100&renew_ms=500", "renew_ms above ttl_ms"),
    ] {
        let out: Out<String> = call(
            &mut c,
            "SELECT snowmint.create_generator('bad_lease', $1, lease => $2)::text",
            &[&WIDE, &url],
        );
        crate::expect_error(run, &mut c, what, out, "invalid_option", Some("22023"));
    }
    reservation(run, &mut c);
    app_beside_database(run, &s, &mut c);
    cli::cli_beside_database(run, &s, &mut c);
    stolen(run, &mut c);
    fenced(run, &mut c);
    drop(restarts(run, &s, &mut c));
    killed::killed_inside_next_ids(run, &s);
    databases::two_databases(run, &s);
    // A connection after the crash restart above.
    let mut c = reconnect(&s);
    terminated(run, &mut c);
    // After the launcher's restart above: its first look at the databases
    // is long done (a new launcher takes a place for each database once).
    databases::ninth_database(run, &s);
    // Last: the Redis init fence (on a server new to it) runs out meanwhile.
    stores::other_stores(run, &mut c);
}

fn pids(c: &mut Client, query: &str) -> Vec<i32> {
    c.query(query, &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

/// Terminates the one process `query` finds and waits up to 20 s for
/// another to run: the pids before and after.
fn terminate(run: &mut Run, c: &mut Client, query: &str, what: &str) -> (Vec<i32>, Vec<i32>) {
    let before = pids(c, query);
    run.check(before.len() == 1, || format!("{what}: {before:?}"));
    let ok: bool = c
        .query_one(&format!("SELECT pg_terminate_backend(({query}))"), &[])
        .unwrap()
        .get(0);
    run.check(ok, || format!("{what}: not terminated"));
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut after = Vec::new();
    while Instant::now() < deadline {
        after = pids(c, query);
        if !after.is_empty() && after != before {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    run.check(!after.is_empty() && after != before, || {
        format!("{what}: not started again ({before:?} then {after:?})")
    });
    (before, after)
}

/// The launcher terminated: the postmaster starts it again, and it starts
/// no second worker for a database whose worker runs. Then the database's
/// worker terminated: the new launcher (which found it running) starts it
/// again, and it claims.
fn terminated(run: &mut Run, c: &mut Client) {
    let launcher =
        "SELECT pid FROM pg_stat_activity WHERE backend_type = 'snowmint lease launcher'";
    let worker = "SELECT pid FROM pg_stat_activity WHERE backend_type = 'snowmint lease worker' \
                  AND datname = current_database()";
    let workers = pids(c, worker);
    let (l_before, l_after) = terminate(run, c, launcher, "lease launcher");
    // A new launcher's first look (every 250 ms) is long done.
    std::thread::sleep(Duration::from_millis(1500));
    let still = pids(c, worker);
    run.check(still == workers, || {
        format!("after the launcher's restart: workers {workers:?} then {still:?}")
    });
    let (before, after) = terminate(run, c, worker, "lease worker");
    // The generator draws on its old published claim until then, and on a
    // new one (a slot the new worker claimed) after.
    // Until the new worker's claims, next_id refuses (lease_unavailable).
    let ready = wait_ready(c, "stolen", Duration::from_secs(20));
    run.check(ready.is_ok(), || {
        format!("after the worker's restart: {ready:?}")
    });
    let got = ids_when_reserved(c, "stolen", 100);
    run.check(got.is_ok(), || {
        format!("after the worker's restart: {got:?}")
    });
    println!(
        "lease: the launcher terminated ({l_before:?}), started again ({l_after:?}), the worker \
         kept ({still:?}); the worker terminated ({before:?}), started again ({after:?}), \
         next_ids answers"
    );
}
