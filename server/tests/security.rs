//! The server's security checks and limits against the built binary:
//! bearer tokens never over plain HTTP on a public address (unless
//! --insecure), a token file only its owner can read, tokens that could
//! never match refused, scoped tokens, the bound of --max-count, --name
//! checked, a lease URL from a file or the environment, the rate in IDs.
//! Every wait is bounded.

mod common;

use std::path::Path;

use common::*;

fn auth(token: &str) -> [(&'static str, String); 1] {
    [("Authorization", format!("Bearer {token}"))]
}

fn get(s: &Server, path: &str, token: &str) -> Response {
    let h = auth(token);
    s.get_with(path, &[(h[0].0, h[0].1.as_str())])
}

/// The twitter preset's node values.
const NODES: [&str; 4] = ["--node", "datacenter=1", "--node", "worker=1"];

/// `extra` after [`NODES`].
fn with_nodes<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    [&NODES[..], extra].concat()
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn tokens_over_plain_http_on_a_public_address_are_refused() {
    let dir = temp_dir("plain");
    let tokens = dir.join("tokens");
    secret_file(&tokens, "alpha-token-1\n");
    // `--preset nope` fails after the address checks, naming itself.
    let public = ["--listen", "0.0.0.0:0", "--preset", "nope"];
    let (code, text) = run(&[&public[..], &["--token-file", p(&tokens)]].concat(), &[]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("configuration error in listen") && text.contains("clear text"),
        "{text}"
    );
    // --insecure (TLS ends in front), or TLS here: the address is accepted.
    let (code, text) = run(
        &[&public[..], &["--token-file", p(&tokens), "--insecure"]].concat(),
        &[],
    );
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("--preset") && !text.contains("clear text"),
        "{text}"
    );
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    secret_file(&cert, &ck.cert.pem());
    secret_file(&key, &ck.signing_key.serialize_pem());
    let tls = ["--tls-cert", p(&cert), "--tls-key", p(&key)];
    let (code, text) = run(
        &[&public[..], &["--token-file", p(&tokens)], &tls[..]].concat(),
        &[],
    );
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("--preset") && !text.contains("clear text"),
        "{text}"
    );
    // Loopback: plain HTTP with tokens is fine.
    let s = Server::start(&with_nodes(&["--token-file", p(&tokens)]));
    assert_eq!(get(&s, "/v1/ids", "alpha-token-1").status, 200);
}

#[test]
fn the_token_file_must_be_private_and_its_tokens_able_to_match() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("tokfile");
    let tokens = dir.join("tokens");
    let secret = "alpha-token-1";
    let start = |extra: &[&str]| {
        run(
            &[&["--token-file", p(&tokens), "--preset", "nope"], extra].concat(),
            &[],
        )
    };
    secret_file(&tokens, &format!("{secret}\n"));
    let (_, text) = start(&[]);
    assert!(text.contains("--preset"), "a private file passes: {text}");
    for mode in [0o644, 0o640, 0o604, 0o620] {
        std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(mode)).unwrap();
        let (code, text) = start(&[]);
        assert_eq!(code, Some(2), "{text}");
        assert!(
            text.contains("configuration error in token_file")
                && text.contains(&format!("mode {mode:04o}"))
                && !text.contains(secret),
            "{mode:o}: {text}"
        );
    }
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o600)).unwrap();
    // Another user's file (as root the test can give it away).
    if std::os::unix::fs::chown(&tokens, Some(54321), None).is_ok() {
        let (code, text) = start(&[]);
        assert_eq!(code, Some(2), "{text}");
        assert!(text.contains("owned by user 54321"), "{text}");
        std::os::unix::fs::chown(&tokens, Some(0), None).unwrap();
    }
    // Tokens no header could carry: refused at load, never quoted.
    let long = "x".repeat(257);
    for bad in ["tok\u{e9}n-secret", "ctl\u{1}secret", long.as_str()] {
        secret_file(&tokens, &format!("{secret}\n{bad}\n"));
        let (code, text) = start(&[]);
        assert_eq!(code, Some(2), "{text}");
        assert!(
            text.contains("line 2") && text.contains("could never match"),
            "{text}"
        );
        assert!(!text.contains(bad) && !text.contains("secret"), "{text}");
    }
    secret_file(&tokens, &format!("{secret} ids,admin\n"));
    let (code, text) = start(&[]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("'admin' is not a scope"), "{text}");
}

