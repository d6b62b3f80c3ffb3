//! `snowmint lease init|list|release` on the stores across machines, against
//! real servers (`SNOWMINT_TEST_<STORE>_URL`, set by `scripts/test-stores`;
//! a missing variable or a server that does not answer fails). Built only
//! with the `store-tests` feature and a store's feature
//! (`cargo test -p snowmint-cli --no-default-features --features redis,store-tests`).

mod lease_cli;
use lease_cli::*;

fn url(var: &str, tag: &str) -> String {
    let server = std::env::var(var)
        .unwrap_or_else(|_| panic!("{var} must name a server; scripts/test-stores sets it"));
    format!(
        "{server}?namespace={}&ttl_ms=3000&renew_ms=200&window_ms=1500&timeout_ms=3000",
        unique_ns(tag)
    )
}

#[cfg(feature = "postgres")]
#[test]
fn postgres() {
    scenario(&url("SNOWMINT_TEST_POSTGRES_URL", "pg"), true);
}

#[cfg(feature = "mysql")]
#[test]
fn mysql() {
    scenario(&url("SNOWMINT_TEST_MYSQL_URL", "my"), true);
}

#[cfg(feature = "redis")]
#[test]
fn redis() {
    scenario(&url("SNOWMINT_TEST_REDIS_URL", "rd"), true);
    // A server that does not answer.
    fails(
        &[
            "lease",
            "list",
            "--store",
            "redis://127.0.0.1:1/0?timeout_ms=1000",
        ],
        "lease_unavailable",
    );
}

#[cfg(feature = "etcd")]
#[test]
fn etcd() {
    scenario(&url("SNOWMINT_TEST_ETCD_URL", "et"), true);
}

#[cfg(feature = "zookeeper")]
#[test]
fn zookeeper() {
    scenario(&url("SNOWMINT_TEST_ZOOKEEPER_URL", "zk"), true);
    // A server that refuses connections.
    fails(
        &[
            "lease",
            "list",
            "--store",
            "zookeeper://127.0.0.1:1?timeout_ms=1000",
        ],
        "lease_unavailable",
    );
}

/// One Redis command over RESP (the server of `SNOWMINT_TEST_REDIS_URL`),
/// bounded by a 5 s timeout; the reply's first line.
#[cfg(feature = "redis")]
fn redis_cmd(args: &[&str]) -> String {
    use std::io::{BufRead, BufReader, Write};
    let server = std::env::var("SNOWMINT_TEST_REDIS_URL").unwrap();
    let rest = server.strip_prefix("redis://").expect("a redis:// URL");
    let host = rest.split(['/', '?']).next().unwrap();
    let host = host.rsplit('@').next().unwrap();
    let addr: std::net::SocketAddr = host.parse().expect("host:port as an address");
    let s = std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(5)).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    let db = rest.split('/').nth(1).and_then(|d| d.split('?').next());
    let mut req = Vec::new();
    let mut push = |args: &[&str]| {
        req.extend(format!("*{}\r\n", args.len()).bytes());
        for a in args {
            req.extend(format!("${}\r\n{a}\r\n", a.len()).bytes());
        }
    };
    let selected = db.filter(|d| !d.is_empty()).is_some();
    if let Some(d) = db.filter(|d| !d.is_empty()) {
        push(&["SELECT", d]);
    }
    push(args);
    (&s).write_all(&req).unwrap();
    let mut r = BufReader::new(&s);
    let mut line = String::new();
    if selected {
        r.read_line(&mut line).unwrap();
        assert_eq!(line, "+OK\r\n");
        line.clear();
    }
    r.read_line(&mut line).unwrap();
    line.trim_end().to_string()
}

/// `lease list` shows a Redis space's marker and fence: present after a
/// claim, another server's when it names one (a restart or failover), and
/// missing once it is gone (a wipe); human output and --json.
#[cfg(feature = "redis")]
#[test]
fn redis_marker_and_fence() {
    let url = url("SNOWMINT_TEST_REDIS_URL", "rm");
    let layout = snowmint::Layout::preset("twitter").unwrap();
    let g = snowmint_lease::LeasedGenerator::open(
        &url,
        layout,
        &[("datacenter", 1)],
        snowmint::Options::default(),
    )
    .unwrap();
    let (key, slot) = (g.info().space_key, g.info().slot);
    g.close().unwrap();
    let space = |url: &str| {
        let lines = json_lines(&ok(&["lease", "list", "--store", url, "--json"]));
        lines[0].clone()
    };
    let s = space(&url);
    assert_eq!(s["marker"], "present", "{s}");
    assert!(s["marker_server"].as_str().unwrap().contains('/'), "{s}");
    let fence = s["fence_ms"].as_u64().expect("fence_ms");
    assert_eq!(
        s["fence_active"],
        fence > s["now_ms"].as_u64().unwrap(),
        "{s}"
    );
    assert_eq!(s["fence_until"].is_null(), fence == 0, "{s}");
    let text = ok(&["lease", "list", "--store", &url]);
    assert!(
        text.contains("marker present (names this server); "),
        "{text}"
    );

    let marker = format!("snowmint:lease:{{{key}}}:marker");
    let far = (s["now_ms"].as_u64().unwrap() + 3_600_000).to_string();
    redis_cmd(&["HSET", &marker, "server", "0123/4567", "fence_ms", &far]);
    let s = space(&url);
    assert_eq!(s["marker"], "other-server", "{s}");
    assert_eq!(s["marker_server"], "0123/4567", "{s}");
    assert_eq!(s["fence_active"], true, "{s}");
    let text = ok(&["lease", "list", "--store", &url]);
    assert!(
        text.contains("marker names another server (0123/4567)")
            && text.contains("fence active until "),
        "{text}"
    );

    redis_cmd(&["DEL", &marker]);
    let s = space(&url);
    assert_eq!(s["marker"], "missing", "{s}");
    assert_eq!(
        (s["fence_ms"].as_u64(), s["fence_active"].as_bool()),
        (Some(0), Some(false))
    );
    let text = ok(&["lease", "list", "--store", &url]);
    assert!(
        text.contains("marker missing (the next claim fences the space); no fence"),
        "{text}"
    );
    for k in ["space".to_string(), format!("slot:{slot}")] {
        redis_cmd(&["DEL", &format!("snowmint:lease:{{{key}}}:{k}")]);
    }
}
