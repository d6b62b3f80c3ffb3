#![cfg(feature = "mysql")]
//! The SQL store on MySQL or MariaDB (`SNOWMINT_TEST_MYSQL_URL`, e.g.
//! `mysql://root@127.0.0.1:3306/test`; `SNOWMINT_STORES=mysql cargo xtask test stores`
//! sets it): the contract, fault and SQL suites (`lease/test-support`,
//! shared with PostgreSQL), then what only MySQL/MariaDB has.

use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use snowmint::FenceCause;
use snowmint_lease::{ClaimRequest, Settings, SlotSpace, SlotState, SqlStore, Store, StoreError};
use snowmint_lease_test_support::sql::{
    bad_hwm_is_refused, bad_hwm_table, next_claim_at_the_same_fence, wrong_credentials, Db,
    SqlServer, BAD_HWM_CASES,
};
use snowmint_lease_test_support::{contract_suite, fault_suite, sql_suite, twitter, unique_ns};

/// The server of `SNOWMINT_TEST_MYSQL_URL`.
struct Mysql;

impl SqlServer for Mysql {
    const NAME: &'static str = "mysql";
    const VAR: &'static str = "MYSQL";
    const PROBE: &'static str = env!("CARGO_BIN_EXE_snowmint-lease-probe");

    fn db() -> Db {
        db()
    }

    fn overwrite_space_text(space: &SlotSpace, text: &str) {
        let mut c = mysql::Conn::new(mysql::Opts::from_url(&db().url).unwrap()).unwrap();
        c.exec_drop(
            "UPDATE snowmint_lease_space SET space_text = ? WHERE space_key = ?",
            (text, space.key()),
        )
        .unwrap();
        assert_eq!(c.affected_rows(), 1);
    }
}

contract_suite!(Mysql, restart);
fault_suite!(Mysql);
sql_suite!(Mysql);

fn db() -> Db {
    db_from("SNOWMINT_TEST_MYSQL_URL")
}

fn db_from(var: &str) -> Db {
    Db::from_env(var, "mysql", |url, timeout_ms| {
        SqlStore::mysql(url, timeout_ms).unwrap()
    })
}

#[test]
fn wrong_user_or_password() {
    wrong_credentials(
        &db(),
        &[
            "snowmint_no_such_user",
            "root:s3cret-pw",
            "snowmint_no_such_user:s3cret-pw",
        ],
    );
}

#[test]
fn bad_url_is_invalid_option() {
    let e = SqlStore::mysql("mysql://h:3306/db?no_such_option=1", 1000).unwrap_err();
    assert_eq!(e.code(), "invalid_option", "{e}");
}

/// The slot record `slot` of space `key` as a fresh connection of `store` sees it.
fn record(store: &SqlStore, key: &str, slot: u64) -> Option<snowmint_lease::SlotRecord> {
    let (_, spaces) = store.list().unwrap();
    let space = spaces.into_iter().find(|s| s.key == key)?;
    space.slots.into_iter().find(|r| r.slot == slot)
}

