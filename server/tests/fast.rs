//! The HTTP/1.1 fast path (src/fast.rs) against the router it stands in
//! for: a server with it and one without (`--fast-path false`), on the same
//! configuration, give the same answers, byte for byte but the date and the
//! ID, to the same requests (with and without tokens, known and unknown
//! keys, queries, encodings and methods it hands to hyper); requests sent
//! together or byte by byte, and fast and other routes on one connection,
//! are each answered in order.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::{lease_arg, secret_file, temp_dir, Server};

/// A server with a token and two generators (or only `orders`: then every
/// Leaf key is served by it), the fast path on or off.
fn server(dir: &std::path::Path, fast: bool, two: bool) -> Server {
    let tokens = dir.join("tokens");
    secret_file(&tokens, "t0ken-one\nt0ken-two\n");
    let side = format!("{}-{}", if fast { "fast" } else { "router" }, two);
    let file = dir.join(format!("{side}.toml"));
    let mut text = format!(
        "[generators.orders]\nlayout = \"leaf\"\nlease = \"{}\"\n",
        lease_arg(&dir.join(format!("leases-{side}")))
    );
    if two {
        text.push_str(
            "[generators.users]\nlayout = \"twitter\"\nnodes = { datacenter = 3, worker = 4 }\n",
        );
    }
    std::fs::write(&file, text).unwrap();
    let fast = if fast { "true" } else { "false" };
    Server::start(&[
        "--config",
        file.to_str().unwrap(),
        "--token-file",
        tokens.to_str().unwrap(),
        "--fast-path",
        fast,
    ])
}

/// Sends `raw` on a new connection and reads until the server closes it.
fn exchange(addr: &str, raw: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(raw).unwrap();
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got);
    String::from_utf8(got).unwrap()
}

/// `text` with every `date:` value and every run of 16 or more digits
/// (an ID) replaced, so that two servers' answers compare.
fn normal(text: &str) -> String {
    let mut out = String::new();
    for line in text.split_inclusive("\r\n") {
        if line.to_ascii_lowercase().starts_with("date: ") {
            out.push_str("date: *\r\n");
            continue;
        }
        let mut digits = String::new();
        for c in line.chars() {
            if c.is_ascii_digit() {
                digits.push(c);
                continue;
            }
            out.push_str(if digits.len() >= 16 { "<id>" } else { &digits });
            digits.clear();
            out.push(c);
        }
        out.push_str(if digits.len() >= 16 { "<id>" } else { &digits });
    }
    out
}

#[test]
fn fast_answers_are_the_routers_answers() {
    same_answers(true);
    same_answers(false);
}

