#![cfg(feature = "postgres")]
//! The SQL store on PostgreSQL (`SNOWMINT_TEST_POSTGRES_URL`, e.g.
//! `postgres://postgres@127.0.0.1:5432/test`; `SNOWMINT_STORES=postgres cargo xtask test stores`
//! sets it): the contract, fault and SQL suites (`lease/test-support`,
//! shared with MySQL/MariaDB), then what only PostgreSQL has.

use std::time::{Duration, Instant};

use snowmint::FenceCause;
use snowmint_lease::{ClaimRequest, Settings, SlotSpace, SqlStore, Store, StoreError};
use snowmint_lease_test_support::sql::{
    bad_hwm_is_refused, bad_hwm_table, next_claim_at_the_same_fence, wrong_credentials, Db,
    SqlServer, BAD_HWM_CASES,
};
use snowmint_lease_test_support::{contract_suite, fault_suite, sql_suite, twitter, unique_ns};

/// The server of `SNOWMINT_TEST_POSTGRES_URL`.
struct Postgres;

impl SqlServer for Postgres {
    const NAME: &'static str = "postgres";
    const VAR: &'static str = "POSTGRES";
    const PROBE: &'static str = env!("CARGO_BIN_EXE_snowmint-lease-probe");
    const CLOCK_SERVER: &'static str = "FAKETIME";

    fn db() -> Db {
        db()
    }

    fn overwrite_space_text(space: &SlotSpace, text: &str) {
        let mut c = postgres::Client::connect(&db().url, postgres::NoTls).unwrap();
        let n = c
            .execute(
                "UPDATE snowmint_lease_space SET space_text = $1 WHERE space_key = $2",
                &[&text, &space.key()],
            )
            .unwrap();
        assert_eq!(n, 1);
    }
}

contract_suite!(Postgres, restart);
fault_suite!(Postgres, clock);
sql_suite!(Postgres);

fn db() -> Db {
    Db::from_env(
        "SNOWMINT_TEST_POSTGRES_URL",
        "postgres",
        |url, timeout_ms| SqlStore::postgres(url, timeout_ms).unwrap(),
    )
}

#[test]
fn wrong_user() {
    // Local servers trust their users (any password goes): an unknown role fails.
    wrong_credentials(
        &db(),
        &["snowmint_no_such_user", "snowmint_no_such_user:s3cret-pw"],
    );
}

#[test]
fn bad_url_is_invalid_option() {
    let e = SqlStore::postgres("postgres://h:notaport/db", 1000).unwrap_err();
    assert_eq!(e.code(), "invalid_option", "{e}");
}

/// A hand-made slot table (a schema of the test's own) whose `hwm_ms` is a
/// NUMERIC with a fraction, text, or negative: a bad record, never hwm 0.
#[test]
fn an_unreadable_hwm_is_a_bad_record() {
    let db = db();
    for (i, (hwm_type, hwm, shown)) in BAD_HWM_CASES.iter().enumerate() {
        let schema = format!("{}_{i}", unique_ns("hwm").replace('-', "_"));
        let mut admin = postgres::Client::connect(&db.url, postgres::NoTls).unwrap();
        admin
            .batch_execute(&format!("CREATE SCHEMA {schema}"))
            .unwrap();
        let hwm_type = hwm_type.replace("DECIMAL", "NUMERIC");
        for stmt in bad_hwm_table(&hwm_type, hwm) {
            admin
                .batch_execute(&format!("SET search_path = {schema}; {stmt}"))
                .unwrap();
        }
        // Dropped even when the test fails: the server is shared.
        struct DropSchema(String, String);
        impl Drop for DropSchema {
            fn drop(&mut self) {
                if let Ok(mut c) = postgres::Client::connect(&self.0, postgres::NoTls) {
                    let _ = c.batch_execute(&format!("DROP SCHEMA {} CASCADE", self.1));
                }
            }
        }
        let _drop = DropSchema(db.url.clone(), schema.clone());
        let url = format!("{}?options=-c%20search_path%3D{schema}", db.url);
        let store = SqlStore::postgres(&url, 5000).unwrap();
        bad_hwm_is_refused(&store, shown);
    }
}