#[test]
fn a_token_has_only_its_scopes() {
    let dir = temp_dir("scopes");
    let tokens = dir.join("tokens");
    secret_file(
        &tokens,
        "all-token-1\nids-token-2 ids\nmetrics-token-3 metrics\nread-token-4 decode,metrics\n",
    );
    let s = Server::start(&with_nodes(&["--token-file", p(&tokens)]));
    let id = ids_of(&get(&s, "/v1/ids", "all-token-1"))[0];
    let decode = format!("/v1/decode/{id}");
    let leaf_decode = format!("/decodeSnowflakeId?snowflakeId={id}");
    let minting = ["/v1/ids", "/api/snowflake/get/any"];
    let decoding = [decode.as_str(), "/v1/generators", leaf_decode.as_str()];
    for path in minting.iter().chain(&decoding).chain(&["/metrics"]) {
        assert_eq!(get(&s, path, "all-token-1").status, 200, "{path}");
    }
    let cases: [(&str, &[&str], &[&str]); 3] = [
        (
            "ids-token-2",
            &minting,
            &[&decoding[..], &["/metrics"]].concat(),
        ),
        (
            "metrics-token-3",
            &["/metrics"],
            &[&minting[..], &decoding[..]].concat(),
        ),
        (
            "read-token-4",
            &[&decoding[..], &["/metrics"]].concat(),
            &minting,
        ),
    ];
    for (token, allowed, refused) in cases {
        for path in allowed {
            assert_eq!(get(&s, path, token).status, 200, "{token} {path}");
        }
        for path in refused {
            let r = get(&s, path, token);
            assert_eq!(
                (r.status, r.code().as_str()),
                (403, "forbidden"),
                "{token} {path}: {r:?}"
            );
        }
    }
    // Probes still need nothing.
    assert_eq!(s.get("/readyz").status, 200);
}

#[test]
fn max_count_is_bounded_and_name_checked() {
    let (code, text) = run(&["--max-count", "100001"], &[]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("configuration error in max_count: must be between 1 and 100000"),
        "{text}"
    );
    for name in ["a b", "", "orders/1", &"n".repeat(65)] {
        let (code, text) = run(&["--name", name], &[]);
        assert_eq!(code, Some(2), "{name:?}: {text}");
        assert!(text.contains("configuration error in name"), "{text}");
    }
    let s = Server::start(&with_nodes(&[
        "--max-count",
        "100000",
        "--name",
        "orders-1_b",
    ]));
    assert_eq!(ids_of(&s.get("/v1/ids?count=100000")).len(), 100_000);
    let r = s.get("/v1/ids?count=100001");
    assert_eq!((r.status, r.code().as_str()), (400, "invalid_option"));
}

#[test]
fn a_lease_url_from_a_file_or_the_environment() {
    let dir = temp_dir("leasefile");
    let url_file = dir.join("lease-url");
    secret_file(&url_file, &format!("{}\n", lease_arg(&dir)));
    let s = Server::start(&["--lease-file", p(&url_file), "--preset", "leaf"]);
    let g = s.generator();
    assert!(g["lease"].is_object(), "{g}");
    assert_eq!(ids_of(&s.get("/v1/ids?count=3")).len(), 3);
    drop(s);

    // A password from the environment never reaches the log.
    let password = "pw-from-env-5150";
    let toml = dir.join("gens.toml");
    let write_toml = |table: &str| {
        std::fs::write(
            &toml,
            format!("[generators.orders]\nlayout = \"leaf\"\n{table}\n"),
        )
        .unwrap()
    };
    write_toml("lease_env = \"ORDERS_LEASE\"");
    let url = format!("postgres://app:{password}@127.0.0.1:1/test?namespace=x&timeout_ms=500");
    let (code, text) = run(&["--config", p(&toml)], &[("ORDERS_LEASE", &url)]);
    assert_eq!(
        code,
        Some(1),
        "the store at port 1 cannot be reached: {text}"
    );
    assert!(
        text.contains("generator_failed") && !text.contains(password),
        "{text}"
    );
    let (code, text) = run(&["--config", p(&toml)], &[]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("generators.orders.lease_env: the variable ORDERS_LEASE is not set"),
        "{text}"
    );
    write_toml(&format!("lease_file = \"{}\"", p(&url_file)));
    let s = Server::start(&["--config", p(&toml)]);
    assert!(s.generator()["lease"].is_object());
    drop(s);
    write_toml(&format!(
        "lease_file = \"{}\"\nlease_env = \"X\"",
        p(&url_file)
    ));
    let (code, text) = run(&["--config", p(&toml)], &[]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("give one of lease, lease_env and lease_file"),
        "{text}"
    );
}