/// Kills every connection of `user` from the server side, as a network cut
/// or a crashed client would end it: the server rolls back whatever that
/// connection had not committed. Returns how many were killed.
fn kill_connections(admin: &mut mysql::Conn, user: &str) -> usize {
    let select = "SELECT id FROM information_schema.processlist WHERE user = ?";
    let ids: Vec<u64> = admin.exec(select, (user,)).unwrap();
    for id in &ids {
        admin.query_drop(format!("KILL CONNECTION {id}")).unwrap();
    }
    // Gone (and rolled back) before the test goes on.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !admin.exec::<u64, _, _>(select, (user,)).unwrap().is_empty() {
        assert!(
            Instant::now() < deadline,
            "{user}'s connections outlived KILL"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    ids.len()
}

/// On a server started with `--autocommit=0` (a default some DBAs set), every
/// write the store confirms is committed: a claim of a never-used slot is seen
/// by another connection while it is held, and survives its holder's
/// connection being killed before any renewal, so a second claimer does not
/// get the slot at `hwm` 0 and its successor after the TTL starts above the
/// first holder's reservation. Renewals and releases likewise. (Before the
/// fix, the claim's INSERT ran outside `BEGIN`/`COMMIT`: the other connection
/// saw no slot, and the killed connection's claim was rolled back.)
#[test]
fn autocommit_off_every_write_is_committed() {
    let db = db_from("SNOWMINT_TEST_MYSQL_AUTOCOMMIT0_URL");
    let mut admin = mysql::Conn::new(mysql::Opts::from_url(&db.url).unwrap()).unwrap();
    let global: i64 = admin
        .query_first("SELECT @@global.autocommit")
        .unwrap()
        .unwrap();
    assert_eq!(
        global, 0,
        "this test needs a server started with --autocommit=0"
    );
    // The holders connect as a user of their own, so that their connections
    // can be found and killed.
    let user = format!("snowmint_ac0_{}", std::process::id());
    admin
        .query_drop(format!("CREATE USER IF NOT EXISTS '{user}'@'%'"))
        .unwrap();
    admin
        .query_drop(format!("GRANT ALL ON test.* TO '{user}'@'%'"))
        .unwrap();
    let holder_url = db.with_userinfo(&user);
    let observer = db.store();

    let ns = unique_ns("ac0");
    let space = SlotSpace::new(twitter(), &[("datacenter", 1)], Some(&ns)).unwrap();
    let key = space.key().to_string();
    let req = |slot| ClaimRequest::new(Some(slot), 3_000, 1_000);

    // A claims slot 3, never used: the INSERT path.
    let a = SqlStore::mysql(&holder_url, 5_000).unwrap();
    let claim = a.claim(&space, &req(3)).unwrap();
    assert_eq!((claim.holder.slot, claim.prev_hwm_ms), (3, 0), "{claim:?}");
    let seen = record(&observer, &key, 3).expect("another connection sees A's claim");
    assert_eq!(seen.state, SlotState::Held, "{seen:?}");
    assert_eq!(seen.token, claim.holder.token);
    assert_eq!(seen.hwm_ms, claim.hwm_ms);

    // A's connection dies before its first renewal.
    assert_eq!(kill_connections(&mut admin, &user), 1);
    let seen = record(&observer, &key, 3).expect("A's claim survives its connection");
    assert_eq!(seen.state, SlotState::Held, "{seen:?}");
    // B does not get slot 3 while A's claim lasts.
    let b = observer.claim(&space, &req(3)).unwrap();
    assert_ne!(b.holder.slot, 3, "B took A's slot: {b:?}");
    // After A's TTL, slot 3's next holder starts above A's reservation.
    let deadline = Instant::now() + Duration::from_secs(20);
    while observer.now_ms().unwrap() <= claim.expires_ms.unwrap() {
        assert!(
            Instant::now() < deadline,
            "the store's clock did not pass A's TTL"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let c = observer.claim(&space, &req(3)).unwrap();
    assert_eq!((c.holder.slot, c.holder.counter), (3, 2), "{c:?}");
    assert!(c.prev_hwm_ms >= claim.hwm_ms, "{c:?} {claim:?}");

    // A renewal and a release, each followed by a killed connection.
    let d = SqlStore::mysql(&holder_url, 5_000).unwrap();
    let dc = d.claim(&space, &req(9)).unwrap();
    let r = d.renew(&space, &dc.holder, 3_000, 60_000).unwrap();
    assert_eq!(kill_connections(&mut admin, &user), 1);
    let seen = record(&observer, &key, 9).unwrap();
    assert_eq!(
        (seen.state, seen.hwm_ms),
        (SlotState::Held, r.hwm_ms),
        "{seen:?}"
    );
    let d = SqlStore::mysql(&holder_url, 5_000).unwrap();
    d.release(&space, &dc.holder, r.hwm_ms + 1).unwrap();
    assert_eq!(kill_connections(&mut admin, &user), 1);
    let seen = record(&observer, &key, 9).unwrap();
    assert_eq!(
        (seen.state, seen.hwm_ms),
        (SlotState::Free, r.hwm_ms + 1),
        "{seen:?}"
    );

    admin.query_drop(format!("DROP USER '{user}'@'%'")).unwrap();
}

/// A database of a test's own on the shared server (`url`: the same
/// server and credentials), dropped when this is dropped, also when the
/// test fails.
struct Database {
    admin: String,
    name: String,
    url: String,
}

impl Database {
    fn new(db: &Db, tag: &str) -> Database {
        let name = unique_ns(tag).replace('-', "_");
        let mut admin = mysql::Conn::new(mysql::Opts::from_url(&db.url).unwrap()).unwrap();
        admin.query_drop(format!("CREATE DATABASE {name}")).unwrap();
        let (base, _) = db.url.rsplit_once('/').unwrap();
        Database {
            admin: db.url.clone(),
            url: format!("{base}/{name}"),
            name,
        }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        if let Ok(o) = mysql::Opts::from_url(&self.admin) {
            if let Ok(mut c) = mysql::Conn::new(o) {
                let _ = c.query_drop(format!("DROP DATABASE {}", self.name));
            }
        }
    }
}

/// The first claims of a new database, at once: 40 claimers, each with a
/// connection of its own, on 32 slots of a database without the lease
/// tables: every claimer gets a slot or `NoFreeSlot`, none an error. On
/// InnoDB the first markers' inserts into an empty table took gap locks
/// that deadlocked one another, and a claimer that lost ten times in a row
/// failed (CI saw 39 of 40 processes fail so); the guard's writes now take
/// turns on a named lock. Five new databases, one after another.
#[test]
fn first_claims_of_a_new_database_all_succeed() {
    let db = db();
    for round in 0..5 {
        let fresh = Database::new(&db, &format!("first{round}"));
        let space = std::sync::Arc::new(
            SlotSpace::new(twitter(), &[("datacenter", 1)], Some("first")).unwrap(),
        );
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(40));
        let threads: Vec<_> = (0..40)
            .map(|_| {
                let store = SqlStore::mysql(&fresh.url, 5000).unwrap();
                let (space, barrier) = (space.clone(), barrier.clone());
                std::thread::spawn(move || {
                    store.now_ms().unwrap();
                    barrier.wait();
                    store.claim(&space, &ClaimRequest::new(None, 30_000, 1_000))
                })
            })
            .collect();
        let mut slots = Vec::new();
        for t in threads {
            match t.join().unwrap() {
                Ok(c) => slots.push(c.holder.slot),
                Err(StoreError::NoFreeSlot) => {}
                Err(e) => panic!("round {round}: a first claim failed: {e:?}"),
            }
        }
        slots.sort_unstable();
        assert_eq!(slots, (0..32).collect::<Vec<u64>>(), "round {round}");
    }
}

/// A hand-made slot table (a database of the test's own) whose `hwm_ms` is
/// a DECIMAL with a fraction, text, or negative: a bad record, never hwm 0;
/// through the driver, `lease_unavailable` naming the column.
#[test]
fn an_unreadable_hwm_is_a_bad_record() {
    let db = db();
    let mut admin = mysql::Conn::new(mysql::Opts::from_url(&db.url).unwrap()).unwrap();
    for (i, (hwm_type, hwm, shown)) in BAD_HWM_CASES.iter().enumerate() {
        let fresh = Database::new(&db, &format!("hwm{i}"));
        let name = &fresh.name;
        for stmt in bad_hwm_table(hwm_type, hwm) {
            admin.query_drop(format!("USE {name}")).unwrap();
            admin.query_drop(stmt).unwrap();
        }
        let url = &fresh.url;
        let store = SqlStore::mysql(url, 5000).unwrap();
        bad_hwm_is_refused(&store, shown);
        drop(store);
        let e = snowmint_lease::LeasedGenerator::open(
            &format!("{url}?namespace=bad-hwm"),
            twitter(),
            &[("datacenter", 1)],
            snowmint::Options::default(),
        )
        .unwrap_err();
        assert_eq!(e.code(), "lease_unavailable", "{e}");
        assert!(e.to_string().contains("hwm_ms"), "{e}");
    }
}

/// On a throwaway MariaDB started with `--innodb-flush-log-at-trx-commit=2`
/// (`SNOWMINT_TEST_MYSQL_FLUSH2_URL`), one step after another (they change
/// the server): the setting is refused at claim, naming it and the URL
/// option, and served when the URL names it; the server made a replica
/// (`CHANGE MASTER TO`, replication not started) is refused, and served when
/// the URL names `replica`; a holder whose server's identity changes
/// (`server_id`, as another server under the same name) is lost at its next
/// renewal, and the next claim is fenced above its reservation.
#[test]
fn unsafe_settings_refused_and_another_server_fenced() {
    let url = std::env::var("SNOWMINT_TEST_MYSQL_FLUSH2_URL").unwrap_or_else(|_| {
        panic!(
            "SNOWMINT_TEST_MYSQL_FLUSH2_URL is not set: a throwaway server (cargo xtask test stores)"
        )
    });
    let mut admin = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
    let flush: i64 = admin
        .query_first("SELECT @@innodb_flush_log_at_trx_commit")
        .unwrap()
        .unwrap();
    assert_eq!(
        flush, 2,
        "this test needs --innodb-flush-log-at-trx-commit=2"
    );
    let space =
        SlotSpace::new(twitter(), &[("datacenter", 1)], Some(&unique_ns("unsafe"))).unwrap();
    let req = ClaimRequest::new(Some(3), 60_000, 1_000);
    let allowing = |names: &[&str]| {
        let settings = Settings {
            sql_allow_unsafe: names.iter().map(|n| n.to_string()).collect(),
            ..Settings::default()
        };
        SqlStore::mysql_with(&url, &settings).unwrap()
    };

    let e = SqlStore::mysql(&url, 5000)
        .unwrap()
        .claim(&space, &req)
        .unwrap_err();
    let text = format!("{e:?}");
    assert!(
        text.contains("innodb_flush_log_at_trx_commit is 2")
            && text.contains("sql_allow_unsafe=innodb_flush_log_at_trx_commit"),
        "{text}"
    );
    let store = allowing(&["innodb_flush_log_at_trx_commit"]);
    // (Fenced if an earlier run of this test changed the server's identity.)
    let a = store.claim(&space, &req).unwrap();
    assert_eq!(a.holder.slot, 3, "{a:?}");

    // A replica (its source configured, replication not started).
    admin
        .query_drop(
            "CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = 9, MASTER_USER = 'x'",
        )
        .unwrap();
    let claimed = store.claim(&space, &req);
    admin.query_drop("RESET SLAVE ALL").unwrap();
    let text = format!("{:?}", claimed.unwrap_err());
    assert!(
        text.contains("is a replica") && text.contains("sql_allow_unsafe=replica"),
        "{text}"
    );

    // Another server under the same name: another server_id.
    let renewed = store.renew(&space, &a.holder, 60_000, 1_000).unwrap();
    let old_id: i64 = admin.query_first("SELECT @@server_id").unwrap().unwrap();
    admin
        .query_drop(format!("SET GLOBAL server_id = {}", old_id + 1000))
        .unwrap();
    let restore_id = old_id;
    let result = std::panic::catch_unwind(|| {
        let e = store.renew(&space, &a.holder, 60_000, 1_000).unwrap_err();
        assert!(matches!(e, StoreError::Lost(_)), "{e:?}");
        let now = store.now_ms().unwrap();
        let b = store.claim(&space, &req).unwrap();
        assert_eq!(b.fence, Some(FenceCause::StoreChanged), "{b:?}");
        assert!(b.prev_hwm_ms > renewed.hwm_ms, "{b:?} {renewed:?}");
        let span = 1_000 + 2 * Settings::default().max_skew_ms;
        assert!(b.prev_hwm_ms >= now + span, "{b:?} now {now}");
        // A stays lost; the next claim starts at the same fence, not a new one.
        assert!(store.renew(&space, &a.holder, 60_000, 1_000).is_err());
        next_claim_at_the_same_fence(&store, &space, &req, &b);
    });
    admin
        .query_drop(format!("SET GLOBAL server_id = {restore_id}"))
        .unwrap();
    if let Err(p) = result {
        std::panic::resume_unwind(p);
    }
}
