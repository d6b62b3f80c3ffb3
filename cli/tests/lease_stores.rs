//! `snowmint lease init|list|release` on the stores across machines, against
//! real servers (`SNOWMINT_TEST_<STORE>_URL`, set by `cargo xtask test stores`;
//! a missing variable or a server that does not answer fails). Built only
//! with the `store-tests` feature and a store's feature
//! (`cargo test -p snowmint-cli --no-default-features --features redis,store-tests`).

mod lease_cli;
use lease_cli::*;
#[cfg(feature = "redis")]
use std::time::{Duration, Instant};

fn url(var: &str, tag: &str) -> String {
    let server = std::env::var(var)
        .unwrap_or_else(|_| panic!("{var} must name a server; cargo xtask test stores sets it"));
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

/// A throwaway `redis-server` on a free port without persistence (killed on
/// drop): a server no `lease init` has vouched for, as after a restart.
#[cfg(feature = "redis")]
struct FreshRedis {
    child: std::process::Child,
    port: u16,
    dir: std::path::PathBuf,
}

#[cfg(feature = "redis")]
impl FreshRedis {
    fn start(tag: &str) -> FreshRedis {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = std::env::temp_dir().join(unique_ns(tag));
        std::fs::create_dir_all(&dir).unwrap();
        let child = std::process::Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("redis-server must be installed (the stores part installs it)");
        let r = FreshRedis { child, port, dir };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !r.answers() {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        r
    }

    fn answers(&self) -> bool {
        use std::io::{Read, Write};
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], self.port));
        let Ok(mut s) = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(1)) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
        let mut buf = [0u8; 7];
        s.write_all(b"PING\r\n").is_ok() && s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
    }

    /// A lease URL on it: a fence of redis_max_window_ms + 2 * max_skew_ms
    /// = 3 s, and a namespace.
    fn url(&self, ns: &str) -> String {
        format!(
            "redis://127.0.0.1:{}/0?namespace={ns}&window_ms=1500&renew_ms=300&redis_max_window_ms=2000\
             &max_skew_ms=500&timeout_ms=3000",
            self.port
        )
    }
}

#[cfg(feature = "redis")]
impl Drop for FreshRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The stderr of a `generate` that fails: exit status 1, the error line
/// with `[code]` and then a hint line.
#[cfg(feature = "redis")]
fn refused(args: &[&str], code: &str) -> (String, String) {
    let out = snowmint(args);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "no IDs: {err}");
    let mut lines = err.lines();
    let (first, hint) = (lines.next().unwrap_or(""), lines.next().unwrap_or(""));
    assert!(first.ends_with(&format!("[{code}]")), "{err}");
    (first.to_string(), hint.to_string())
}

/// On a fresh Redis the first lease is fenced: `generate` says so (why,
/// when IDs resume, what to do) with `lease_fenced`, never as a clock that
/// moved backwards; so does a server whose identity changed. `lease init`
/// says when its fence ends, `--wait` waits for it, and then a new space's
/// lease issues at once.
#[cfg(feature = "redis")]
#[test]
fn redis_fence_says_why_and_init_waits_for_it() {
    let server = FreshRedis::start("fence");
    let url = server.url("fenced");
    let generate = ["generate", "--preset", "leaf", "--lease", &url, "-n", "2"];
    let (err, hint) = refused(&generate, "lease_fenced");
    assert!(
        err.contains(
            "lease fenced: the store may have forgotten earlier claims (a new, restarted or \
             emptied server); no ID before "
        ) && err.contains("The clock is fine")
            && !err.contains("clock moved backwards"),
        "{err}"
    );
    assert!(
        hint.starts_with("hint: IDs resume at ")
            && hint.contains("--clock-backwards wait:N")
            && hint.contains("snowmint lease init --store URL --wait"),
        "{hint}"
    );

    // The marker names another server (a failover): fenced again, saying so.
    let marker = |key: &str| format!("snowmint:lease:{{{key}}}:marker");
    let out = ok(&["lease", "list", "--store", &url, "--json"]);
    let key = json_lines(&out)[0]["space"].as_str().unwrap().to_string();
    let cmd = |args: &[&str]| {
        let out = std::process::Command::new("redis-cli")
            .args(["-h", "127.0.0.1", "-p", &server.port.to_string()])
            .args(args)
            .output()
            .expect("redis-cli");
        assert!(out.status.success());
    };
    cmd(&["HSET", &marker(&key), "server", "0123/4567"]);
    let (err, _) = refused(&generate, "lease_fenced");
    assert!(
        err.contains("lease fenced: the store's identity changed (a failover"),
        "{err}"
    );

    // `lease init` on this server (the claims above wrote no init key):
    // fenced for 3 s from now, and says until when.
    let fresh = server.url("after-init");
    let out = ok(&["lease", "init", "--store", &fresh, "--json"]);
    let v = &json_lines(&out)[0];
    assert_eq!(v["ready"], false, "{v}");
    let (fence, now) = (
        v["fence_ms"].as_u64().unwrap(),
        v["now_ms"].as_u64().unwrap(),
    );
    assert!(fence > now && fence <= now + 3_000, "{v}");
    let text = ok(&["lease", "init", "--store", &fresh]);
    assert!(
        text.contains(": fenced until ")
            && text.contains("ms from now): leases on this server issue IDs from then (--wait"),
        "{text}"
    );
    let started = Instant::now();
    let text = ok(&["lease", "init", "--store", &fresh, "--wait"]);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.len() == 2 && lines[0].ends_with("; waiting"),
        "{text}"
    );
    assert!(lines[1].ends_with(": ready"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(10), "{text}");
    // Passed: a new space's lease issues at once, even with no waiting.
    let ids = ok(&[
        "generate",
        "--preset",
        "leaf",
        "--lease",
        &fresh,
        "-n",
        "2",
        "--clock-backwards",
        "fail",
    ]);
    assert_eq!(ids.lines().count(), 2, "{ids}");
    let out = ok(&["lease", "init", "--store", &fresh, "--json"]);
    let v = &json_lines(&out)[0];
    assert_eq!(v["ready"], true, "{v}");
    assert_eq!(v["fence_ms"], fence, "{v}");
    assert!(ok(&["lease", "init", "--store", &fresh]).ends_with(": ready\n"));
}
