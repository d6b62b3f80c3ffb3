//! The listener's operations and security side, on the real binary: TLS
//! (a CA made here with rcgen; rustls and curl as clients), client
//! certificates, header size and time limits, the connection limit, many
//! connections, the drain delay. Every wait is bounded.

mod common;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};

/// A CA, and PEM files of certificates it signed, in `dir`.
struct Ca {
    issuer: CertifiedIssuer<'static, KeyPair>,
    pem: String,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
        let pem = issuer.pem();
        Ca { issuer, pem }
    }

    /// A certificate for `names`: (certificate PEM, key PEM).
    fn sign(&self, names: &[&str]) -> (String, String) {
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        let params = CertificateParams::new(names).unwrap();
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    }
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

/// A rustls client trusting `ca_pem`, with a client certificate if given.
fn client(
    ca_pem: &str,
    me: Option<&(String, String)>,
    alpn: &[&[u8]],
) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(c.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let b = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    let mut config = match me {
        Some((cert, key)) => {
            let chain = CertificateDer::pem_slice_iter(cert.as_bytes())
                .map(Result::unwrap)
                .collect();
            let key = PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap();
            b.with_client_auth_cert(chain, key).unwrap()
        }
        None => b.with_no_client_auth(),
    };
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Arc::new(config)
}

/// One GET over TLS (HTTP/1.1, `Connection: close`); the negotiated ALPN
/// protocol with it. Errors (a refused handshake) are returned.
fn tls_get(
    addr: &str,
    config: Arc<rustls::ClientConfig>,
    path: &str,
    headers: &[(&str, &str)],
) -> std::io::Result<Response> {
    let tcp = TcpStream::connect(addr)?;
    tcp.set_read_timeout(Some(Duration::from_secs(20)))?;
    let conn = rustls::ClientConnection::new(config, ServerName::try_from("localhost").unwrap())
        .map_err(std::io::Error::other)?;
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    let mut req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    for (n, v) in headers {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    req.push_str("\r\n");
    tls.write_all(req.as_bytes())?;
    let mut raw = Vec::new();
    match tls.read_to_end(&mut raw) {
        Ok(_) => {}
        // Some servers close without close_notify; ours sends it, so this is an error.
        Err(e) => return Err(e),
    }
    let text = String::from_utf8(raw).map_err(std::io::Error::other)?;
    if text.is_empty() {
        return Err(std::io::Error::other("no answer"));
    }
    Ok(parse_response(&text))
}

/// The ALPN protocol the server picks when the client offers `alpn`.
fn negotiated(addr: &str, config: Arc<rustls::ClientConfig>) -> Option<Vec<u8>> {
    let mut tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut conn =
        rustls::ClientConnection::new(config, ServerName::try_from("localhost").unwrap()).unwrap();
    while conn.is_handshaking() {
        conn.complete_io(&mut tcp).unwrap();
    }
    conn.alpn_protocol().map(<[u8]>::to_vec)
}

/// curl's `%{http_code} %{http_version}` and body for `url`.
fn curl(args: &[&str], url: &str) -> (String, String) {
    let out = Command::new("curl")
        .args([
            "-s",
            "--max-time",
            "10",
            "-w",
            "\n%{http_code} %{http_version}",
        ])
        .args(args)
        .arg(url)
        .output()
        .expect("curl runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let (body, status) = text.rsplit_once('\n').unwrap();
    (status.to_string(), body.to_string())
}

const NODES: [&str; 4] = ["--node", "datacenter=1", "--node", "worker=1"];

fn args<'a>(more: &[&'a str]) -> Vec<&'a str> {
    let mut v: Vec<&str> = NODES.to_vec();
    v.extend_from_slice(more);
    v
}

