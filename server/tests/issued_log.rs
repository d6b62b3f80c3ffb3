//! The record of issued IDs (`--issued-log`, `SNOWMINT_ISSUED_LOG`,
//! `issued_log` in the TOML file) against the built binary: one line
//! `GENERATOR ID ...` per answer, written before the answer (so the record
//! holds every ID an answer carried by the time the client has it), from
//! the router and from the fast path; a record that cannot be written fails
//! the request with no ID, and one that cannot be opened fails the start.

mod common;

use std::path::Path;

use common::*;

const FIXED: [&str; 6] = [
    "--preset",
    "twitter",
    "--node",
    "datacenter=1",
    "--node",
    "worker=3",
];

/// The record's lines: (generator, IDs).
fn record(path: &Path) -> Vec<(String, Vec<u64>)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let mut words = l.split(' ');
            let name = words.next().unwrap().to_string();
            (name, words.map(|i| i.parse().unwrap()).collect())
        })
        .collect()
}

/// IDs from `/v1/ids` (the router) and Leaf's route (the fast path), each
/// answer's IDs already in the record when the answer is read.
fn issue_and_check(s: &Server, path: &Path, name: &str) {
    let mut want = record(path);
    let ids = ids_of(&s.get("/v1/ids?count=7"));
    want.push((name.to_string(), ids));
    assert_eq!(record(path), want);
    let r = s.get("/api/snowflake/get/any");
    assert_eq!(r.status, 200, "{r:?}");
    want.push((name.to_string(), vec![r.body.trim().parse().unwrap()]));
    assert_eq!(record(path), want);
}

#[test]
fn every_answer_is_recorded_before_it_is_sent() {
    let dir = temp_dir("issued");
    let path = dir.join("issued");
    let p = path.to_str().unwrap();

    // The flag.
    let mut s = Server::start(&[&FIXED[..], &["--issued-log", p]].concat());
    issue_and_check(&s, &path, "default");
    s.terminate();

    // The variable: appended to the same file.
    let mut s = Server::try_start(
        &[&FIXED[..], &["--name", "orders"]].concat(),
        &[("SNOWMINT_ISSUED_LOG", p)],
    )
    .unwrap();
    issue_and_check(&s, &path, "orders");
    s.terminate();

    // The TOML file's key.
    let config = dir.join("server.toml");
    std::fs::write(&config, format!("issued_log = {p:?}\n")).unwrap();
    let config = config.to_str().unwrap();
    let mut s = Server::start(&[&FIXED[..], &["--config", config]].concat());
    issue_and_check(&s, &path, "default");
    s.terminate();
    assert_eq!(record(&path).len(), 6);
}

#[test]
fn a_record_that_cannot_be_written_fails_the_request() {
    // A full disk: every write fails.
    let mut s = Server::start(&[&FIXED[..], &["--issued-log", "/dev/full"]].concat());
    let r = s.get("/v1/ids?count=3");
    assert_eq!(r.status, 500, "{r:?}");
    assert_eq!(r.code(), "issued_log_failed");
    assert!(!r.body.contains("\"ids\""), "{r:?}");
    let r = s.get("/api/snowflake/get/any");
    assert_eq!(r.status, 500, "{r:?}");
    let metrics = s.get("/metrics").body;
    assert!(
        metrics.contains("issued_log_failed"),
        "the failures are counted: {metrics}"
    );
    s.terminate();

    // One that cannot be opened (a directory): the server does not start.
    let dir = temp_dir("issued-dir");
    let (code, text) = run(
        &[&FIXED[..], &["--issued-log", dir.to_str().unwrap()]].concat(),
        &[],
    );
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("issued_log"), "{text}");
}
