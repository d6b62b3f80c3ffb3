//! The access log (`--access-log`, `SNOWMINT_ACCESS_LOG`, `access_log` in
//! the TOML file) against the built binary: one `request` line per request,
//! from the fast path and from the router, with the route's pattern, the
//! method, status, IDs, duration and client address, as text and as JSON;
//! never a token, right or wrong; no such line without it.

mod common;

use serde_json::Value;

use common::*;

const TOKEN: &str = "access-log-token-5f3c9a1e77d2";
const WRONG: &str = "wrong-token-visible-only-if-leaked-41b8";

/// Requests of every kind the log distinguishes: the fast path (Leaf with a
/// good token, `/healthz`), the router (`/v1/ids`, a wrong token, a
/// route that does not exist, `/metrics`).
fn requests(s: &Server) {
    let good = format!("Bearer {TOKEN}");
    let wrong = format!("Bearer {WRONG}");
    let auth = [("Authorization", good.as_str())];
    assert_eq!(s.get_with("/api/snowflake/get/orders", &auth).status, 200);
    assert_eq!(s.get("/healthz").status, 200);
    let r = s.get_with("/v1/ids?count=7", &auth);
    assert_eq!(ids_of(&r).len(), 7);
    let r = s.get_with(
        "/api/snowflake/get/orders",
        &[("Authorization", wrong.as_str())],
    );
    assert_eq!(r.status, 401);
    assert_eq!(s.get_with("/no/such/route", &auth).status, 404);
    assert_eq!(s.get_with("/metrics", &auth).status, 200);
}

/// The `request` lines of `lines` as JSON objects (text lines parsed into
/// the same fields).
fn request_lines(lines: &[String]) -> Vec<Value> {
    lines
        .iter()
        .filter_map(|l| match serde_json::from_str::<Value>(l) {
            Ok(v) => (v["event"] == "request").then_some(v),
            Err(_) => l.split_once(" info request ").map(|(_, f)| text_fields(f)),
        })
        .collect()
}

/// `k="v" k=1 k=null ...` into an object.
fn text_fields(fields: &str) -> Value {
    let mut m = serde_json::Map::new();
    let mut rest = fields.trim();
    while let Some((k, v)) = rest.split_once('=') {
        let (value, next) = if let Some(q) = v.strip_prefix('"') {
            let end = q.find('"').unwrap();
            (Value::String(q[..end].to_string()), &q[end + 1..])
        } else {
            let end = v.find(' ').unwrap_or(v.len());
            (serde_json::from_str(&v[..end]).unwrap(), &v[end..])
        };
        m.insert(k.to_string(), value);
        rest = next.trim_start();
    }
    Value::Object(m)
}

/// Checks the lines of [`requests`]: one per request, in order, each with
/// its fields; neither token anywhere in the log.
fn check(lines: &[String]) {
    for l in lines {
        assert!(
            !l.contains(TOKEN) && !l.contains(WRONG) && !l.contains("Bearer"),
            "a token reached the log: {l}"
        );
    }
    let got = request_lines(lines);
    let want = [
        ("/api/snowflake/get/{key}", 200, 1),
        ("/healthz", 200, 0),
        ("/v1/ids", 200, 7),
        ("/api/snowflake/get/{key}", 401, 0),
        ("unmatched", 404, 0),
        ("/metrics", 200, 0),
    ];
    assert_eq!(got.len(), want.len(), "{lines:#?}");
    for (v, (route, status, ids)) in got.iter().zip(want) {
        assert_eq!(v["route"], route, "{v}");
        assert_eq!(v["method"], "GET", "{v}");
        assert_eq!(v["status"], status, "{v}");
        assert_eq!(v["ids"], ids, "{v}");
        let ms = v["duration_ms"].as_f64().unwrap_or(-1.0);
        assert!((0.0..10_000.0).contains(&ms), "{v}");
        let client = v["client"].as_str().unwrap_or_default();
        assert!(client.starts_with("127.0.0.1:"), "{v}");
    }
}

#[test]
fn the_access_log_has_one_line_per_request_and_no_token() {
    let dir = temp_dir("access-log");
    let tokens = dir.join("tokens");
    secret_file(&tokens, &format!("{TOKEN}\n"));
    let lease = lease_arg(&dir.join("leases"));
    let tokens = tokens.to_str().unwrap();
    let base = [
        "--preset",
        "leaf",
        "--lease",
        &lease,
        "--token-file",
        tokens,
    ];

    // The flag, text lines.
    let mut s = Server::start(&[&base[..], &["--access-log"]].concat());
    requests(&s);
    s.terminate();
    check(&s.log_lines());

    // The variable, JSON lines.
    let env = [("SNOWMINT_ACCESS_LOG", "true")];
    let args = [&base[..], &["--log-format", "json"]].concat();
    let mut s = Server::try_start(&args, &env).unwrap();
    requests(&s);
    s.terminate();
    let lines = s.log_lines();
    assert!(lines
        .iter()
        .all(|l| serde_json::from_str::<Value>(l).is_ok()));
    check(&lines);

    // The TOML file's key.
    let config = dir.join("server.toml");
    std::fs::write(&config, "access_log = true\n").unwrap();
    let config = config.to_str().unwrap();
    let mut s = Server::start(&[&base[..], &["--config", config]].concat());
    requests(&s);
    s.terminate();
    check(&s.log_lines());

    // Off by default: the same requests, no request line.
    let mut s = Server::start(&base);
    requests(&s);
    s.terminate();
    let lines = s.log_lines();
    assert!(request_lines(&lines).is_empty(), "{lines:#?}");
    assert!(lines.iter().any(|l| l.contains("lease_released")));
}