#[test]
fn tls_serves_http1_and_http2_and_its_key_stays_secret() {
    let dir = temp_dir("tls");
    let ca = Ca::new("snowmint test CA");
    let (cert, key) = ca.sign(&["localhost", "127.0.0.1"]);
    let cert_file = write(&dir, "cert.pem", &cert);
    let key_file = write(&dir, "key.pem", &key);
    let ca_file = write(&dir, "ca.pem", &ca.pem);
    let mut s = Server::start(&args(&["--tls-cert", &cert_file, "--tls-key", &key_file]));

    let r = tls_get(
        &s.addr,
        client(&ca.pem, None, &[b"http/1.1"]),
        "/v1/ids?count=3",
        &[],
    )
    .unwrap();
    assert_eq!(ids_of(&r).len(), 3);
    assert_eq!(
        negotiated(&s.addr, client(&ca.pem, None, &[b"h2", b"http/1.1"])).as_deref(),
        Some(&b"h2"[..])
    );
    let port = s.addr.rsplit(':').next().unwrap().to_string();
    let url = format!("https://localhost:{port}/v1/ids?count=2");
    let resolve = format!("localhost:{port}:127.0.0.1");
    for (flag, version) in [("--http1.1", "1.1"), ("--http2", "2")] {
        let (status, body) = curl(&["--cacert", &ca_file, "--resolve", &resolve, flag], &url);
        assert_eq!(status, format!("200 {version}"), "{body}");
        assert!(body.contains("\"ids\""), "{body}");
    }
    // Another CA's client does not trust the server.
    let other = Ca::new("another CA");
    let e = tls_get(&s.addr, client(&other.pem, None, &[]), "/healthz", &[]).unwrap_err();
    assert!(e.to_string().contains("UnknownIssuer"), "{e}");
    // Plain HTTP on the TLS port gets no HTTP answer.
    let mut tcp = TcpStream::connect(&s.addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    tcp.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut raw = Vec::new();
    let _ = tcp.read_to_end(&mut raw);
    assert!(!raw.starts_with(b"HTTP/1.1 200"), "{raw:?}");

    let (status, _) = s.terminate();
    assert!(status.success());
    let log = s.log_lines().join("\n");
    assert!(log.contains("tls=true"), "{log}");
    let key_body = key.lines().nth(1).unwrap();
    assert!(
        !log.contains("PRIVATE KEY") && !log.contains(key_body),
        "{log}"
    );
}

#[test]
fn h2c_on_the_plain_port() {
    let s = Server::start(&args(&[]));
    let (status, body) = curl(
        &["--http2-prior-knowledge"],
        &format!("http://{}/v1/ids?count=2", s.addr),
    );
    assert_eq!(status, "200 2", "{body}");
    let (status, _) = curl(&[], &format!("http://{}/healthz", s.addr));
    assert_eq!(status, "200 1.1");
}

#[test]
fn client_certificates_are_required_with_a_client_ca() {
    let dir = temp_dir("mtls");
    let ca = Ca::new("server CA");
    let clients = Ca::new("client CA");
    let (cert, key) = ca.sign(&["localhost"]);
    let me = clients.sign(&["client one"]);
    let stranger = Ca::new("stranger CA").sign(&["client two"]);
    let cert_file = write(&dir, "cert.pem", &cert);
    let key_file = write(&dir, "key.pem", &key);
    let clients_file = write(&dir, "clients.pem", &clients.pem);
    let tls = [
        "--tls-cert",
        &cert_file,
        "--tls-key",
        &key_file,
        "--tls-client-ca",
        &clients_file,
    ];
    let s = Server::start(&args(&tls));
    let r = tls_get(&s.addr, client(&ca.pem, Some(&me), &[]), "/v1/ids", &[]).unwrap();
    assert_eq!(ids_of(&r).len(), 1);
    let e = tls_get(&s.addr, client(&ca.pem, None, &[]), "/v1/ids", &[]).unwrap_err();
    assert!(e.to_string().contains("CertificateRequired"), "{e}");
    let e = tls_get(
        &s.addr,
        client(&ca.pem, Some(&stranger), &[]),
        "/v1/ids",
        &[],
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("UnknownCA") || e.to_string().contains("BadCertificate"),
        "{e}"
    );

    // A public address without tokens: refused, unless client certificates
    // are required (`--preset nope` then fails next, naming itself).
    let public = ["--listen", "0.0.0.0:0", "--preset", "nope"];
    let (code, text) = run(&[&tls[..4], &public].concat(), &[]);
    assert_eq!(code, Some(2));
    assert!(text.contains("not a loopback address"), "{text}");
    let (code, text) = run(&[&tls[..], &public].concat(), &[]);
    assert_eq!(code, Some(2));
    assert!(
        text.contains("--preset") && !text.contains("loopback"),
        "{text}"
    );

    // Configuration errors name the key; the key's content is never shown.
    let bogus_key = write(
        &dir,
        "bogus.pem",
        "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleS1ieXRlcw==\n-----END PRIVATE KEY-----\n",
    );
    let (_, other_key) = ca.sign(&["localhost"]);
    let other_key = write(&dir, "other.pem", &other_key);
    for (extra, key_name) in [
        (vec!["--tls-cert", &cert_file], "tls_key"),
        (vec!["--tls-key", &key_file], "tls_cert"),
        (
            vec!["--tls-cert", &cert_file, "--tls-key", "/nonexistent.pem"],
            "tls_key",
        ),
        (
            vec!["--tls-cert", &key_file, "--tls-key", &key_file],
            "tls_cert",
        ),
        (
            vec!["--tls-cert", &cert_file, "--tls-key", &bogus_key],
            "tls_key",
        ),
        (
            vec!["--tls-cert", &cert_file, "--tls-key", &other_key],
            "tls_key",
        ),
        (vec!["--tls-client-ca", &clients_file], "tls_client_ca"),
        (vec!["--max-connections", "0"], "max_connections"),
        (vec!["--max-header-bytes", "100"], "max_header_bytes"),
        (vec!["--header-timeout", "0"], "header_timeout"),
        (vec!["--drain-delay", "100000"], "drain_delay"),
    ] {
        let (code, text) = run(&args(&extra), &[]);
        assert_eq!(code, Some(2), "{extra:?}: {text}");
        assert!(
            text.contains(&format!("configuration error in {key_name}")),
            "{extra:?}: {text}"
        );
        assert!(
            !text.contains("c2VjcmV0") && !text.contains(key.lines().nth(1).unwrap()),
            "{text}"
        );
    }
}

/// Reads one response on a kept-alive HTTP/1.1 connection: its status.
fn read_one(s: &mut TcpStream) -> u16 {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(s.read(&mut byte).unwrap(), 1, "closed: {head:?}");
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    let len = common::content_length(&head);
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).unwrap();
    head.split(' ').nth(1).unwrap().parse().unwrap()
}

