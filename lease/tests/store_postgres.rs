#![cfg(feature = "postgres")]
//! The SQL store on PostgreSQL (`SNOWMINT_TEST_POSTGRES_URL`, e.g.
//! `postgres://postgres@127.0.0.1:5432/test`; `scripts/test-stores postgres`
//! sets it). The suite is shared with MySQL/MariaDB: `tests/sql/mod.rs`.

mod common;
mod sql;

use snowmint_lease::SqlStore;

fn db() -> sql::Db {
    sql::Db::from_env(
        "SNOWMINT_TEST_POSTGRES_URL",
        "postgres",
        |url, timeout_ms| SqlStore::postgres(url, timeout_ms).unwrap(),
        |url, key| {
            let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
            let n = c
                .execute(
                    "UPDATE snowmint_lease_space SET space_text = 'another space' WHERE space_key = $1",
                    &[&key],
                )
                .unwrap();
            assert_eq!(n, 1);
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
fn wrong_user() {
    // Local servers trust their users (any password goes): an unknown role fails.
    sql::wrong_credentials(
        &db(),
        &["snowmint_no_such_user", "snowmint_no_such_user:s3cret-pw"],
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
    sql::restart("SNOWMINT_TEST_POSTGRES");
}

#[test]
fn paused_holder_never_overlaps() {
    sql::paused_holder(&db());
}

#[test]
fn bad_url_is_invalid_option() {
    let e = SqlStore::postgres("postgres://h:notaport/db", 1000).unwrap_err();
    assert_eq!(e.code(), "invalid_option", "{e}");
}

#[test]
fn hwm_too_far_is_refused() {
    let db = db();
    common::hwm_too_far_is_refused(&db.url, &sql::unique_ns("toofar"));
}

/// A hand-made slot table (a schema of the test's own) whose `hwm_ms` is a
/// NUMERIC with a fraction, text, or negative: a bad record, never hwm 0.
#[test]
fn an_unreadable_hwm_is_a_bad_record() {
    let db = db();
    for (i, (hwm_type, hwm, shown)) in sql::BAD_HWM_CASES.iter().enumerate() {
        let schema = format!("{}_{i}", sql::unique_ns("hwm").replace('-', "_"));
        let mut admin = postgres::Client::connect(&db.url, postgres::NoTls).unwrap();
        admin
            .batch_execute(&format!("CREATE SCHEMA {schema}"))
            .unwrap();
        let hwm_type = hwm_type.replace("DECIMAL", "NUMERIC");
        for stmt in sql::bad_hwm_table(&hwm_type, hwm) {
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
        sql::bad_hwm_is_refused(&store, shown);
    }
}