/// The settings that lose acknowledged writes are refused at claim, naming
/// the setting and the URL option; `sql_allow_unsafe` serves them by name.
/// The store reads its own connection's setting, so the URL's `options` set
/// it for this test's sessions only (the shared server is not reconfigured).
#[test]
fn synchronous_commit_off_is_refused() {
    let db = db();
    let url = format!("{}?options=-c%20synchronous_commit%3Doff", db.url);
    let space = SlotSpace::new(
        twitter(),
        &[("datacenter", 1)],
        Some(&unique_ns("synccommit")),
    )
    .unwrap();
    let req = ClaimRequest::new(None, 5_000, 1_000);
    let e = SqlStore::postgres(&url, 5000)
        .unwrap()
        .claim(&space, &req)
        .unwrap_err();
    let text = format!("{e:?}");
    assert!(
        text.contains("synchronous_commit is off")
            && text.contains("sql_allow_unsafe=synchronous_commit"),
        "{text}"
    );
    let settings = Settings {
        sql_allow_unsafe: vec!["synchronous_commit".into()],
        ..Settings::default()
    };
    let store = SqlStore::postgres_with(&url, &settings).unwrap();
    let c = store.claim(&space, &req).unwrap();
    store.release(&space, &c.holder, c.hwm_ms).unwrap();
    // Another name does not open it.
    let settings = Settings {
        sql_allow_unsafe: vec!["fsync".into()],
        ..Settings::default()
    };
    let store = SqlStore::postgres_with(&url, &settings).unwrap();
    assert!(store.claim(&space, &req).is_err());
}

/// Two schemas on the search path holding a lease table of the same name:
/// holders whose search paths differ would use different tables, so the
/// store refuses, naming both schemas.
#[test]
fn a_lease_table_in_two_schemas_is_refused() {
    let db = db();
    let ns = unique_ns("schemas").replace('-', "_");
    let (a, b) = (format!("{ns}_a"), format!("{ns}_b"));
    let mut admin = postgres::Client::connect(&db.url, postgres::NoTls).unwrap();
    admin
        .batch_execute(&format!("CREATE SCHEMA {a}; CREATE SCHEMA {b}"))
        .unwrap();
    struct DropSchemas(String, Vec<String>);
    impl Drop for DropSchemas {
        fn drop(&mut self) {
            if let Ok(mut c) = postgres::Client::connect(&self.0, postgres::NoTls) {
                for s in &self.1 {
                    let _ = c.batch_execute(&format!("DROP SCHEMA {s} CASCADE"));
                }
            }
        }
    }
    let _drop = DropSchemas(db.url.clone(), vec![a.clone(), b.clone()]);
    let space = SlotSpace::new(twitter(), &[("datacenter", 1)], Some(&ns)).unwrap();
    let req = ClaimRequest::new(None, 5_000, 1_000);
    let with_path = |path: &str| {
        let url = format!("{}?options=-c%20search_path%3D{path}", db.url);
        SqlStore::postgres(&url, 5000).unwrap()
    };
    // The tables made in a; one of the same name in b.
    let c = with_path(&a).claim(&space, &req).unwrap();
    admin
        .batch_execute(&format!(
            "CREATE TABLE {b}.snowmint_lease_slot (LIKE {a}.snowmint_lease_slot INCLUDING ALL)"
        ))
        .unwrap();
    for path in [format!("{a},{b}"), format!("{b},{a}")] {
        let e = with_path(&path).claim(&space, &req).unwrap_err();
        let text = format!("{e:?}");
        assert!(
            text.contains(&format!("schema {a}")) && text.contains(&format!("schema {b}")),
            "{text}"
        );
    }
    // Alone on its path, each schema is served.
    let store = with_path(&a);
    store.release(&space, &c.holder, c.hwm_ms).unwrap();
}