#[test]
fn a_rate_in_ids_per_token() {
    let dir = temp_dir("rateids");
    let tokens = dir.join("tokens");
    secret_file(&tokens, "alpha-token-1\nbravo-token-2\n");
    let s = Server::start(&with_nodes(&[
        "--token-file",
        p(&tokens),
        "--rate-limit-ids",
        "2",
    ]));
    // A small rate: a bucket refills in a second, slow next to the requests.
    assert_eq!(
        ids_of(&get(&s, "/v1/ids?count=2", "alpha-token-1")).len(),
        2
    );
    let r = get(&s, "/v1/ids?count=2", "alpha-token-1");
    assert_eq!(
        (r.status, r.code().as_str()),
        (429, "rate_limited"),
        "{r:?}"
    );
    assert_eq!(r.header("retry-after"), Some("1"));
    // More than the limit at once could never pass.
    let r = get(&s, "/v1/ids?count=3", "bravo-token-2");
    assert_eq!(
        (r.status, r.code().as_str()),
        (429, "rate_limited"),
        "{r:?}"
    );
    // The other token has its own bucket; Leaf's route counts one ID.
    assert_eq!(get(&s, "/api/snowflake/get/x", "bravo-token-2").status, 200);
    assert_eq!(get(&s, "/api/snowflake/get/x", "bravo-token-2").status, 200);
    assert_eq!(get(&s, "/api/snowflake/get/x", "bravo-token-2").status, 429);
    let m = get(&s, "/metrics", "alpha-token-1").body;
    assert!(m.contains("snowmint_http_rate_limited_total 3"), "{m}");
    let (code, text) = run(&["--rate-limit-ids", "5"], &[]);
    assert_eq!(code, Some(2));
    assert!(
        text.contains("configuration error in rate_limit_ids"),
        "{text}"
    );
}

/// A connection that has been answered once (so the server counts it) and
/// stays open.
fn answered_connection(addr: &str) -> std::net::TcpStream {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    c.write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
        .unwrap();
    let mut buf = [0u8; 512];
    let n = c.read(&mut buf).unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"), "{:?}", &buf[..n]);
    c
}

#[test]
fn connections_per_address_are_capped() {
    use std::io::Read;
    let s = Server::start(&with_nodes(&["--max-connections-per-ip", "2"]));
    let held: Vec<_> = (0..2).map(|_| answered_connection(&s.addr)).collect();
    // A third from 127.0.0.1: the 503 the connection limit answers, then closed.
    let mut over = std::net::TcpStream::connect(&s.addr).unwrap();
    over.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let mut text = String::new();
    let _ = over.read_to_string(&mut text);
    assert!(
        text.starts_with("HTTP/1.1 503") && text.contains("too_many_connections"),
        "{text:?}"
    );
    // One closes: its slot is free again (once the server saw the close).
    drop(held);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while s.get("/healthz").status != 200 {
        assert!(std::time::Instant::now() < deadline, "no slot came free");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let (code, text) = run(&["--max-connections-per-ip", "0"], &[]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("max_connections_per_ip"), "{text}");
}

/// The server's HTTP/2 SETTINGS (h2c, prior knowledge): (identifier, value) pairs.
fn h2_settings(addr: &str) -> Vec<(u16, u32)> {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    c.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0")
        .unwrap();
    let mut head = [0u8; 9];
    c.read_exact(&mut head).unwrap();
    assert_eq!(head[3], 4, "the server's first frame is SETTINGS: {head:?}");
    let len = usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
    let mut body = vec![0u8; len];
    c.read_exact(&mut body).unwrap();
    body.chunks(6)
        .map(|e| {
            (
                u16::from_be_bytes([e[0], e[1]]),
                u32::from_be_bytes([e[2], e[3], e[4], e[5]]),
            )
        })
        .collect()
}

#[test]
fn http2_streams_are_limited_explicitly() {
    const MAX_CONCURRENT_STREAMS: u16 = 3;
    let s = Server::start(&with_nodes(&[]));
    let settings = h2_settings(&s.addr);
    assert!(
        settings.contains(&(MAX_CONCURRENT_STREAMS, 100)),
        "{settings:?}"
    );
    let s = Server::start(&with_nodes(&["--http2-max-streams", "7"]));
    let settings = h2_settings(&s.addr);
    assert!(
        settings.contains(&(MAX_CONCURRENT_STREAMS, 7)),
        "{settings:?}"
    );
}
