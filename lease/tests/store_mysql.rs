#![cfg(feature = "mysql")]
//! The SQL store on MySQL or MariaDB (`SNOWMINT_TEST_MYSQL_URL`, e.g.
//! `mysql://root@127.0.0.1:3306/test`; `scripts/test-stores mysql`
//! sets it). The suite is shared with PostgreSQL: `tests/sql/mod.rs`.

mod common;
mod sql;

use snowmint_lease::SqlStore;

fn db() -> sql::Db {
    sql::Db::from_env(
        "SNOWMINT_TEST_MYSQL_URL",
        "mysql",
        |url, timeout_ms| SqlStore::mysql(url, timeout_ms).unwrap(),
        |url, key| {
            use mysql::prelude::Queryable;
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