/// The lease tables restored (pg_dump, then psql) into another cluster, a
/// separate initdb with its own system identifier
/// (`SNOWMINT_TEST_POSTGRES_RESTORE_URL`, a throwaway server), after a holder
/// renewed past the dump: its renewal is lost there, and the next claim is
/// fenced (`StoreChanged`) above everything the holder was confirmed, as
/// store time + window + 2 × max_skew_ms. The restored store is used by a
/// user without superuser rights, which can read the identity.
#[test]
fn restored_into_another_cluster_is_fenced() {
    let db = db();
    let target = std::env::var("SNOWMINT_TEST_POSTGRES_RESTORE_URL").unwrap_or_else(|_| {
        panic!("SNOWMINT_TEST_POSTGRES_RESTORE_URL is not set: a throwaway server (cargo xtask test stores)")
    });
    let ns = unique_ns("restore");
    let space = SlotSpace::new(twitter(), &[("datacenter", 1)], Some(&ns)).unwrap();
    let req = ClaimRequest::new(Some(3), 60_000, 1_000);
    let source = db.store();
    let a = source.claim(&space, &req).unwrap();
    assert_eq!(a.holder.slot, 3);
    // The dump: the lease tables as they are now.
    let dump = std::process::Command::new("pg_dump")
        .args(["--no-owner", "--no-privileges"])
        .args(["-t", "snowmint_lease_space", "-t", "snowmint_lease_slot"])
        .args(["-t", "snowmint_lease_marker", "-d", &db.url])
        .output()
        .unwrap();
    assert!(
        dump.status.success(),
        "{}",
        String::from_utf8_lossy(&dump.stderr)
    );
    // Confirmed after the dump: lost by the restore.
    let renewed = source.renew(&space, &a.holder, 60_000, 5_000).unwrap();

    // A database of its own on the other cluster, and a plain user.
    let dbname = ns.replace('-', "_");
    let user = format!("{dbname}_u");
    let mut admin = postgres::Client::connect(&target, postgres::NoTls).unwrap();
    for sql in [
        format!("CREATE DATABASE {dbname}"),
        format!("CREATE ROLE {user} LOGIN NOSUPERUSER"),
    ] {
        admin.batch_execute(&sql).unwrap();
    }
    let base = target.rsplit_once('/').unwrap().0.to_string();
    let restored_admin = format!("{base}/{dbname}");
    let mut psql = std::process::Command::new("psql")
        .args(["-q", "-v", "ON_ERROR_STOP=1", "-d", &restored_admin])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    use std::io::Write;
    psql.stdin.take().unwrap().write_all(&dump.stdout).unwrap();
    assert!(psql.wait().unwrap().success());
    postgres::Client::connect(&restored_admin, postgres::NoTls)
        .unwrap()
        .batch_execute(&format!(
            "GRANT ALL ON ALL TABLES IN SCHEMA public TO {user}"
        ))
        .unwrap();
    let url = restored_admin.replacen("postgres@", &format!("{user}@"), 1);
    let restored = SqlStore::postgres(&url, 5000).unwrap();

    // A's renewal there is lost (its record is back, the server is not).
    let e = restored
        .renew(&space, &a.holder, 60_000, 1_000)
        .unwrap_err();
    assert!(matches!(e, StoreError::Lost(_)), "{e:?}");
    // The next claim of the space is fenced above A's lost renewal.
    let now = restored.now_ms().unwrap();
    let b = restored.claim(&space, &req).unwrap();
    assert_eq!(b.fence, Some(FenceCause::StoreChanged), "{b:?}");
    assert!(b.prev_hwm_ms > renewed.hwm_ms, "{b:?} {renewed:?}");
    let span = 1_000 + 2 * Settings::default().max_skew_ms;
    assert!(b.prev_hwm_ms >= now + span, "{b:?} now {now}");
    // A, once more: still lost (its token is gone now).
    assert!(restored.renew(&space, &a.holder, 60_000, 1_000).is_err());
    // Later claims of the space on this server start at the same fence,
    // not a new one.
    restored.release(&space, &b.holder, b.hwm_ms).unwrap();
    let c = next_claim_at_the_same_fence(&restored, &space, &req, &b);
    restored.release(&space, &c.holder, c.hwm_ms).unwrap();
    source.release(&space, &a.holder, renewed.hwm_ms).unwrap();

    // fsync=off on that server (reloaded): refused, naming it.
    admin.batch_execute("ALTER SYSTEM SET fsync = off").unwrap();
    admin.batch_execute("SELECT pg_reload_conf()").unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let refused = loop {
        match restored.claim(&space, &req) {
            Err(e) => break Some(e),
            Ok(c) => {
                restored.release(&space, &c.holder, c.hwm_ms).unwrap();
                if Instant::now() > deadline {
                    break None;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    };
    admin.batch_execute("ALTER SYSTEM RESET fsync").unwrap();
    admin.batch_execute("SELECT pg_reload_conf()").unwrap();
    let e = refused.expect("fsync=off was never refused");
    assert!(format!("{e:?}").contains("sql_allow_unsafe=fsync"), "{e:?}");
}