fn keep_alive(addr: &str) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    assert_eq!(read_one(&mut s), 200);
    s
}

/// Seconds until the server closes `s` (reads return 0 or fail).
fn until_closed(s: &mut TcpStream, limit: Duration) -> Duration {
    let start = Instant::now();
    s.set_read_timeout(Some(limit)).unwrap();
    let mut buf = [0u8; 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return start.elapsed(),
            Ok(_) => continue,
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::TimedOut => {
                panic!("still open after {limit:?}")
            }
            Err(_) => return start.elapsed(),
        }
    }
}

#[test]
fn oversized_headers_and_urls_are_refused() {
    let s = Server::start(&args(&["--max-header-bytes", "8192"]));
    let small = "a".repeat(4000);
    let r = s.get_with("/healthz", &[("X-Pad", &small)]);
    assert_eq!(r.status, 200);
    let big = "a".repeat(12_000);
    let r = s.get_with("/healthz", &[("X-Pad", &big)]);
    assert_eq!(r.status, 431, "{r:?}");
    let many: Vec<(String, String)> = (0..400)
        .map(|i| (format!("X-H{i}"), "v".repeat(20)))
        .collect();
    let many: Vec<(&str, &str)> = many.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let r = s.get_with("/healthz", &many);
    assert_eq!(r.status, 431, "{r:?}");
    let r = s.get(&format!("/v1/decode/{}", "1".repeat(12_000)));
    assert!(r.status == 414 || r.status == 431, "{r:?}");
    // Still serving.
    assert_eq!(ids_of(&s.get("/v1/ids?count=2")).len(), 2);
}

