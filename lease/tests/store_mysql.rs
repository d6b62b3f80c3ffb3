#![cfg(feature = "mysql")]
//! The SQL store on MySQL or MariaDB (`SNOWMINT_TEST_MYSQL_URL`, e.g.
//! `mysql://root@127.0.0.1:3306/test`; `scripts/test-stores mysql`
//! sets it). The suite is shared with PostgreSQL: `tests/sql/mod.rs`.

mod common;
mod sql;

use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use snowmint_lease::{ClaimRequest, SlotSpace, SlotState, SqlStore, Store};

fn db() -> sql::Db {
    db_from("SNOWMINT_TEST_MYSQL_URL")
}

fn db_from(var: &str) -> sql::Db {
    sql::Db::from_env(
        var,
        "mysql",
        |url, timeout_ms| SqlStore::mysql(url, timeout_ms).unwrap(),
        |url, key| {
            let mut c = mysql::Conn::new(mysql::Opts::from_url(url).unwrap()).unwrap();
            c.exec_drop(
                "UPDATE snowmint_lease_space SET space_text = 'another space' WHERE space_key = ?",
                (key,),
            )
            .unwrap();
            assert_eq!(c.affected_rows(), 1);
        },
    )
}

#[test]
fn contract() {
    sql::contract(&db());
}

#[test]
fn expired_claim_is_taken_over() {
    sql::expiry(&db());
}

#[test]
fn space_text_is_checked() {
    sql::space_text_is_checked(&db());
}

#[test]
fn through_the_driver() {
    sql::through_the_driver(&db());
}

#[test]
fn calls_reuse_one_connection() {
    sql::calls_reuse_one_connection(&db());
}

#[test]
fn racing_claimers() {
    sql::racing_claimers(&db());
}

#[test]
fn unreachable_server() {
    sql::unreachable(&db());
}

#[test]
fn calls_are_bounded_on_their_own() {
    sql::calls_are_bounded_on_their_own(&db());
}

#[test]
fn wrong_user_or_password() {
    sql::wrong_credentials(
        &db(),
        &[
            "snowmint_no_such_user",
            "root:s3cret-pw",
            "snowmint_no_such_user:s3cret-pw",
        ],
    );
}

#[test]
fn forty_processes_thirty_two_slots() {
    sql::forty_processes(&db());
}

#[test]
fn killed_holder_is_replaced_after_the_ttl() {
    sql::crash(&db());
}

#[test]
fn clock_skew_refused_at_claim() {
    sql::clock_skew(&db());
}

#[test]
fn server_cut_off_then_back() {
    sql::store_down(&db());
}

#[test]
fn cut_off_past_the_ttl_while_another_takes_the_slot() {
    let db = db();
    common::cut_off_past_ttl(&db.url, &sql::unique_ns("cutttl"));
}

#[test]
fn hwm_survives_a_server_restart() {
    sql::restart("SNOWMINT_TEST_MYSQL");
}

#[test]
fn paused_holder_never_overlaps() {
    sql::paused_holder(&db());
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

    let ns = sql::unique_ns("ac0");
    let space = SlotSpace::new(common::twitter(), &[("datacenter", 1)], Some(&ns)).unwrap();
    let key = space.key().to_string();
    let req = |slot| ClaimRequest {
        prefer: Some(slot),
        ttl_ms: 3_000,
        window_ms: 1_000,
    };

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

#[test]
fn hwm_too_far_is_refused() {
    let db = db();
    common::hwm_too_far_is_refused(&db.url, &sql::unique_ns("toofar"));
}

/// A hand-made slot table (a database of the test's own) whose `hwm_ms` is
/// a DECIMAL with a fraction, text, or negative: a bad record, never hwm 0;
/// through the driver, `lease_unavailable` naming the column.
#[test]
fn an_unreadable_hwm_is_a_bad_record() {
    let db = db();
    let mut admin = mysql::Conn::new(mysql::Opts::from_url(&db.url).unwrap()).unwrap();
    for (i, (hwm_type, hwm, shown)) in sql::BAD_HWM_CASES.iter().enumerate() {
        let name = format!("{}_{i}", sql::unique_ns("hwm").replace('-', "_"));
        admin.query_drop(format!("CREATE DATABASE {name}")).unwrap();
        // Dropped even when the test fails: the server is shared.
        struct DropDatabase(String, String);
        impl Drop for DropDatabase {
            fn drop(&mut self) {
                if let Ok(o) = mysql::Opts::from_url(&self.0) {
                    if let Ok(mut c) = mysql::Conn::new(o) {
                        let _ = c.query_drop(format!("DROP DATABASE {}", self.1));
                    }
                }
            }
        }
        let _drop = DropDatabase(db.url.clone(), name.clone());
        for stmt in sql::bad_hwm_table(hwm_type, hwm) {
            admin.query_drop(format!("USE {name}")).unwrap();
            admin.query_drop(stmt).unwrap();
        }
        let (base, _) = db.url.rsplit_once('/').unwrap();
        let url = format!("{base}/{name}");
        let store = SqlStore::mysql(&url, 5000).unwrap();
        sql::bad_hwm_is_refused(&store, shown);
        drop(store);
        let e = snowmint_lease::LeasedGenerator::open(
            &format!("{url}?namespace=bad-hwm"),
            common::twitter(),
            &[("datacenter", 1)],
            snowmint::Options::default(),
        )
        .unwrap_err();
        assert_eq!(e.code(), "lease_unavailable", "{e}");
        assert!(e.to_string().contains("hwm_ms"), "{e}");
    }
}