fn same_answers(two: bool) {
    let dir = temp_dir("fast");
    let (fast, router) = (server(&dir, true, two), server(&dir, false, two));
    let ok = "Authorization: Bearer t0ken-two\r\n";
    let requests: Vec<String> = [
        ("GET", "/api/snowflake/get/orders", ok),
        (
            "GET",
            "/api/snowflake/get/users",
            "authorization: bearer t0ken-one\r\n",
        ),
        ("GET", "/api/snowflake/get/orders?x=1&y=%20", ok),
        ("GET", "/api/snowflake/get/orders", ""),
        (
            "GET",
            "/api/snowflake/get/orders",
            "Authorization: Bearer wrong\r\n",
        ),
        (
            "GET",
            "/api/snowflake/get/orders",
            "Authorization: t0ken-two\r\n",
        ),
        ("GET", "/api/snowflake/get/other", ok),
        ("GET", "/api/snowflake/get/%6Frders", ok),
        ("GET", "/api/snowflake/get/orders/", ok),
        ("GET", "/api/snowflake/get/", ok),
        ("POST", "/api/snowflake/get/orders", ok),
        ("HEAD", "/healthz", ""),
        ("GET", "/healthz", ""),
        ("GET", "/healthz?probe=1", ""),
        ("GET", "/healthz", "Content-Length: 0\r\n"),
        ("GET", "/healthz", "Connection: keep-alive\r\n"),
    ]
    .iter()
    .map(|(method, path, headers)| {
        format!("{method} {path} HTTP/1.1\r\nHost: x\r\n{headers}Connection: close\r\n\r\n")
    })
    .collect();
    for raw in &requests {
        let a = exchange(&fast.addr, raw.as_bytes());
        let b = exchange(&router.addr, raw.as_bytes());
        assert!(a.starts_with("HTTP/1.1 "), "{raw:?}: {a:?}");
        assert_eq!(normal(&a), normal(&b), "{raw:?}, two generators: {two}");
    }
    // Without `Connection: close`: one answer each, on connections kept open.
    for raw in [
        "GET /api/snowflake/get/orders HTTP/1.1\r\nAuthorization: Bearer t0ken-one\r\n\r\n",
        "GET /healthz HTTP/1.1\r\n\r\n",
    ] {
        let answers: Vec<String> = [&fast.addr, &router.addr]
            .iter()
            .map(|addr| {
                let mut s = TcpStream::connect(addr).unwrap();
                s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
                s.write_all(raw.as_bytes()).unwrap();
                normal(&read_answers(&mut s, 1).concat())
            })
            .collect();
        assert_eq!(answers[0], answers[1], "{raw:?}");
    }
    // Both counted the same way.
    let metrics = |s: &Server| {
        let r = common::request(
            &s.addr,
            "/metrics",
            &[("Authorization", "Bearer t0ken-one")],
        );
        r.body
            .lines()
            .filter(|l| {
                (l.starts_with("snowmint_http_requests_total")
                    || l.starts_with("snowmint_ids_issued_total"))
                    && !l.contains("/metrics")
            })
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    // The same series and values (in the order each server first saw them).
    let (mut a, mut b) = (metrics(&fast), metrics(&router));
    a.sort();
    b.sort();
    assert!(!a.is_empty(), "no request counted");
    assert_eq!(a, b);
}

/// Reads `n` answers (by their content-length) from `s`.
fn read_answers(s: &mut TcpStream, n: usize) -> Vec<String> {
    let mut buf = Vec::new();
    let mut answers = Vec::new();
    let mut chunk = [0u8; 4096];
    while answers.len() < n {
        let text = String::from_utf8_lossy(&buf).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            let len = common::content_length(&text[..end]);
            if buf.len() >= end + 4 + len {
                answers.push(String::from_utf8(buf[..end + 4 + len].to_vec()).unwrap());
                buf.drain(..end + 4 + len);
                continue;
            }
        }
        let got = s.read(&mut chunk).unwrap();
        assert!(
            got > 0,
            "closed after {} answers: {answers:?}",
            answers.len()
        );
        buf.extend_from_slice(&chunk[..got]);
    }
    answers
}

fn status(answer: &str) -> &str {
    answer.split(' ').nth(1).unwrap()
}

#[test]
fn pipelined_split_and_mixed_requests_are_answered_in_order() {
    let dir = temp_dir("fast-mixed");
    let s = server(&dir, true, true);
    let auth = "Authorization: Bearer t0ken-one\r\n";
    let leaf = format!("GET /api/snowflake/get/orders HTTP/1.1\r\n{auth}\r\n");
    let health = "GET /healthz HTTP/1.1\r\n\r\n";
    let generators = format!("GET /v1/generators HTTP/1.1\r\n{auth}\r\n");
    let mut c = TcpStream::connect(&s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // Four at once: two fast, one the router's (the rest of the connection
    // is hyper's), one more fast route.
    c.write_all(format!("{leaf}{health}{generators}{leaf}").as_bytes())
        .unwrap();
    let answers = read_answers(&mut c, 4);
    let statuses: Vec<&str> = answers.iter().map(|a| status(a)).collect();
    assert_eq!(statuses, ["200", "200", "200", "200"], "{answers:?}");
    assert!(answers[1].ends_with("\r\n\r\nok\n"), "{answers:?}");
    assert!(answers[2].contains("\"generators\""), "{answers:?}");
    let ids: Vec<u64> = [&answers[0], &answers[3]]
        .iter()
        .map(|a| a.rsplit("\r\n\r\n").next().unwrap().parse().unwrap())
        .collect();
    assert!(ids[0] < ids[1], "{ids:?}");
    // On a new connection, requests a byte at a time, then one and a half
    // requests in one write and the rest in the next.
    let mut c = TcpStream::connect(&s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    c.set_nodelay(true).unwrap();
    for b in leaf.as_bytes() {
        c.write_all(&[*b]).unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(status(&read_answers(&mut c, 1)[0]), "200");
    let two = format!("{leaf}{leaf}");
    let (first, rest) = two.split_at(leaf.len() + 10);
    c.write_all(first.as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    c.write_all(rest.as_bytes()).unwrap();
    let answers = read_answers(&mut c, 2);
    assert!(answers.iter().all(|a| status(a) == "200"), "{answers:?}");
    // An unauthenticated fast route goes to the router: 401, connection kept.
    c.write_all(b"GET /api/snowflake/get/orders HTTP/1.1\r\n\r\n")
        .unwrap();
    c.write_all(health.as_bytes()).unwrap();
    let answers = read_answers(&mut c, 2);
    assert_eq!((status(&answers[0]), status(&answers[1])), ("401", "200"));
}