#[test]
fn slow_clients_are_cut_while_others_are_served() {
    let s = Server::start(&args(&["--header-timeout", "2", "--idle-timeout", "1"]));
    // One dribbles its headers, a byte every 200 ms.
    let addr = s.addr.clone();
    let dribbler = std::thread::spawn(move || {
        let mut c = TcpStream::connect(&addr).unwrap();
        let start = Instant::now();
        c.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            .unwrap();
        for b in b"X-Slow: ".iter().cycle() {
            std::thread::sleep(Duration::from_millis(200));
            if c.write_all(&[*b]).is_err() {
                break;
            }
            assert!(start.elapsed() < Duration::from_secs(8), "never cut");
        }
        start.elapsed()
    });
    // One connects and says nothing.
    let mut silent = TcpStream::connect(&s.addr).unwrap();
    let start = Instant::now();
    // Others are served meanwhile.
    for _ in 0..20 {
        assert_eq!(ids_of(&s.get("/v1/ids?count=1")).len(), 1);
        std::thread::sleep(Duration::from_millis(50));
    }
    let silent_took = start.elapsed() + until_closed(&mut silent, Duration::from_secs(6));
    let dribbled = dribbler.join().unwrap();
    assert!(dribbled < Duration::from_secs(5), "{dribbled:?}");
    assert!(silent_took < Duration::from_secs(4), "{silent_took:?}");
    // A kept-alive connection with nothing in progress is closed after the idle timeout.
    let mut idle = keep_alive(&s.addr);
    let took = until_closed(&mut idle, Duration::from_secs(5));
    // 1 s, not the 2 s of the first request's deadline.
    assert!(took < Duration::from_millis(1800), "{took:?}");
    println!("dribbler cut after {dribbled:?}, silent after {silent_took:?}, idle after {took:?}");
}

#[test]
fn a_kept_alive_connection_is_closed_after_the_smaller_timeout() {
    // hyper counts the wait for the next request on a kept-alive HTTP/1.1
    // connection as reading headers: whichever of --idle-timeout and
    // --header-timeout is smaller closes it.
    for (idle, header) in [("1", "3"), ("3", "1")] {
        let s = Server::start(&args(&["--idle-timeout", idle, "--header-timeout", header]));
        let mut c = keep_alive(&s.addr);
        let took = until_closed(&mut c, Duration::from_secs(5));
        println!("idle {idle} s, header {header} s: closed {took:?} after the answer");
        assert!(
            took > Duration::from_millis(800) && took < Duration::from_millis(2500),
            "idle {idle}, header {header}: {took:?}"
        );
        // A connection with a request every 400 ms stays open past both.
        let mut busy = keep_alive(&s.addr);
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(3500) {
            std::thread::sleep(Duration::from_millis(400));
            busy.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                .unwrap();
            assert_eq!(read_one(&mut busy), 200);
        }
    }
}

#[test]
fn a_client_that_does_not_read_is_cut_after_the_idle_timeout() {
    // It pipelines requests for 24 KiB answers and reads none: hyper stops
    // reading while an answer waits, so the client's writes block too, and
    // once the socket has taken no byte for --idle-timeout the connection
    // is closed (a reset, as the client's requests are still unread).
    let s = Server::start(&args(&["--idle-timeout", "1", "--header-timeout", "10"]));
    let pid = s.child.id();
    let before = rss_kib(pid);
    let mut c = TcpStream::connect(&s.addr).unwrap();
    c.set_write_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let request = b"GET /v1/ids?count=1000 HTTP/1.1\r\nHost: x\r\n\r\n".repeat(100);
    let (mut sent, mut blocked, mut peak) = (0usize, None::<Instant>, before);
    let start = Instant::now();
    let cut = loop {
        match c.write(&request) {
            Ok(n) => {
                sent += n;
                blocked = None;
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                blocked.get_or_insert_with(Instant::now);
                peak = peak.max(rss_kib(pid));
                // Others are served meanwhile.
                assert_eq!(ids_of(&s.get("/v1/ids?count=1")).len(), 1);
            }
            // Reset or broken pipe: the server closed the connection.
            Err(_) => break blocked.map(|b| b.elapsed()),
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "not closed: {sent} bytes of requests sent, blocked for {:?}",
            blocked.map(|b| b.elapsed())
        );
    };
    println!(
        "{sent} bytes of requests taken, then blocked for {cut:?} until cut; RSS {before} -> {peak} KiB"
    );
    let cut = cut.expect("closed while blocked");
    // 1 s without a request in progress, then 1 s for the graceful close.
    assert!(cut < Duration::from_secs(4), "{cut:?}");
    // What the server read is bounded by the socket buffers, not by what
    // the client would send, and so is its memory.
    assert!(sent < 32 << 20, "{sent}");
    assert!(peak < before + 16 * 1024, "RSS {before} -> {peak} KiB");
    assert_eq!(ids_of(&s.get("/v1/ids?count=10")).len(), 10);
}

/// An HTTP/2 frame: type, flags, stream, payload.
fn h2_frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    f.extend([kind, flags]);
    f.extend(stream.to_be_bytes());
    f.extend(payload);
    f
}

#[test]
fn an_http2_client_that_does_not_read_is_cut() {
    // Over h2c it opens 100 streams for 24 KiB answers and reads nothing:
    // its flow-control window (64 KiB) takes two or three answers, the other
    // streams stay in progress waiting for a window that never comes, so the
    // idle timeout does not apply. The server's pings (every --idle-timeout
    // without a frame from the client) go unanswered: closed
    // --header-timeout later.
    let s = Server::start(&args(&["--idle-timeout", "1", "--header-timeout", "1"]));
    let mut c = TcpStream::connect(&s.addr).unwrap();
    c.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    out.extend(h2_frame(4, 0, 0, &[])); // SETTINGS, all defaults
    let path = b"/v1/ids?count=1000";
    for i in 0..100u32 {
        // HPACK: :method GET and :scheme http from the static table, :path
        // and :authority as literals with their static names.
        let mut block = vec![0x82, 0x86, 0x04, path.len() as u8];
        block.extend(path);
        block.extend([0x01, 1, b'x']);
        out.extend(h2_frame(1, 0x5, 2 * i + 1, &block)); // HEADERS, END_STREAM | END_HEADERS
    }
    c.write_all(&out).unwrap();
    let start = Instant::now();
    // Open connections: this one and the /metrics request's own.
    let open = |n: u32| {
        s.get("/metrics")
            .body
            .contains(&format!("snowmint_http_connections {n}\n"))
    };
    // Each listener thread accepts on its own socket: the /metrics
    // connection may be counted before this one is accepted.
    while !open(2) {
        assert!(
            start.elapsed() < Duration::from_secs(1),
            "the client's connection is open"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    while !open(1) {
        assert!(
            start.elapsed() < Duration::from_secs(8),
            "an HTTP/2 client that does not read is still connected after {:?}",
            start.elapsed()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let took = start.elapsed();
    println!("an HTTP/2 client that does not read: cut after {took:?}");
    assert!(took < Duration::from_secs(4), "{took:?}");
    // What the server wrote before: answers (the requests were well formed),
    // as much as the window allowed, then the end.
    let mut got = Vec::new();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = c.read_to_end(&mut got);
    assert!(
        got.len() > 48 * 1024 && got.len() < 128 * 1024,
        "{} bytes",
        got.len()
    );
    assert!(ids_of(&s.get("/v1/ids?count=10")).len() == 10);
}

#[test]
fn max_connections_refuses_then_recovers() {
    let s = Server::start(&args(&["--max-connections", "20"]));
    let mut held: Vec<TcpStream> = (0..20).map(|_| keep_alive(&s.addr)).collect();
    for _ in 0..3 {
        let r = s.get("/v1/ids");
        assert_eq!(
            (r.status, r.code().as_str()),
            (503, "too_many_connections"),
            "{r:?}"
        );
        assert_eq!(r.header("retry-after"), Some("1"));
    }
    // The held ones still work.
    held[0]
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    assert_eq!(read_one(&mut held[0]), 200);
    held.truncate(10);
    let deadline = Instant::now() + Duration::from_secs(5);
    // Refusals: the 3 above and any while the closes reach the server.
    let mut refused = 3;
    loop {
        let r = s.get("/metrics");
        if r.status == 503 {
            refused += 1;
        }
        if r.status == 200 {
            let line = format!("snowmint_http_connections_refused_total {refused}\n");
            assert!(r.body.contains(&line), "{}", r.body);
            break;
        }
        assert!(Instant::now() < deadline, "no recovery: {r:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(ids_of(&s.get("/v1/ids")).len(), 1);
}

/// The server's resident memory in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .unwrap()
        .trim()
        .trim_end_matches(" kB")
        .parse()
        .unwrap()
}

/// One connection that asks for `/healthz`, reads the answer and is closed.
fn one_short_connection(addr: &str) {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    c.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = Vec::new();
    c.read_to_end(&mut answer).unwrap();
    assert!(answer.starts_with(b"HTTP/1.1 200"), "{answer:?}");
}

#[test]
fn thousands_of_connections_then_memory_stops_growing() {
    // One malloc arena: glibc otherwise gives each tokio worker thread its
    // own, and how much each keeps depends on which threads the scheduler
    // used (on a loaded machine 4000 connections added 3 MiB without a leak).
    let s = Server::try_start(
        &args(&["--max-connections", "5000"]),
        &[("MALLOC_ARENA_MAX", "1")],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let pid = s.child.id();

    // A leak first, while the heap has no free memory to hide it in: 6000
    // connections one after another add under 1 MiB (a leak of 256 bytes
    // each would add 1.5 MiB). After the rounds below, the heap keeps the
    // ~23 MiB their open connections freed, and a small leak fills that
    // without growing the RSS.
    for _ in 0..500 {
        one_short_connection(&s.addr);
    }
    let warm = rss_kib(pid);
    for _ in 0..6000 {
        one_short_connection(&s.addr);
    }
    let sequential = rss_kib(pid);
    println!(
        "RSS after 500 connections one at a time: {warm} KiB; after 6000 more: {sequential} KiB"
    );
    assert!(sequential < warm + 1024, "{warm} KiB -> {sequential} KiB");

    // Then many at once: every connection's task ends (the gauge is back to
    // 1, the /metrics call itself) and memory stops growing. The heap's
    // fragmentation still grows, by less each round (+4.0, +3.1, +2.2, +0.5,
    // +0.4, +1.2, +0.1 MiB in one run): so the last four of twelve rounds
    // are compared, where a leak of 512 bytes a connection would add 2 MiB.
    let mut after = Vec::new();
    for round in 0..12 {
        let held: Vec<TcpStream> = (0..1000).map(|_| keep_alive(&s.addr)).collect();
        let metrics = s.get("/metrics").body;
        assert!(
            metrics.contains("snowmint_http_connections 1001"),
            "round {round}"
        );
        drop(held);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !s
            .get("/metrics")
            .body
            .contains("snowmint_http_connections 1\n")
        {
            assert!(Instant::now() < deadline, "connections not closed");
            std::thread::sleep(Duration::from_millis(50));
        }
        after.push(rss_kib(pid));
    }
    println!("RSS after each round of 1000 connections at once: {after:?}");
    assert!(after[11] < after[7] + 2048, "{after:?}");
    assert_eq!(ids_of(&s.get("/v1/ids?count=10")).len(), 10);
}

#[test]
fn drain_delay_keeps_serving_with_readyz_503() {
    let mut s = Server::start(&args(&["--drain-delay", "2"]));
    let start = Instant::now();
    let status = Command::new("kill")
        .args(["-TERM", &s.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    std::thread::sleep(Duration::from_millis(200));
    let r = s.get("/readyz");
    assert_eq!(r.status, 503, "{}", r.body);
    assert!(r.body.contains("shutting down"));
    assert_eq!(
        ids_of(&s.get("/v1/ids")).len(),
        1,
        "still serving while draining"
    );
    let status = s.wait(Duration::from_secs(15));
    let took = start.elapsed();
    assert!(status.success());
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(8),
        "{took:?}"
    );
    let log = s.log_lines().join("\n");
    assert!(log.contains("draining"), "{log}");
}

#[test]
fn rate_limit_per_token() {
    let dir = temp_dir("rate");
    let tokens = write(&dir, "tokens", "alpha-token-1\nbravo-token-2\n");
    let s = Server::start(&args(&["--token-file", &tokens, "--rate-limit", "5"]));
    let alpha = [("Authorization", "Bearer alpha-token-1")];
    let bravo = [("Authorization", "Bearer bravo-token-2")];
    let statuses: Vec<u16> = (0..12)
        .map(|_| s.get_with("/v1/ids", &alpha).status)
        .collect();
    let ok = statuses.iter().filter(|&&c| c == 200).count();
    // A burst of 5, and perhaps one more refilled while the 12 requests ran.
    assert!((5..=7).contains(&ok), "{statuses:?}");
    let r = s.get_with("/v1/ids", &alpha);
    assert_eq!(
        (r.status, r.code().as_str()),
        (429, "rate_limited"),
        "{r:?}"
    );
    assert_eq!(r.header("retry-after"), Some("1"));
    // Per token: the other one is not limited; no token is 401, not 429.
    assert_eq!(ids_of(&s.get_with("/v1/ids", &bravo)).len(), 1);
    assert_eq!(s.get("/v1/ids").status, 401);
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(ids_of(&s.get_with("/v1/ids", &alpha)).len(), 1);
    let m = s.get_with("/metrics", &bravo).body;
    assert!(m.contains("snowmint_http_rate_limited_total "), "{m}");
    // Without tokens the limit has nothing to count: a configuration error.
    let (code, text) = run(&args(&["--rate-limit", "5"]), &[]);
    assert_eq!(code, Some(2));
    assert!(text.contains("configuration error in rate_limit"), "{text}");
}

#[test]
fn several_listener_threads_share_the_port_the_limit_and_the_shutdown() {
    // Three listeners (SO_REUSEPORT, on Linux; one elsewhere), each with its
    // thread; the connection limit counts across them.
    let mut s = Server::try_start(
        &args(&["--max-connections", "6"]),
        &[("TOKIO_WORKER_THREADS", "3")],
    )
    .unwrap();
    let start = s.lines.last().unwrap().clone();
    let want = if cfg!(target_os = "linux") { 3 } else { 1 };
    assert!(start.contains(&format!(" listeners={want}")), "{start}");
    let mut held: Vec<TcpStream> = (0..6).map(|_| keep_alive(&s.addr)).collect();
    if cfg!(target_os = "linux") {
        // The threads start right after the start line.
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let mut names: Vec<String> = std::fs::read_dir(format!("/proc/{}/task", s.child.id()))
                .unwrap()
                .filter_map(|t| std::fs::read_to_string(t.unwrap().path().join("comm")).ok())
                .map(|n| n.trim().to_string())
                .filter(|n| n.starts_with("http-"))
                .collect();
            names.sort();
            if names == ["http-0", "http-1", "http-2"] {
                break;
            }
            assert!(Instant::now() < deadline, "{names:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let r = s.get("/v1/ids");
    assert_eq!((r.status, r.code().as_str()), (503, "too_many_connections"));
    for c in &mut held {
        c.write_all(b"GET /v1/ids HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        assert_eq!(read_one(c), 200);
    }
    // SIGTERM: every idle connection is closed, the process exits 0.
    let (status, took) = s.terminate();
    assert!(status.success(), "{status}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    for c in &mut held {
        until_closed(c, Duration::from_secs(1));
    }
    let log = s.log_lines().join("\n");
    assert!(log.contains(" stop"), "{log}");
}

/// Sends SIGHUP and waits (bounded) until `expect` has been logged `n` times.
fn hangup(s: &mut Server, expect: &str, n: usize) {
    s.signal("-HUP");
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.lines.iter().filter(|l| l.contains(expect)).count() < n {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(
            !left.is_zero(),
            "not {n} x {expect:?} in 10 s: {:?}",
            s.lines
        );
        if let Ok(l) = s.log.recv_timeout(left.min(Duration::from_millis(100))) {
            s.lines.push(l);
        }
    }
}

#[test]
fn sighup_reloads_the_token_file_and_a_bad_one_keeps_the_tokens() {
    let dir = temp_dir("hup-tokens");
    let tokens = write(&dir, "tokens", "alpha-token-1\n");
    let mut s = Server::start(&args(&["--token-file", &tokens, "--rate-limit", "1000"]));
    let alpha = [("Authorization", "Bearer alpha-token-1")];
    let bravo = [("Authorization", "Bearer bravo-token-2")];
    assert_eq!(s.get_with("/v1/ids", &alpha).status, 200);
    assert_eq!(s.get_with("/v1/ids", &bravo).status, 401);

    write(&dir, "tokens", "# rotated\nbravo-token-2\n");
    hangup(&mut s, "reloaded what=\"token_file\" tokens=1", 1);
    assert_eq!(s.get_with("/v1/ids", &alpha).status, 401);
    assert_eq!(ids_of(&s.get_with("/v1/ids", &bravo)).len(), 1);

    // A file with no token, then no file: the tokens in use stay.
    write(&dir, "tokens", "# nothing yet\n");
    hangup(&mut s, "reload_failed what=\"token_file\"", 1);
    std::fs::remove_file(dir.join("tokens")).unwrap();
    hangup(&mut s, "reload_failed what=\"token_file\"", 2);
    assert_eq!(ids_of(&s.get_with("/v1/ids", &bravo)).len(), 1);
    assert_eq!(s.get_with("/v1/ids", &alpha).status, 401);
    assert_eq!(s.get("/healthz").status, 200);

    let (status, _) = s.terminate();
    assert!(status.success(), "{status}");
    let log = s.log_lines().join("\n");
    assert!(log.contains("holds no token"), "{log}");
    assert!(
        !log.contains("alpha-token-1") && !log.contains("bravo-token-2"),
        "{log}"
    );
}

#[test]
fn sighup_reloads_the_tls_certificate_and_a_bad_one_keeps_the_old() {
    let dir = temp_dir("hup-tls");
    let (ca1, ca2) = (Ca::new("first CA"), Ca::new("second CA"));
    let (cert, key) = ca1.sign(&["localhost", "127.0.0.1"]);
    let cert_file = write(&dir, "cert.pem", &cert);
    let key_file = write(&dir, "key.pem", &key);
    let mut s = Server::start(&args(&["--tls-cert", &cert_file, "--tls-key", &key_file]));
    let get = |ca: &Ca| tls_get(&s.addr, client(&ca.pem, None, &[]), "/v1/ids", &[]);
    assert_eq!(ids_of(&get(&ca1).unwrap()).len(), 1);
    assert!(get(&ca2).is_err());

    // A new pair from the second CA: new connections get it.
    let (cert2, key2) = ca2.sign(&["localhost", "127.0.0.1"]);
    write(&dir, "cert.pem", &cert2);
    write(&dir, "key.pem", &key2);
    hangup(&mut s, "reloaded what=\"tls\"", 1);
    let get = |ca: &Ca| tls_get(&s.addr, client(&ca.pem, None, &[]), "/v1/ids", &[]);
    assert_eq!(ids_of(&get(&ca2).unwrap()).len(), 1);
    let e = get(&ca1).unwrap_err();
    assert!(e.to_string().contains("UnknownIssuer"), "{e}");

    // A certificate with another certificate's key, then a key file that
    // holds no key: the second CA's pair stays.
    let (cert3, _) = ca1.sign(&["localhost"]);
    write(&dir, "cert.pem", &cert3);
    hangup(&mut s, "reload_failed what=\"tls\"", 1);
    write(&dir, "cert.pem", &cert2);
    write(&dir, "key.pem", "not a key\n");
    hangup(&mut s, "reload_failed what=\"tls\"", 2);
    let get = |ca: &Ca| tls_get(&s.addr, client(&ca.pem, None, &[]), "/v1/ids", &[]);
    assert_eq!(ids_of(&get(&ca2).unwrap()).len(), 1);
    assert!(get(&ca1).is_err());

    let (status, _) = s.terminate();
    assert!(status.success(), "{status}");
    let log = s.log_lines().join("\n");
    for k in [&key, &key2] {
        let body = k.lines().nth(1).unwrap();
        assert!(!log.contains("PRIVATE KEY") && !log.contains(body), "{log}");
    }
}
